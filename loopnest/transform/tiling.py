"""Rectangular tiling of a band of consecutive loop levels, one or more levels deep."""

from __future__ import annotations

from typing import TypeGuard

from loopnest.errors import RecipeError
from loopnest.ir import Scop
from loopnest.transform._common import check_level, shift_levels, with_rows


def tile(scop: Scop, *, loops: list[int], sizes: list[int] | list[list[int]]) -> Scop:
    """Tile ``loops`` (consecutive depths) by ``sizes``; a list of lists tiles repeatedly, outer first.

    The tile loops are inserted just outside the first tiled loop and shared by every statement
    in the band (statements are fused inside tiles); a size of 1 leaves that loop untiled.
    """
    if not isinstance(loops, list) or not loops:
        raise RecipeError(f"tile: loops must be a non-empty list of depths, got {loops!r}")
    if loops != list(range(loops[0], loops[0] + len(loops))):
        raise RecipeError(f"tile: loops must be consecutive depths, got {loops!r}")
    nested = bool(sizes) and all(isinstance(s, list) for s in sizes)
    levels: list[list[int]] = []
    for lvl in (list(sizes) if nested else [sizes]):
        if not _sizes_of(lvl, len(loops)):
            raise RecipeError(f"tile: sizes must be {len(loops)} positive integers per level, got {sizes!r}")
        levels.append(lvl)
    first = loops[0]
    for k, lvl in enumerate(levels):
        band = [first + k * len(loops) + j for j in range(len(loops))]
        scop = _tile_once(scop, band, lvl)
    return scop


def _sizes_of(value: object, n: int) -> TypeGuard[list[int]]:
    """Whether ``value`` is one level of tile sizes: ``n`` positive integers."""
    return (isinstance(value, list) and len(value) == n
            and all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in value))


def _tile_once(scop: Scop, band: list[int], sizes: list[int]) -> Scop:
    for level in band:
        check_level(scop, level, "tile")
    sched = scop.schedule
    a = band[0]
    rows = []
    for row in sched.rows:
        inserted: list[int | str] = []
        for level, size in zip(band, sizes, strict=True):
            e = row[2 * level + 1]
            inserted += [f"floor(({e})/{size})" if isinstance(e, str) and size > 1 else 0, 0]
        rows.append(list(row[: 2 * a + 1]) + inserted + list(row[2 * a + 1:]))
    n = len(band)
    return scop.replace(schedule=with_rows(sched, rows).replace(
        marks=shift_levels(sched.marks, a, n), private=shift_levels(sched.private, a, n)))
