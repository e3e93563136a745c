"""The faiss :class:`VectorIndex`: exact flat search for small collections, IVF or HNSW for large ones.

faiss is imported on first use, so importing :mod:`embeddings` stays cheap for the CLI.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Self

import numpy as np

from embeddings import _faiss_structures as fs
from embeddings._index_base import FloatArray, IdArray, IndexMetadata, VectorIndex, empty_result
from embeddings.errors import EmbeddingInputError, IndexFileError

# Default size above which ``kind="auto"`` leaves exact flat search. Flat search costs ~0.05 ms per 10k
# 64-d rows on one core, so 50k rows still answer in ~0.3 ms, exactly.
DEFAULT_SIZE_THRESHOLD = 50_000
# Measured with experiments/index.py (1M clustered 64-d vectors, 2 cores): IVF (4096 lists, nprobe 32)
# builds in ~20 s, answers one query in ~0.18 ms at recall@10 1.00 and takes ~400 MB resident; HNSW
# (M=32, efConstruction 64, efSearch 128) builds in ~70 s, answers in ~0.27 ms at recall@10 0.98 and
# takes ~550 MB. On near-isotropic data (200k rows, 32 overlapping blobs) IVF still led: recall 0.976
# at 0.12 ms vs 0.955 at 0.24 ms. IVF also deletes for real. So "auto" grows into IVF; HNSW stays
# available (no training; graph search).
DEFAULT_LARGE_KIND = "ivf"
DEFAULT_NPROBE = 32
DEFAULT_HNSW_M = 32
DEFAULT_EF_CONSTRUCTION = 64
DEFAULT_EF_SEARCH = 128
# An IVF index is retrained (with more lists) once it holds this many times the rows it was trained on.
IVF_RETRAIN_GROWTH = 4
# A filtered HNSW search over at most this many allowed rows is answered exactly by brute force over
# them (~0.3 ms per 64-d query): graph search finds few of a handful of scattered rows, scanning is cheap.
FILTER_EXACT_MAX_ROWS = 20_000
# Cap on the efSearch a filtered HNSW search raises to (efSearch / allowed fraction).
MAX_FILTERED_EF_SEARCH = 2048
# Batches smaller than this search on one OpenMP thread. faiss opens parallel regions even for a single
# query, and when the cores are busy a region waits for a descheduled worker: on 2 busy cores, 1-query
# HNSW searches took p95 8 ms with 2 threads and 0.15 ms with 1 (flat at 100k: 36 ms vs 5 ms).
SINGLE_THREAD_MAX_QUERIES = 16
# HNSW cannot delete: removed rows keep this id and searches exclude negative ids.
_TOMBSTONE = -2
_INT64_MAX = int(np.iinfo(np.int64).max)
_KINDS = ("auto", "flat", "hnsw", "ivf")
_LARGE_KINDS = ("ivf", "hnsw")


class FaissIndex(VectorIndex):
    """faiss behind the :class:`VectorIndex` contract, in one of three structures.

    * ``"flat"``: ``IndexIDMap(IndexFlatL2)``, exact.
    * ``"ivf"``: ``IndexIVFFlat`` with ``~4 sqrt(n)`` lists, trained on the rows present at the first add
      and retrained (a rebuild, ~20 s per million 64-d rows on 2 cores) whenever the index has grown
      ``IVF_RETRAIN_GROWTH`` times past that. Approximate: ``nprobe`` lists are scanned per query.
    * ``"hnsw"``: ``IndexIDMap(IndexHNSWFlat)``, approximate, no training. HNSW cannot delete, so
      :meth:`remove` leaves tombstones that searches skip; :meth:`compact` rebuilds without them.

    ``kind="auto"`` starts flat and is rebuilt as ``large_kind`` the first time an :meth:`add` takes it
    past ``size_threshold`` rows; it never converts back (except through :meth:`compact`).

    Parameters
    ----------
    dim, model_version
        As for :class:`VectorIndex`.
    kind : {"auto", "flat", "ivf", "hnsw"}
        Index structure; "auto" chooses by size as described above.
    size_threshold : int
        Row count above which ``kind="auto"`` leaves flat search.
    large_kind : {"ivf", "hnsw"}
        The structure ``kind="auto"`` grows into.
    nprobe : int
        IVF lists scanned per query: the IVF recall/latency knob. Mutable.
    hnsw_m : int
        HNSW graph degree (twice that on the base level); memory grows by ``8 * hnsw_m`` bytes per row.
    ef_construction : int
        HNSW candidate list size while building.
    ef_search : int
        HNSW candidate list size while searching (raised to ``k`` when smaller). Mutable.
    """

    backend = "faiss"

    def __init__(
        self,
        dim: int,
        *,
        model_version: str | None = None,
        kind: str = "auto",
        size_threshold: int = DEFAULT_SIZE_THRESHOLD,
        large_kind: str = DEFAULT_LARGE_KIND,
        nprobe: int = DEFAULT_NPROBE,
        hnsw_m: int = DEFAULT_HNSW_M,
        ef_construction: int = DEFAULT_EF_CONSTRUCTION,
        ef_search: int = DEFAULT_EF_SEARCH,
    ) -> None:
        super().__init__(dim, model_version=model_version)
        if kind not in _KINDS:
            raise EmbeddingInputError(f"kind must be one of {_KINDS}, got {kind!r}")
        if large_kind not in _LARGE_KINDS:
            raise EmbeddingInputError(f"large_kind must be one of {_LARGE_KINDS}, got {large_kind!r}")
        for name, value in [
            ("size_threshold", size_threshold),
            ("nprobe", nprobe),
            ("hnsw_m", hnsw_m),
            ("ef_construction", ef_construction),
            ("ef_search", ef_search),
        ]:
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise EmbeddingInputError(f"{name} must be a positive integer, got {value!r}")
        self._kind_option = kind
        self.size_threshold = size_threshold
        self.large_kind = large_kind
        self.nprobe = nprobe
        self.hnsw_m = hnsw_m
        self.ef_construction = ef_construction
        self.ef_search = ef_search
        self._structure = "flat" if kind == "auto" else kind
        self._index: Any = None if self._structure == "ivf" else self._new_idmap(self._structure)
        self._ivf_ids: IdArray = np.empty(0, dtype=np.int64)  # ivf only: every id, in no order
        self._ivf_trained_rows = 0
        self._n_tombstones = 0  # hnsw only
        self._position_cache: tuple[IdArray, IdArray] | None = None  # hnsw only: sorted ids, rows

    @property
    def kind(self) -> str:
        return self._structure

    @property
    def faiss_index(self) -> Any:
        """The underlying faiss index (None for an empty IVF); changing it bypasses this wrapper."""
        return self._index

    # ---- VectorIndex core -----------------------------------------------------------------------
    def __len__(self) -> int:
        if self._structure == "ivf":
            return len(self._ivf_ids)
        return int(self._index.ntotal) - self._n_tombstones

    def ids(self) -> IdArray:
        if self._structure == "ivf":
            return self._ivf_ids.copy()
        view = fs.idmap_ids(self._index)
        return view[view >= 0] if self._n_tombstones else view.copy()

    def _add(self, ids: IdArray, vectors: FloatArray) -> None:
        self._position_cache = None
        total = len(self) + len(ids)
        if self._kind_option == "auto" and self._structure == "flat" and total > self.size_threshold:
            self._rebuild(self.large_kind, *self._contents(), ids, vectors)
        elif self._structure == "ivf" and total > IVF_RETRAIN_GROWTH * self._ivf_trained_rows:
            self._rebuild("ivf", *self._contents(), ids, vectors)
        elif self._structure == "ivf":
            self._index.add_with_ids(vectors, ids)
            self._ivf_ids = np.concatenate([self._ivf_ids, ids])
        else:
            self._index.add_with_ids(vectors, ids)

    def _remove(self, ids: IdArray) -> int:
        self._position_cache = None
        if self._structure == "hnsw":
            view = fs.idmap_ids(self._index)
            hit = np.isin(view, ids)
            view[hit] = _TOMBSTONE
            self._n_tombstones += int(hit.sum())
            return int(hit.sum())
        removed = int(self._index.remove_ids(fs.faiss_module().IDSelectorBatch(ids)))
        if self._structure == "ivf":
            self._ivf_ids = self._ivf_ids[~np.isin(self._ivf_ids, ids)]
        return removed

    def _search(self, queries: FloatArray, k: int, allowed_ids: IdArray | None) -> tuple[FloatArray, IdArray]:
        if len(queries) >= SINGLE_THREAD_MAX_QUERIES:
            return self._search_parallel(queries, k, allowed_ids)
        faiss = fs.faiss_module()
        threads = faiss.omp_get_max_threads()  # a per-thread setting: other threads are unaffected
        faiss.omp_set_num_threads(1)
        try:
            return self._search_parallel(queries, k, allowed_ids)
        finally:
            faiss.omp_set_num_threads(threads)

    def _search_parallel(
        self, queries: FloatArray, k: int, allowed_ids: IdArray | None
    ) -> tuple[FloatArray, IdArray]:
        faiss = fs.faiss_module()
        selector = None
        widen = 1.0  # how much wider to search when a filter rejects most candidates
        if allowed_ids is not None:
            if self._structure == "hnsw":
                rows = self._rows_of(allowed_ids)
                if len(rows) <= FILTER_EXACT_MAX_ROWS:
                    return self._exact_search_rows(queries, k, rows)
                widen = len(self) / len(rows)
            elif self._structure == "ivf":
                widen = len(self) / max(int(self._present(allowed_ids).sum()), 1)
            selector = faiss.IDSelectorBatch(allowed_ids)
        elif self._n_tombstones:
            selector = faiss.IDSelectorRange(0, _INT64_MAX)
        if self._structure == "hnsw":
            ef = max(self.ef_search, k)
            ef = min(math.ceil(ef * widen), max(ef, MAX_FILTERED_EF_SEARCH))
            params = faiss.SearchParametersHNSW(sel=selector, efSearch=ef)
        elif self._structure == "ivf":
            nprobe = min(math.ceil(self.nprobe * widen), self._index.nlist)
            params = faiss.SearchParametersIVF(sel=selector, nprobe=nprobe)
        else:
            params = None if selector is None else faiss.SearchParameters(sel=selector)
        distances, labels = self._index.search(queries, k, params=params)
        distances[labels < 0] = np.inf
        return distances, labels

    # ---- structure changes ----------------------------------------------------------------------
    def compact(self) -> None:
        """Rebuild an HNSW index without the rows :meth:`remove` tombstoned (a full rebuild)."""
        if not self._n_tombstones:
            return
        ids, vectors = self._contents()
        small = self._kind_option == "auto" and len(ids) <= self.size_threshold
        self._rebuild("flat" if small else "hnsw", ids, vectors)

    def _contents(self) -> tuple[IdArray, FloatArray]:
        """Copies of the live ids and their vectors."""
        if self._structure == "ivf":
            if self._index is None:
                return np.empty(0, dtype=np.int64), np.empty((0, self._dim), dtype=np.float32)
            ids, vectors = fs.ivf_contents(self._index, self._dim, with_vectors=True)
            assert vectors is not None
            return ids, vectors
        view = fs.idmap_ids(self._index)
        alive = view >= 0
        return view[alive].copy(), fs.idmap_vectors(self._index, self._dim)[alive].copy()

    def _rebuild(self, structure: str, *parts: np.ndarray) -> None:
        """Replace the faiss index by a new ``structure`` holding ``(ids, vectors)`` pairs from ``parts``."""
        pairs = [(i, v) for i, v in zip(parts[0::2], parts[1::2], strict=True) if len(i)]
        if len(pairs) == 1:  # avoid copying the (possibly huge) batch when nothing else is stored
            ids, vectors = pairs[0]
        else:
            ids = np.concatenate([i for i, _ in pairs])
            vectors = np.concatenate([v for _, v in pairs])
        self._n_tombstones = 0
        self._position_cache = None
        self._structure = structure
        if structure == "ivf":
            self._index = fs.train_ivf(self._dim, vectors, nprobe=self.nprobe)
            self._ivf_trained_rows = len(ids)
            self._ivf_ids = ids.copy()  # never alias the caller's array
        else:
            self._index = self._new_idmap(structure)
        if len(ids):
            self._index.add_with_ids(vectors, ids)

    def _new_idmap(self, structure: str) -> Any:
        if structure == "hnsw":
            return fs.new_hnsw(
                self._dim, m=self.hnsw_m, ef_construction=self.ef_construction, ef_search=self.ef_search
            )
        return fs.new_flat(self._dim)

    # ---- filtered HNSW helpers ------------------------------------------------------------------
    def _rows_of(self, ids: IdArray) -> IdArray:
        """Internal rows of an ``IndexIDMap`` holding these ids (unknown ids are skipped)."""
        if self._position_cache is None:
            view = fs.idmap_ids(self._index)
            order = np.argsort(view, kind="stable")
            self._position_cache = (view[order], order.astype(np.int64))
        sorted_ids, rows = self._position_cache
        if len(sorted_ids) == 0:
            return np.empty(0, dtype=np.int64)
        pos = np.minimum(np.searchsorted(sorted_ids, ids), len(sorted_ids) - 1)
        found: IdArray = rows[pos[sorted_ids[pos] == ids]]
        return found

    def _exact_search_rows(self, queries: FloatArray, k: int, rows: IdArray) -> tuple[FloatArray, IdArray]:
        out_d, out_i = empty_result(len(queries), k)
        kk = min(k, len(rows))
        if kk == 0:
            return out_d, out_i
        subset = np.ascontiguousarray(fs.idmap_vectors(self._index, self._dim)[rows])
        distances, local = fs.faiss_module().knn(queries, subset, kk)
        out_d[:, :kk] = distances
        out_i[:, :kk] = fs.idmap_ids(self._index)[rows][local]
        return out_d, out_i

    # ---- persistence ----------------------------------------------------------------------------
    def _params(self) -> dict[str, Any]:
        return {
            "kind": self._kind_option,
            "size_threshold": self.size_threshold,
            "large_kind": self.large_kind,
            "nprobe": self.nprobe,
            "hnsw_m": self.hnsw_m,
            "ef_construction": self.ef_construction,
            "ef_search": self.ef_search,
            "ivf_trained_rows": self._ivf_trained_rows,
        }

    def _write_payload(self, tmp_name: str) -> None:
        index = self._index if self._index is not None else fs.new_flat(self._dim)  # an untrained IVF
        fs.faiss_module().write_index(index, tmp_name)

    @classmethod
    def _read_payload(cls, path: Path, metadata: IndexMetadata) -> Self:
        params = dict(metadata.params)
        trained_rows = int(params.pop("ivf_trained_rows", 0))
        index = cls(metadata.dim, model_version=metadata.model_version, **params)
        try:
            loaded = fs.faiss_module().read_index(str(path))
        except RuntimeError as e:  # faiss reports unreadable or truncated files as RuntimeError
            raise IndexFileError(f"{path}: not a readable faiss index ({e}); rebuild the index") from e
        if loaded.d != metadata.dim:
            raise IndexFileError(
                f"{path}: holds vectors of dimension {loaded.d} but its metadata says {metadata.dim}; "
                "the files are from different saves, rebuild the index"
            )
        structure = fs.structure_of(loaded)
        if structure is None:
            raise IndexFileError(f"{path}: a faiss {type(loaded).__name__}, which perfembed does not write; "
                                 "rebuild the index")
        if metadata.kind == "ivf" and loaded.ntotal == 0 and structure == "flat":
            return index  # an IVF index saved before its first add
        index._structure = structure
        index._index = loaded
        if index._structure == "ivf":
            index._ivf_ids = fs.ivf_contents(loaded, metadata.dim, with_vectors=False)[0]
            index._ivf_trained_rows = trained_rows or int(loaded.ntotal)
        elif index._structure == "hnsw":
            index._n_tombstones = int((fs.idmap_ids(loaded) < 0).sum())
        return index
