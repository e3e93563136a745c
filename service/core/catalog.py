"""Search and detail: the stored nests nearest to a vector or a program, one stored nest's features,
embedding and best recipes, and whether the index can answer."""

from __future__ import annotations

from collections.abc import Sequence

from database import (
    best_recipe_for,
    get_nest,
    list_embedding_models,
    list_targets,
    load_embeddings,
    nest_summaries,
)
from database.embedding_store import Hit
from database.errors import NotFoundError
from embeddings.features import static_features
from loopnest.errors import ParameterError
from loopnest.frontend.program import extract_program, nest_name
from loopnest.parameters import require_params
from loopnest.transform.recipe import Recipe
from loopnest.transform.recipe_text import recipe_text, stored_loop_names
from service.core.analysis import ProgramAnalysis
from service.core.context import CoreContext
from service.core.measured import local_target_id, target_views
from service.core.sources import nest_label
from service.core.types import BestRecipe, IndexStatus, NestDetail, ProgramSource, SearchHit


def search(ctx: CoreContext, *, vector: Sequence[float] | None, program: ProgramSource | None, k: int,
           name: str | None = None, analysis: ProgramAnalysis | None = None) -> list[SearchHit]:
    """The k stored nests nearest to ``vector`` or to the first nest of ``program`` (called ``name`` in
    errors, default ``program.c``; ``analysis``: the program's, when the caller has it), nearest first."""
    if vector is not None:
        hits = ctx.embeddings.search(list(vector), k)
    elif program is not None:
        # The analysis is most of a search by program and depends on the program alone: remembered.
        features = ctx.cache.memoized("features", program.key(),
                                      lambda: first_nest_features(program, name, analysis=analysis))
        hits = ctx.embeddings.search(features, k)
    else:
        raise ParameterError("search needs a vector or a program")
    return _with_targets(ctx, hits)


def _with_targets(ctx: CoreContext, hits: list[Hit]) -> list[SearchHit]:
    views = {}
    if any(h.best_target_id is not None for h in hits):
        with ctx.store.session() as session:
            views = target_views(list_targets(session), local_target_id(session, cc=ctx.settings.cc))
    return [SearchHit(h.nest_id, h.name, h.distance, h.best_speedup, h.best_target_id,
                      None if h.best_target_id is None else views.get(h.best_target_id)) for h in hits]


def first_nest_features(program: ProgramSource, name: str | None = None, *,
                        analysis: ProgramAnalysis | None = None) -> dict[str, float | None]:
    """The static features of the program's first nest (what a search by program embeds), from
    ``analysis`` when given."""
    scops = extract_program(program).scops if analysis is None else [n.scop for n in analysis.check_for(program).nests]
    if not scops:
        raise ParameterError(f"{name or 'the program'} has no supported loop nest")
    params = require_params(scops[0].params, program.params,
                            what=nest_label(scops[0], f"{name}:" if name else None))
    if analysis is not None:
        return dict(analysis.nests[0].static_features())
    return static_features(scops[0], params).to_dict()


def nest_detail(ctx: CoreContext, nest_id: int) -> NestDetail:
    """A stored nest: features, embedding, and its best recipe on each target (in its own loop names,
    naming the target and whether it is this machine); :class:`NotFoundError` for an unknown id."""
    with ctx.store.session() as session:
        nest = get_nest(session, nest_id=nest_id)
        models = list_embedding_models(session)
        embedding = None
        if models:
            vectors = load_embeddings(session, model_version=models[-1].version, nest_ids=[nest_id])
            embedding = tuple(float(x) for x in vectors.get(nest_id, ())) or None
        targets = target_views(list_targets(session), local_target_id(session, cc=ctx.settings.cc))
        names = stored_loop_names(nest.normalized)
        best = []
        for target_id, target in targets.items():
            ranked = best_recipe_for(session, nest_id=nest_id, target_id=target_id)
            if ranked is not None:
                recipe = Recipe.from_dict(ranked.recipe.steps)
                best.append(BestRecipe(target_id, recipe.to_dict(), recipe_text(recipe, names),
                                       ranked.measurement.speedup, ranked.measurement.median_time_s, target,
                                       ranked.measurement.program_check))
        summary = nest_summaries(session, nest_ids=[nest_id]).get(nest_id)
    return NestDetail(id=nest.id, name=None if summary is None else nest_name(summary[0], summary[1]),
                      program_id=nest.program_id, index=nest.index, normalized=nest.normalized,
                      static_features=dict(nest.static_features), dynamic_features=dict(nest.dynamic_features),
                      embedding=embedding, model_version=models[-1].version if models else None,
                      best_recipes=tuple(best))


def index_status(ctx: CoreContext) -> IndexStatus:
    """For /readyz: whether the embedding index can answer (no model yet counts as ready)."""
    try:
        index = ctx.embeddings.index()
    except NotFoundError:
        return IndexStatus(True, "no embedding model fitted yet")
    except (OSError, ValueError) as exc:
        return IndexStatus(False, f"index unavailable: {exc}")
    return IndexStatus(True, f"{len(index)} nests indexed")

