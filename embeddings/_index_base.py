"""The :class:`VectorIndex` contract, its metadata sidecar, and input validation shared by backends."""

from __future__ import annotations

import importlib
import json
import os
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Self

import numpy as np
import numpy.typing as npt

from embeddings.errors import EmbeddingInputError, IndexFileError

# Bumped whenever the payload or sidecar layout changes; load() refuses other versions.
INDEX_FORMAT_VERSION = 1
# Backend name (stored in the sidecar) -> "module:Class", imported only when a file of that kind is loaded,
# so reading a NumPy index never imports faiss.
_BACKENDS: dict[str, str] = {
    "numpy": "embeddings._numpy_index:NumpyIndex",
    "faiss": "embeddings._faiss_index:FaissIndex",
}
_SIDECAR_SUFFIX = ".json"

IdArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float32]


def metadata_path(path: str | os.PathLike[str]) -> Path:
    """Where the metadata of the index saved at ``path`` lives: ``<path>.json`` beside it."""
    return Path(os.fspath(path) + _SIDECAR_SUFFIX)


@dataclass(frozen=True)
class IndexMetadata:
    """What a saved index records about itself, readable without loading the vectors.

    ``count`` is the number of live rows and ``model_version`` names the embedding model that produced
    the vectors (None when the caller gave none).
    """

    backend: str
    kind: str
    dim: int
    count: int
    model_version: str | None
    params: dict[str, Any] = field(default_factory=dict)
    format_version: int = INDEX_FORMAT_VERSION

    def is_stale(self, *, model_version: str | None, count: int) -> bool:
        """True when the index was built by another model or holds another number of rows."""
        return self.model_version != model_version or self.count != count

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2, sort_keys=True)

    @classmethod
    def from_json(cls, text: str, *, source: str = "<string>") -> IndexMetadata:
        try:
            raw = json.loads(text)
            version = raw.get("format_version")
            if version != INDEX_FORMAT_VERSION:
                raise IndexFileError(
                    f"{source}: index format version {version!r} is not supported (expected "
                    f"{INDEX_FORMAT_VERSION}); rebuild the index from the database"
                )
            return cls(
                backend=str(raw["backend"]),
                kind=str(raw["kind"]),
                dim=int(raw["dim"]),
                count=int(raw["count"]),
                model_version=None if raw["model_version"] is None else str(raw["model_version"]),
                params=dict(raw.get("params", {})),
                format_version=version,
            )
        except (json.JSONDecodeError, KeyError, TypeError, AttributeError) as e:
            raise IndexFileError(f"{source}: not a perfembed index metadata file ({e})") from e


def read_index_metadata(path: str | os.PathLike[str]) -> IndexMetadata:
    """Read the metadata saved beside the index at ``path``, without loading the index.

    Raises FileNotFoundError when there is no sidecar and :class:`IndexFileError` when it is unreadable.
    """
    meta_file = metadata_path(path)
    return IndexMetadata.from_json(meta_file.read_text(encoding="utf-8"), source=str(meta_file))


def write_atomically(path: Path, writer: Callable[[str], object]) -> None:
    """Call ``writer(tmp_name)`` on a temporary file next to ``path``, then rename it over ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    try:
        writer(tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class VectorIndex(ABC):
    """A nearest-neighbour index from database ids to fixed-dimension embedding vectors.

    Contract, shared by every backend and checked by ``tests/embeddings/vector_index_contract.py``:

    * **ids** are non-negative int64 database ids, unique within the index; ``-1`` pads search results.
    * **vectors** are finite, shaped ``(n, dim)``; they are stored as float32 (other float or int dtypes
      are converted). A wrong shape or dimension raises :class:`EmbeddingInputError` naming both dimensions.
    * :meth:`search` returns ``(distances, ids)``, both shaped ``(n_queries, k)``: squared Euclidean
      distances in ascending order as float32, padded with ``+inf`` and id ``-1`` when fewer than ``k``
      rows (or allowed rows) exist. ``allowed_ids`` restricts results to those ids.
    * :meth:`add` raises :class:`EmbeddingInputError` for an id that is already present; :meth:`remove` ignores unknown
      ids and returns how many rows it removed.
    * :meth:`save` writes the payload to ``path`` and :class:`IndexMetadata` to ``<path>.json``;
      :meth:`load` on this base class returns whichever backend saved the file.
    * Searches may run concurrently with each other, but not with :meth:`add` or :meth:`remove`.

    Parameters
    ----------
    dim : int
        Dimension of every vector.
    model_version : str or None
        Version of the embedding model that produced the vectors, recorded in the saved metadata.
    """

    backend: ClassVar[str]

    def __init__(self, dim: int, *, model_version: str | None = None) -> None:
        if isinstance(dim, bool) or not isinstance(dim, int | np.integer) or dim < 1:
            raise EmbeddingInputError(f"dim must be a positive integer, got {dim!r}")
        self._dim = int(dim)
        self.model_version = model_version
        self._sorted_ids_cache: IdArray | None = None

    # ---- abstract core -------------------------------------------------------------------------
    @abstractmethod
    def __len__(self) -> int:
        """Number of live rows."""

    @abstractmethod
    def ids(self) -> IdArray:
        """All live ids, as a new int64 array (order unspecified)."""

    @property
    @abstractmethod
    def kind(self) -> str:
        """The current index structure, e.g. ``"exact"``, ``"flat"`` or ``"hnsw"``."""

    @abstractmethod
    def _add(self, ids: IdArray, vectors: FloatArray) -> None: ...

    @abstractmethod
    def _search(
        self, queries: FloatArray, k: int, allowed_ids: IdArray | None
    ) -> tuple[FloatArray, IdArray]: ...

    @abstractmethod
    def _remove(self, ids: IdArray) -> int: ...

    @abstractmethod
    def _params(self) -> dict[str, Any]:
        """Constructor options to record in the metadata (JSON-serialisable)."""

    @abstractmethod
    def _write_payload(self, tmp_name: str) -> None: ...

    @classmethod
    @abstractmethod
    def _read_payload(cls, path: Path, metadata: IndexMetadata) -> Self: ...

    # ---- public API, validated once here ------------------------------------------------------
    @property
    def dim(self) -> int:
        return self._dim

    @property
    def metadata(self) -> IndexMetadata:
        return IndexMetadata(
            backend=self.backend,
            kind=self.kind,
            dim=self._dim,
            count=len(self),
            model_version=self.model_version,
            params=self._params(),
        )

    def is_stale(self, *, model_version: str | None, count: int) -> bool:
        """True when built by another embedding model or holding another number of rows than ``count``."""
        return self.metadata.is_stale(model_version=model_version, count=count)

    def add(self, ids: npt.ArrayLike, vectors: npt.ArrayLike) -> None:
        """Add one row per id; ids must be new (:class:`EmbeddingInputError` otherwise) and vectors ``(n, dim)``."""
        ids_ = as_ids(ids, "ids")
        vecs = self._as_vectors(vectors, "vectors")
        if len(ids_) != len(vecs):
            raise EmbeddingInputError(f"got {len(ids_)} ids but {len(vecs)} vectors; pass one id per vector row")
        if len(ids_) == 0:
            return
        uniq, counts = np.unique(ids_, return_counts=True)
        if len(uniq) != len(ids_):
            raise EmbeddingInputError(f"ids contain duplicates, e.g. {int(uniq[counts > 1][0])}")
        present = self._present(ids_)
        if present.any():
            raise EmbeddingInputError(
                f"{int(present.sum())} ids are already in the index, e.g. {int(ids_[present][0])}; "
                "remove() them first to replace their vectors"
            )
        self._add(ids_, vecs)
        # Two sorted runs: the stable sort (timsort) merges them in linear time.
        self._sorted_ids_cache = np.sort(np.concatenate([self._sorted_ids(), uniq]), kind="stable")

    def search(
        self, queries: npt.ArrayLike, k: int, *, allowed_ids: npt.ArrayLike | None = None
    ) -> tuple[FloatArray, IdArray]:
        """Return ``(distances, ids)`` of the ``k`` nearest rows of each query row."""
        if isinstance(k, bool) or not isinstance(k, int | np.integer) or k < 1:
            raise EmbeddingInputError(f"k must be a positive integer, got {k!r}")
        q = self._as_vectors(queries, "queries")
        allowed = None if allowed_ids is None else as_ids(allowed_ids, "allowed_ids")
        if len(q) == 0 or len(self) == 0 or (allowed is not None and len(allowed) == 0):
            return empty_result(len(q), int(k))
        return self._search(q, int(k), allowed)

    def remove(self, ids: npt.ArrayLike) -> int:
        """Remove the rows with these ids; unknown ids are ignored. Returns the number removed."""
        ids_ = as_ids(ids, "ids")
        if len(ids_) == 0 or len(self) == 0:
            return 0
        removed = self._remove(np.unique(ids_))
        if removed:
            self._sorted_ids_cache = None
        return removed

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write the index to ``path`` and its metadata to ``<path>.json`` (each atomically)."""
        target = Path(path)
        write_atomically(target, self._write_payload)
        meta = self.metadata.to_json()
        write_atomically(metadata_path(target), lambda tmp: Path(tmp).write_text(meta, encoding="utf-8"))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Self:
        """Load an index saved by :meth:`save`; on :class:`VectorIndex` itself, any backend.

        Raises FileNotFoundError when files are missing and :class:`IndexFileError` when the metadata names
        another backend than ``cls`` or disagrees with the payload (a partial write or a mixed-up file).
        """
        target = Path(path)
        meta = read_index_metadata(target)
        backend_cls = _backend_class(meta.backend, source=str(metadata_path(target)))
        if not issubclass(backend_cls, cls):
            raise IndexFileError(
                f"{target} holds a {backend_cls.__name__} index, not a {cls.__name__}; "
                f"load it with {backend_cls.__name__}.load or VectorIndex.load"
            )
        if not target.is_file():
            raise FileNotFoundError(
                f"{target}: index file missing (its metadata {metadata_path(target)} exists)"
            )
        index = backend_cls._read_payload(target, meta)
        if index.dim != meta.dim or len(index) != meta.count:
            raise IndexFileError(
                f"{target}: payload has {len(index)} rows of dimension {index.dim} but its metadata says "
                f"{meta.count} rows of dimension {meta.dim}; the files are from different saves, rebuild"
            )
        return index

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(dim={self._dim}, kind={self.kind!r}, rows={len(self)}, "
            f"model_version={self.model_version!r})"
        )

    # ---- helpers ---------------------------------------------------------------------------------
    def _sorted_ids(self) -> IdArray:
        if self._sorted_ids_cache is None:
            self._sorted_ids_cache = np.sort(self.ids())
        return self._sorted_ids_cache

    def _present(self, ids: IdArray) -> npt.NDArray[np.bool_]:
        """Which of ``ids`` are live in the index (O(len(ids) log n) after the first call)."""
        sorted_ids = self._sorted_ids()
        if len(sorted_ids) == 0:
            return np.zeros(len(ids), dtype=bool)
        pos = np.minimum(np.searchsorted(sorted_ids, ids), len(sorted_ids) - 1)
        present: npt.NDArray[np.bool_] = sorted_ids[pos] == ids
        return present

    def _as_vectors(self, vectors: npt.ArrayLike, name: str) -> FloatArray:
        arr = np.asarray(vectors)
        if arr.ndim != 2:
            hint = f"; for one vector pass {name}[None, :]" if arr.ndim == 1 else ""
            raise EmbeddingInputError(f"{name} must be a 2-D array (n, {self._dim}), got shape {arr.shape}{hint}")
        if arr.shape[1] != self._dim:
            raise EmbeddingInputError(
                f"{name} have dimension {arr.shape[1]} but this index has dimension {self._dim}; "
                "embed with the model the index was built for, or rebuild the index"
            )
        if not (np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)):
            raise EmbeddingInputError(f"{name} must be numeric, got dtype {arr.dtype}")
        out = np.ascontiguousarray(arr, dtype=np.float32)
        if not np.isfinite(out).all():
            raise EmbeddingInputError(f"{name} contain NaN or infinite values (after conversion to float32)")
        return out


def as_ids(ids: npt.ArrayLike, name: str) -> IdArray:
    """Validate database ids: a 1-D array of non-negative integers, returned as contiguous int64."""
    arr = np.asarray(ids)
    if arr.ndim != 1:
        raise EmbeddingInputError(f"{name} must be a 1-D array of integers, got shape {arr.shape}")
    if arr.size == 0:
        return np.empty(0, dtype=np.int64)
    if not np.issubdtype(arr.dtype, np.integer):
        raise EmbeddingInputError(f"{name} must be integers, got dtype {arr.dtype}")
    if arr.min() < 0:
        raise EmbeddingInputError(f"{name} must be non-negative (-1 marks padding), got {int(arr.min())}")
    return np.ascontiguousarray(arr, dtype=np.int64)


def empty_result(n_queries: int, k: int) -> tuple[FloatArray, IdArray]:
    return (
        np.full((n_queries, k), np.inf, dtype=np.float32),
        np.full((n_queries, k), -1, dtype=np.int64),
    )


def _backend_class(name: str, *, source: str) -> type[VectorIndex]:
    try:
        module_name, class_name = _BACKENDS[name].split(":")
    except KeyError:
        raise IndexFileError(f"{source}: unknown index backend {name!r}; known: {sorted(_BACKENDS)}") from None
    cls: type[VectorIndex] = getattr(importlib.import_module(module_name), class_name)
    return cls
