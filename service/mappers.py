"""Explicit mappings between the API's schemas and the application core's types.

Requests become a :class:`~service.core.ProgramSource`; the core's answers become the JSON of the
response models, key by key, so that nothing internal reaches a client (the response models forbid
unknown keys: a key added here without its field is a test failure, not a leak).
"""

from __future__ import annotations

from typing import Any

from loopnest.harness.index_data import SparseChoice
from service.config import ServiceSettings
from service.core import NestDetail, NestSuggestion, ProgramSource, SearchHit, Suggestions
from service.schemas import ProgramIn
from service.services.matrices import matrix_path


def program_source(program: ProgramIn, *, settings: ServiceSettings | None = None) -> ProgramSource:
    """The program part of any request (a :class:`ProgramIn` or a subclass such as ``SuggestionsIn``);
    its ``matrix`` (an id from ``POST /v1/matrices``) is resolved to the stored file with ``settings``
    (404 for an unknown id), and left out without them (an analysis does not need it)."""
    matrix = str(matrix_path(program.matrix, settings=settings)) if program.matrix and settings else None
    sparse = None if program.sparsity is None and program.density is None and matrix is None else \
        SparseChoice(sparsity=program.sparsity or "uniform", density=program.density, matrix=matrix)
    return ProgramSource(source=program.source, headers=dict(program.headers), defines=dict(program.defines),
                         params=dict(program.params), function=program.function, name=program.name, sparse=sparse,
                         files=dict(program.files), path=program.path, include_dirs=tuple(program.include_dirs),
                         language=program.resolved_language())


def suggestions_public(answer: Suggestions, *, evaluated: bool,
                       program: dict[str, Any] | None = None) -> dict[str, Any]:
    """:class:`~service.schemas.SuggestionsPublic`; ``program``: the whole-program comparison, if one ran."""
    out: dict[str, Any] = {"nests": [suggested_nest_public(n, evaluated=evaluated) for n in answer.nests],
                           "rejected": [dict(r) for r in answer.rejected], "evaluated": evaluated}
    if program is not None:
        out["program"] = program
    return out


def suggested_nest_public(nest: NestSuggestion, *, evaluated: bool) -> dict[str, Any]:
    """One nest in the API's terms (:class:`~service.schemas.SuggestedNestPublic`): ``recipes`` are the
    adapted candidates, ``gate`` the confidence gate's decision, ``job_id`` the fallback's job;
    ``results`` are this nest's own: the measured candidates (``evaluated``) or, without evaluation, its
    result from an earlier run (``tuned_before``). A neighbour's recorded speedup is another nest's: it
    stays in ``neighbours``."""
    m = nest.measurement
    out: dict[str, Any] = {
        "index": nest.index, "name": nest.name, "function": nest.function, "nest_id": nest.nest_id,
        "params": dict(nest.params), "loop_names": list(nest.loop_names), "tuned_before": nest.tuned_before,
        "neighbours": [n.to_dict() for n in nest.neighbours], "recipes": [c.to_dict() for c in nest.candidates],
        "gate": {"confident": nest.gate.confident, "distance": nest.gate.nearest, "threshold": nest.gate.threshold,
                 "accepted": None if m is None else m.accepted},
        "job_id": nest.tuning_job}
    if m is not None:
        out.update({"baseline_seconds": m.baseline_seconds, "threads": m.threads, "accepted": m.accepted,
                    "best": None if m.best is None else m.best.to_dict(), "evaluations": m.evaluations,
                    "screening_pressure": m.screening_pressure, "busy": m.busy})
    if evaluated and m is not None:
        out["results"] = [{"source": "measured", **e.to_dict()} for e in m.evaluated]
    else:
        before = nest.tuned_before
        out["results"] = [{"source": "tuned_before", "from": nest.name, **before}] if before else []
    return out


def search_hit_public(hit: SearchHit) -> dict[str, Any]:
    """:class:`~service.schemas.NeighbourPublic`: one name per nest (``name``, PROGRAM#INDEX)."""
    return {"nest_id": hit.nest_id, "name": hit.name, "distance": hit.distance, "best_speedup": hit.best_speedup,
            "best_target_id": hit.best_target_id, "best_target": hit.best_target}


def nest_detail_public(detail: NestDetail) -> dict[str, Any]:
    """:class:`~service.schemas.NestDetailPublic`: features grouped, the embedding with its model version,
    best recipes as a list naming their targets."""
    embedding = None if detail.embedding is None else {"model_version": detail.model_version,
                                                       "vector": list(detail.embedding)}
    return {"id": detail.id, "name": detail.name, "program_id": detail.program_id, "index": detail.index,
            "normalized": detail.normalized,
            "features": {"static": dict(detail.static_features), "dynamic": dict(detail.dynamic_features)},
            "embedding": embedding,
            "best_recipes": [{"target_id": b.target_id, "recipe": b.recipe, "recipe_text": b.recipe_text,
                              "speedup": b.speedup, "median_time_s": b.median_time_s, "target": b.target,
                              "program_check": b.program_check or "measured on the nest alone"}
                             for b in detail.best_recipes]}
