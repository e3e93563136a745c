"""A lent recipe that runs on one thread, offered on all of them.

A neighbour lends the best recipe of each of its recipe families; on a nest whose loops play other
roles, adapting it can leave no loop to run in parallel (its parallel loop maps onto one that carries
a dependence here, or the family never had one). A recipe the screening found fast on one thread is
then also offered with its outermost loop that may run in parallel parallelized, with the OpenMP
reduction clause where that loop carries only reductions.

Measured on covariance_rank1_f64 (m = 264, n = 344, Intel Xeon, 2 threads,
``Harness.evaluate`` twice): two_mm_ikj_f64 lends ``distribute; unroll_jam 0 x2; unroll_jam 1 x4``,
1.44x and 1.82x over the original; with ``parallelize 0`` added (after ``distribute``, each
statement's outer loop: the rank-1 updates' row loop as an array reduction into ``cov``), 3.53x and
3.26x in a second session (the original 5.0 and 4.7 ms). Autotuning's best after 100 trials, which
also runs that loop in parallel with the clause, measured 4.83x and 5.29x beside the first. In the
paper benchmark before this (two runs), transfer reached 1.84x and 1.93x there, autotuning 4.05x and
5.12x.

Only after screening, and only for the fastest screened candidate that runs on one thread: one
evaluation more at most per transfer (:meth:`autotune.transfer.TransferTuner.followup`).
"""

from __future__ import annotations

from typing import Any

from loopnest.errors import IllegalTransformError, RecipeError
from loopnest.ir import Scop
from loopnest.polyhedral import Dependence
from loopnest.transform.recipe import Recipe, apply_recipe

# Steps that come after ``parallelize`` in the recipe space's order (autotune.search.space.read._STEP_ORDER).
AFTER_PARALLELIZE = frozenset({"vectorize", "unroll", "unroll_jam"})
# The loops tried, outermost first: a parallel loop deeper in would fork its threads too often.
MAX_PARALLEL_LEVEL = 2


def runs_in_parallel(recipe: Recipe) -> bool:
    """Whether ``recipe`` runs a loop in parallel (isl's schedule parallelizes its own)."""
    return any(step["op"] in ("parallelize", "autoschedule") for step in recipe.to_dict()["steps"])


def parallel_outer(recipe: Recipe, scop: Scop, deps: list[Dependence]) -> Recipe | None:
    """``recipe`` (already adapted to ``scop``) with its outermost loop that may run in parallel
    parallelized (of the first :data:`MAX_PARALLEL_LEVEL`; with the reduction clause only where the
    plain step is refused); None when it already runs in parallel or no such loop is legal."""
    if runs_in_parallel(recipe):
        return None
    steps: list[dict[str, Any]] = recipe.to_dict()["steps"]
    at = next((k for k, step in enumerate(steps) if step["op"] in AFTER_PARALLELIZE), len(steps))
    try:
        levels = apply_recipe(scop, Recipe.from_dict({"steps": steps[:at]}), deps).schedule.n_levels
    except (IllegalTransformError, RecipeError):
        return None
    for level in range(min(levels, MAX_PARALLEL_LEVEL)):
        for reduction in (False, True):
            step = {"op": "parallelize", "loop": level, **({"reduction": True} if reduction else {})}
            variant = Recipe.from_dict({"steps": [*steps[:at], step, *steps[at:]]})
            try:
                apply_recipe(scop, variant, deps)
            except (IllegalTransformError, RecipeError):
                continue
            return variant
    return None
