"""What transfer tries when no stored nest is near: the recipe space's own first guesses.

A neighbour beyond the confidence gate (:func:`embeddings.designs.gate_distance`) lends recipes tuned
for a different kind of nest; in the leave-one-family-out benchmark of 2026-11-25 (build 12's seed)
the 3-d Jacobi stencil's five neighbours were tensor contractions and layout copies at squared distance
14-19 (the gate: 4.2), and none of their seven adapted recipes beat the original (0.22x-0.98x), while
two of autotuning's first ten trials, the outermost parallel loop with the innermost vectorized and
isl's schedule, were among its best. So beyond the gate transfer also screens those two, exactly as
every autotuning study starts (:meth:`autotune.space.RecipeSpace.autoschedule_params`,
:meth:`~autotune.space.RecipeSpace.parallel_simd_params`): two more evaluations, counted as such.
"""

from __future__ import annotations

from collections.abc import Mapping

from autotune.space import RecipeSpace
from loopnest.errors import IllegalTransformError, ParameterError, RecipeError
from loopnest.ir import Scop
from loopnest.polyhedral import Dependence
from loopnest.transform.recipe import Recipe, apply_recipe

__all__ = ["PRIOR_SOURCE", "space_priors"]

# Where a prior candidate comes from, in reports and answers (in place of a neighbour's name).
PRIOR_SOURCE = "recipe space (no neighbour within the gate)"


def space_priors(scop: Scop, params: Mapping[str, int], deps: list[Dependence]) -> list[Recipe]:
    """The recipe space's first guesses for ``scop`` that apply to it, each once: isl's schedule (tiled
    when a tiled variant exists), then the outermost parallel loop with the innermost one vectorized."""
    try:
        space = RecipeSpace(scop, deps, params=params)
    except (IllegalTransformError, ParameterError, RecipeError):
        return []  # a nest the space cannot describe has no first guess either
    out: list[Recipe] = []
    for point in (space.autoschedule_params(), space.parallel_simd_params()):
        if point is None:
            continue
        recipe = space.recipe_for(point)
        if recipe.is_identity or any(r.hash == recipe.hash for r in out):
            continue
        try:
            apply_recipe(scop, recipe, deps)
        except (IllegalTransformError, RecipeError):
            continue
        out.append(recipe)
    return out
