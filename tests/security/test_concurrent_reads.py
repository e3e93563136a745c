"""Concurrent reads never turn into 503s and the health probes never wait behind work (issue 59, item 2).

Reproduction: 200 concurrent keyless reads gave 41 answers of 503 (``database is locked``, ``QueuePool
limit ... timeout 30``) and ``/healthz``, a sync route waiting for the thread pool, timed out after 60 s.
Every SQLite transaction took the write lock (``BEGIN IMMEDIATE``), reads included, so reads waited for
each other and for any writer, each holding a thread meanwhile. Here a writer holds the lock: reads
must still answer at once, and the probes too while every request thread is busy.
(The full-size case is in ``benchmarks/hostile_clients.py``.)
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from database import create_api_key
from tests.service.factories import GEMV, make_app, service_settings
from tests.service.servers import api_server


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, str, int]]:
    data = Path(tmp_path_factory.mktemp("reads"))
    app = make_app(service_settings(data), populated=True)
    store = app.state.perfembed.store()
    with store.session() as session:
        _, key = create_api_key(session, name="reads")
    store.dispose()
    env = {"PERFEMBED_DATA_DIR": str(data), "PERFEMBED_THREADS": "1", "PERFEMBED_THREAD_POOL_SIZE": "8"}
    with api_server(env) as url:
        nest_id = int(httpx.get(f"{url}/v1/nests?limit=1").json()["data"][0]["id"])
        yield url, data / "perfembed.db", key, nest_id


class WriteLock:
    """Another process's writer: ``BEGIN IMMEDIATE`` held on the database until :meth:`release`."""

    def __init__(self, path: Path) -> None:
        self.db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.db.execute("BEGIN IMMEDIATE")
        self._released = threading.Lock()

    def release(self) -> None:
        if self._released.acquire(blocking=False):
            self.db.execute("ROLLBACK")
            self.db.close()


def test_reads_answer_while_a_writer_holds_the_lock(server: tuple[str, Path, str, int]) -> None:
    url, db, _, nest_id = server
    lock = WriteLock(db)
    try:
        with httpx.Client(base_url=url, timeout=5.0) as client:
            for path in ("/v1/nests?limit=1000", f"/v1/nests/{nest_id}", "/v1/targets", "/ui/nests"):
                r = client.get(path)
                assert r.status_code == 200, (path, r.status_code, r.text[:200])
    finally:
        lock.release()


def test_probes_answer_while_every_request_thread_is_busy(server: tuple[str, Path, str, int]) -> None:
    """50 keyed searches with a program: 2 are analysed at a time and the rest wait, each in a thread
    of the request pool; /healthz must answer in well under a second, /readyz within its 5 s."""
    url, db, key, _ = server
    body = {"program": {"source": GEMV.read_text(), "params": {"m": 16, "n": 16}}, "k": 3}
    statuses: list[int] = []
    lock = WriteLock(db)

    def search() -> None:
        try:
            statuses.append(httpx.post(f"{url}/v1/search", json=body, timeout=60.0,
                                       headers={"Authorization": f"Bearer {key}"}).status_code)
        except httpx.HTTPError:
            statuses.append(0)

    try:
        with ThreadPoolExecutor(50) as pool:
            for _ in range(50):
                pool.submit(search)
            time.sleep(1.0)
            start = time.monotonic()
            health = httpx.get(f"{url}/healthz", timeout=10.0)
            health_s = time.monotonic() - start
            ready = httpx.get(f"{url}/readyz", timeout=10.0)
            ready_s = time.monotonic() - start - health_s
            lock.release()
    finally:
        lock.release()
    assert health.status_code == 200 and health_s < 1.0, health_s
    assert ready.status_code in (200, 503) and ready_s < 6.0, ready_s
    assert 500 not in statuses and 0 not in statuses, statuses
