"""Shared checks for transformation steps."""

from __future__ import annotations

from collections.abc import Mapping

from loopnest.errors import RecipeError
from loopnest.ir import Schedule, Scop


def check_level(scop: Scop, level: object, op: str) -> int:
    if not isinstance(level, int) or isinstance(level, bool):
        raise RecipeError(f"{op}: loop must be an integer depth, got {level!r}")
    n = scop.schedule.n_levels
    if not 0 <= level < n:
        raise RecipeError(f"{op}: loop {level} does not exist; this nest has loops 0..{n - 1}")
    if not scop.schedule.statements_at(level):
        raise RecipeError(f"{op}: no statement is inside a loop at depth {level}")
    return level


def check_statements(scop: Scop, statements: object, op: str) -> list[int]:
    n = len(scop.statements)
    if statements is None:
        return list(range(n))
    if not isinstance(statements, list) or not all(isinstance(s, int) and 0 <= s < n for s in statements):
        raise RecipeError(f"{op}: statements must be a list of indices in 0..{n - 1}, got {statements!r}")
    return sorted(set(statements))


def shift_levels(mapping: Mapping[int, tuple[str, ...]], start: int, by: int) -> dict[int, tuple[str, ...]]:
    """Renumber per-level annotations after ``by`` levels were inserted before ``start``."""
    return {(lvl + by if lvl >= start else lvl): v for lvl, v in mapping.items()}


def with_rows(schedule: Schedule, rows: list[list[int | str]]) -> Schedule:
    return schedule.replace(rows=tuple(tuple(r) for r in rows))
