"""A SIMD reduction that the neighbour could not lend.

A neighbour whose innermost loop could not run as SIMD (a histogram's indirect writes, a scatter) lends
recipes without ``vectorize``; on a nest whose innermost loop is a floating-point reduction, gcc -O3
leaves that loop scalar too, since vectorizing it reorders the additions. The reduction clause of
``#pragma omp simd`` allows that reordering, so the lent recipe is also offered with its innermost loop
vectorized (an ``unroll`` of that loop dropped: gcc takes no OpenMP pragma on an unrolled loop).

Measured on dot_f64 (n = 6,553,600, Intel Xeon, 2 threads, ``perfembed measure``), whose
five nearest neighbours outside its family in the paper benchmark are histograms and a scatter: the
recipe scatter_add_f32 lends (``tile 64; parallel reduction; unroll 2``) 2.13x [2.08, 2.18] over the
original, with its inner loop vectorized instead of unrolled 3.05x [2.78, 3.29]; autotuning's best
after 100 trials, ``tile 256; parallel reduction; simd reduction``, 2.94x. One evaluation more, only on
nests whose innermost loop carries a floating-point reduction and whose lent recipe vectorizes nothing
(and is neither isl's schedule nor a register block: not measured with those). Where that loop reads
its bounds from data (a CSR row), the variant asks for 4 lanes (``simdlen``): gcc's widest vectors lose
to the scalar loop on rows of tens of entries (:mod:`autotune.search.space.inner`); a lent recipe that
vectorizes such a loop with no length is offered with 4 lanes too (:func:`short_vectors`).
"""

from __future__ import annotations

from typing import Any

from autotune.search.space.inner import SHORT_SIMD_LENGTHS
from autotune.search.space.steps import dynamic_levels
from loopnest.errors import IllegalTransformError, RecipeError
from loopnest.ir import Scop
from loopnest.polyhedral import Dependence
from loopnest.transform.recipe import Recipe, apply_recipe

FLOATING_TYPES = frozenset({"float", "double"})
# Steps that come after ``vectorize`` in the recipe space's order (autotune.search.space.steps).
AFTER_VECTORIZE = frozenset({"unroll"})


def simd_reduction(recipe: Recipe, scop: Scop, deps: list[Dependence]) -> Recipe | None:
    """``recipe`` (already adapted to ``scop``) with ``vectorize`` on the innermost loop it leaves, when
    that loop carries a reduction (legal as SIMD only with the reduction clause) and ``scop`` writes a
    floating-point variable; None when ``recipe`` uses isl's schedule or jams loops (a register block),
    or when the variant is not legal. A recipe that already vectorizes gets none, unless the loop it
    vectorizes is an innermost one with bounds on data and no length: then the variant asks for 4 lanes
    (:func:`short_vectors`)."""
    steps: list[dict[str, Any]] = recipe.to_dict()["steps"]
    # isl's schedule and register blocks (unroll_jam: its point loops would come after the innermost
    # loop found below) are left as lent: fewer candidates; whether they gain from it is not measured.
    if any(step["op"] in ("autoschedule", "unroll_jam") for step in steps):
        return None
    if any(step["op"] == "vectorize" for step in steps):
        return short_vectors(recipe, scop, deps)
    if not any(a.written and a.element_type in FLOATING_TYPES for a in scop.arrays.values()):
        return None
    try:
        applied = apply_recipe(scop, recipe, deps)
    except (IllegalTransformError, RecipeError):
        return None
    inner = applied.schedule.n_levels - 1
    if inner < 0:
        return None
    # A loop with bounds on data (a CSR row) gets the short vectors of the recipe space's "simd4".
    length = {"simdlen": SHORT_SIMD_LENGTHS[0]} if inner in dynamic_levels(applied) else {}
    kept = [step for step in steps if not (step["op"] == "unroll" and step.get("loop") == inner)]
    at = next((k for k, step in enumerate(kept) if step["op"] in AFTER_VECTORIZE), len(kept))

    def with_simd(reduction: bool) -> Recipe | None:
        simd = {"op": "vectorize", "loop": inner, "reduction": reduction, **length}
        variant = Recipe.from_dict({"steps": [*kept[:at], simd, *kept[at:]]})
        try:
            apply_recipe(scop, variant, deps)
        except (IllegalTransformError, RecipeError):
            return None
        return variant

    # A loop that is SIMD-legal without the clause carries no reduction: gcc vectorizes it itself.
    if with_simd(False) is not None:
        return None
    return with_simd(True)


def short_vectors(recipe: Recipe, scop: Scop, deps: list[Dependence]) -> Recipe | None:
    """``recipe`` with ``simdlen`` 4 on its ``vectorize`` step of the innermost loop, when that loop reads
    its bounds from data and the step names no length (gcc's widest vectors lost to 4 lanes on every
    CSR matrix measured: :mod:`autotune.search.space.inner`); None otherwise or when not legal."""
    try:
        applied = apply_recipe(scop, recipe, deps)
    except (IllegalTransformError, RecipeError):
        return None
    inner = applied.schedule.n_levels - 1
    steps: list[dict[str, Any]] = recipe.to_dict()["steps"]
    simd = [k for k, step in enumerate(steps) if step["op"] == "vectorize" and step.get("loop") == inner]
    if inner not in dynamic_levels(applied) or len(simd) != 1 or "simdlen" in steps[simd[0]]:
        return None
    steps[simd[0]] = {**steps[simd[0]], "simdlen": SHORT_SIMD_LENGTHS[0]}
    variant = Recipe.from_dict({"steps": steps})
    try:
        apply_recipe(scop, variant, deps)
    except (IllegalTransformError, RecipeError):
        return None
    return variant
