"""Nearest-neighbour queries of the vector index at 100k clustered 64-d vectors, one query at a time as
a suggestion asks, for the structure ``make_index`` picks and each approximate kind; recall@10 against
an exact search is checked, not timed. Build time and memory at 1M vectors: ``python -m experiments.index``."""

from __future__ import annotations

from typing import Any

import faiss
import numpy as np
import pytest

from embeddings.index import FaissIndex, make_index
from experiments.index import RECALL_TARGET, K, clustered_vectors

SIZE, DIM, QUERIES = 100_000, 64, 200


@pytest.fixture(scope="module")
def data() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    vectors = clustered_vectors(SIZE, DIM, seed=1)
    queries = clustered_vectors(QUERIES, DIM, seed=2)
    ids = np.arange(SIZE, dtype=np.int64) * 2 + 1  # database-like ids, not row numbers
    exact = faiss.IndexFlatL2(DIM)
    exact.add(vectors)
    return vectors, queries, ids, ids[exact.search(queries, K)[1]]


@pytest.mark.parametrize("kind", ["auto", "ivf", "hnsw"])
def test_single_query(benchmark: Any, data: tuple[np.ndarray, ...], kind: str) -> None:
    vectors, queries, ids, truth = data
    index = make_index(DIM, n_expected=SIZE) if kind == "auto" else FaissIndex(DIM, kind=kind)
    index.add(ids, vectors)
    rows = iter(range(10**9))

    def query() -> np.ndarray:
        i = next(rows) % QUERIES
        return index.search(queries[i : i + 1], K)[1]

    benchmark(query)
    found = index.search(queries, K)[1]
    recall = float(np.mean([len(set(a) & set(b)) / K for a, b in zip(found, truth, strict=True)]))
    benchmark.extra_info.update(structure=index.kind, recall_at_10=recall)
    assert recall >= RECALL_TARGET
