"""The embedding designs the embedding store fits, and the arrays they are fitted on.

Pure functions of stored values (feature dicts, recipe steps, speedups): they need NumPy and this
package's estimators, never the database, so the store (``database.embedding_store``) and the
design benchmark (``experiments/embedding_designs.py``) share them from here.

* :data:`DESIGNS` and :func:`make_embedder`: ``standard`` (:class:`StandardEmbedder`),
  ``supervised`` (:class:`SupervisedEmbedder`, fitted on :func:`tuning_targets`), ``nca``
  (:class:`NCAEmbedder`, fitted on :func:`recipe_family` labels);
* :func:`feature_matrix` and :func:`static_names`: stored feature dicts as the estimators' input;
* :func:`gate_distance`: the confidence gate of a fitted embedding.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from embeddings.errors import EmbeddingInputError
from embeddings.features.static_schema import STATIC_SCHEMA

DESIGNS = ("standard", "supervised", "nca")
# Every op of the recipe language (loopnest's STEP_KINDS; a test keeps the two the same). Spelled out
# here, not imported, so that fitting an embedding never loads islpy.
RECIPE_OPS = ("interchange", "tile", "parallelize", "vectorize", "unroll", "distribute", "fuse", "skew",
              "unroll_jam", "expand", "pack", "autoschedule")


def feature_matrix(rows: Sequence[Mapping[str, float | None]], names: Sequence[str]) -> np.ndarray:
    """Stack stored feature dicts in schema order; absent (masked) features become NaN."""
    out = np.full((len(rows), len(names)), np.nan)
    for r, row in enumerate(rows):
        for c, name in enumerate(names):
            value = row.get(name)
            if value is not None:
                out[r, c] = value
    return out


def static_names() -> tuple[str, ...]:
    """The static feature names, in schema order: what a stored nest's ``static_features`` hold."""
    return STATIC_SCHEMA.names


def make_embedder(design: str, n_components: int, random_state: int = 0) -> Any:
    """An unfitted estimator of ``design`` (one of :data:`DESIGNS`) with ``n_components`` dimensions."""
    # Lazy: scikit-learn and pandas would add 414 ms (python -X importtime) to every `perfembed` start.
    from embeddings.embedders import NCAEmbedder, StandardEmbedder, SupervisedEmbedder

    if design == "standard":
        return StandardEmbedder(n_components=n_components, log_transform=False)
    if design == "supervised":
        return SupervisedEmbedder(n_components=n_components, log_transform=False, random_state=random_state)
    if design == "nca":
        return NCAEmbedder(n_components=n_components, log_transform=False, random_state=random_state)
    raise EmbeddingInputError(f"unknown embedding design {design!r}; choose one of {', '.join(DESIGNS)}")


def recipe_family(steps: Sequence[Mapping[str, Any]]) -> str:
    """A recipe's family: the set of its operations ("interchange+parallelize+tile")."""
    return "+".join(sorted({str(s["op"]) for s in steps})) or "none"


def tuning_targets(best: Sequence[tuple[Sequence[Mapping[str, Any]], float]]) -> np.ndarray:
    """What the supervised design predicts per nest: log2 of its best speedup and which operations
    its best recipe uses (the performance characteristics that decide what to transfer)."""
    rows = []
    for steps, speedup in best:
        ops = {s["op"] for s in steps}
        rows.append([math.log2(max(speedup, 1.0)), *(1.0 if op in ops else 0.0 for op in RECIPE_OPS)])
    return np.asarray(rows, dtype=float).reshape(-1, 1 + len(RECIPE_OPS))


def gate_distance(vectors: np.ndarray, *, chunk: int = 512) -> float:
    """The confidence gate: the 90th percentile of each nest's squared distance to its nearest other
    nest (the index's metric), computed in row chunks so memory stays O(chunk x n)."""
    X = np.asarray(vectors, dtype=np.float64)
    norms = (X**2).sum(axis=1)
    nearest = np.empty(len(X))
    for start in range(0, len(X), chunk):
        block = norms[start:start + chunk, None] + norms[None, :] - 2.0 * X[start:start + chunk] @ X.T
        rows = np.arange(block.shape[0])
        block[rows, start + rows] = np.inf
        nearest[start:start + chunk] = np.maximum(block.min(axis=1), 0.0)
    return float(np.percentile(nearest, 90))
