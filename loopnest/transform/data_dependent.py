"""What a schedule must keep of a loop whose bounds read data (``for (j = rowptr[i]; j < rowptr[i+1];
j++)``), so that the code generator can print those bounds into it (:mod:`loopnest.codegen.dynamic_bounds`).

The loop is kept whole: one loop level whose schedule expression is exactly its iterator, which no
other level uses (no tiling, skewing, strip-mining or unroll-and-jam of it); the loops of the
iterators its bounds read stay outside it, each at a level of its own iterator; and every statement
sharing that loop has the same bounds. Moving it past affine loops (SpMM's dense ``k`` interchanged
outward), tiling those, and parallel or SIMD marks stay legal where the dependences allow.
"""

from __future__ import annotations

import re

from loopnest.codegen.dynamic_bounds import bound_texts, exact_levels
from loopnest.ir import DynamicBound, Schedule, ScheduleDim, Scop, Statement


def levels_reading(row: tuple[ScheduleDim, ...], depth: int) -> list[int]:
    """The loop levels whose schedule expression reads the iterator at ``depth``."""
    token = re.compile(rf"\bi{depth}\b")
    return [lv for lv in range((len(row) - 1) // 2) if isinstance(row[2 * lv + 1], str)
            and token.search(str(row[2 * lv + 1]))]


def _placement(stmt: Statement, row: tuple[ScheduleDim, ...], bound: DynamicBound) -> str | None:
    levels = exact_levels(row)
    name = stmt.iterators[bound.depth]
    level = levels.get(bound.depth)
    if level is None or levels_reading(row, bound.depth) != [level]:
        return (f"loop {name} of {stmt.name} has bounds read from data ({bound.reason}): it is kept whole and "
                "cannot be tiled, skewed, strip-mined or unrolled-and-jammed")
    for depth in sorted(bound.iterators_read()):
        outer = levels.get(depth)
        if outer is None or outer >= level:
            return (f"the bounds of loop {name} of {stmt.name} ({bound.reason}) read {stmt.iterators[depth]}, "
                    "whose loop must stay outside it, at a level that is exactly that iterator")
    return None


def _signature(row: tuple[ScheduleDim, ...], bound: DynamicBound | None) -> tuple[str | None, str | None] | None:
    """A bound with its iterators named by their loop levels, comparable between statements."""
    if bound is None:
        return None
    levels = exact_levels(row)
    return bound_texts(bound, lambda d: f"L{levels.get(d, -1)}")


def _bound_at(stmt: Statement, row: tuple[ScheduleDim, ...], level: int) -> DynamicBound | None:
    levels = exact_levels(row)
    return next((b for b in stmt.dynamic_bounds if levels.get(b.depth) == level), None)


def _sharing(scop: Scop, schedule: Schedule, s: int, bound: DynamicBound) -> str | None:
    """A statement that would run inside ``s``'s loop with bounds on data without having the same bounds."""
    rows = schedule.rows
    level = exact_levels(rows[s])[bound.depth]
    mine = _signature(rows[s], bound)
    for t, other in enumerate(scop.statements):
        if t == s or any(rows[t][2 * k] != rows[s][2 * k] for k in range(level + 1)):
            continue
        if _signature(rows[t], _bound_at(other, rows[t], level)) != mine:
            return (f"{other.name} would run inside loop {scop.statements[s].iterators[bound.depth]} of "
                    f"{scop.statements[s].name}, whose bounds read data ({bound.reason}), without those bounds")
    return None


def dynamic_loop_problem(scop: Scop, schedule: Schedule | None = None) -> str | None:
    """Why ``schedule`` (default: the scop's) cannot keep the loops with bounds on data, or None."""
    schedule = schedule or scop.schedule
    for s, stmt in enumerate(scop.statements):
        for bound in stmt.dynamic_bounds:
            problem = _placement(stmt, schedule.rows[s], bound) or _sharing(scop, schedule, s, bound)
            if problem is not None:
                return problem
    return None
