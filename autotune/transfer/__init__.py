"""Transfer tuning: neighbours lend their recipes, adapted to a new nest by loop roles, screened and confirmed.

The tuner is :class:`TransferTuner` (:mod:`autotune.transfer.tuner`); what a neighbour lends is in
:mod:`autotune.transfer.neighbours`; the mapping of a recipe onto a new nest in :mod:`autotune.transfer.adapt`;
the variants offered beside a lent recipe in ``balance``, ``block``, ``parallel`` and ``simd``; the recipe
space's first guesses, tried when no neighbour is near, in ``priors``.
"""

from autotune.transfer.adapt import adapt_recipe, map_loops
from autotune.transfer.neighbours import (
    MIN_SPEEDUP,
    Lent,
    Neighbour,
    best_of_families,
    lent_by,
    recipe_family,
    within_gate,
)
from autotune.transfer.priors import PRIOR_SOURCE
from autotune.transfer.tuner import (
    CONFIRM_TOP,
    NO_OP,
    PARALLEL,
    SIMD_REDUCTION,
    TALLER_BLOCK,
    Candidate,
    TransferResult,
    TransferTuner,
    distinct_code,
)
from embeddings.features.loop_roles import ROLE_NAMES, LoopRoles, loop_roles

__all__ = ["CONFIRM_TOP", "MIN_SPEEDUP", "NO_OP", "PARALLEL", "PRIOR_SOURCE", "ROLE_NAMES", "SIMD_REDUCTION",
           "TALLER_BLOCK", "Candidate", "Lent", "LoopRoles", "Neighbour", "TransferResult", "TransferTuner",
           "adapt_recipe", "best_of_families", "distinct_code", "lent_by", "loop_roles", "map_loops",
           "recipe_family", "within_gate"]
