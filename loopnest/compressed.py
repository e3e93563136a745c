"""The order of the iterations of compressed sparse loops, for the dependence analysis.

A loop ``for (j = p[f]; j < p[f + 1]; j++)`` over a pointer array ``p`` (CSR's ``rowptr``, CSC's
``colptr``) runs, for each value of ``f``, a range of ``j``; ``p`` is non-decreasing (the harness checks
it, and every compressed format has it), so the ranges of different rows are disjoint and ordered:
``f < f'`` implies ``j < j'`` for any two iterations that run. The domains over-approximate ``j`` by
array extents and lose this, so a write ``out[j]`` would seem to meet itself from every other row;
intersecting each dependence with this order removes only pairs of instances that cannot both run,
and makes the row loop of SDDMM-like nests parallel again.
"""

from __future__ import annotations

import re

import islpy as isl

from loopnest.ir import ArrayRef, Binary, Const, DynamicBound, Scop, print_expr

_PRIMED = "perfembed_t"


def _row(bound: DynamicBound) -> str | None:
    """The isl text of ``f`` (iterators ``i0``..) for bounds ``p[f] <= j < p[f + 1]``, or None."""
    low, high = bound.lower, bound.upper
    if not (isinstance(low, ArrayRef) and isinstance(high, ArrayRef) and low.name == high.name
            and len(low.subscripts) == 1 and len(high.subscripts) == 1):
        return None
    f = low.subscripts[0]
    if high.subscripts[0] != Binary("+", f, Const("1")):
        return None
    return print_expr(f, lambda d: f"i{d}")


def _order(source: DynamicBound, sink: DynamicBound) -> str | None:
    f_src, f_dst = _row(source), _row(sink)
    if f_src is None or f_dst is None or source.pointer != sink.pointer:
        return None
    f_dst = re.sub(r"\bi(\d+)\b", rf"{_PRIMED}\1", f_dst)
    j, j2 = f"i{source.depth}", f"{_PRIMED}{sink.depth}"
    return (f"(({f_dst}) = ({f_src}) or (({f_dst}) > ({f_src}) and {j2} > {j}) "
            f"or (({f_dst}) < ({f_src}) and {j2} < {j}))")


def compressed_order(scop: Scop, source: int, sink: int) -> isl.Map | None:
    """The pairs of instances of ``source`` and ``sink`` that can both run, as far as the order of their
    compressed loops over one pointer array says; None when they share none."""
    src, dst = scop.statements[source], scop.statements[sink]
    parts = [o for a in src.dynamic_bounds for b in dst.dynamic_bounds if (o := _order(a, b)) is not None]
    if not parts:
        return None
    its = ", ".join(f"i{d}" for d in range(src.depth))
    primed = ", ".join(f"{_PRIMED}{d}" for d in range(dst.depth))
    try:
        return isl.Map(f"[{', '.join(scop.params)}] -> {{ {src.name}[{its}] -> {dst.name}[{primed}] : "
                       f"{' and '.join(parts)} }}")
    except isl.Error:  # a row index that is not affine (``p[idx[i]]``): no order known
        return None


def _same_iteration(scop: Scop, writer: int, sink: int) -> str | None:
    """The constraint that ``writer``'s and ``sink``'s instances are in the same iteration of every loop
    with bounds on data around ``writer`` (``i0..id`` equal), or None when ``sink`` is not inside them."""
    rows = scop.schedule.rows
    depth = max(b.depth for b in scop.statements[writer].dynamic_bounds)
    if tuple(rows[writer][: 2 * depth + 2]) != tuple(rows[sink][: 2 * depth + 2]):
        return None
    return " and ".join(f"i{d} = {_PRIMED}{d}" for d in range(depth + 1))


def definite_kills(scop: Scop, array: str) -> isl.UnionMap | None:
    """Per read of ``array``, the writes that certainly run whenever it runs and overwrite its element:
    ``sink instance -> writer instance``, for a writer in a loop with bounds on data (a may-writer in the
    dataflow) that is unguarded, writes an affine element, and shares the iteration of those loops with
    the read (``s = 0`` before ``out[j] = s`` in one iteration of ``j``). None when there is none."""
    out: isl.UnionMap | None = None
    params = ", ".join(scop.params)
    writers = {s: writes for s, w in enumerate(scop.statements) if w.dynamic_bounds and w.guard is None
               and (writes := [a for a in w.writes if a.array == array and not a.approximated])}
    if not writers:
        return None
    for t, sink in enumerate(scop.statements):
        reads = [a for a in sink.reads if a.array == array and not a.approximated]
        for s, writes in writers.items() if reads else ():
            writer = scop.statements[s]
            same = _same_iteration(scop, s, t)
            if same is None:
                continue
            its = ", ".join(f"i{d}" for d in range(sink.depth))
            primed = ", ".join(f"{_PRIMED}{d}" for d in range(writer.depth))
            pairs = isl.Map(f"[{params}] -> {{ {sink.name}[{its}] -> {writer.name}[{primed}] : {same} }}")
            for r in reads:
                for w in writes:
                    kill = isl.UnionMap(isl.Map(r.relation).apply_range(isl.Map(w.relation).reverse()).intersect(pairs))
                    out = kill if out is None else out.union(kill)
    return out
