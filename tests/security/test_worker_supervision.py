"""``perfembed serve --workers N`` keeps its workers running (issue 59, item 2): under 200 concurrent
reads the tuning worker exited ("user error ... not restarted") and was never restarted, and ``/readyz``
still said ``ready`` with no worker alive. Now a worker that exits, whatever the reason, is restarted
after a wait that doubles while it keeps failing, and /readyz is not ready while none is alive."""

from __future__ import annotations

import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.supervisor import WorkerPool
from tests.service.factories import service_settings
from tests.service.servers import wait_until

SLEEPER = [sys.executable, "-c", "import time; time.sleep(600)"]


def exiting(code: int) -> list[str]:
    return [sys.executable, "-c", f"raise SystemExit({code})"]


@pytest.mark.parametrize("code", [2, 3], ids=["user-error", "crash"])
def test_a_worker_that_exits_is_restarted_after_longer_and_longer_waits(code: int) -> None:
    log: list[str] = []
    pool = WorkerPool(1, command=exiting(code), log=log.append, restart_delay_s=0.05, max_restart_delay_s=0.4)
    pool.start()
    try:
        wait_until(lambda: sum("restarting it in" in line for line in log) >= 5, timeout=60,
                   what="five restarts")
    finally:
        pool.stop()
    delays = [float(m.group(1)) for line in log if (m := re.search(r"restarting it in ([0-9.]+) s", line))]
    assert delays[:5] == [0.05, 0.1, 0.2, 0.4, 0.4], log
    assert not any("not restart" in line for line in log), log


@pytest.fixture
def api(tmp_path: Path) -> Iterator[TestClient]:
    with TestClient(create_app(service_settings(tmp_path))) as client:
        yield client


def test_readyz_is_not_ready_while_no_supervised_worker_is_alive(api: TestClient) -> None:
    pool = WorkerPool(1, command=exiting(2), log=lambda _: None, restart_delay_s=60.0)
    pool.start()
    try:
        wait_until(lambda: pool.pids() == [], timeout=30, what="the worker to exit")
        time.sleep(1.1)  # past the reuse of an earlier readiness report
        r = api.get("/readyz")
        assert r.status_code == 503, r.text
        assert "none of the 1 tuning worker(s)" in r.json()["checks"]["supervised workers"]
    finally:
        pool.stop()


def test_readyz_reports_a_live_supervised_worker_and_the_limits_in_force(api: TestClient) -> None:
    pool = WorkerPool(1, command=SLEEPER, log=lambda _: None, grace_s=1.0)
    pool.start()
    try:
        time.sleep(1.1)
        body = api.get("/readyz").json()
        assert body["checks"]["supervised workers"] == "ok: 1 of 1 alive", body
        assert body["checks"]["preprocessor"] == "ok"
        assert body["resources"].startswith(("cgroup v2", "rlimits")), body
    finally:
        pool.stop()
