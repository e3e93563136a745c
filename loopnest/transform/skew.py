"""Loop skewing: shift an inner loop by a multiple of an outer one (for wavefront parallelism)."""

from __future__ import annotations

from loopnest.errors import RecipeError
from loopnest.ir import Scop
from loopnest.transform._common import check_level, with_rows


def skew(scop: Scop, *, loop: int, outer: int | None = None, factor: int = 1) -> Scop:
    """New ``loop`` = old ``loop`` + ``factor`` * ``outer`` (default: the loop just outside)."""
    check_level(scop, loop, "skew")
    outer = loop - 1 if outer is None else outer
    check_level(scop, outer, "skew")
    if outer >= loop:
        raise RecipeError(f"skew: outer loop {outer} must enclose loop {loop}")
    if not isinstance(factor, int) or isinstance(factor, bool) or factor == 0:
        raise RecipeError(f"skew: factor must be a non-zero integer, got {factor!r}")
    rows = [list(r) for r in scop.schedule.rows]
    for row in rows:
        inner_e, outer_e = row[2 * loop + 1], row[2 * outer + 1]
        if isinstance(inner_e, str) and isinstance(outer_e, str):
            row[2 * loop + 1] = f"({inner_e}) + {factor}*({outer_e})"
    return scop.replace(schedule=with_rows(scop.schedule, rows))
