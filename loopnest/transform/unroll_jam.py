"""Unroll-and-jam (register blocking): strip-mine a loop and sink its point loop innermost.

The loop at depth ``loop`` is split into a loop over blocks of ``factor`` iterations, which keeps
its place, and a point loop of at most ``factor`` iterations, which becomes the innermost level of
every statement inside it. The point loop is marked ``unroll:factor`` and ``jam:factor``: the code
generator separates the full blocks (a point loop of exactly ``factor`` iterations, which gcc
unrolls completely, so the copies are jammed into the innermost body) from the last, partial block
(the remainder). Sinking the point loop is legal exactly when the loops in between are permutable
with it; this is checked against the exact dependences of the original nest.
"""

from __future__ import annotations

import re

from loopnest.errors import IllegalTransformError, RecipeError
from loopnest.ir import Schedule, Scop
from loopnest.polyhedral import ScheduleSpace
from loopnest.transform._common import check_level, with_rows

MIN_FACTOR, MAX_FACTOR = 2, 16


def _check(scop: Scop, loop: int, factor: int) -> list[int]:
    check_level(scop, loop, "unroll_jam")
    if not isinstance(factor, int) or isinstance(factor, bool) or not MIN_FACTOR <= factor <= MAX_FACTOR:
        raise RecipeError(f"unroll_jam: factor must be an integer in {MIN_FACTOR}..{MAX_FACTOR}, got {factor!r}")
    sched = scop.schedule
    inside = sched.statements_at(loop)
    deeper = range(loop + 1, sched.n_levels)
    if not any(sched.has_loop(s, d) for s in inside for d in deeper):
        raise RecipeError(f"unroll_jam: loop {loop} has no loop inside it; use unroll")
    for s in inside:
        _check_skewed_tile(sched, loop, factor, s)
    return inside


def _check_skewed_tile(sched: Schedule, loop: int, factor: int, statement: int) -> None:
    """Refuse a factor that does not divide the size of the skewed tile the loop walks: every tile
    would get a remainder of its own (heat3d time-tiled by [3, 5, 5] and jammed by 3: 4,026 lines
    from 37 s of isl code generation, which gcc did not compile within the harness's limit)."""
    if not sched.is_skewed(statement, loop):
        return  # a rectangular tile's remainder is one loop, cheap to generate
    expr = str(sched.rows[statement][2 * loop + 1])
    tile_of = re.compile(rf"floor\(\({re.escape(expr)}\)/(\d+)\)")
    for level in range(loop):
        found = tile_of.search(str(sched.rows[statement][2 * level + 1]))
        if found and (size := int(found.group(1))) % factor:
            raise RecipeError(f"unroll_jam: factor {factor} does not divide {size}, the size of the skewed tiles "
                              f"that loop {loop} ({expr}) walks: every tile would get a remainder of its own "
                              f"(minutes of code generation); use a factor that divides {size}")


def _jammed(sched: Schedule, loop: int, factor: int, inside: list[int]) -> Schedule:
    pos = 2 * loop + 1
    rows = []
    for s, row in enumerate(sched.rows):
        new = list(row)
        if s in inside:
            e = row[pos]
            new[pos] = f"floor(({e})/{factor})"
            new += [e, 0]
        else:
            new += [0, 0]
        rows.append(new)
    point = sched.n_levels
    marks = dict(sched.marks)
    kept = tuple(m for m in marks.get(loop, ()) if not m.startswith("unroll:"))
    if kept:
        marks[loop] = kept
    else:
        marks.pop(loop, None)
    marks[point] = (f"jam:{factor}", f"unroll:{factor}")
    return with_rows(sched, rows).replace(marks=marks)


def unroll_jam(scop: Scop, *, loop: int, factor: int, space: ScheduleSpace) -> Scop:
    """Unroll the loops at depth ``loop`` by ``factor`` and jam the copies into the innermost body.

    Raises :class:`IllegalTransformError` naming the dependence that sinking the copies below the
    inner loops would reverse.
    """
    inside = _check(scop, loop, factor)
    sched = _jammed(scop.schedule, loop, factor, inside)
    dep = ScheduleSpace(scop, space.deps, sched).violated()
    if dep is not None:
        raise IllegalTransformError(
            f"unroll_jam: loop {loop} is not permutable with the loops inside it: jamming would reverse "
            f"the dependence {dep.describe()} ({dep.relation})", dependence=dep.describe())
    return scop.replace(schedule=sched)
