"""The selection criterion for embedding models: does the nearest neighbour's best recipe transfer?"""

from __future__ import annotations

import math
from collections.abc import Hashable, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from embeddings.errors import EmbeddingInputError

# Rows of held-out nests per block of the pairwise distance computation (block x n float64).
_BLOCK_ROWS = 512

SpeedupTable = Sequence[Mapping[Hashable, float]] | Mapping[int, Mapping[Hashable, float]]


def evaluate_neighbour_transfer(
    embeddings: npt.ArrayLike,
    best_recipe_by_nest: Sequence[Hashable | None],
    speedup_table: SpeedupTable,
    groups: npt.ArrayLike,
    *,
    tolerance: float = 0.1,
) -> float:
    """Fraction of nests for which the nearest other-group neighbour's best recipe is nearly as good.

    Leave-one-group-out: for each nest ``i`` (row ``i`` of ``embeddings``), take its nearest neighbour
    ``j`` by Euclidean distance among nests of *other* groups (ties go to the lower index), apply ``j``'s
    best recipe to ``i`` and count a success when the measured speedup ``speedup_table[i][recipe]`` is at
    least ``(1 - tolerance)`` times ``i``'s own best, the largest speedup in ``speedup_table[i]``.

    A recipe missing from ``speedup_table[i]``, or with a non-finite or non-positive speedup, failed on
    ``i`` (did not compile, verify or finish). A neighbour without a best recipe (None) is a failure.
    Nests with no successful measurement at all have no "own best" and are left out of the fraction.

    Parameters
    ----------
    embeddings : array-like of shape (n_nests, dim)
    best_recipe_by_nest : sequence of length n_nests
        The recipe each nest transfers when it is the neighbour (normally its best measured one).
    speedup_table : sequence of mappings, or mapping from nest index to mapping
        ``speedup_table[nest][recipe]`` is the measured speedup of ``recipe`` on ``nest``.
    groups : array-like of shape (n_nests,)
        Group label per nest (e.g. the benchmark program); neighbours come from other groups only, so
        a nest is never matched with a sibling from the same source.
    tolerance : float, default=0.1
        Allowed shortfall: 0.1 counts a transfer reaching 90% of the nest's best speedup.

    Returns
    -------
    float in [0, 1]

    Raises
    ------
    EmbeddingInputError (a ValueError)
        On inconsistent lengths, fewer than two groups, or no nest with a successful measurement.
    """
    X = np.asarray(embeddings, dtype=np.float64)
    g = np.asarray(groups)
    _check_inputs(X, g, len(best_recipe_by_nest), tolerance)
    neighbours = _nearest_other_group(X, g)
    successes = evaluated = 0
    for i in range(len(X)):
        own = _measurements(speedup_table, i)
        own_best = max(own.values(), default=None)
        if own_best is None:
            continue
        evaluated += 1
        recipe = best_recipe_by_nest[int(neighbours[i])]
        transferred = own.get(recipe) if recipe is not None else None
        if transferred is not None and transferred >= (1.0 - tolerance) * own_best:
            successes += 1
    if evaluated == 0:
        raise EmbeddingInputError("no nest has a successful measurement in speedup_table; nothing to evaluate")
    return successes / evaluated


def _check_inputs(X: npt.NDArray[np.float64], groups: npt.NDArray[np.generic], n_recipes: int,
                  tolerance: float) -> None:
    """Raise :class:`EmbeddingInputError` naming the first argument of the criterion that does not fit."""
    if X.ndim != 2:
        raise EmbeddingInputError(f"embeddings must be a 2-D array (n_nests, dim), got shape {X.shape}")
    n = len(X)
    if n_recipes != n or len(groups) != n:
        raise EmbeddingInputError(
            f"embeddings have {n} rows but best_recipe_by_nest has {n_recipes} entries and "
            f"groups {len(groups)}; pass one entry per nest"
        )
    if not 0 <= tolerance < 1:
        raise EmbeddingInputError(f"tolerance must be in [0, 1), got {tolerance!r}")
    if not np.isfinite(X).all():
        raise EmbeddingInputError("embeddings contain NaN or infinite values")
    if len(np.unique(groups)) < 2:
        raise EmbeddingInputError("leave-one-group-out needs nests from at least two groups")


def _measurements(table: SpeedupTable, nest: int) -> dict[Hashable, float]:
    """The successful (finite, positive) speedups measured on ``nest``."""
    row = table.get(nest, {}) if isinstance(table, Mapping) else table[nest]
    return {
        recipe: float(s)
        for recipe, s in row.items()
        if s is not None and math.isfinite(float(s)) and float(s) > 0
    }


def _nearest_other_group(X: npt.NDArray[np.float64], groups: npt.NDArray[np.generic]) -> npt.NDArray[np.intp]:
    """Index of each row's nearest row of a different group (lowest index among ties)."""
    sq = np.einsum("ij,ij->i", X, X)
    out = np.empty(len(X), dtype=np.intp)
    for start in range(0, len(X), _BLOCK_ROWS):
        block = slice(start, start + _BLOCK_ROWS)
        d = sq[block, None] - 2.0 * X[block] @ X.T + sq[None, :]
        d[groups[block, None] == groups[None, :]] = np.inf
        out[block] = np.argmin(d, axis=1)
    return out
