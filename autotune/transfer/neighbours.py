"""Neighbours: stored nests that lend their recipes to a new nest, and which of their recipes they lend.

A neighbour lends its best recipe of each of a few recipe families (:func:`best_of_families`), from its
recipes as the database ranks them (:func:`neighbour_from`, over what
:func:`database.neighbourhood.read_neighbourhoods` read); the nearest :data:`TRANSFER_NEAR` lend more
families than the ones after them (:class:`Lends`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from database import RankedRecipe
from database.neighbourhood import NearNest
from embeddings.features.loop_roles import LoopRoles
from loopnest.transform.recipe import Recipe
from loopnest.transform.recipe_text import stored_loop_names

# The acceptance margin: a recipe must beat the original by this factor to be offered.
MIN_SPEEDUP = 1.1


@dataclass(frozen=True)
class Lent:
    """A recipe a neighbour lends, with the speedup recorded for it on the neighbour's own nest."""

    recipe: Recipe
    speedup: float | None


def recipe_family(recipe: Recipe) -> tuple[Any, ...]:
    """What sets a recipe's loop structure apart: isl's own schedule, or the loop orders its
    interchanges give and whether it runs a loop in parallel. Tile sizes, unroll factors, OpenMP
    schedules and the other steps are details within one family."""
    steps = recipe.to_dict()["steps"]
    if any(step["op"] == "autoschedule" for step in steps):
        return ("autoschedule",)
    orders = tuple(tuple(step["order"]) for step in steps if step["op"] == "interchange")
    return ("loops", orders, any(step["op"] == "parallelize" for step in steps))


def best_of_families(ranked: Sequence[Lent], *, families: int, min_speedup: float) -> list[Lent]:
    """The best recipe of each of the first ``families`` families in ``ranked`` (best first) that
    reached ``min_speedup``. A neighbour's runner-up families are what its best recipe cannot carry: the
    seed's SpMM nests were tuned at 4-8 dense columns, where moving the dense loop outward won; at 16
    or 64 columns the family that keeps it innermost and runs the rows in parallel wins, and it is
    only the third family of spmm_csr_ijk_w4."""
    out: list[Lent] = []
    seen: set[tuple[Any, ...]] = set()
    for lent in ranked:
        if len(out) == families or (lent.speedup or 0.0) < min_speedup:
            break
        family = recipe_family(lent.recipe)
        if family not in seen:
            seen.add(family)
            out.append(lent)
    return out


def lent_by(ranked: Sequence[RankedRecipe], *, families: int, min_speedup: float) -> list[tuple[Lent, RankedRecipe]]:
    """What a stored nest lends (:func:`best_of_families` over its recipes as the database ranks them,
    best first), each with the stored recipe and measurement it came from."""
    lents = [Lent(Recipe.from_dict(r.recipe.steps), r.measurement.speedup) for r in ranked]
    stored = {id(lent): r for lent, r in zip(lents, ranked, strict=True)}
    return [(lent, stored[id(lent)]) for lent in best_of_families(lents, families=families, min_speedup=min_speedup)]


@dataclass(frozen=True)
class Neighbour:
    """A tuned nest from the database: its best recipe, the best of its other recipe families
    (:func:`best_of_families`), and the roles of its loops."""

    nest_id: int
    name: str
    distance: float
    recipe: Recipe
    roles: LoopRoles
    recorded_speedup: float | None = None
    target_id: int | None = None  # where ``recorded_speedup`` was measured
    loop_names: tuple[str, ...] | None = None  # the neighbour's own loop names, for its recipe's text
    others: tuple[Lent, ...] = ()  # its best recipe of each other family, best first

    @property
    def lent(self) -> tuple[Lent, ...]:
        """Every recipe it lends: its best, then the others."""
        return (Lent(self.recipe, self.recorded_speedup), *self.others)


def within_gate(neighbours: Sequence[Neighbour], gate_distance: float | None) -> bool:
    """Whether the nearest neighbour lies within the confidence gate (no gate: always; no neighbour: never)."""
    if gate_distance is None:
        return True
    return bool(neighbours) and min(nb.distance for nb in neighbours) <= gate_distance + 1e-12


# The nearest TRANSFER_NEAR neighbours lend up to ``transfer_families`` families; the ones after them
# their best alone. Their runner-up families cost evaluations and won nothing measured: in the paper
# benchmark's 15 held-out nests (Intel Xeon), no k=5 winner was a runner-up family of
# neighbour 4 or 5, and lending only their best cut transfer k=5 from 9.4 to 7.7 candidates a nest
# (10.2% -> 8.4% of autotune-100's evaluations) at the same screened geomean (2.78x; the figures the run
# measured, re-read without those candidates).
TRANSFER_NEAR = 3
FAR_FAMILIES = 1


@dataclass(frozen=True)
class Lends:
    """What a neighbour lends: its best recipe of up to ``families`` families, each at least ``min_speedup``
    (``far_families`` for those after the nearest :data:`TRANSFER_NEAR`)."""

    families: int
    min_speedup: float
    far_families: int

    def at(self, rank: int) -> Lends:
        """What the neighbour at ``rank`` (0: the nearest) lends."""
        if rank < TRANSFER_NEAR:
            return self
        return Lends(min(self.families, self.far_families), self.min_speedup, self.far_families)


def neighbour_from(near: NearNest, lends: Lends) -> Neighbour | None:
    """A stored nest (:class:`~database.neighbourhood.NearNest`, its recipes as the database ranks them) as a
    neighbour: the best recipe of each family it lends; None when it does not lend (:meth:`NearNest.lends`)."""
    if not near.lends(lends.min_speedup):
        return None
    lent = [lent for lent, _ in lent_by(near.ranked, families=lends.families, min_speedup=lends.min_speedup)]
    if not lent:  # no family asked for
        return None
    roles = near.normalized["loop_roles"]
    names = stored_loop_names(near.normalized)
    return Neighbour(near.hit.nest_id, near.hit.name, near.hit.distance, lent[0].recipe, LoopRoles.from_dict(roles),
                     lent[0].speedup, target_id=near.ranked[0].measurement.target_id,
                     loop_names=tuple(names) if names is not None else None, others=tuple(lent[1:]))


def neighbours_from(near: Sequence[NearNest], lends: Lends, k: int) -> list[Neighbour]:
    """The first ``k`` of ``near`` (nearest first) that lend a recipe, each lending what its rank allows."""
    out: list[Neighbour] = []
    for stored in near:
        found = neighbour_from(stored, lends.at(len(out)))
        if found is not None:
            out.append(found)
        if len(out) == k:
            break
    return out
