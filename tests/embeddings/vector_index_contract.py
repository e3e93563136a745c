"""The behaviour every :class:`~embeddings.index.VectorIndex` backend must have.

Subclass :class:`VectorIndexContract` as ``Test<Backend>`` and implement :meth:`make_index`; pytest then
runs every ``test_*`` method against that backend (like optuna's ``StorageTestCase``). Data stays small
(at most a few hundred rows), where approximate backends must still answer exactly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from embeddings.index import IndexMetadata, VectorIndex, read_index_metadata

DIM = 8


def random_vectors(n: int, dim: int = DIM, *, seed: int = 0) -> npt.NDArray[np.float32]:
    return np.random.default_rng(seed).normal(size=(n, dim)).astype(np.float32)


def brute_force(
    ids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32], queries: npt.NDArray[np.float32], k: int
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.int64]]:
    """Reference answer in float64, padded like the contract says."""
    d = ((queries[:, None, :].astype(np.float64) - vectors[None, :, :].astype(np.float64)) ** 2).sum(-1)
    order = np.argsort(d, axis=1, kind="stable")[:, :k]
    dist = np.full((len(queries), k), np.inf)
    out = np.full((len(queries), k), -1, dtype=np.int64)
    kk = min(k, len(ids))
    dist[:, :kk] = np.take_along_axis(d, order, axis=1)
    out[:, :kk] = ids[order]
    return dist, out


class VectorIndexContract:
    """Contract tests; subclasses provide :meth:`make_index`."""

    def make_index(self, dim: int, *, model_version: str | None = None) -> VectorIndex:
        raise NotImplementedError

    # ---- basics ---------------------------------------------------------------------------------
    def test_empty_index_returns_padding(self) -> None:
        index = self.make_index(DIM)
        assert len(index) == 0
        assert index.ids().shape == (0,)
        distances, ids = index.search(random_vectors(3), 4)
        assert distances.shape == ids.shape == (3, 4)
        assert distances.dtype == np.float32 and ids.dtype == np.int64
        assert (ids == -1).all() and np.isinf(distances).all()
        assert index.remove(np.array([1, 2])) == 0

    def test_search_is_exact_on_small_data(self) -> None:
        index = self.make_index(DIM)
        vectors = random_vectors(200)
        ids = np.arange(1000, 1200, dtype=np.int64)
        index.add(ids[:50], vectors[:50])
        index.add(ids[50:], vectors[50:])
        queries = random_vectors(20, seed=1)
        distances, found = index.search(queries, 10)
        ref_d, ref_i = brute_force(ids, vectors, queries, 10)
        np.testing.assert_array_equal(found, ref_i)
        np.testing.assert_allclose(distances, ref_d, rtol=1e-4, atol=1e-4)
        assert (np.diff(distances, axis=1) >= 0).all()

    def test_each_row_is_its_own_nearest_neighbour(self) -> None:
        index = self.make_index(DIM)
        vectors = random_vectors(150)
        ids = np.arange(150, dtype=np.int64) * 7 + 3
        index.add(ids, vectors)
        distances, found = index.search(vectors, 1)
        np.testing.assert_array_equal(found[:, 0], ids)
        np.testing.assert_allclose(distances[:, 0], 0.0, atol=1e-3)

    def test_k_larger_than_size_pads(self) -> None:
        index = self.make_index(DIM)
        index.add(np.array([5, 9, 2]), random_vectors(3))
        distances, found = index.search(random_vectors(2, seed=3), 5)
        assert sorted(found[0, :3]) == [2, 5, 9]
        assert (found[:, 3:] == -1).all() and np.isinf(distances[:, 3:]).all()
        assert np.isfinite(distances[:, :3]).all()

    def test_accepts_float64_and_list_input(self) -> None:
        index = self.make_index(DIM)
        vectors = random_vectors(10).astype(np.float64)
        index.add(list(range(10)), vectors)
        _, found = index.search(vectors[:1].tolist(), 1)
        assert found[0, 0] == 0

    # ---- validation -----------------------------------------------------------------------------
    def test_dimension_mismatch_raises_clear_value_error(self) -> None:
        index = self.make_index(DIM)
        with pytest.raises(ValueError, match=r"dimension 3 but this index has dimension 8"):
            index.add(np.array([1]), random_vectors(1, dim=3))
        index.add(np.array([1]), random_vectors(1))
        with pytest.raises(ValueError, match=r"queries have dimension 5 but this index has dimension 8"):
            index.search(random_vectors(1, dim=5), 1)

    @pytest.mark.parametrize(
        ("ids", "vectors", "message"),
        [
            (np.array([1, 1]), random_vectors(2), "duplicates"),
            (np.array([-3]), random_vectors(1), "non-negative"),
            (np.array([1.5]), random_vectors(1), "integers"),
            (np.array([1, 2]), random_vectors(3), "2 ids but 3 vectors"),
            (np.array([[1]]), random_vectors(1), "1-D"),
            (np.array([1]), random_vectors(1)[0], "2-D array"),
            (np.array([1]), np.full((1, DIM), np.nan), "NaN"),
        ],
    )
    def test_add_rejects_bad_input(self, ids: Any, vectors: Any, message: str) -> None:
        index = self.make_index(DIM)
        with pytest.raises(ValueError, match=message):
            index.add(ids, vectors)
        assert len(index) == 0

    def test_add_rejects_existing_id(self) -> None:
        index = self.make_index(DIM)
        index.add(np.array([1, 2]), random_vectors(2))
        with pytest.raises(ValueError, match="already in the index, e.g. 2"):
            index.add(np.array([3, 2]), random_vectors(2, seed=1))
        assert len(index) == 2

    @pytest.mark.parametrize("k", [0, -1, 1.5, True])
    def test_search_rejects_bad_k(self, k: Any) -> None:
        index = self.make_index(DIM)
        with pytest.raises(ValueError, match="k must be a positive integer"):
            index.search(random_vectors(1), k)

    # ---- remove and filter ----------------------------------------------------------------------
    def test_remove_hides_rows_and_allows_re_adding(self) -> None:
        index = self.make_index(DIM)
        vectors = random_vectors(60)
        ids = np.arange(60, dtype=np.int64)
        index.add(ids, vectors)
        assert index.remove(np.array([0, 1, 2, 999])) == 3
        assert len(index) == 57
        assert sorted(index.ids()) == list(range(3, 60))
        _, found = index.search(vectors[:3], 5)
        assert not np.isin(found, [0, 1, 2]).any()
        index.add(np.array([1]), vectors[1:2] + 1.0)
        assert len(index) == 58
        _, found = index.search(vectors[1:2] + 1.0, 1)
        assert found[0, 0] == 1

    def test_allowed_ids_restrict_results(self) -> None:
        index = self.make_index(DIM)
        vectors = random_vectors(120)
        ids = np.arange(100, 220, dtype=np.int64)
        index.add(ids, vectors)
        allowed = ids[::7]
        queries = random_vectors(5, seed=2)
        distances, found = index.search(queries, 4, allowed_ids=allowed)
        ref_d, ref_i = brute_force(allowed, vectors[::7], queries, 4)
        np.testing.assert_array_equal(found, ref_i)
        np.testing.assert_allclose(distances, ref_d, rtol=1e-4, atol=1e-4)
        _, few = index.search(queries, 4, allowed_ids=np.array([101, 5000]))
        assert (few[:, 0] == 101).all() and (few[:, 1:] == -1).all()
        _, none = index.search(queries, 2, allowed_ids=np.array([], dtype=np.int64))
        assert (none == -1).all()

    # ---- persistence and staleness --------------------------------------------------------------
    def test_save_load_round_trip(self, tmp_path: Path) -> None:
        index = self.make_index(DIM, model_version="m-1")
        vectors = random_vectors(80)
        ids = np.arange(80, dtype=np.int64) + 10
        index.add(ids, vectors)
        index.remove(np.array([10, 11]))
        path = tmp_path / "nests.index"
        index.save(path)
        assert path.exists() and (tmp_path / "nests.index.json").exists()
        queries = random_vectors(7, seed=5)
        for loaded in (type(index).load(path), VectorIndex.load(path)):
            assert type(loaded) is type(index)
            assert (loaded.dim, len(loaded), loaded.model_version) == (DIM, 78, "m-1")
            assert loaded.kind == index.kind
            np.testing.assert_array_equal(np.sort(loaded.ids()), np.sort(index.ids()))
            np.testing.assert_array_equal(loaded.search(queries, 5)[1], index.search(queries, 5)[1])
            loaded.add(np.array([5000]), queries[:1])
            assert loaded.search(queries[:1], 1)[1][0, 0] == 5000

    def test_empty_index_round_trip(self, tmp_path: Path) -> None:
        self.make_index(DIM).save(tmp_path / "empty")
        loaded = VectorIndex.load(tmp_path / "empty")
        assert len(loaded) == 0 and loaded.dim == DIM

    def test_stale_detection(self, tmp_path: Path) -> None:
        index = self.make_index(DIM, model_version="m-1")
        index.add(np.arange(5), random_vectors(5))
        assert not index.is_stale(model_version="m-1", count=5)
        assert index.is_stale(model_version="m-2", count=5)
        assert index.is_stale(model_version="m-1", count=6)
        index.save(tmp_path / "i")
        meta = read_index_metadata(tmp_path / "i")
        assert isinstance(meta, IndexMetadata)
        assert (meta.dim, meta.count, meta.model_version, meta.backend) == (DIM, 5, "m-1", index.backend)
        assert not meta.is_stale(model_version="m-1", count=5)
        assert meta.is_stale(model_version=None, count=5)

    def test_load_detects_mismatched_metadata(self, tmp_path: Path) -> None:
        index = self.make_index(DIM)
        index.add(np.arange(5), random_vectors(5))
        index.save(tmp_path / "i")
        meta_file = tmp_path / "i.json"
        meta_file.write_text(meta_file.read_text().replace('"count": 5', '"count": 6'))
        with pytest.raises(ValueError, match="different saves"):
            VectorIndex.load(tmp_path / "i")
        meta_file.write_text(meta_file.read_text().replace('"count": 6', '"count": 5'))
        (tmp_path / "i").write_bytes(b"garbage")
        with pytest.raises(ValueError, match="not a readable"):
            VectorIndex.load(tmp_path / "i")
        (tmp_path / "i").unlink()
        with pytest.raises(FileNotFoundError, match="index file missing"):
            VectorIndex.load(tmp_path / "i")
        meta_file.write_text("{not json")
        with pytest.raises(ValueError, match="not a perfembed index metadata file"):
            VectorIndex.load(tmp_path / "i")
        with pytest.raises(FileNotFoundError):
            VectorIndex.load(tmp_path / "missing")

    # ---- model-based property test --------------------------------------------------------------
    # Each subclass runs this once with its own backend: the "differing executors" are intended.
    @settings(
        max_examples=25,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors],
    )
    @given(
        ops=st.lists(
            st.one_of(
                st.tuples(st.just("add"), st.lists(st.integers(0, 60), min_size=1, max_size=15, unique=True)),
                st.tuples(st.just("remove"), st.lists(st.integers(0, 60), max_size=10)),
            ),
            max_size=8,
        ),
        k=st.integers(1, 12),
    )
    def test_matches_a_dictionary_model(self, ops: list[tuple[str, list[int]]], k: int) -> None:
        index = self.make_index(4)
        model: dict[int, npt.NDArray[np.float32]] = {}
        rng = np.random.default_rng(len(ops))
        for op, ids in ops:
            if op == "add":
                new = [i for i in ids if i not in model]
                vectors = rng.normal(size=(len(new), 4)).astype(np.float32)
                index.add(np.array(new, dtype=np.int64), vectors)
                model.update(zip(new, vectors, strict=True))
            else:
                removed = index.remove(np.array(ids, dtype=np.int64))
                assert removed == len(set(ids) & set(model))
                for i in ids:
                    model.pop(i, None)
            assert len(index) == len(model)
        assert sorted(index.ids().tolist()) == sorted(model)
        queries = rng.normal(size=(3, 4)).astype(np.float32)
        keys = np.array(sorted(model), dtype=np.int64)
        stored = np.array([model[i] for i in keys], dtype=np.float32).reshape(-1, 4)
        _, ref = brute_force(keys, stored, queries, k)
        np.testing.assert_array_equal(index.search(queries, k)[1], ref)
