"""What ``perfembed analyze`` reports about a nest: loops, statements, accesses, trip counts,
dependences and parallel loops, as plain JSON-able data."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import islpy as isl

from loopnest.ir import Scop
from loopnest.polyhedral import Dependence, ScheduleSpace, compute_dependences
from loopnest.transform.parallel import blocking_dependences


def fix_params(scop: Scop, params: Mapping[str, int]) -> isl.Set:
    fixed = [f"{p} = {int(params[p])}" for p in scop.params if p in params]
    return isl.Set(f"[{', '.join(scop.params)}] -> {{ : {' and '.join(fixed) or 'true'} }}")


def trip_counts(scop: Scop, params: Mapping[str, int]) -> dict[str, Any]:
    """Iterations per statement and the average trip count of each loop, at these parameter values."""
    if any(p not in params for p in scop.params):
        return {}
    ctx = fix_params(scop, params)
    per_stmt = {}
    for stmt in scop.statements:
        per_stmt[stmt.name] = isl.Set(stmt.domain).intersect_params(ctx).count_val().to_python()
    loops = []
    for loop in scop.loops:
        if not loop.statements:
            continue
        dom = isl.Set(scop.statements[loop.statements[0]].domain).intersect_params(ctx)
        n = dom.dim(isl.dim_type.set)
        inner = dom.project_out(isl.dim_type.set, loop.depth + 1, n - loop.depth - 1).count_val().to_python()
        outer = dom.project_out(isl.dim_type.set, loop.depth, n - loop.depth).count_val().to_python()
        loops.append(inner / outer if outer else 0.0)
    return {"statements": per_stmt, "loops": loops}


def parallel_levels(scop: Scop, deps: list[Dependence]) -> list[dict[str, Any]]:
    space = ScheduleSpace(scop, deps)
    out = []
    for level in range(scop.schedule.n_levels):
        blocking, private = blocking_dependences(scop, space, level)
        out.append({"depth": level, "parallel": not blocking, "private": private,
                    "carried": sorted({d.kind for d in space.carried_deps(level)}),
                    "blocking": [d.describe() for d in blocking[:3]]})
    return out


def describe_scop(scop: Scop, params: Mapping[str, int] | None = None,
                  deps: list[Dependence] | None = None) -> dict[str, Any]:
    params = dict(params or {})
    deps = compute_dependences(scop) if deps is None else deps
    space = ScheduleSpace(scop, deps)
    levels = range(scop.schedule.n_levels)
    return {
        "name": scop.name,
        "function": scop.region.function,
        "region": {"file": scop.region.file, "first_line": scop.region.first_line,
                   "last_line": scop.region.last_line, "pragma": scop.region.pragma},
        "params": {p: params.get(p) for p in scop.params},
        "depth": scop.depth,
        "loops": [{"depth": lp.depth, "iterator": lp.iterator, "lower": lp.lower, "condition": lp.condition,
                   "step": lp.step, "statements": list(lp.statements)} for lp in scop.loops],
        "statements": [{"index": s.index, "text": s.to_c(lambda d, s=s: s.iterators[d]),
                        "line": s.location.line, "depth": s.depth, "domain": s.domain,
                        "accesses": [{"array": a.array, "mode": "write" if a.is_write else "read",
                                      "subscripts": list(a.subscripts)} for a in s.accesses]}
                       for s in scop.statements],
        "arrays": [{"name": a.name, "type": a.element_type, "dims": list(a.dims), "storage": a.storage,
                    "written": a.written} for a in scop.arrays.values()],
        "trip_counts": trip_counts(scop, params),
        "dependences": [{"kind": d.kind, "source": d.source, "sink": d.sink, "array": d.array,
                         "distance": [space.distance(lv, i) for lv in levels],
                         "carried_at": [lv for lv in levels if space.carried_at(lv, i)]}
                        for i, d in enumerate(deps)],
        "parallel": parallel_levels(scop, deps),
    }
