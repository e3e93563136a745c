"""Neighbours: stored nests that lend their recipes to a new nest, and which of their recipes they lend.

A neighbour lends its best recipe of each of a few recipe families (:func:`best_of_families`), read from
the database as it ranks a nest's measurements (:func:`stored_neighbour`); the nearest
:data:`TRANSFER_NEAR` lend more families than the ones after them (:class:`Lends`). Finding the nearest
nests is the embedding store's search; the service puts the two together.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from database import RankedRecipe, get_nest, list_targets, ranked_recipes_for
from embeddings.features.loop_roles import LoopRoles
from loopnest.transform.recipe import Recipe
from loopnest.transform.recipe_text import stored_loop_names

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

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


# Distinct recipes read per neighbour to find its families (a seed nest has 20-75).
RANKED_RECIPES = 200


def stored_neighbour(session: Session, nest_id: int, name: str, distance: float, targets: list[int],
               lends: Lends) -> Neighbour | None:
    """The nest as a neighbour: its recipes on the first target in ``targets`` that has one."""
    ranked: list[RankedRecipe] = []
    for candidate in targets:
        ranked = ranked_recipes_for(session, nest_id=nest_id, target_id=candidate, limit=RANKED_RECIPES)
        if ranked:
            break
    # A neighbour whose best recipe never beat its own baseline by the acceptance margin has
    # nothing to transfer: its candidate would be a wasted (or harmful) evaluation.
    lent = [lent for lent, _ in lent_by(ranked, families=lends.families, min_speedup=lends.min_speedup)]
    if not lent:
        return None
    normalized = get_nest(session, nest_id=nest_id).normalized
    roles = normalized.get("loop_roles") if isinstance(normalized, dict) else None
    if roles is None:
        return None
    names = stored_loop_names(normalized)
    return Neighbour(nest_id, name, distance, lent[0].recipe, LoopRoles.from_dict(roles), lent[0].speedup,
                     target_id=ranked[0].measurement.target_id,
                     loop_names=tuple(names) if names is not None else None, others=tuple(lent[1:]))


def targets_by_preference(session: Session, target_id: int) -> list[int]:
    """This target, then targets of the same ISA level, then the rest."""
    targets = list_targets(session)
    here = next((t for t in targets if t.id == target_id), None)
    same_isa = [t.id for t in targets if here is not None and t.id != target_id and t.isa_level == here.isa_level]
    rest = [t.id for t in targets if t.id != target_id and t.id not in same_isa]
    return [target_id, *same_isa, *rest]
