"""The embedding store keeps its index file in step with the database, and says when it rebuilds it.

Before: an unreadable or stale index was rebuilt without a word (``except (OSError, ValueError): pass``),
so a corrupt data directory or a backend mismatch went unnoticed. Now the rebuild is logged with why.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from database import EmbeddingStore, embedding_store, get_store
from database.errors import DataDirError, NotFoundError, data_dir_error
from database.records import register_nest
from embeddings import make_index, read_index_metadata
from loopnest import extract_scops
from loopnest.errors import ParameterError
from tests.helpers.paths import ROOT, load_expected

KERNELS = ["blas3/gemm_ijk.c", "blas2/gemv.c", "stencil/jacobi2d.c"]


@pytest.fixture(scope="module")
def fitted(tmp_path_factory: pytest.TempPathFactory) -> tuple[EmbeddingStore, Path]:
    data = tmp_path_factory.mktemp("embedding-store")
    store = get_store(f"sqlite:///{data / 'perfembed.db'}", create=True)
    expected = load_expected()
    for rel in KERNELS:
        path = ROOT / "corpus/kernels" / rel
        register_nest(store, source=path.read_text(), name=path.name, index=0, scop=extract_scops(path).scops[0],
                      params=expected[f"corpus/kernels/{rel}"]["params"])
    es = EmbeddingStore(store, data_dir=data)
    es.fit(n_components=2)
    return es, data


def _reopened(es: EmbeddingStore, data: Path) -> EmbeddingStore:
    return EmbeddingStore(es.store, data_dir=data)


def test_an_unreadable_index_is_rebuilt_with_a_warning_naming_the_file(
        fitted: tuple[EmbeddingStore, Path], caplog: pytest.LogCaptureFixture) -> None:
    es, data = fitted
    path = es._index_path(es.model()[0])
    path.write_bytes(b"not an index")
    with caplog.at_level(logging.INFO, logger="database.embedding_store"):
        index = _reopened(es, data).index()
    assert len(index) == len(KERNELS)
    (record,) = [r for r in caplog.records if "rebuilding the index" in r.getMessage()]
    assert record.levelno == logging.WARNING and str(path) in record.getMessage()


def test_a_stale_index_is_rebuilt_saying_what_differed(fitted: tuple[EmbeddingStore, Path],
                                                       caplog: pytest.LogCaptureFixture) -> None:
    es, data = fitted
    version = es.model()[0]
    make_index(es.index().dim, n_expected=1, model_version=version).save(es._index_path(version))  # 0 vectors
    with caplog.at_level(logging.INFO, logger="database.embedding_store"):
        index = _reopened(es, data).index()
    assert len(index) == len(KERNELS)
    (record,) = [r for r in caplog.records if "rebuilding the index" in r.getMessage()]
    assert f"holds 0 vectors of model {version}, the database {len(KERNELS)}" in record.getMessage()


def test_a_current_index_is_loaded_without_a_rebuild(fitted: tuple[EmbeddingStore, Path],
                                                     caplog: pytest.LogCaptureFixture) -> None:
    es, data = fitted
    es.index(rebuild=True)
    with caplog.at_level(logging.INFO, logger="database.embedding_store"):
        _reopened(es, data).index()
    assert not [r for r in caplog.records if "rebuilding" in r.getMessage()]


def test_an_empty_database_says_how_to_get_nests_and_a_model(tmp_path: Path) -> None:
    """What a user meets first on a fresh data directory: both errors name ``perfembed seed load``."""
    es = EmbeddingStore(get_store(f"sqlite:///{tmp_path / 'perfembed.db'}", create=True), data_dir=tmp_path)
    with pytest.raises(NotFoundError, match=r"no embedding model has been fitted yet: load the shipped seed "
                                            r"\('perfembed seed load'\)"):
        es.model()
    with pytest.raises(ParameterError, match=r"at least two stored nests \('perfembed seed load'"):
        es.fit()


def _lock_is_free(es: EmbeddingStore) -> bool:
    """Whether another thread could take the store's lock now."""
    free: list[bool] = []

    def take() -> None:
        got = es._lock.acquire(timeout=0)
        free.append(got)
        if got:
            es._lock.release()

    thread = threading.Thread(target=take)
    thread.start()
    thread.join()
    return free[0]


def test_the_database_is_never_read_under_the_stores_lock(fitted: tuple[EmbeddingStore, Path],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Review (issue 60): a thread rebuilding the index held the lock while it waited for SQLite's write lock,
    and a suggestion holding that write lock in its transaction waited for the lock: both stood until the
    busy timeout. The vectors and the fitted model are now read with the lock free."""
    es, data = fitted
    reopened = _reopened(es, data)
    seen: list[bool] = []
    for name in ("load_embeddings", "get_embedding_model"):
        real = getattr(embedding_store, name)

        def checked(*args: Any, _real: Any = real, **kwargs: Any) -> Any:
            seen.append(_lock_is_free(reopened))
            return _real(*args, **kwargs)

        monkeypatch.setattr(embedding_store, name, checked)
    reopened.index(rebuild=True)
    assert len(seen) == 2 and all(seen)  # the model (its size, for an empty index) and the vectors


def test_an_index_that_cannot_be_saved_is_rebuilt_from_the_database(fitted: tuple[EmbeddingStore, Path],
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Review: a vector added to the index in memory whose file could not be written was never saved: the
    next use found it there and left the file behind. The index in memory is dropped, and the next use reads
    every stored vector and writes the file."""
    es, data = fitted
    reopened = _reopened(es, data)
    version = reopened.model()[0]
    path = ROOT / "corpus/kernels/blas1/axpy.c"
    nest = register_nest(es.store, source=path.read_text(), name=path.name, index=0,
                         scop=extract_scops(path).scops[0], params={"n": 64})  # no data_dir: not embedded
    reopened.index()  # loaded before the vector is stored and the directory turns unwritable
    with es.store.session() as session:
        vectors = reopened.store_vectors(session, reopened.fitted(session), {nest.id: nest.static_features})

    def unwritable(self: EmbeddingStore, index: Any, path: Path) -> None:
        raise data_dir_error(path, PermissionError(13, "Permission denied"))

    monkeypatch.setattr(EmbeddingStore, "_save", unwritable)
    with pytest.raises(DataDirError):
        reopened.add_to_index(version, vectors)
    monkeypatch.undo()
    assert nest.id in set(reopened.index().ids().tolist())
    assert read_index_metadata(reopened._index_path(version)).count == len(KERNELS) + 1
    assert nest.id in {hit.nest_id for hit in reopened.search(nest.static_features, k=len(KERNELS) + 1)}
