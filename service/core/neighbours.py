"""Neighbours: the stored nests nearest to a nest's features that have a recipe worth transferring."""

from __future__ import annotations

from collections.abc import Mapping

from autotune.transfer.neighbours import FAR_FAMILIES, MIN_SPEEDUP, Lends, Neighbour, neighbours_from
from database.neighbourhood import near_nests
from service.core.context import CoreContext


def neighbours_for(ctx: CoreContext, features: Mapping[str, float | None], *, k: int,
                   exclude: tuple[int, ...] = (), min_speedup: float = MIN_SPEEDUP) -> list[Neighbour]:
    """The k nearest stored nests that have a verified recipe, with what transfer needs of them
    (``exclude``: the asking nest's own id, which is never its own neighbour). A suggestion reads them
    with the rest of its nest's neighbourhood (:func:`database.neighbourhood.read_neighbourhoods`).

    Recipes tuned on this target come first; a nest never measured here falls back to its best on a
    target of the same ISA level, then on any target (a shipped seed was tuned on another machine).
    Raises :class:`~database.errors.NotFoundError` before an embedding model is fitted.
    """
    near = near_nests(ctx.store, ctx.embeddings, features, target_id=ctx.target_id, lenders=k, searched=k * 3,
                      min_speedup=min_speedup, exclude=exclude)
    return neighbours_from(near, Lends(ctx.settings.transfer_families, min_speedup, FAR_FAMILIES), k)
