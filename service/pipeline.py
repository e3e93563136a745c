"""The core pipeline shared by the CLI, the REST API and notebooks:

source -> nests -> static features -> embedding -> neighbours -> adapted recipes -> (measured)
candidates -> database, with the confidence gate and the autotuning fallback.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autotune.records import ensure_local_target, register_nest
from autotune.transfer import MIN_SPEEDUP, LoopRoles, Neighbour, TransferTuner
from database import (
    add_measurement,
    best_recipe_for,
    enqueue_job,
    get_nest,
    get_or_create_recipe,
    list_embedding_models,
    list_jobs,
    load_embeddings,
    nest_name,
)
from database.embedding_store import EmbeddingStore
from database.errors import NotFoundError
from database.store import Store
from loopnest.config import Settings
from loopnest.errors import ParameterError
from loopnest.harness import Evaluation, Harness, Limits
from loopnest.harness.compare import AcceptancePolicy
from loopnest.harness.progress import Progress, ProgressFn
from loopnest.ir import Scop
from loopnest.polyhedral import compute_dependences
from loopnest.transform.recipe import Recipe
from loopnest.transform.recipe_text import loop_names, recipe_text, stored_loop_names
from service.answer_cache import cache_get, cache_put, database_changed, database_stamp, fresh_stamp, memoized
from service.measured import (
    add_recipe_texts,
    find_stored_nest,
    local_target_id,
    neighbour_view,
    target_views,
    tuned_before,
)
from service.schemas import ProgramIn
from service.services import extract_program, program_name


@dataclass
class Context:
    """What one pipeline call needs: the database, the embedding store, settings and target."""

    store: Store
    settings: Settings
    _embeddings: EmbeddingStore | None = None
    _target_id: int | None = None

    @property
    def embeddings(self) -> EmbeddingStore:
        if self._embeddings is None:
            self._embeddings = EmbeddingStore.for_store(self.store, data_dir=self.settings.data_dir)
        return self._embeddings

    @property
    def target_id(self) -> int:
        if self._target_id is None:
            self._target_id = ensure_local_target(self.store, cc=self.settings.cc, check_writable=False).id
        return self._target_id

    def harness(self, scop: Scop, params: Mapping[str, int], *, reps: int = 3) -> Harness:
        s = self.settings
        return Harness(scop, params, reps=reps, threads=s.threads or None, limits=Limits.from_settings(s),
                       cc=s.cc, cflags=s.cflags)


def _require_params(scop: Scop, params: Mapping[str, int], *, label: str | None = None) -> dict[str, int]:
    """The nest's parameter values; ``label`` replaces the temporary file's name in the error."""
    missing = [p for p in scop.params if p not in params]
    if missing:
        name = scop.name.replace("program.c:", label, 1) if label else scop.name
        raise ParameterError(f"{name}: missing value for parameter(s) {', '.join(missing)}")
    return {p: int(params[p]) for p in scop.params}


def ingest_scop(ctx: Context, *, source: str, name: str, index: int, scop: Scop,
                params: Mapping[str, int]) -> int:
    """Store a nest (program, normalized form, static features) and embed it when a model exists."""
    values = _require_params(scop, params)
    nest_id = register_nest(ctx.store, source=source, name=name, index=index, scop=scop, params=values,
                            data_dir=ctx.settings.data_dir).id
    database_changed(ctx.store)
    return nest_id


def ingest_program(store: Store, program: ProgramIn, *, settings: Settings, name: str | None = None) -> list[int]:
    ctx = Context(store, settings)
    extraction = extract_program(program)
    name = program_name(program, name)
    return [ingest_scop(ctx, source=program.source, name=name, index=i, scop=s, params=program.params)
            for i, s in enumerate(extraction.scops)]


def record_evaluation(ctx: Context, *, nest_id: int, recipe: Recipe, evaluation: Evaluation,
                      params: Mapping[str, int], origin: str, reps: int) -> None:
    """Store a run: verified with its speedup, or unverified (never a success) when it failed."""
    variant = evaluation.variant
    if variant.median is None:
        return
    target_id = ctx.target_id  # resolved before the session: SQLite runs one writer at a time
    with ctx.store.session() as session:
        rec = get_or_create_recipe(session, steps=recipe.to_dict()["steps"])
        add_measurement(session, nest_id=nest_id, recipe_id=rec.id, target_id=target_id,
                        median_time_s=variant.median, spread_s=(variant.spread or 0.0) * variant.median,
                        repetitions=reps, verified=evaluation.verified, origin=origin, params=dict(params),
                        speedup=evaluation.speedup if evaluation.verified else None)
    database_changed(ctx.store)


def neighbours_for(ctx: Context, features: Mapping[str, float | None], *, k: int,
                   exclude: tuple[int, ...] = (), min_speedup: float = MIN_SPEEDUP) -> list[Neighbour]:
    """The k nearest stored nests that have a verified recipe, with what transfer needs of them
    (``exclude``: the asking nest's own id, which is never its own neighbour).

    Recipes tuned on this target come first; a nest never measured here falls back to its best on a
    target of the same ISA level, then on any target (a shipped seed was tuned on another machine).
    """
    target_id = ctx.target_id
    # Not filtered by target: a nest tuned only elsewhere still lends its recipe (see above).
    hits = ctx.embeddings.search(dict(features), k=k * 3, exclude=exclude)
    out: list[Neighbour] = []
    with ctx.store.session() as session:
        targets = _targets_by_preference(session, target_id)
        for hit in hits:
            best = None
            for candidate in targets:
                best = best_recipe_for(session, nest_id=hit.nest_id, target_id=candidate)
                if best is not None:
                    break
            # A neighbour whose best recipe never beat its own baseline by the acceptance margin has
            # nothing to transfer: its candidate would be a wasted (or harmful) evaluation.
            if best is None or (best.measurement.speedup or 0.0) < min_speedup:
                continue
            normalized = get_nest(session, nest_id=hit.nest_id).normalized
            roles = normalized.get("loop_roles") if isinstance(normalized, dict) else None
            if roles is None:
                continue
            names = stored_loop_names(normalized)
            out.append(Neighbour(hit.nest_id, hit.name, hit.distance,
                                 Recipe.from_dict(best.recipe.steps), LoopRoles.from_dict(roles),
                                 best.measurement.speedup, target_id=best.measurement.target_id,
                                 loop_names=tuple(names) if names is not None else None))
            if len(out) == k:
                break
    return out


def _targets_by_preference(session: Any, target_id: int) -> list[int]:
    """This target, then targets of the same ISA level, then the rest."""
    from database import list_targets

    targets = list_targets(session)
    here = next((t for t in targets if t.id == target_id), None)
    same_isa = [t.id for t in targets if here is not None and t.id != target_id and t.isa_level == here.isa_level]
    rest = [t.id for t in targets if t.id != target_id and t.id not in same_isa]
    return [target_id, *same_isa, *rest]


def suggest(  # noqa: PLR0913 -- the request's options, keyword-only, each with a default
        store: Store, program: ProgramIn, *, k: int, evaluate: bool, settings: Settings,
            fallback: bool = False, min_speedup: float | None = None, reps: int = 3, name: str | None = None,
            budget: int = 40, progress: ProgressFn | None = None) -> dict[str, Any]:
    """Per nest: neighbours, adapted recipes, measured results (``evaluate``) and the gate decision.

    With ``fallback``, a nest whose neighbours are too far or whose candidates all fail the gate
    gets a tuning job enqueued (its id is returned); the caller decides whether to run it now.
    Answers from the database alone are cached per program until the database changes (a new nest,
    measurement, model or job state; see :func:`~service.answer_cache.database_stamp`), so a repeated
    query costs a lookup.
    Evaluating against a database that refuses writes raises
    :class:`~database.errors.ReadOnlyDatabaseError` before anything is compiled. ``progress`` hears
    each stage and step of an evaluation (:class:`~loopnest.harness.progress.Progress`).
    """
    min_speedup = getattr(settings, "min_speedup", MIN_SPEEDUP) if min_speedup is None else min_speedup
    if evaluate:
        store.check_writable()
        return _suggest(store, program, k=k, evaluate=True, settings=settings, fallback=fallback,
                        min_speedup=min_speedup, reps=reps, name=name, budget=budget, progress=progress)
    stamp = database_stamp(store)
    key = _suggestion_key(program, k, min_speedup, stamp, fallback=fallback, name=name)
    found = cache_get(store, "suggestions", key)
    if found:
        return found[0]
    result = _suggest(store, program, k=k, evaluate=False, settings=settings, fallback=fallback,
                      min_speedup=min_speedup, reps=reps, name=name, budget=budget)
    # The answer is kept only when the database is as it was before (with fallback it may have stored
    # the nests or enqueued their jobs), so that it is what a recomputation gives: a nest whose gate
    # passed, or whose job is open, is answered from the cache until that changes. Reading the stamp
    # again also renews it, so the next requests are answered without I/O.
    if database_stamp(store, reread=True) == stamp:
        cache_put(store, "suggestions", key, result)
    return result


def cached_suggestion(store: Store, program: ProgramIn, *, k: int, fallback: bool = False,
                      min_speedup: float = MIN_SPEEDUP, read_stamp: bool = False) -> dict[str, Any] | None:
    """The database-only answer :func:`suggest` would return, if it is cached and the stamp is fresh.

    Touches no database and runs no analysis, so the API can answer it on its event loop (a thread
    per cached request made the tail latency under 32 clients). With ``read_stamp`` a stale stamp is
    read again first (queries: off the event loop).
    """
    stamp = database_stamp(store) if read_stamp else fresh_stamp(store)
    if stamp is None:
        return None
    found = cache_get(store, "suggestions", _suggestion_key(program, k, min_speedup, stamp, fallback=fallback))
    return found[0] if found else None


def _suggestion_key(program: ProgramIn, k: int, min_speedup: float, stamp: tuple[Any, ...], *, fallback: bool,
                    name: str | None = None) -> list[Any]:
    return [program.model_dump(), k, min_speedup, stamp, fallback, name]


def _suggest(  # noqa: PLR0913 -- suggest's options, passed on
        store: Store, program: ProgramIn, *, k: int, evaluate: bool, settings: Settings, fallback: bool,
             min_speedup: float, reps: int, name: str | None, budget: int,
             progress: ProgressFn | None = None) -> dict[str, Any]:
    from embeddings.features import static_features

    ctx = Context(store, settings)
    extraction = extract_program(program)
    # The nests were extracted from a temporary "program.c": errors name the caller's file.
    label = f"{name}:" if name else "program.c:"
    name = program_name(program, name)
    nests = []
    for index, scop in enumerate(extraction.scops):
        params = _require_params(scop, program.params, label=label)
        features = static_features(scop, params).to_dict()
        deps = compute_dependences(scop)
        nest_id = ingest_scop(ctx, source=program.source, name=name, index=index, scop=scop, params=params) \
            if evaluate or fallback else None
        here = ctx.target_id  # resolved before the session: SQLite runs one writer at a time
        with store.session() as session:  # this very nest, stored by an earlier run: not a neighbour
            own = nest_id or find_stored_nest(session, source=program.source, index=index, scop=scop)
            before = None if own is None else tuned_before(session, nest_id=own, target_id=here, params=params,
                                                           names=loop_names(scop))
            targets = target_views(session, here)
        try:
            neighbours = neighbours_for(ctx, features, k=k, exclude=(own,) if own else (), min_speedup=min_speedup)
            gate = ctx.embeddings.gate_distance()
        except NotFoundError:
            neighbours, gate = [], 0.0
        tuner = TransferTuner(policy=dataclasses.replace(AcceptancePolicy.from_settings(settings), margin=min_speedup))
        candidates = tuner.candidates(scop, params, neighbours, deps)
        entry: dict[str, Any] = {
            "index": index, "name": nest_name(name, index), "function": scop.region.function, "nest_id": nest_id,
            "params": params, "loop_names": loop_names(scop), "tuned_before": before,
            "neighbours": [neighbour_view(n, targets) for n in neighbours],
            "candidates": [{"from": c.neighbour.name, "from_nest_id": c.neighbour.nest_id, "recipe": c.recipe.to_dict()}
                           for c in candidates],
            "confident": bool(neighbours) and neighbours[0].distance <= gate * 1.0 + 1e-12,
            "gate_distance": gate if math.isfinite(gate) else None,
        }
        if evaluate and candidates and nest_id is not None:
            entry.update(_evaluate(ctx, scop, params, nest_id, neighbours, tuner, reps,
                                   _in_nest(progress, index, len(extraction.scops))))
        add_recipe_texts(entry, entry["loop_names"])
        accepted = entry.get("accepted")
        if fallback and nest_id is not None and (not entry["confident"] or accepted is False or not candidates):
            target_id = ctx.target_id
            with store.session() as session:
                # One open job per nest: a repeated request reuses it instead of queueing another.
                open_jobs = [j for j in list_jobs(session, nest_id=nest_id) if not j.status.is_terminal]
                job = open_jobs[0] if open_jobs else enqueue_job(
                    session, nest_id=nest_id, budget=budget, target_id=target_id,
                    options=job_options(program, index, params, candidates))
            entry["tuning_job"] = job.id
        nests.append(entry)
    return {"nests": nests, "rejected": [r.to_dict() for r in extraction.rejected]}


def job_options(program: ProgramIn, index: int, params: Mapping[str, int], candidates: list[Any]) -> dict[str, Any]:
    """What a worker needs to rebuild the nest (see autotune.worker), warm-started with the candidates."""
    defines = [k if v is None else f"{k}={v}" for k, v in program.defines.items()]
    return {"source": program.source, "filename": "program.c", "headers": dict(program.headers),
            "defines": defines, "nest_index": index,
            "function": program.function, "params": dict(params),
            "warm_start": [c.recipe.to_dict() for c in candidates]}


def _in_nest(progress: ProgressFn | None, index: int, nests: int) -> ProgressFn | None:
    """``progress`` with the nest's place in the program filled in."""
    if progress is None:
        return None
    report = progress
    return lambda p: report(dataclasses.replace(p, nest=index + 1, nests=nests))


def _evaluate(ctx: Context, scop: Scop, params: dict[str, int], nest_id: int, neighbours: list[Neighbour],
              tuner: TransferTuner, reps: int, progress: ProgressFn | None = None) -> dict[str, Any]:
    target_id = ctx.target_id
    with ctx.harness(scop, params, reps=reps) as harness:
        result = tuner.evaluate(harness, neighbours, progress=progress)
        base = harness.baseline()
        if progress is not None:
            progress(Progress("storing results"))
        if base.ok and base.median is not None:
            identity = Recipe()
            with ctx.store.session() as session:
                rec = get_or_create_recipe(session, steps=identity.to_dict()["steps"])
                add_measurement(session, nest_id=nest_id, recipe_id=rec.id, target_id=target_id,
                                median_time_s=base.median, spread_s=(base.spread or 0.0) * base.median,
                                repetitions=reps, verified=True, origin="transfer", params=params, speedup=1.0)
        for cand in result.candidates:
            # A confirmed candidate is stored with its re-measured figure, never the screening one.
            speedup = cand.confirmed.ratio if cand.confirmed is not None else cand.speedup
            pairs = cand.confirmed.pairs if cand.confirmed is not None else reps
            with ctx.store.session() as session:
                rec = get_or_create_recipe(session, steps=cand.recipe.to_dict()["steps"])
                if speedup is not None and base.median:
                    conf = cand.confirmed
                    add_measurement(session, nest_id=nest_id, recipe_id=rec.id, target_id=target_id,
                                    median_time_s=base.median / speedup, spread_s=0.0, repetitions=pairs,
                                    verified=cand.verified, origin="transfer", params=params,
                                    speedup=speedup if cand.verified else None, threads=harness.threads,
                                    interval=None if conf is None else (conf.low, min(conf.high, 1e300)),
                                    confidence=None if conf is None else conf.confidence,
                                    cpu_pressure=None if conf is None else conf.cpu_pressure,
                                    loaded=conf is not None and conf.loaded)
    best = result.best
    return {
        "baseline_seconds": result.baseline_seconds,
        "threads": harness.threads,
        "evaluated": [{"from": c.neighbour.name, "recipe": c.recipe.to_dict(), "speedup": c.speedup,
                       "verified": c.verified, "status": c.status, "message": c.message,
                       "confirmed": None if c.confirmed is None else c.confirmed.to_dict()}
                      for c in result.candidates],
        "accepted": result.accepted,
        "best": None if best is None or best.confirmed is None else {
            "recipe": best.recipe.to_dict(), "speedup": best.confirmed.ratio,
            "interval": [best.confirmed.low, best.confirmed.high], "confidence": best.confirmed.confidence,
            "pairs": best.confirmed.pairs, "threads": best.confirmed.threads, "loaded": best.confirmed.loaded,
            "text": best.confirmed.describe(), "from": best.neighbour.name},
        "evaluations": result.evaluations,
    }


def search(store: Store, *, vector: list[float] | None, program: ProgramIn | None, k: int,
           settings: Settings, name: str | None = None) -> list[dict[str, Any]]:
    """The k stored nests nearest to ``vector`` or to the first nest of ``program`` (called ``name`` in
    errors, default ``program.c``)."""
    es = EmbeddingStore.for_store(store, data_dir=settings.data_dir)
    if vector is not None:
        return [h.to_dict() for h in es.search(vector, k)]
    if program is None:
        raise ParameterError("search needs a vector or a program")
    # The analysis is most of a search by program and depends on the program alone: remembered.
    features = memoized(store, "features", program.model_dump(), lambda: _first_nest_features(program, name))
    return [h.to_dict() for h in es.search(features, k)]


def _first_nest_features(program: ProgramIn, name: str | None = None) -> dict[str, float | None]:
    from embeddings.features import static_features

    scops = extract_program(program).scops
    if not scops:
        raise ParameterError(f"{name or 'the program'} has no supported loop nest")
    params = _require_params(scops[0], program.params, label=f"{name}:" if name else None)
    return static_features(scops[0], params).to_dict()


def nest_detail(store: Store, nest_id: int, *, settings: Settings) -> dict[str, Any]:
    """A stored nest: features, embedding, and its best recipe on each target (in its own loop names,
    naming the target and whether it is this machine)."""
    with store.session() as session:
        nest = get_nest(session, nest_id=nest_id)
        models = list_embedding_models(session)
        embedding = None
        if models:
            vectors = load_embeddings(session, model_version=models[-1].version, nest_ids=[nest_id])
            embedding = list(vectors.get(nest_id, ())) or None
        targets = target_views(session, local_target_id(session, cc=settings.cc))
        best = {}
        for target_id, target in targets.items():
            ranked = best_recipe_for(session, nest_id=nest_id, target_id=target_id)
            if ranked is not None:
                recipe = Recipe.from_dict(ranked.recipe.steps)
                best[str(target_id)] = {"recipe": recipe.to_dict(),
                                        "recipe_text": recipe_text(recipe, stored_loop_names(nest.normalized)),
                                        "speedup": ranked.measurement.speedup,
                                        "median_time_s": ranked.measurement.median_time_s, "target": target}
    return {"id": nest.id, "program_id": nest.program_id, "index": nest.index, "normalized": nest.normalized,
            "static_features": dict(nest.static_features), "dynamic_features": dict(nest.dynamic_features),
            "embedding": embedding, "model_version": models[-1].version if models else None,
            "best_recipes": best}


def program_from_file(path: Path, *, include: list[str], define: list[str], params: Mapping[str, int],
                      function: str | None) -> ProgramIn:
    """A ProgramIn for a local file: its quoted includes travel as ``headers``."""
    from loopnest.frontend.preprocess import PreprocessOptions

    headers: dict[str, str] = {}
    for directory in include:
        for header in Path(directory).rglob("*.h"):
            headers[str(header.relative_to(directory))] = header.read_text(errors="replace")
    defines = dict(PreprocessOptions.parse_define(d) for d in define)
    return ProgramIn(source=Path(path).read_text(), headers=headers, defines=defines, params=dict(params),
                     function=function, name=Path(path).name)


def index_status(store: Store, *, settings: Settings) -> dict[str, Any]:
    """For /readyz: whether the embedding index can answer (no model yet counts as ready)."""
    es = EmbeddingStore.for_store(store, data_dir=settings.data_dir)
    try:
        index = es.index()
    except NotFoundError:
        return {"ready": True, "detail": "no embedding model fitted yet"}
    except (OSError, ValueError) as exc:
        return {"ready": False, "detail": f"index unavailable: {exc}"}
    return {"ready": True, "detail": f"{len(index)} nests indexed"}
