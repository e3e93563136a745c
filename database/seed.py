"""Seed files: a compact, versioned export of tuned nests (gzip JSON lines).

The first line is a header ``{"format": "perfembed-seed", "version": 1, ...}``; every other line is
one record, ``{"type": "program" | "nest" | "target" | "recipe" | "measurement", ...}``, with the
file's own ids. Loading maps them onto the database through the idempotent get-or-create
repositories, so loading the same file twice adds nothing the second time.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy.orm import Session

from database.domain import Measurement, MeasurementIn, TargetIdentity
from database.repositories import (
    add_measurement,
    delete_measurements,
    get_or_create_nest,
    get_or_create_program,
    get_or_create_recipe,
    get_or_create_target,
    get_recipe,
    list_measurements,
    list_nests,
    list_programs,
    list_targets,
    set_nest_features,
)
from database.store import Store
from loopnest.errors import ParameterError

FORMAT = "perfembed-seed"
VERSION = 1


def export_seed(store: Store, path: Path) -> dict[str, int]:
    """Write every program, nest, target, used recipe and measurement; returns record counts."""
    counts = {"program": 0, "nest": 0, "target": 0, "recipe": 0, "measurement": 0}
    with store.session() as session:
        programs = list_programs(session)
        nests = list_nests(session)
        targets = list_targets(session)
        measurements = list_measurements(session)
        recipes = {m.recipe_id: get_recipe(session, recipe_id=m.recipe_id) for m in measurements}
    tmp = Path(str(path) + ".tmp")
    with gzip.open(tmp, "wt", encoding="utf-8", compresslevel=9) as out:
        out.write(json.dumps({"format": FORMAT, "version": VERSION,
                              "created": datetime.now().astimezone().isoformat()}) + "\n")

        def emit(record: dict[str, Any]) -> None:
            out.write(json.dumps(record, separators=(",", ":"), default=str) + "\n")
            counts[record["type"]] += 1

        for p in programs:
            emit({"type": "program", "id": p.id, "name": p.name, "language": p.language, "source": p.source})
        for n in nests:
            emit({"type": "nest", "id": n.id, "program_id": n.program_id, "index": n.index, "normalized": n.normalized,
                  "static_features": dict(n.static_features), "dynamic_features": dict(n.dynamic_features)})
        for t in targets:
            emit({"type": "target", "id": t.id, "cpu_model": t.cpu_model, "cores": t.cores, "isa_level": t.isa_level,
                  "cache_sizes": dict(t.cache_sizes), "compiler": t.compiler, "compiler_version": t.compiler_version,
                  "peak_gflops": t.peak_gflops, "memory_bandwidth_gbs": t.memory_bandwidth_gbs})
        for r in recipes.values():
            emit({"type": "recipe", "id": r.id, "steps": r.steps})
        for m in measurements:
            emit({"type": "measurement", "nest_id": m.nest_id, "recipe_id": m.recipe_id, "target_id": m.target_id,
                  "params": dict(m.params), "median_time_s": m.median_time_s, "spread_s": m.spread_s,
                  "repetitions": m.repetitions, "speedup": m.speedup, "verified": m.verified,
                  "origin": str(m.origin), "measured_at": m.measured_at.isoformat(),
                  **({"structure": m.structure} if m.structure is not None else {}),
                  **_re_measured_fields(m)})
    tmp.replace(path)
    return counts


def _re_measured_fields(m: Measurement) -> dict[str, Any]:
    """A paired re-measurement's interval and conditions (absent for a screening reading, and in files
    written before they were kept: a re-measured figure loaded from such a file ranks as a screening one)."""
    if m.speedup_low is None or m.speedup_high is None:
        return {}
    return {"interval": [m.speedup_low, m.speedup_high], "confidence": m.confidence, "threads": m.threads,
            "cpu_pressure": m.cpu_pressure, "loaded": m.loaded}


def _records(path: Path) -> Iterator[dict[str, Any]]:
    try:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            header = json.loads(f.readline() or "{}")
            if header.get("format") != FORMAT:
                raise ParameterError(f"{path} is not a perfembed seed file")
            if header.get("version") != VERSION:
                raise ParameterError(f"{path} has seed format version {header.get('version')}; "
                                     f"this perfembed reads version {VERSION}")
            for lineno, line in enumerate(f, start=2):
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ParameterError(f"{path}:{lineno}: not JSON ({exc.msg})") from None
    except (OSError, EOFError) as exc:
        raise ParameterError(f"cannot read seed file {path}: {exc}") from None


def best_recipes(path: Path, *, per_nest: int) -> dict[tuple[str, int], list[dict[str, Any]]]:
    """Up to ``per_nest`` distinct verified recipes (``{"steps": [...]}``) of each nest in the seed file at ``path``,
    fastest first, keyed by (program name, nest index): what an earlier build found, for a rebuild to try
    first (:func:`autotune.seed.build.build_seed`'s ``warm``)."""
    programs: dict[int, str] = {}
    nests: dict[int, tuple[str, int]] = {}
    recipes: dict[int, list[dict[str, Any]]] = {}
    found: dict[tuple[str, int], dict[int, float]] = {}
    for record in _records(path):
        kind = record.get("type")
        if kind == "program":
            programs[record["id"]] = record["name"]
        elif kind == "nest":
            nests[record["id"]] = (programs.get(record["program_id"], ""), int(record["index"]))
        elif kind == "recipe":
            recipes[record["id"]] = record["steps"]
        elif kind == "measurement" and record.get("verified") and record.get("speedup"):
            key = nests.get(record["nest_id"])
            if key is not None:
                best = found.setdefault(key, {})
                best[record["recipe_id"]] = max(best.get(record["recipe_id"], 0.0), float(record["speedup"]))
    fastest = {key: sorted(by, key=lambda recipe_id: -by[recipe_id])[:per_nest] for key, by in found.items()}
    return {key: [{"steps": recipes[r]} for r in ids if r in recipes] for key, ids in fastest.items()}


def count_records(path: Path) -> int:
    """How many records the seed file holds (its lines after the header), for a progress bar."""
    try:
        with gzip.open(path, "rb") as f:
            return max(sum(1 for _ in f) - 1, 0)
    except (OSError, EOFError) as exc:
        raise ParameterError(f"cannot read seed file {path}: {exc}") from None


def is_empty(store: Store) -> bool:
    with store.session() as session:
        return not list_nests(session, limit=1)


# Records between two progress reports: often enough for a live bar, rarely enough to cost nothing.
PROGRESS_EVERY = 200


def _add_measurement(session: Session, rec: dict[str, Any], ids: dict[str, dict[int, int]],
                     replaced: set[int] | None, counts: dict[str, int]) -> bool:
    """Store a measurement record (file ids mapped by ``ids``) unless the same one is stored; whether it was.
    With ``replaced`` (the nests whose stored measurements are already deleted), the nest's stored
    measurements are deleted first, once."""
    nest_id, recipe_id = ids["nest"][rec["nest_id"]], ids["recipe"][rec["recipe_id"]]
    target_id = ids["target"][rec["target_id"]]
    if replaced is not None and nest_id not in replaced:
        replaced.add(nest_id)
        counts["replaced"] = counts.get("replaced", 0) + delete_measurements(session, nest_id=nest_id)
    existing = list_measurements(session, nest_id=nest_id, recipe_id=recipe_id, target_id=target_id)
    structure = rec.get("structure")  # absent in files written before measurements named it
    if any(abs(m.median_time_s - rec["median_time_s"]) < 1e-12 and dict(m.params) == rec["params"]
           and m.structure == structure for m in existing):
        return False
    add_measurement(session, MeasurementIn(
        nest_id=nest_id, recipe_id=recipe_id, target_id=target_id, median_time_s=rec["median_time_s"],
        spread_s=rec["spread_s"], repetitions=rec["repetitions"], verified=rec["verified"],
        origin=rec["origin"], params=rec["params"], speedup=rec["speedup"],
        measured_at=datetime.fromisoformat(rec["measured_at"]), structure=structure,
        interval=_interval(rec.get("interval")), confidence=rec.get("confidence"), threads=rec.get("threads"),
        cpu_pressure=rec.get("cpu_pressure"), loaded=bool(rec.get("loaded", False))))
    return True


def _interval(value: Any) -> tuple[float, float] | None:
    if not isinstance(value, list) or len(value) != 2:
        return None
    return float(value[0]), float(value[1])


def load_seed(store: Store, path: Path, *, progress: Callable[[int], None] | None = None,
              replace: bool = False) -> dict[str, int]:
    """Load a seed file in one transaction; measurements already present are not duplicated.

    ``progress`` hears how many records were read, every :data:`PROGRESS_EVERY` and at the end.
    With ``replace``, the file's measurements of a nest replace every stored measurement of that nest (on
    every target; counted as ``replaced``): how a family re-tuned in a fresh database goes into a seed
    without its older, differently measured figures ranking beside the new ones.
    """
    counts = {"program": 0, "nest": 0, "target": 0, "recipe": 0, "measurement": 0}
    ids: dict[str, dict[int, int]] = {k: {} for k in counts}
    replaced: set[int] | None = set() if replace else None
    done = 0
    with store.session() as session:
        for done, rec in enumerate(_records(path), start=1):
            if progress is not None and done % PROGRESS_EVERY == 0:
                progress(done)
            kind = rec.get("type")
            if kind == "program":
                ids[kind][rec["id"]] = get_or_create_program(session, source=rec["source"], name=rec["name"],
                                                             language=rec.get("language", "c")).id
            elif kind == "nest":
                nest = get_or_create_nest(session, program_id=ids["program"][rec["program_id"]], index=rec["index"],
                                          normalized=rec["normalized"], static_features=rec["static_features"])
                if rec.get("dynamic_features"):
                    set_nest_features(session, nest_id=nest.id, dynamic_features=rec["dynamic_features"])
                ids[kind][rec["id"]] = nest.id
            elif kind == "target":
                fields = {k: rec[k] for k in (*TargetIdentity.__annotations__, "peak_gflops", "memory_bandwidth_gbs")}
                ids[kind][rec["id"]] = get_or_create_target(session, **fields).id
            elif kind == "recipe":
                ids[kind][rec["id"]] = get_or_create_recipe(session, steps=rec["steps"]).id
            elif kind == "measurement":
                if not _add_measurement(session, rec, ids, replaced, counts):
                    continue
            else:
                raise ParameterError(f"{path}: unknown record type {kind!r}")
            counts[kind] += 1
        if progress is not None:
            progress(done)
    return counts
