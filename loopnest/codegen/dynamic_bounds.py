"""The loops whose bounds read data, for the code generator.

Such a loop is a dimension of its statements' domains bounded by array extents (an over-approximation
of the iterations that run); isl scans that range, and the generated loop is narrowed to the real
bounds: ``for (c = max(isl_lower, lower); c < min(isl_upper, upper); c++)``, with the bound
expressions printed in the loop iterators around it. Legality (:mod:`loopnest.transform.data_dependent`)
keeps each such loop whole, at a level whose schedule expression is exactly its iterator, inside the
loops of the iterators its bounds read, and shared only by statements with the same bounds.
A statement whose loop isl did not print as a ``for`` (a single iteration folded away) gets the
bounds as a condition instead.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping

from loopnest.ir import DynamicBound, ScheduleDim, Scop, print_expr

_ITERATOR = re.compile(r"i(\d+)")


def exact_levels(row: tuple[ScheduleDim, ...]) -> dict[int, int]:
    """Per statement iterator depth, the loop level whose schedule expression is exactly that iterator."""
    out: dict[int, int] = {}
    for level in range((len(row) - 1) // 2):
        e = row[2 * level + 1]
        found = _ITERATOR.fullmatch(e) if isinstance(e, str) else None
        if found is not None:
            out.setdefault(int(found.group(1)), level)
    return out


def bound_at(scop: Scop, statement: int, level: int) -> DynamicBound | None:
    """The data-dependent bounds of ``statement``'s loop at schedule ``level``, if it has them there."""
    levels = exact_levels(scop.schedule.rows[statement])
    return next((b for b in scop.statements[statement].dynamic_bounds if levels.get(b.depth) == level), None)


def bound_texts(bound: DynamicBound, iterator: Callable[[int], str]) -> tuple[str | None, str | None]:
    """The lower and (exclusive) upper bound as C text, iterators printed by ``iterator(depth)``."""
    return (None if bound.lower is None else print_expr(bound.lower, iterator),
            None if bound.upper is None else print_expr(bound.upper, iterator))


class DynamicLoops:
    """The bounds to print into the loops of one generated nest (AST iterators ``prefix<k>``)."""

    def __init__(self, scop: Scop, prefix: str, values: Mapping[str, str]) -> None:
        self.scop = scop
        self.prefix = prefix
        # The printer's iterators of unrolled loops -> their value in the copy being printed (a bound
        # naming one must print the value: the loop variable does not exist there).
        self.values = values

    def _texts(self, statement: int, bound: DynamicBound) -> tuple[str | None, str | None]:
        levels = exact_levels(self.scop.schedule.rows[statement])

        def iterator(depth: int) -> str:
            name = f"{self.prefix}{2 * levels[depth] + 1}"
            return self.values.get(name, name)

        return bound_texts(bound, iterator)

    def at(self, level: int, statements: Collection[int]) -> tuple[str | None, str | None] | None:
        """The bounds of the loop at ``level`` that runs ``statements``, or None when it has none."""
        found = {None if (b := bound_at(self.scop, s, level)) is None else self._texts(s, b) for s in statements}
        if found == {None}:
            return None
        if len(found) != 1:
            raise ValueError(f"statements {sorted(statements)} share loop {level} with different data-dependent "
                             "bounds (the legality check should have refused this schedule)")
        return found.pop()

    def condition(self, statement: int, printed: Collection[int], iterator: Callable[[int], str]) -> str | None:
        """The bounds of ``statement``'s loops with data-dependent bounds that no printed ``for`` (levels
        ``printed``) narrows, as a condition on its iterators, or None."""
        levels = exact_levels(self.scop.schedule.rows[statement])
        parts = []
        for bound in self.scop.statements[statement].dynamic_bounds:
            if levels.get(bound.depth) in printed:
                continue
            lower, upper = bound_texts(bound, iterator)
            it = iterator(bound.depth)
            parts += [f"{lower} <= {it}"] if lower is not None else []
            parts += [f"{it} < {upper}"] if upper is not None else []
        return " && ".join(parts) or None
