"""Neighbours: the stored nests nearest to a nest's features that have a recipe worth transferring."""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy.orm import Session

from autotune.transfer import MIN_SPEEDUP, LoopRoles, Neighbour
from database import best_recipe_for, get_nest, list_targets
from loopnest.transform.recipe import Recipe
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
    with ctx.store.session() as session:
        targets = targets_by_preference(session, target_id)
        for hit in hits:
            found = _neighbour(session, hit.nest_id, hit.name, hit.distance, targets, min_speedup)
            if found is not None:
                out.append(found)
            if len(out) == k:
                break
    return out


def _neighbour(session: Session, nest_id: int, name: str, distance: float, targets: list[int],
               min_speedup: float) -> Neighbour | None:
    """The nest as a neighbour: its best recipe on the first target in ``targets`` that has one."""
    best = None
    for candidate in targets:
        best = best_recipe_for(session, nest_id=nest_id, target_id=candidate)
        if best is not None:
            break
    # A neighbour whose best recipe never beat its own baseline by the acceptance margin has
    # nothing to transfer: its candidate would be a wasted (or harmful) evaluation.
    if best is None or (best.measurement.speedup or 0.0) < min_speedup:
        return None
    normalized = get_nest(session, nest_id=nest_id).normalized
    roles = normalized.get("loop_roles") if isinstance(normalized, dict) else None
    if roles is None:
        return None
    names = stored_loop_names(normalized)
    return Neighbour(nest_id, name, distance, Recipe.from_dict(best.recipe.steps), LoopRoles.from_dict(roles),
                     best.measurement.speedup, target_id=best.measurement.target_id,
                     loop_names=tuple(names) if names is not None else None)


def targets_by_preference(session: Session, target_id: int) -> list[int]:
    """This target, then targets of the same ISA level, then the rest."""
    targets = list_targets(session)
    here = next((t for t in targets if t.id == target_id), None)
    same_isa = [t.id for t in targets if here is not None and t.id != target_id and t.isa_level == here.isa_level]
    rest = [t.id for t in targets if t.id != target_id and t.id not in same_isa]
    return [target_id, *same_isa, *rest]
