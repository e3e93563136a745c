"""What ``perfembed analyze`` reports about a nest: loops, statements, accesses, trip counts,
dependences and parallel loops, as plain JSON-able data."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import islpy as isl

from loopnest.ir import Scop, Statement, print_expr
from loopnest.parameters import missing_params
from loopnest.polyhedral import Dependence, ScheduleSpace, compute_dependences
from loopnest.transform.parallel import blocking_dependences

# isl counts points by scanning, in time that grows with the count: above this many points in the
# bounding box, counts are extrapolated from two scaled-down parameter sets (and flagged inexact).
EXACT_COUNT_LIMIT = 200_000


class _Unbounded(Exception):
    """A domain with no finite bound at these parameter values: it has no trip count."""


def _box(dom: isl.Set) -> float:
    size = 1.0
    for k in range(dom.dim(isl.dim_type.set)):
        hi, lo = dom.dim_max_val(k), dom.dim_min_val(k)
        if not (hi.is_int() and lo.is_int()):
            raise _Unbounded
        size *= max(hi.to_python() - lo.to_python() + 1, 0)
    return size


def count_points(domain: str, params: Mapping[str, int], names: tuple[str, ...],
                 project: tuple[int, int] | None = None) -> tuple[float, bool]:
    """Number of points of ``domain`` (optionally with dims ``project=(first, n)`` projected out) at
    these parameter values, and whether the number is exact."""

    def at(values: Mapping[str, int]) -> tuple[isl.Set, float]:
        ctx = isl.Set(f"[{', '.join(names)}] -> {{ : {' and '.join(f'{p} = {values[p]}' for p in names) or 'true'} }}")
        dom = isl.Set(domain).intersect_params(ctx)
        if project is not None and project[1] > 0:
            dom = dom.project_out(isl.dim_type.set, *project)
        return dom, (_box(dom) if not dom.is_empty() else 0.0)

    dom, box = at(params)
    if box <= EXACT_COUNT_LIMIT:
        return float(dom.count_val().to_python()), True
    if dom.is_box():  # rectangular (after fixing the parameters): the bounding box is the count
        return box, True
    dims = max(dom.dim(isl.dim_type.set), 1)
    factor = (box / EXACT_COUNT_LIMIT) ** (1.0 / dims) * 2
    small = {p: max(1, int(v / factor)) for p, v in params.items()}
    smaller = {p: max(1, int(v / (2 * factor))) for p, v in params.items()}
    c1 = float(at(small)[0].count_val().to_python())
    c2 = float(at(smaller)[0].count_val().to_python())
    if c1 <= 0 or c2 <= 0:
        return box, False
    exponent = min(max(math.log2(c1 / c2), 0.0), dims)
    return min(c1 * factor**exponent, box), False


def trip_counts(scop: Scop, params: Mapping[str, int]) -> dict[str, Any]:
    """Iterations per statement and the average trip count of each loop, at these parameter values
    ({} when a parameter has no value or a domain is unbounded)."""
    if missing_params(scop.params, params):
        return {}
    try:
        return _trip_counts(scop, params)
    except _Unbounded:
        return {}


def _trip_counts(scop: Scop, params: Mapping[str, int]) -> dict[str, Any]:
    values = {p: int(params[p]) for p in scop.params}
    exact = True
    per_stmt = {}
    for stmt in scop.statements:
        count, ok = count_points(stmt.domain, values, scop.params)
        for depth in _pointer_depths(stmt):  # see _compressed_trip
            outer, _ = count_points(stmt.domain, values, scop.params, (depth, stmt.depth - depth))
            count, ok = (count / outer if outer else 0.0), False
        per_stmt[stmt.name] = count
        exact = exact and ok
    loops = []
    for loop in scop.loops:
        if not loop.statements:
            continue
        stmt = scop.statements[loop.statements[0]]
        n = stmt.depth
        if loop.depth in _pointer_depths(stmt):
            inner, ok1 = _compressed_trip(stmt.domain, loop.depth, values, scop.params), False
        else:
            inner, ok1 = count_points(stmt.domain, values, scop.params, (loop.depth + 1, n - loop.depth - 1))
        outer, ok2 = count_points(stmt.domain, values, scop.params, (loop.depth, n - loop.depth))
        exact = exact and ok1 and ok2
        loops.append(inner / outer if outer else 0.0)
    return {"statements": per_stmt, "loops": loops, "exact": exact}


def _pointer_depths(stmt: Statement) -> list[int]:
    return [b.depth for b in stmt.dynamic_bounds if b.pointer is not None]


def _compressed_trip(domain: str, depth: int, values: Mapping[str, int], names: tuple[str, ...]) -> float:
    """The iterations of a loop over a compressed structure (``rowptr[i] <= j < rowptr[i+1]``) summed
    over its outer loops: at most the values its iterator spans (the domain counts them per outer
    iteration, an over-approximation), so its average trip is that over the outer iterations."""
    dom = isl.Set(domain)
    n = dom.dim(isl.dim_type.set)
    alone = dom.project_out(isl.dim_type.set, depth + 1, n - depth - 1).project_out(isl.dim_type.set, 0, depth)
    return count_points(str(alone), values, names)[0]


def parallel_levels(scop: Scop, deps: list[Dependence], space: ScheduleSpace | None = None) -> list[dict[str, Any]]:
    space = space or ScheduleSpace(scop, deps)
    out = []
    for level in range(scop.schedule.n_levels):
        blocking, private = blocking_dependences(scop, space, level)
        out.append({"depth": level, "parallel": not blocking, "private": private,
                    "carried": sorted({d.kind for d in space.carried_deps(level)}),
                    "blocking": [d.describe() for d in blocking[:3]]})
    return out


def _statement(s: Statement) -> dict[str, Any]:
    def name(d: int) -> str:
        return s.iterators[d]

    return {"index": s.index, "text": s.to_c(name), "line": s.location.line, "depth": s.depth, "domain": s.domain,
            "exact_domain": s.exact_domain,
            "guard": None if s.guard is None else print_expr(s.guard, name),
            "dynamic_bounds": [{"depth": b.depth, "iterator": name(b.depth),
                                "lower": None if b.lower is None else print_expr(b.lower, name),
                                "upper": None if b.upper is None else print_expr(b.upper, name),
                                "reason": b.reason} for b in s.dynamic_bounds],
            "accesses": [{"array": a.array, "mode": "write" if a.is_write else "read",
                          "subscripts": list(a.subscripts), "approximated": a.approximated, "reason": a.reason,
                          **({"may_write": s.may_write(a)} if a.is_write else {})} for a in s.accesses]}


def approximations(scop: Scop) -> list[str]:
    """Where the model over-approximates the nest, one sentence each: what a refused step may be down to."""
    out = []
    for s in scop.statements:
        for b in s.dynamic_bounds:
            out.append(f"{s.name} (line {s.location.line}): loop {s.iterators[b.depth]} has bounds read from data "
                       f"({b.reason}); its domain spans the extents of the arrays it subscripts, the loop is kept "
                       "whole, and the statement's writes are may-writes")
        if s.guard is not None:
            out.append(f"{s.name} (line {s.location.line}): runs under a condition on data "
                       f"({print_expr(s.guard, s.iterators.__getitem__)}); its writes are may-writes")
        for a in s.accesses:
            if a.approximated:
                out.append(f"{s.name} (line {s.location.line}): {'writes' if a.is_write else 'reads'} "
                           f"{a.subscript_text()}: {a.reason}")
    return list(dict.fromkeys(out))


def assumptions(scop: Scop) -> list[str]:
    """What the model assumes beyond the source, one sentence each: flat arrays read as rows, and the sizes
    the rows need (``lda >= p``), which the drop-in code checks at run time."""
    out = [f"{a.name} is declared flat and subscripted in rows of {' x '.join(str(d) for d in a.dims[1:])}: "
           f"analysed as an array of {len(a.dims)} dimensions" for a in scop.arrays.values() if a.flat is not None]
    context = isl.Set(scop.context)
    plain = isl.Set(f"[{', '.join(scop.params)}] -> {{ : {' and '.join(f'{p} >= 0' for p in scop.params) or 'true'} }}")
    if not plain.is_subset(context):
        assumed = str(context.gist(plain)).split(":", 1)[-1].strip(" }")
        out.append(f"the analysis assumes {assumed}; the drop-in code checks it at run time and runs the nest as "
                   "written where it fails")
    return out


def describe_scop(scop: Scop, params: Mapping[str, int] | None = None,
                  deps: list[Dependence] | None = None) -> dict[str, Any]:
    """The nest as a JSON-ready dict: loops, statements, accesses, trip counts, dependences, parallel loops."""
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
        "statements": [_statement(s) for s in scop.statements],
        "arrays": [{"name": a.name, "type": a.element_type, "dims": list(a.dims), "storage": a.storage,
                    "written": a.written, "flat": a.flat is not None} for a in scop.arrays.values()],
        "approximations": approximations(scop),
        "assumptions": assumptions(scop),
        "index_arrays": [{"name": r.name, "role": r.role, "extents": list(r.extents), "targets": list(r.targets)}
                         | ({"forms": [list(f) for f in r.forms]} if r.forms else {})
                         | ({"unbounded": list(r.unbounded)} if r.unbounded else {}) for r in scop.index_arrays],
        "index_structures": [{"pointers": s.pointers, "indices": list(s.indices), "values": list(s.values)}
                             for s in scop.index_structures],
        "trip_counts": trip_counts(scop, params),
        "dependences": [{"kind": d.kind, "source": d.source, "sink": d.sink, "array": d.array,
                         "distance": [space.distance(lv, i) for lv in levels],
                         "carried_at": [lv for lv in levels if space.carried_at(lv, i)]}
                        for i, d in enumerate(deps)],
        "parallel": parallel_levels(scop, deps, space),
    }
