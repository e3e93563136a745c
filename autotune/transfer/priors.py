"""What transfer tries when no stored nest is near: the recipe space's own first guesses.

A neighbour beyond the confidence gate (:func:`embeddings.designs.gate_distance`) lends recipes tuned
for a different kind of nest; in the leave-one-family-out benchmark on build 12's seed
the 3-d Jacobi stencil's five neighbours were tensor contractions and layout copies at squared distance
14-19 (the gate: 4.2), and none of their seven adapted recipes beat the original (0.22x-0.98x), while
two of autotuning's first ten trials, the outermost parallel loop with the innermost vectorized and
isl's schedule, were among its best. So beyond the gate transfer also screens those two, exactly as
every autotuning study starts (:meth:`autotune.search.space.recipe_space.RecipeSpace.autoschedule_params`,
:meth:`~autotune.search.space.recipe_space.RecipeSpace.parallel_simd_params`): two more evaluations, counted as such.

Within the gate, :data:`PRIOR_MODES` says what else is tried (``PERFEMBED_TRANSFER_PRIORS``): ``gate``
nothing (the default), ``schedule`` isl's schedule, ``always`` both first guesses. In the shipped seed
(build 14), isl's schedule alone is the nest's best recorded recipe, or within 10% of it, on 15 of the
29 2-d stencils and 6 of the 22 3-d ones, and on three nests where transfer fell short in that paper
benchmark it is their best (jacobi2d_9pt_star_copy 1.61x, jacobi3d_7pt_kji 11.29x, SpMM
3.69x, as the seed build recorded them), at one evaluation more. Three paper benchmark runs on
build 14's seed kept ``gate``: ``schedule`` lifted the 2-d stencils whose near neighbours
are gemm nests (1.00x -> 1.34x, 1.43x confirmed) but not transfer's geomean beyond run-to-run noise, at
0.5 evaluations a nest more.

One first guess is tried within the gate in every mode: isl's schedule in short time tiles, when the
nest has a time loop (:func:`has_time_loop`) and its nearest neighbour has none. Such a neighbour's
recipes know nothing of time steps: in the paper benchmark both held-out 2-d stencils
with a time loop had gemm nests as nearest neighbours (squared distance 3.0 and 3.7, within the gate
of 4.1), whose recipes confirmed 1.00x against autotuning's time-tiled 1.68x and 1.61x; with the time
tiles tried beside them, 1.34x and 1.43x. Of the 433 seed nests, the 38 with a time loop are all
stencils, and no other nest has one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from autotune.search.space.recipe_space import RecipeSpace
from autotune.transfer.adapt import ROLE_NAMES, LoopRoles
from loopnest.errors import IllegalTransformError, ParameterError, RecipeError
from loopnest.ir import Scop
from loopnest.polyhedral import Dependence
from loopnest.transform.recipe import Recipe, apply_recipe

__all__ = ["PRIOR_KINDS", "PRIOR_MODES", "PRIOR_SOURCE", "PRIOR_SOURCE_NEAR", "TIME_TILES", "has_time_loop",
           "prior_kinds", "space_priors"]

# Where a prior candidate comes from, in reports and answers (in place of a neighbour's name).
PRIOR_SOURCE = "recipe space (no neighbour within the gate)"
PRIOR_SOURCE_NEAR = "recipe space (first guess, tried beside the neighbours)"

PRIOR_KINDS = ("schedule", "parallel")  # isl's schedule; the outermost parallel loop, innermost vectorized
# Per mode, the first guesses tried when a neighbour lies within the gate (beyond it: every kind).
PRIOR_MODES: dict[str, tuple[str, ...]] = {"gate": (), "schedule": ("schedule",), "always": PRIOR_KINDS}
# isl's schedule in short time tiles, only where the nest's space has them (a stencil's time loop).
TIME_TILES = "time"


def has_time_loop(roles: LoopRoles) -> bool:
    """Whether the nest's outermost loop is a time loop: no access depends on it, it carries a
    dependence and is not parallel (the time steps of a stencil), with loops inside it."""
    vectors = roles.vectors
    if vectors.shape[0] < 2:
        return False
    outer = dict(zip(ROLE_NAMES, vectors[0], strict=True))
    return outer["stride0"] == 1.0 and outer["carries"] == 1.0 and outer["parallel"] == 0.0


def prior_kinds(mode: str, near: bool, *, time_loop_unlent: bool = False) -> tuple[str, ...]:
    """The first guesses transfer tries in ``mode`` (one of :data:`PRIOR_MODES`), with a neighbour within
    the gate (``near``) or none; ``time_loop_unlent``: the nest has a time loop and its nearest neighbour
    none, so the short time tiles are tried within the gate too."""
    kinds = PRIOR_MODES[mode] if near else PRIOR_KINDS
    return (*kinds, TIME_TILES) if near and time_loop_unlent else kinds


# Each kind of first guess: its point in the nest's recipe space, or None where the space has none.
_GUESSES: dict[str, Callable[[RecipeSpace], dict[str, Any] | None]] = {
    "schedule": RecipeSpace.autoschedule_params, "parallel": RecipeSpace.parallel_simd_params,
    TIME_TILES: lambda space: next(iter(space.time_tile_params()), None)}


def space_priors(scop: Scop, params: Mapping[str, int], deps: list[Dependence],
                 kinds: tuple[str, ...] = PRIOR_KINDS) -> list[Recipe]:
    """The recipe space's first guesses of ``kinds`` for ``scop`` that apply to it, each once: isl's
    schedule (in short time tiles with a time loop, else tiled when a tiled variant exists), then the
    outermost parallel loop with the innermost one vectorized, then (:data:`TIME_TILES`) isl's schedule
    in short time tiles where the space has them."""
    if not kinds:
        return []
    try:
        space = RecipeSpace(scop, deps, params=params)
    except (IllegalTransformError, ParameterError, RecipeError):
        return []  # a nest the space cannot describe has no first guess either
    out: list[Recipe] = []
    for point in (_GUESSES[kind](space) for kind in (*PRIOR_KINDS, TIME_TILES) if kind in kinds):
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
