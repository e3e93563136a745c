"""Nearest-neighbour indexes over embedding vectors, keyed by database id.

:class:`VectorIndex` is the contract; :class:`NumpyIndex` (exact, brute force) and :class:`FaissIndex`
(flat, then IVF or HNSW past a size threshold) implement it. :func:`make_index` picks one, and
:func:`read_index_metadata` tells whether a saved index is stale without loading it::

    meta = read_index_metadata(path)
    if meta.is_stale(model_version=embedder_version, count=n_rows_in_database):
        ...  # rebuild
    index = VectorIndex.load(path)
"""

from __future__ import annotations

import importlib.util
import warnings
from typing import Any

from embeddings._faiss_index import DEFAULT_LARGE_KIND, DEFAULT_SIZE_THRESHOLD, FaissIndex
from embeddings._index_base import IndexMetadata, VectorIndex, metadata_path, read_index_metadata
from embeddings._numpy_index import NumpyIndex
from embeddings.errors import EmbeddingInputError

__all__ = [
    "FaissIndex",
    "IndexMetadata",
    "NumpyIndex",
    "VectorIndex",
    "make_index",
    "metadata_path",
    "read_index_metadata",
]

_BACKEND_CHOICES = ("auto", "faiss", "numpy")


def make_index(
    dim: int,
    *,
    n_expected: int,
    backend: str = "auto",
    model_version: str | None = None,
    **options: Any,
) -> VectorIndex:
    """Create an empty index suited to about ``n_expected`` rows.

    ``backend="auto"`` uses :class:`FaissIndex` when faiss is installed and :class:`NumpyIndex`
    otherwise (warning when ``n_expected`` is past the size brute force serves well). A faiss index
    for more than ``size_threshold`` rows is created as its ``large_kind`` (IVF by default) directly,
    skipping the flat phase and its conversion. ``options`` go to the :class:`FaissIndex` constructor.
    """
    if isinstance(n_expected, bool) or not isinstance(n_expected, int) or n_expected < 0:
        raise EmbeddingInputError(f"n_expected must be a non-negative integer, got {n_expected!r}")
    if backend not in _BACKEND_CHOICES:
        raise EmbeddingInputError(f"backend must be one of {_BACKEND_CHOICES}, got {backend!r}")
    if backend == "auto":
        backend = "faiss" if importlib.util.find_spec("faiss") is not None else "numpy"
        if backend == "numpy" and n_expected > DEFAULT_SIZE_THRESHOLD:
            warnings.warn(
                f"faiss is not installed: using exact NumPy search for {n_expected} rows, which is slow; "
                "install faiss-cpu",
                RuntimeWarning,
                stacklevel=2,
            )
    if backend == "numpy":
        if options:
            raise EmbeddingInputError(f"NumpyIndex takes no options, got {sorted(options)}")
        return NumpyIndex(dim, model_version=model_version)
    threshold = options.get("size_threshold", DEFAULT_SIZE_THRESHOLD)
    if "kind" not in options and n_expected > threshold:
        options["kind"] = options.get("large_kind", DEFAULT_LARGE_KIND)
    return FaissIndex(dim, model_version=model_version, **options)
