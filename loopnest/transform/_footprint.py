"""The block of an array that one iteration of a loop touches, computed with isl: the footprint,
its bounding box (an origin that is a quasi-affine function of the enclosing loops, and constant
extents), and the array dimension the innermost loop walks.

The enclosing loops are the schedule dimensions ``t0..tL`` of the loop levels ``0..L`` (named
``i0..iL`` in every isl object here): a footprint is a map ``{ [t0, .., tL] -> A[e] }``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import islpy as isl

from loopnest.errors import RecipeError
from loopnest.ir import Schedule, Scop


@dataclass(frozen=True)
class Box:
    """Per array dimension: the block's origin as isl affine text in ``i0..iL`` (the loops up to
    the packed one), and its extent (a constant)."""

    origin: tuple[str, ...]
    extents: tuple[int, ...]


def _params(scop: Scop) -> str:
    return ", ".join(scop.params)


def _its(n: int) -> str:
    return ", ".join(f"i{k}" for k in range(n))


def prefix_map(scop: Scop, schedule: Schedule, s: int, level: int) -> isl.Map:
    """``{ S[i] -> [t0, .., tL] }``: the values of loop levels ``0..level`` at each instance of ``s``."""
    stmt = scop.statements[s]
    dims = ", ".join(str(schedule.rows[s][2 * k + 1]) for k in range(level + 1))
    text = f"[{_params(scop)}] -> {{ {stmt.name}[{_its(stmt.depth)}] -> [{dims}] }}"
    return isl.Map(text).intersect_domain(isl.Set(stmt.domain))


def footprint(scop: Scop, statements: list[int], array: str, level: int) -> isl.Map:
    """``{ [t] -> A[e] }``: the elements of ``array`` the statements read in the iteration ``t`` of
    the loops ``0..level`` (the outer loops' values included)."""
    out: isl.Map | None = None
    for s in statements:
        prefix = prefix_map(scop, scop.schedule, s, level)
        for acc in scop.statements[s].reads:
            if acc.array == array:
                part = prefix.reverse().apply_range(isl.Map(acc.relation))
                out = part if out is None else out.union(part)
    assert out is not None, "footprint of statements that do not read the array"
    context = isl.Set(scop.context)
    out = out.intersect_params(context).coalesce()
    for k in range(level + 1):
        out = out.set_dim_name(isl.dim_type.in_, k, f"i{k}")
    return out


def aff_expression(aff: isl.Aff) -> str:
    """The isl text of one affine expression (``32i0 + i3``), without its space."""
    found = re.search(r"-> \[\((.*)\)\] \}$", str(aff))
    if found is None:
        raise AssertionError(f"unexpected isl affine text {aff}")
    return found.group(1)


def _dimension(fp: isl.Map, k: int) -> isl.Map:
    n = fp.dim(isl.dim_type.out)
    return fp.project_out(isl.dim_type.out, k + 1, n - k - 1).project_out(isl.dim_type.out, 0, k).reset_tuple_id(
        isl.dim_type.out)


def _candidates(dim_map: isl.Map) -> list[isl.Aff]:
    """Affine lower bounds to try as the origin: the pieces of the lexicographic minimum."""
    pieces: list[isl.Aff] = []
    dim_map.lexmin_pw_multi_aff().foreach_piece(lambda _set, ma: pieces.append(ma.get_aff(0)))
    return pieces


def _span(dim_map: isl.Map, origin: isl.Aff) -> tuple[int, int] | None:
    """The least and greatest offset from ``origin`` over the footprint, or None when unbounded."""
    offsets = dim_map.sum(isl.Map.from_aff(origin.neg())).range()
    low, high = offsets.dim_min_val(0), offsets.dim_max_val(0)
    if not (low.is_int() and high.is_int()):
        return None
    return low.to_python(), high.to_python()


def spanned_block(fp: isl.Map) -> isl.Map:
    """``{ [t] -> [e] }``: per iteration ``t``, every element between the lowest and the highest one the
    footprint ``fp`` reads, in each dimension. Each bound is an element the nest reads, so the block is
    in bounds wherever the nest is; it is one box per iteration where the footprint may be a union
    of many (a 13-point star's is 5), which isl's dataflow on the copies took 26 s to analyse."""
    out: isl.Map | None = None
    for k in range(fp.dim(isl.dim_type.out)):
        low = isl.Map.from_pw_aff(fp.dim_min(k)).apply_range(isl.Map("{ [x] -> [y] : y >= x }"))
        high = isl.Map.from_pw_aff(fp.dim_max(k)).apply_range(isl.Map("{ [x] -> [y] : y <= x }"))
        span = low.intersect(high)
        out = span if out is None else out.flat_range_product(span)
    assert out is not None, "footprint of a scalar"
    return out.coalesce()


def bounding_box(fp: isl.Map, array: str, level: int) -> Box:
    """The tightest box, over the candidates, whose origin is one quasi-affine function of the loops
    ``0..level`` and whose extents are constants; raises :class:`RecipeError` naming the dimension
    that has none."""
    origin: list[str] = []
    extents: list[int] = []
    for k in range(fp.dim(isl.dim_type.out)):
        dim_map = _dimension(fp, k)
        best: tuple[int, str] | None = None
        for aff in _candidates(dim_map):
            span = _span(dim_map, aff)
            if span is not None and (best is None or span[1] - span[0] + 1 < best[0]):
                shifted = aff.add_constant_val(isl.Val.int_from_si(aff.get_ctx(), span[0]))
                best = (span[1] - span[0] + 1, aff_expression(shifted))
        if best is None:
            raise RecipeError(
                f"pack: the block of {array} that one iteration of loop {level} reads is not bounded by a "
                f"constant in dimension {k} (it grows with the parameters); tile the loops inside first")
        extents.append(best[0])
        origin.append(best[1])
    return Box(tuple(origin), tuple(extents))


def walked_dimension(scop: Scop, s: int, relation: str) -> tuple[int, int] | None:
    """The array dimension the innermost loop of ``s`` walks in the access ``relation`` and its step,
    (None when it walks none, several, or by a step that varies)."""
    sched = scop.schedule
    inner = max(lv for lv in range(sched.n_levels) if sched.has_loop(s, lv))
    n, pos = 2 * sched.n_levels + 1, 2 * inner + 1
    stmt = scop.statements[s]
    dims = ", ".join(str(d) for d in sched.rows[s])
    rows = isl.Map(f"[{_params(scop)}] -> {{ {stmt.name}[{_its(stmt.depth)}] -> [{dims}] }}").intersect_domain(
        isl.Set(stmt.domain))
    access = rows.reverse().apply_range(isl.Map(relation))
    shifted = ", ".join(f"d{k} + 1" if k == pos else f"d{k}" for k in range(n))
    step = isl.Map(f"{{ [{', '.join(f'd{k}' for k in range(n))}] -> [{shifted}] }}")
    deltas = access.reverse().apply_range(step).apply_range(access).deltas()
    if deltas.is_empty():
        return None
    walked = []
    for k in range(deltas.dim(isl.dim_type.set)):
        low, high = deltas.dim_min_val(k), deltas.dim_max_val(k)
        if not (low.is_int() and high.is_int()):
            return None
        if (low.to_python(), high.to_python()) != (0, 0):
            if low.to_python() != high.to_python():
                return None
            walked.append((k, low.to_python()))
    return walked[0] if len(walked) == 1 else None
