"""A stand-in for ``service.pipeline`` with the same signatures, so the API can be tested on its own.

It answers in the real pipeline's format, stores programs and nests for real (one transaction,
through the repositories), finds neighbours by Euclidean distance over two static features,
answers from the database's measurements, and enqueues a tuning job when no neighbour has a
verified recipe. Evaluation
is simulated: ``EVALUATE_GATE`` (a threading.Event, when set by a test) holds an evaluating
request until the test releases it, to exercise the evaluation pool.

Select it with ``ServiceSettings(pipeline_module="tests.service.fake_pipeline")``.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from database import (
    enqueue_job,
    get_nest,
    get_or_create_nest,
    get_or_create_program,
    list_nests,
    list_targets,
    nest_name,
    nest_summaries,
    ranked_recipes_for,
)
from loopnest.errors import ParameterError
from loopnest.harness.progress import Progress, ProgressFn
from service.services import extract_program, program_name

EVALUATE_GATE: threading.Event | None = None
EVALUATE_STARTED = threading.Semaphore(0)
_DIM = 2


def _features(scop: Any) -> dict[str, float]:
    return {"depth": float(scop.depth), "statements": float(len(scop.statements))}


def _vector(features: Any) -> list[float]:
    return [float(features.get("depth", 0.0)), float(features.get("statements", 0.0))]


def ingest_program(store: Any, program: Any, *, settings: Any) -> list[int]:
    extraction = extract_program(program)
    with store.session() as session:
        stored = get_or_create_program(session, source=program.source, name=program_name(program))
        return [get_or_create_nest(session, program_id=stored.id, index=i, static_features=_features(scop),
                                   normalized={"name": scop.name, "params": list(scop.params)}).id
                for i, scop in enumerate(extraction.scops)]


def _neighbours(store: Any, vector: list[float], k: int, exclude: set[int]) -> list[dict[str, Any]]:
    with store.session() as session:
        nests = [n for n in list_nests(session) if n.id not in exclude]
        names = {i: nest_name(p, x) for i, (p, x, *_) in nest_summaries(session).items()}
    if not nests:
        return []
    matrix = np.array([_vector(n.static_features) for n in nests])
    distance = np.linalg.norm(matrix - np.array(vector), axis=1)
    order = np.argsort(distance, kind="stable")[:k]
    return [{"nest_id": nests[i].id, "distance": float(distance[i]), "name": names[nests[i].id]} for i in order]


def suggest(store: Any, program: Any, *, k: int, evaluate: bool, settings: Any, fallback: bool,
            progress: ProgressFn | None = None) -> dict[str, Any]:
    """The real pipeline's answer format: candidates, confident/gate_distance, tuning_job, evaluated.
    An evaluation reports one step (``candidate 1/1 (from fake#0): timing``) before it waits."""
    ids = ingest_program(store, program, settings=settings)
    if evaluate and progress is not None:
        progress(Progress("candidate", "timing", 1, 1, "fake#0", 1, len(ids)))
    if evaluate and EVALUATE_GATE is not None:
        EVALUATE_STARTED.release()
        EVALUATE_GATE.wait(30)
    out = []
    for index, nest_id in enumerate(ids):
        with store.session() as session:
            nest = get_nest(session, nest_id=nest_id)
        neighbours = []
        nearest = _neighbours(store, _vector(nest.static_features), k, {nest_id})  # SQLite: one session at a time
        with store.session() as session:
            targets = list_targets(session)
            for n in nearest:
                ranked = [r for t in targets for r in ranked_recipes_for(session, nest_id=n["nest_id"],
                                                                         target_id=t.id, limit=1)]
                best = max(ranked, key=lambda r: r.measurement.speedup or 0.0, default=None)
                neighbours.append({**n, "recorded_speedup": best.measurement.speedup if best else None,
                                   "recipe": {"steps": best.recipe.steps} if best else None})
        with_recipe = [n for n in neighbours if n["recipe"] is not None]
        entry: dict[str, Any] = {
            "index": index, "name": nest_name(program_name(program), index), "nest_id": nest_id,
            "params": dict(program.params),
            "neighbours": neighbours,
            "candidates": [{"from": n["name"], "recipe": n["recipe"]} for n in with_recipe],
            "confident": bool(with_recipe), "gate_distance": 1.5}
        if evaluate:
            entry["evaluated"] = [{"from": c["from"], "recipe": c["recipe"], "speedup": 1.0, "verified": True,
                                   "status": "ok"} for c in entry["candidates"]]
            entry["accepted"] = False
        if fallback and not entry["confident"]:
            with store.session() as session:
                entry["tuning_job"] = enqueue_job(session, nest_id=nest_id, budget=4,
                                                  options={"params": dict(program.params)}).id
        out.append(entry)
    return {"nests": out, "rejected": []}


def search(store: Any, *, vector: list[float] | None, program: Any, k: int, settings: Any) -> list[dict[str, Any]]:
    if vector is not None:
        if len(vector) != _DIM:
            raise ParameterError(f"the embedding has {_DIM} dimensions, the vector {len(vector)}")
        return _neighbours(store, vector, k, set())
    extraction = extract_program(program)
    found: list[dict[str, Any]] = []
    for scop in extraction.scops:
        found += _neighbours(store, _vector(_features(scop)), k, set())
    return sorted(found, key=lambda n: n["distance"])[:k]


def nest_detail(store: Any, nest_id: int, *, settings: Any) -> dict[str, Any]:
    """The real pipeline's format: flat features, the embedding as a list, best recipes by target id."""
    with store.session() as session:
        nest = get_nest(session, nest_id=nest_id)
        best = {}
        for target in list_targets(session):
            for r in ranked_recipes_for(session, nest_id=nest_id, target_id=target.id, limit=1):
                best[str(target.id)] = {"recipe": r.recipe.steps, "speedup": r.measurement.speedup,
                                        "median_time_s": r.measurement.median_time_s}
    return {"id": nest.id, "program_id": nest.program_id, "index": nest.index, "normalized": nest.normalized,
            "static_features": dict(nest.static_features), "dynamic_features": dict(nest.dynamic_features),
            "embedding": _vector(nest.static_features), "model_version": "fake", "best_recipes": best}


def index_status(store: Any, *, settings: Any) -> dict[str, Any]:
    with store.session() as session:
        count = len(list_nests(session))
    return {"ready": True, "detail": f"{count} nest(s), brute force"}


