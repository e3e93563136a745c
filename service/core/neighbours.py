"""Neighbours: the stored nests nearest to a nest's features that have a recipe worth transferring."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sqlalchemy.orm import Session

from autotune.transfer import MIN_SPEEDUP, LoopRoles, Neighbour, lent_by
from database import RankedRecipe, get_nest, list_targets, ranked_recipes_for
from loopnest.transform.recipe_text import stored_loop_names
from service.core.context import CoreContext


def neighbours_for(ctx: CoreContext, features: Mapping[str, float | None], *, k: int,
                   exclude: tuple[int, ...] = (), min_speedup: float = MIN_SPEEDUP) -> list[Neighbour]:
    """The k nearest stored nests that have a verified recipe, with what transfer needs of them
    (``exclude``: the asking nest's own id, which is never its own neighbour).

    Recipes tuned on this target come first; a nest never measured here falls back to its best on a
    target of the same ISA level, then on any target (a shipped seed was tuned on another machine).
    Raises :class:`~database.errors.NotFoundError` before an embedding model is fitted.
    """
    target_id = ctx.target_id
    # Not filtered by target: a nest tuned only elsewhere still lends its recipe (see above).
    hits = ctx.embeddings.search(dict(features), k=k * 3, exclude=exclude)
    out: list[Neighbour] = []
    lends = Lends(ctx.settings.transfer_families, min_speedup, FAR_FAMILIES)
    with ctx.store.session() as session:
        targets = targets_by_preference(session, target_id)
        for hit in hits:
            found = _neighbour(session, hit.nest_id, hit.name, hit.distance, targets, lends.at(len(out)))
            if found is not None:
                out.append(found)
            if len(out) == k:
                break
    return out


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


def _neighbour(session: Session, nest_id: int, name: str, distance: float, targets: list[int],
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
