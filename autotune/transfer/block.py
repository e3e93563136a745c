"""A taller register block for a nest much larger than the neighbour that lent the block, or lent by the
nearest neighbour.

A neighbour's register block (its ``unroll_jam`` steps) was the fastest at the neighbour's own sizes.
On a nest that runs many times its iterations, the operand the block streams (gemm's ``B``, read once
per block of rows) may leave the cache it stayed in there, and a taller block, reading it half as
often, wins instead. Measured on ``examples/matmul.c`` at n = 800 (Intel Xeon, 2 threads):
isl's schedule jammed 8 x 4 16.6x and 16.1x against 12.5x and 13.0x for the 4 x 4 its neighbour
residual_block_f64 (140 x 181 x 181) lends; on AMD EPYC machines 5.7-6.4x against 3.8-4.0x.
Which is faster is not predicted here: the taller block is one more candidate, and the measurement
decides.

The nearest neighbour's blocks are offered taller whatever the sizes (each of its recipes: its best and
those of its other families): it lends the nest most of its candidates, and its search chose its
blocks for its own body and types. On syr2k_lower_f32 (m = 128, n = 160, Intel Xeon), the
2 x 2 block of the tiled recipe its nearest neighbour gemm_scale_cols_f64 lends (about its size; not
its best recipe, which uses isl's schedule and ran 0.75x) ran 4.8x and 4.7x over the original in the
paired measurement of ``perfembed measure``, the same recipe jammed 4 x 2 7.5x and 6.0x (with the
inner loop unrolled by 8 as well: 7.0x and 9.9x); autotuning's best after 100 trials jams 4 x 2 too
(about 10x). One evaluation more for each of the nearest neighbour's recipes that jams two loops.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from autotune.transfer.adapt import LoopRoles
from loopnest.errors import IllegalTransformError, RecipeError
from loopnest.ir import Scop
from loopnest.polyhedral import Dependence
from loopnest.transform.recipe import Recipe, apply_recipe

# Our nest must run at least this many times the neighbour's iterations (each loop of a 3-deep nest
# twice as long) before its block is offered taller too.
TALLER_VOLUME_RATIO = 8.0
MAX_JAM_FACTOR = 8  # the autotuner's largest single jam (autotune.search.space.steps.JAM_FACTORS)
MAX_BLOCK_COPIES = 32  # copies of the body in the whole block: 8 x 4


def volume(trips: Sequence[float]) -> float:
    """The nest's iterations as its loops' trip counts multiply (an unknown trip count: none)."""
    finite = [t for t in trips if math.isfinite(t) and t > 0]
    return math.prod(finite) if finite else 0.0


def much_larger(source: LoopRoles, target: LoopRoles) -> bool:
    """Whether the nest (``target``) runs at least :data:`TALLER_VOLUME_RATIO` times the iterations of
    the neighbour (``source``)."""
    return volume(target.trips) >= TALLER_VOLUME_RATIO * max(volume(source.trips), 1.0)


def taller_block(recipe: Recipe, scop: Scop, deps: list[Dependence]) -> Recipe | None:
    """``recipe`` (already adapted to ``scop``), when its register block jams two loops, with the factor
    of the outer of them doubled, when the doubled block stays within :data:`MAX_JAM_FACTOR` and
    :data:`MAX_BLOCK_COPIES`; None otherwise, or when the taller block is not legal here. Whom it is
    offered to (:func:`much_larger`, the nearest neighbour) is the caller's choice."""
    steps = recipe.to_dict()["steps"]
    jams = [i for i, step in enumerate(steps) if step["op"] == "unroll_jam" and isinstance(step.get("loop"), int)]
    if len(jams) < 2:  # a block has two jammed loops; one alone is the autotuner's single jam
        return None
    outer = min(jams, key=lambda i: steps[i]["loop"])
    factor = 2 * int(steps[outer]["factor"])
    copies = math.prod(int(steps[i]["factor"]) for i in jams) * 2
    if factor > MAX_JAM_FACTOR or copies > MAX_BLOCK_COPIES:
        return None
    steps[outer] = {**steps[outer], "factor": factor}
    taller = Recipe.from_dict({"steps": steps})
    try:
        apply_recipe(scop, taller, deps)
    except (IllegalTransformError, RecipeError):
        return None
    return taller
