"""One nest's harness, measuring each distinct recipe once (shared by the benchmarks).

Transfer benchmarks often arrive at the same adapted recipe from several neighbours (or from a
neighbour and an autotuning winner); compiling and timing it again would cost time and, worse,
give the same recipe two different measurements in one comparison. :class:`RecipeCache` keys the
measurements by :attr:`Recipe.hash`, so every consumer sees one result per distinct recipe.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Measured:
    """One distinct recipe measured in the nest's harness."""

    recipe: Any
    speedup: float | None  # None unless the variant ran and its outputs were verified
    verified: bool
    status: str
    median_s: float | None
    message: str = ""


@dataclass
class RecipeCache:
    """A nest's :class:`~loopnest.harness.Harness` and each recipe's :class:`Measured`, by recipe hash.

    ``wall_s``: the wall-clock limit per variant (None: the harness's own limits). The harness stays
    the caller's: use it as a context manager around the cache, or call :meth:`close`.
    """

    harness: Any
    wall_s: float | None = None
    results: dict[str, Measured] = field(default_factory=dict)
    again: dict[str, Measured] = field(default_factory=dict)  # second measurements (:meth:`remeasure`)

    def evaluate(self, recipe: Any) -> Measured:
        """The recipe's measurement, taken on the first request and remembered after."""
        if recipe.hash not in self.results:
            self.results[recipe.hash] = self._measure(recipe)
        return self.results[recipe.hash]

    def remeasure(self, recipe: Any) -> Measured:
        """A second measurement of the recipe, independent of :meth:`evaluate`'s (taken on the first
        request, remembered after): a figure a method picked its winner by cannot also be the winner's
        figure, or the luckiest of its candidates' readings would be (the winner's curse)."""
        self.evaluate(recipe)
        if recipe.hash not in self.again:
            self.again[recipe.hash] = self._measure(recipe)
        return self.again[recipe.hash]

    def _measure(self, recipe: Any) -> Measured:
        try:
            ev = self.harness.evaluate(recipe, wall_seconds=self.wall_s)
            variant = ev.variant
            ok = bool(ev.verified and variant.ok and ev.speedup)
            return Measured(recipe, ev.speedup if ok else None, ok, variant.status, variant.median,
                            variant.message[:300])
        except Exception as exc:  # an illegal or broken recipe costs this candidate only
            return Measured(recipe, None, False, "error", None, f"{type(exc).__name__}: {exc}"[:300])

    def close(self) -> None:
        """Remove the harness's working folder (its binaries and outputs)."""
        self.harness.close()
