"""Page data of one nest: its source region and loops, features, neighbours, every measured recipe,
its Optuna studies' trials, and the drop-in code of its best recipe. No HTTP here.

The source region and the drop-in code come from the stored program, re-extracted the way a posted
program is (:func:`service.core.stored.locate`: private directory, confined preprocessing). A
program stored without the headers it includes cannot be re-extracted: the page says so and shows
the stored statements instead.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Any

import numpy as np
import optuna
from sqlalchemy import inspect

from database import get_nest, get_program, list_measurements, list_targets, ranked_recipes_for
from database.embedding_store import EmbeddingStore
from database.errors import NotFoundError
from loopnest.errors import ParameterError, PerfembedError
from loopnest.transform.recipe_text import loop_names, recipe_text, stored_loop_names
from service.access import require_source, source_readable
from service.core.stored import locate, stored_dropin
from service.downloads import tuned_name
from service.services.catalog import nest_detail

if TYPE_CHECKING:
    from database import Nest, Store
    from database.domain import ApiKey
    from service.config import ServiceSettings
    from service.core import Core

NEIGHBOURS = 8
STUDY_PREFIX = "perfembed:nest={}:"  # database.records.study_name_for


def source_region(source: str, nest: Nest) -> dict[str, Any]:
    """The program's lines with the nest's region marked and its loops by depth; or, when the source
    cannot be extracted again, the reason (``error``) and the stored statements."""
    lines = source.splitlines()
    try:
        with locate(source, nest) as found:
            scop = found.scop
            region = scop.region
            loops = loop_names(scop)
            first, last = region.first_line, region.last_line
    except PerfembedError as exc:
        statements = nest.normalized.get("statements", []) if isinstance(nest.normalized, dict) else []
        return {"error": str(exc), "statements": [s.get("text", "") for s in statements], "lines": [],
                "loops": nest.normalized.get("loop_names") or []}
    context_first, context_last = max(1, first - 3), min(len(lines), last + 3)
    shown = [{"number": n, "text": lines[n - 1], "inside": first <= n <= last}
             for n in range(context_first, context_last + 1)]
    return {"error": None, "lines": shown, "first": first, "last": last, "loops": loops,
            "function": region.function, "statements": []}


def hidden_region(nest: Nest) -> dict[str, Any]:
    """What the page shows of a source the viewer may not read: its function and loops, no line of code."""
    normalized = nest.normalized if isinstance(nest.normalized, dict) else {}
    return {"hidden": True, "error": None, "lines": [], "statements": [], "function": normalized.get("function"),
            "loops": normalized.get("loop_names") or []}


def nest_page(store: Store, settings: ServiceSettings, core: Core, nest_id: int,
              key: ApiKey | None = None) -> dict[str, Any]:
    """Everything the nest page shows (404 for an unknown nest); the source region only where ``key`` may
    read the program's source (:mod:`service.access`), else the loops alone."""
    detail = nest_detail(core, nest_id)
    with store.session() as session:
        nest = get_nest(session, nest_id=nest_id)
        program = get_program(session, program_id=nest.program_id)
        readable = source_readable(session, program, key, settings)
    region = source_region(program.source, nest) if readable else hidden_region(nest)
    return {"nest": nest, "detail": detail, "program": program, "region": region,
            "recipes": measured_recipes(store, nest),
            "neighbours": neighbours(store, settings, nest_id, detail),
            "studies": studies(store, nest_id)}


def measured_recipes(store: Store, nest: Nest) -> list[dict[str, Any]]:
    """Every recipe measured on the nest, per target, best first: its text in the nest's loop names,
    its JSON, its best measurement (speedup, interval, verified, origin) and how often it was measured."""
    names = stored_loop_names(nest.normalized)
    out = []
    with store.session() as session:
        counts = Counter((m.target_id, m.recipe_id) for m in list_measurements(session, nest_id=nest.id))
        targets = {t.id: t for t in list_targets(session)}
        for target_id in sorted({t for t, _ in counts}):
            ranked = ranked_recipes_for(session, nest_id=nest.id, target_id=target_id, verified_only=False,
                                        limit=max(1, len(counts)))
            for r in ranked:
                steps = {"steps": list(r.recipe.steps)}
                m = r.measurement
                out.append({"recipe_id": r.recipe.id, "text": recipe_text(steps, names), "json": steps,
                            "target_id": target_id, "target": targets.get(target_id), "speedup": m.speedup,
                            "low": m.speedup_low, "high": m.speedup_high, "confidence": m.confidence,
                            "verified": m.verified, "origin": m.origin.value, "median_time_s": m.median_time_s,
                            "params": m.params, "loaded": m.loaded, "count": counts[(target_id, r.recipe.id)],
                            "program_check": m.program_check, "refused": m.refused_in_program})
    return out


def neighbours(store: Store, settings: ServiceSettings, nest_id: int, detail: dict[str, Any]) -> list[dict[str, Any]]:
    """The nearest other stored nests, as the service's search finds them (empty before a model exists)."""
    embedding = detail.get("embedding") or {}
    vector = embedding.get("vector") if isinstance(embedding, dict) else None
    if not vector:
        return []
    try:
        hits = EmbeddingStore.for_store(store, data_dir=settings.data_dir).search(
            np.asarray(vector, dtype=np.float32), k=NEIGHBOURS, exclude=[nest_id])
    except NotFoundError:
        return []
    return [h.to_dict() for h in hits]


def studies(store: Store, nest_id: int) -> list[dict[str, Any]]:
    """The nest's Optuna studies (one per target, parameter values and recipe space), each with its
    trials in order: number, state, speedup (complete trials), the best so far, and the recipe."""
    if not inspect(store.engine).has_table("studies"):  # Optuna has not tuned anything here yet
        return []
    storage = optuna.storages.RDBStorage(store.url, skip_compatibility_check=True, skip_table_creation=True)
    try:
        prefix = STUDY_PREFIX.format(nest_id)
        found = [s for s in storage.get_all_studies() if s.study_name.startswith(prefix)]
        out = []
        for study in found:
            trials = storage.get_all_trials(storage.get_study_id_from_name(study.study_name), deepcopy=False)
            out.append({"name": study.study_name, "trials": _trial_rows(trials)})
    finally:
        storage.engine.dispose()
    return out


def _trial_rows(trials: list[Any]) -> list[dict[str, Any]]:
    best = None
    rows = []
    for t in sorted(trials, key=lambda t: t.number):
        value = t.value if t.state.name == "COMPLETE" else None
        if value is not None and (best is None or value > best):
            best = value
        rows.append({"number": t.number, "state": t.state.name.lower(), "speedup": value, "best": best,
                     "status": t.user_attrs.get("status"), "recipe": t.user_attrs.get("recipe")})
    return rows


def dropin(store: Store, settings: ServiceSettings, core: Core, nest_id: int,
           *, target_id: int | None = None, key: ApiKey | None = None) -> tuple[str, str]:
    """The program's file with the nest's best verified recipe applied (on ``target_id``, else on this
    machine's target when it has one, else the best anywhere): ``(file name, text)``. The file is the
    user's code: 401/403 unless ``key`` may read the program's source (:mod:`service.access`)."""
    with store.session() as session:
        require_source(session, get_program(session, program_id=get_nest(session, nest_id=nest_id).program_id),
                       key, settings)
    best = nest_detail(core, nest_id).get("best_recipes") or []
    if target_id is not None:
        best = [b for b in best if b.get("target_id") == target_id]
    if not best:
        where = f" on target {target_id}" if target_id else ""
        raise ParameterError(f"nest {nest_id} has no verified recipe{where}")
    chosen = max(best, key=lambda b: ((b.get("target") or {}).get("this_machine", False), b.get("speedup") or 0.0))
    with store.session() as session:
        nest = get_nest(session, nest_id=nest_id)
        program = get_program(session, program_id=nest.program_id)
    return tuned_name(program.name), stored_dropin(program.source, nest, chosen["recipe"])
