"""Exact brute-force :class:`VectorIndex` in NumPy: the reference backend, and the fallback without faiss."""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any, Self

import numpy as np

from embeddings._index_base import FloatArray, IdArray, IndexMetadata, VectorIndex, empty_result
from embeddings.errors import IndexFileError

# Upper bound on the elements of one query-block x rows distance matrix (float32: 64 MiB).
_BLOCK_ELEMENTS = 1 << 24


class NumpyIndex(VectorIndex):
    """Exact nearest neighbours by brute force over a growable float32 matrix.

    Search costs O(rows x dim) per query, so this suits up to some tens of thousands of rows; beyond
    that use :class:`~embeddings.index.FaissIndex`. Removal compacts the matrix.

    It takes :class:`VectorIndex`'s parameters only (``dim``, ``model_version``).
    """

    backend = "numpy"

    def __init__(self, dim: int, *, model_version: str | None = None) -> None:
        super().__init__(dim, model_version=model_version)
        self._n = 0
        self._ids_buf: IdArray = np.empty(0, dtype=np.int64)
        self._vec_buf: FloatArray = np.empty((0, self._dim), dtype=np.float32)
        self._sq_norms: FloatArray = np.empty(0, dtype=np.float32)

    def __len__(self) -> int:
        return self._n

    @property
    def kind(self) -> str:
        return "exact"

    def ids(self) -> IdArray:
        return self._ids_buf[: self._n].copy()

    def vectors(self) -> FloatArray:
        """A copy of the stored vectors, row-aligned with :meth:`ids`."""
        return self._vec_buf[: self._n].copy()

    def _add(self, ids: IdArray, vectors: FloatArray) -> None:
        need = self._n + len(ids)
        if need > len(self._ids_buf):
            capacity = max(need, 2 * len(self._ids_buf), 64)
            self._ids_buf = _grow(self._ids_buf, capacity)
            self._vec_buf = _grow(self._vec_buf, capacity)
            self._sq_norms = _grow(self._sq_norms, capacity)
        self._ids_buf[self._n : need] = ids
        self._vec_buf[self._n : need] = vectors
        self._sq_norms[self._n : need] = np.einsum("ij,ij->i", vectors, vectors)
        self._n = need

    def _search(self, queries: FloatArray, k: int, allowed_ids: IdArray | None) -> tuple[FloatArray, IdArray]:
        ids = self._ids_buf[: self._n]
        vecs = self._vec_buf[: self._n]
        norms = self._sq_norms[: self._n]
        if allowed_ids is not None:
            rows = np.flatnonzero(np.isin(ids, allowed_ids))
            if len(rows) == 0:
                return empty_result(len(queries), k)
            ids, vecs, norms = ids[rows], vecs[rows], norms[rows]
        kk = min(k, len(ids))
        out_d, out_i = empty_result(len(queries), k)
        block = max(1, _BLOCK_ELEMENTS // len(ids))
        for start in range(0, len(queries), block):
            q = queries[start : start + block]
            # |q - x|^2 = |q|^2 - 2 q.x + |x|^2, in float64 so that near-ties rank like an exact search.
            d = (
                np.einsum("ij,ij->i", q, q, dtype=np.float64)[:, None]
                - 2.0 * (q.astype(np.float64) @ vecs.T.astype(np.float64))
                + norms[None, :]
            )
            np.maximum(d, 0.0, out=d)
            part = (
                np.argpartition(d, kk - 1, axis=1)[:, :kk]
                if kk < len(ids)
                else np.tile(np.arange(len(ids)), (len(q), 1))
            )
            part_d = np.take_along_axis(d, part, axis=1)
            order = np.lexsort((ids[part], part_d), axis=1)
            batch = slice(start, start + len(q))
            out_d[batch, :kk] = np.take_along_axis(part_d, order, axis=1)
            out_i[batch, :kk] = ids[np.take_along_axis(part, order, axis=1)]
        return out_d, out_i

    def _remove(self, ids: IdArray) -> int:
        keep = ~np.isin(self._ids_buf[: self._n], ids)
        removed = self._n - int(keep.sum())
        if removed:
            self._ids_buf = self._ids_buf[: self._n][keep]
            self._vec_buf = self._vec_buf[: self._n][keep]
            self._sq_norms = self._sq_norms[: self._n][keep]
            self._n = len(self._ids_buf)
        return removed

    def _params(self) -> dict[str, Any]:
        return {}

    def _write_payload(self, tmp_name: str) -> None:
        with open(tmp_name, "wb") as f:
            np.savez(f, ids=self._ids_buf[: self._n], vectors=self._vec_buf[: self._n])

    @classmethod
    def _read_payload(cls, path: Path, metadata: IndexMetadata) -> Self:
        try:
            with np.load(path, allow_pickle=False) as data:
                ids, vectors = data["ids"], data["vectors"]
        except (OSError, ValueError, KeyError, zipfile.BadZipFile) as e:
            raise IndexFileError(f"{path}: not a readable NumpyIndex file ({e}); rebuild the index") from e
        if vectors.ndim != 2 or vectors.shape[1] != metadata.dim or len(ids) != len(vectors):
            raise IndexFileError(
                f"{path}: payload of shape {vectors.shape} with {len(ids)} ids does not match its metadata "
                f"(dimension {metadata.dim}); the files are from different saves, rebuild the index"
            )
        index = cls(metadata.dim, model_version=metadata.model_version)
        index._add(ids.astype(np.int64), vectors.astype(np.float32))
        return index


def _grow(arr: np.ndarray, capacity: int) -> np.ndarray:
    out = np.empty((capacity, *arr.shape[1:]), dtype=arr.dtype)
    out[: len(arr)] = arr
    return out
