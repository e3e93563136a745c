"""Building faiss indexes and reading their contents back as NumPy arrays (views where possible).

Kept apart from :class:`~embeddings._faiss_index.FaissIndex` so the wrapper reads as bookkeeping only.
faiss is imported on first call.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from embeddings._index_base import FloatArray, IdArray

# k-means trains on at most this many points per IVF list. faiss's default (256) makes training 1M rows
# into 4096 lists take minutes on 2 cores; 64 takes ~10 s and measured the same recall@10.
IVF_TRAINING_POINTS_PER_LIST = 64
# faiss warns below 39 training points per centroid, so no more lists than rows // 39.
_MIN_POINTS_PER_LIST = 39


def faiss_module() -> Any:
    # Lazy: the index modules load at every `perfembed` start, which faiss would slow by 33 ms
    # (python -X importtime); only building or searching an index needs it.
    import faiss

    return faiss


def choose_nlist(n_rows: int) -> int:
    """IVF list count: the power of two nearest 4 sqrt(n), at most n / 39 (faiss's minimum) and >= 1."""
    target = 4.0 * math.sqrt(max(n_rows, 1))
    nlist = 1 << round(math.log2(target))  # target >= 4, so the exponent is >= 2
    return max(1, min(nlist, n_rows // _MIN_POINTS_PER_LIST))


def new_flat(dim: int) -> Any:
    faiss = faiss_module()
    return faiss.IndexIDMap(faiss.IndexFlatL2(dim))  # the Python wrapper keeps the inner index alive


def new_hnsw(dim: int, *, m: int, ef_construction: int, ef_search: int) -> Any:
    faiss = faiss_module()
    inner = faiss.IndexHNSWFlat(dim, m)
    inner.hnsw.efConstruction = ef_construction
    inner.hnsw.efSearch = ef_search
    return faiss.IndexIDMap(inner)


def train_ivf(dim: int, vectors: FloatArray, *, nprobe: int) -> Any:
    """An empty ``IndexIVFFlat`` (ids stored by the index itself) trained on ``vectors``."""
    faiss = faiss_module()
    nlist = choose_nlist(len(vectors))
    index = faiss.IndexIVFFlat(faiss.IndexFlatL2(dim), dim, nlist)
    index.cp.max_points_per_centroid = IVF_TRAINING_POINTS_PER_LIST
    index.nprobe = min(nprobe, nlist)
    index.train(vectors)
    return index


def idmap_ids(index: Any) -> IdArray:
    """A writable view of an ``IndexIDMap``'s row -> id map; invalid after the next add."""
    n = index.ntotal
    if n == 0:
        return np.empty(0, dtype=np.int64)
    view: IdArray = faiss_module().rev_swig_ptr(index.id_map.data(), n)
    return view


def idmap_vectors(index: Any, dim: int) -> FloatArray:
    """A read-only view of the vectors of an ``IndexIDMap`` over a flat or HNSW-flat index, by row."""
    n = index.ntotal
    if n == 0:
        return np.empty((0, dim), dtype=np.float32)
    faiss = faiss_module()
    inner = faiss.downcast_index(index.index)
    storage = faiss.downcast_index(inner.storage) if isinstance(inner, faiss.IndexHNSW) else inner
    view: FloatArray = faiss.rev_swig_ptr(storage.get_xb(), n * dim).reshape(n, dim)
    view.flags.writeable = False
    return view


def ivf_contents(index: Any, dim: int, *, with_vectors: bool) -> tuple[IdArray, FloatArray | None]:
    """Copies of all ids (and vectors) stored in an ``IndexIVFFlat``, list by list."""
    faiss = faiss_module()
    invlists = index.invlists
    ids: list[IdArray] = []
    vectors: list[FloatArray] = []
    for list_no in range(index.nlist):
        size = invlists.list_size(list_no)
        if size == 0:
            continue
        ids.append(faiss.rev_swig_ptr(invlists.get_ids(list_no), size).copy())
        if with_vectors:
            codes = faiss.rev_swig_ptr(invlists.get_codes(list_no), size * invlists.code_size)
            vectors.append(codes.view(np.float32).reshape(size, dim).copy())
    all_ids = np.concatenate(ids) if ids else np.empty(0, dtype=np.int64)
    if not with_vectors:
        return all_ids, None
    return all_ids, np.concatenate(vectors) if vectors else np.empty((0, dim), dtype=np.float32)


def structure_of(index: Any) -> str | None:
    """``"ivf"``, ``"hnsw"`` or ``"flat"`` for an index built by this module, None for any other."""
    faiss = faiss_module()
    if isinstance(index, faiss.IndexIVFFlat):
        return "ivf"
    if isinstance(index, faiss.IndexIDMap):
        inner = faiss.downcast_index(index.index)
        if isinstance(inner, faiss.IndexHNSWFlat):
            return "hnsw"
        if isinstance(inner, faiss.IndexFlatL2):
            return "flat"
    return None
