"""Every index backend against the contract, then what is specific to each."""

from __future__ import annotations

import json
from pathlib import Path

import faiss
import numpy as np
import pytest
from vector_index_contract import DIM, VectorIndexContract, brute_force, random_vectors

from embeddings import _faiss_index
from embeddings._faiss_structures import choose_nlist
from embeddings.errors import IndexFileError
from embeddings.index import FaissIndex, NumpyIndex, VectorIndex, make_index


class TestNumpyIndex(VectorIndexContract):
    def make_index(self, dim: int, *, model_version: str | None = None) -> VectorIndex:
        return NumpyIndex(dim, model_version=model_version)


class TestFaissFlat(VectorIndexContract):
    def make_index(self, dim: int, *, model_version: str | None = None) -> VectorIndex:
        return FaissIndex(dim, model_version=model_version, kind="flat")


class TestFaissIVF(VectorIndexContract):
    def make_index(self, dim: int, *, model_version: str | None = None) -> VectorIndex:
        return FaissIndex(dim, model_version=model_version, kind="ivf")


class TestFaissHNSW(VectorIndexContract):
    def make_index(self, dim: int, *, model_version: str | None = None) -> VectorIndex:
        return FaissIndex(dim, model_version=model_version, kind="hnsw")


class TestFaissAutoSmallThreshold(VectorIndexContract):
    """``kind="auto"`` crossing its threshold inside the contract tests (at 40 rows)."""

    def make_index(self, dim: int, *, model_version: str | None = None) -> VectorIndex:
        return FaissIndex(dim, model_version=model_version, size_threshold=40)


# ---- FaissIndex specifics ---------------------------------------------------------------------------
@pytest.mark.parametrize("large_kind", ["ivf", "hnsw"])
def test_auto_switches_structure_past_threshold(large_kind: str) -> None:
    index = FaissIndex(DIM, size_threshold=100, large_kind=large_kind)
    vectors = random_vectors(300)
    index.add(np.arange(100), vectors[:100])
    assert index.kind == "flat"
    index.add(np.arange(100, 300), vectors[100:])
    assert index.kind == large_kind and len(index) == 300
    _, found = index.search(vectors, 1)
    np.testing.assert_array_equal(found[:, 0], np.arange(300))


def test_ivf_retrains_as_it_grows() -> None:
    index = FaissIndex(DIM, kind="ivf")
    vectors = random_vectors(2000)
    index.add(np.arange(50), vectors[:50])
    first_lists = index.faiss_index.nlist
    for start in range(50, 2000, 150):
        index.add(np.arange(start, min(start + 150, 2000)), vectors[start : start + 150])
    assert index.faiss_index.nlist > first_lists
    assert index.faiss_index.nlist == choose_nlist(index.metadata.params["ivf_trained_rows"])
    _, found = index.search(vectors[::50], 1)
    np.testing.assert_array_equal(found[:, 0], np.arange(0, 2000, 50))


@pytest.mark.parametrize(("n", "expected"), [(0, 1), (1, 1), (100, 2), (50_000, 1024), (1_000_000, 4096)])
def test_choose_nlist(n: int, expected: int) -> None:
    assert choose_nlist(n) == expected


def test_hnsw_tombstones_survive_save_and_compact(tmp_path: Path) -> None:
    index = FaissIndex(DIM, kind="hnsw")
    vectors = random_vectors(100)
    index.add(np.arange(100), vectors)
    index.remove(np.arange(0, 100, 2))
    assert index.faiss_index.ntotal == 100 and len(index) == 50
    index.save(tmp_path / "h")
    loaded = FaissIndex.load(tmp_path / "h")
    assert len(loaded) == 50
    loaded.compact()
    assert loaded.faiss_index.ntotal == 50 and loaded.kind == "hnsw"
    _, found = loaded.search(vectors[1::2], 1)
    np.testing.assert_array_equal(found[:, 0], np.arange(1, 100, 2))


def test_compact_of_auto_index_goes_back_to_flat() -> None:
    index = FaissIndex(DIM, size_threshold=50, large_kind="hnsw")
    index.add(np.arange(80), random_vectors(80))
    index.remove(np.arange(40))
    index.compact()
    assert index.kind == "flat" and len(index) == 40


@pytest.mark.parametrize("kind", ["ivf", "hnsw"])
def test_wide_filters_use_the_approximate_structure(kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_faiss_index, "FILTER_EXACT_MAX_ROWS", 10)  # force the selector path for HNSW
    index = FaissIndex(DIM, kind=kind)
    vectors = random_vectors(400)
    ids = np.arange(400, dtype=np.int64)
    index.add(ids, vectors)
    allowed = ids[ids % 3 == 0]
    queries = random_vectors(10, seed=4)
    _, found = index.search(queries, 5, allowed_ids=allowed)
    _, ref = brute_force(allowed, vectors[allowed], queries, 5)
    assert np.isin(found, allowed).all()
    assert np.mean([len(set(a) & set(b)) / 5 for a, b in zip(found, ref, strict=True)]) >= 0.9


def test_faiss_index_validates_options() -> None:
    with pytest.raises(ValueError, match="kind must be one of"):
        FaissIndex(DIM, kind="lsh")
    with pytest.raises(ValueError, match="large_kind must be one of"):
        FaissIndex(DIM, large_kind="flat")
    with pytest.raises(ValueError, match="nprobe must be a positive integer"):
        FaissIndex(DIM, nprobe=0)
    with pytest.raises(ValueError, match="dim must be a positive integer"):
        FaissIndex(0)


def test_load_with_the_wrong_backend_class_names_the_right_one(tmp_path: Path) -> None:
    NumpyIndex(DIM).save(tmp_path / "n")
    with pytest.raises(ValueError, match="holds a NumpyIndex index, not a FaissIndex"):
        FaissIndex.load(tmp_path / "n")


def test_unknown_format_version_is_refused(tmp_path: Path) -> None:
    NumpyIndex(DIM).save(tmp_path / "n")
    meta_file = tmp_path / "n.json"
    raw = json.loads(meta_file.read_text())
    raw["format_version"] = 99
    meta_file.write_text(json.dumps(raw))
    with pytest.raises(ValueError, match="format version 99 is not supported"):
        VectorIndex.load(tmp_path / "n")


def test_a_faiss_payload_of_a_structure_perfembed_does_not_write_is_an_index_file_error(tmp_path: Path) -> None:
    FaissIndex(DIM, kind="flat").save(tmp_path / "f")
    faiss.write_index(faiss.IndexFlatIP(DIM), str(tmp_path / "f"))  # right dimension, foreign structure
    with pytest.raises(IndexFileError, match="IndexFlatIP, which perfembed does not write; rebuild the index"):
        FaissIndex.load(tmp_path / "f")


# ---- make_index ------------------------------------------------------------------------------------
def test_make_index_picks_by_size() -> None:
    small = make_index(DIM, n_expected=1000)
    assert isinstance(small, FaissIndex) and small.kind == "flat"
    large = make_index(DIM, n_expected=2_000_000, model_version="v")
    assert isinstance(large, FaissIndex) and large.kind == "ivf" and large.model_version == "v"
    hnsw = make_index(DIM, n_expected=2_000_000, large_kind="hnsw", ef_search=64)
    assert hnsw.kind == "hnsw"
    assert isinstance(make_index(DIM, n_expected=10, backend="numpy"), NumpyIndex)


def test_make_index_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="backend must be one of"):
        make_index(DIM, n_expected=1, backend="annoy")
    with pytest.raises(ValueError, match="n_expected must be a non-negative integer"):
        make_index(DIM, n_expected=-1)
    with pytest.raises(ValueError, match="NumpyIndex takes no options"):
        make_index(DIM, n_expected=1, backend="numpy", nprobe=3)
