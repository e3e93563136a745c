"""Neighbours: the stored nests nearest to a nest's features that have a recipe worth transferring."""

from __future__ import annotations

from collections.abc import Mapping

from autotune.transfer.neighbours import (
    FAR_FAMILIES,
    MIN_SPEEDUP,
    Lends,
    Neighbour,
    stored_neighbour,
    targets_by_preference,
)
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
            found = stored_neighbour(session, hit.nest_id, hit.name, hit.distance, targets, lends.at(len(out)))
            if found is not None:
                out.append(found)
            if len(out) == k:
                break
    return out
