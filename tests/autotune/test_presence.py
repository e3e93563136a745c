"""A worker's presence: heartbeats while it runs (idle or busy) and its row gone when it stops; CPU
slots that several workers on one host share out, held by lock files that die with the process."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from autotune import WorkerOptions, run_worker
from autotune.config import AutotuneSettings
from autotune.workers.cpu_slots import claim_cpus
from database import Store, list_workers
from loopnest.config import format_cpu_list
from loopnest.errors import SettingsError
from tests.helpers.paths import ROOT
from tests.helpers.waiting import wait_for

CPUS = sorted(os.sched_getaffinity(0))
needs_two_cpus = pytest.mark.skipif(len(CPUS) < 2, reason="needs two CPUs to share out")


def _names(store: Store) -> list[str]:
    with store.session() as session:
        return [w.name for w in list_workers(session)]


def test_a_running_worker_keeps_its_row_fresh_and_removes_it_when_it_stops(store: Store) -> None:
    settings = AutotuneSettings(threads=1, worker_heartbeat_s=0.05, worker_stale_after_s=1.0)
    stop = threading.Event()
    options = WorkerOptions(worker_id="test:1:a", poll_seconds=0.05, cpus="0")
    thread = threading.Thread(target=run_worker, args=(store, options), kwargs={"settings": settings, "stop": stop})
    thread.start()
    try:
        wait_for(lambda: _names(store) == ["test:1:a"], timeout=30)
        with store.session() as session:
            first = list_workers(session)[0].last_seen_at
        wait_for(lambda: _last_seen(store) > first, timeout=30)  # the heartbeats go on while it is idle
        with store.session() as session:
            (worker,) = list_workers(session)
        assert (worker.cpus, worker.job_id, worker.pid) == ("0", None, os.getpid())
    finally:
        stop.set()
        thread.join()
    assert _names(store) == []


def _last_seen(store: Store):  # noqa: ANN202
    with store.session() as session:
        return list_workers(session)[0].last_seen_at


def _settings(tmp_path: Path, threads: int, cpus: list[int] | None = None) -> AutotuneSettings:
    return AutotuneSettings(data_dir=tmp_path, worker_threads=threads,
                    worker_cpus=format_cpu_list(cpus) if cpus is not None else None)


@needs_two_cpus
def test_workers_take_different_cpus_until_none_are_left(tmp_path: Path) -> None:
    pool = CPUS[:2]
    first = claim_cpus(_settings(tmp_path, 1, pool))
    second = claim_cpus(_settings(tmp_path, 1, pool))
    assert first is not None and second is not None
    assert {first.cpus, second.cpus} == {(pool[0],), (pool[1],)}
    with pytest.raises(SettingsError, match="no free CPUs for another worker"):
        claim_cpus(_settings(tmp_path, 1, pool))
    first.release()
    again = claim_cpus(_settings(tmp_path, 1, pool))
    assert again is not None and again.cpus == first.cpus
    again.release()
    second.release()


def test_unpinned_workers_take_no_slot(tmp_path: Path) -> None:
    assert claim_cpus(_settings(tmp_path, 0)) is None
    assert not (tmp_path / "worker-cpus").exists()


def test_a_slot_larger_than_the_cpus_or_cpus_not_available_are_refused(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match=f"PERFEMBED_WORKER_THREADS={len(CPUS) + 1} is more than"):
        claim_cpus(_settings(tmp_path, len(CPUS) + 1))
    with pytest.raises(SettingsError, match="are not available to this process"):
        claim_cpus(_settings(tmp_path, 1, [max(CPUS) + 1]))


CLAIM_AND_WAIT = """
import sys, time
from autotune.config import AutotuneSettings
from autotune.workers.cpu_slots import claim_cpus, pin_to
from loopnest.config import thread_placement
slot = claim_cpus(AutotuneSettings(data_dir=sys.argv[1], worker_threads=1, worker_cpus=sys.argv[2]))
pin_to(slot)
print(slot.describe(), thread_placement(), flush=True)
time.sleep(600)
"""


def test_a_killed_worker_frees_its_cpus_at_once_and_a_pinned_one_measures_there(tmp_path: Path) -> None:
    cpu = str(CPUS[-1])
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    holder = subprocess.Popen([sys.executable, "-c", CLAIM_AND_WAIT, str(tmp_path), cpu], stdout=subprocess.PIPE,
                              text=True, env=env)
    try:
        assert holder.stdout is not None
        line = holder.stdout.readline().split(maxsplit=1)
        assert line[0] == cpu
        if len(CPUS) > 1:  # measurements say where their threads ran
            assert line[1].strip() == f"pinned to CPUs {cpu}"
        with pytest.raises(SettingsError, match="no free CPUs"):
            claim_cpus(_settings(tmp_path, 1, [int(cpu)]))
    finally:
        holder.kill()
        holder.wait()
    slot = claim_cpus(_settings(tmp_path, 1, [int(cpu)]))
    assert slot is not None and slot.describe() == cpu
    slot.release()
