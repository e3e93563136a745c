"""The worker's one heartbeat (issue 60, item 10): one thread keeps the worker's row, renews its job's lease
and records its running trial's Optuna heartbeat; a lost lease is seen at the next beat."""

from __future__ import annotations

import threading
import time
from datetime import datetime

import optuna
import pytest

from autotune.repeating import Repeating
from autotune.search.study_storage import fail_stale, open_storage
from autotune.workers.heartbeat import Heartbeat
from database import Store, cancel_job, claim_next_job, enqueue_job, get_job, list_workers
from tests.database.factories import add_seed, committed
from tests.helpers.waiting import wait_for


def _claimed_job(store: Store) -> int:
    with store.session() as session:
        nest_id = add_seed(session).nest_id
        enqueue_job(session, nest_id=nest_id, budget=5)
    job = committed(store, claim_next_job, worker_id="w", lease_seconds=0.6)
    assert job is not None
    return job.id


def _lease_expiry(store: Store, job_id: int) -> datetime:
    with store.session() as session:
        expires = get_job(session, job_id=job_id).lease_expires_at
    assert expires is not None
    return expires


def _heartbeat_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("heartbeat-")]


@pytest.mark.filterwarnings("ignore:Heartbeat of storage is supposed to be used")
def test_one_thread_keeps_the_row_the_lease_and_the_trial_alive(store: Store) -> None:
    job_id = _claimed_job(store)
    storage = open_storage(store.url, heartbeat_interval=1, grace_period=1)
    study = optuna.create_study(storage=storage, study_name="beats")
    trial = study.ask()
    trial_id = storage.get_trial_id_from_study_id_trial_number(storage.get_study_id_from_name("beats"), trial.number)
    with Heartbeat(store, "w", interval_s=10.0) as heartbeat, heartbeat.running(job_id, 0.6) as lease:
        with store.session() as session:
            assert [(w.name, w.job_id) for w in list_workers(session)] == [("w", job_id)]
        heartbeat.trial_started(storage, trial_id, 0.2)
        first = _lease_expiry(store, job_id)
        # The job's lease (0.6 s) is renewed long before the worker's 10 s interval comes round, and the
        # trial stays alive past Optuna's grace period of 1 s: both by the one thread.
        time.sleep(1.5)
        assert _heartbeat_threads() == ["heartbeat-w"]
        assert _lease_expiry(store, job_id) > first and not lease.lost.is_set()
        fail_stale(study)
        assert study.trials[0].state == optuna.trial.TrialState.RUNNING
        heartbeat.trial_ended()
    with store.session() as session:
        assert list_workers(session) == []  # the row goes with the worker
    assert _heartbeat_threads() == []
    storage.engine.dispose()


def test_a_cancelled_job_loses_its_lease_at_the_next_beat(store: Store) -> None:
    job_id = _claimed_job(store)
    with Heartbeat(store, "w", interval_s=10.0) as heartbeat, heartbeat.running(job_id, 0.3) as lease:
        committed(store, cancel_job, job_id=job_id)
        assert lease.lost.wait(5)
        assert "cancelled" in (lease.error or "")
        with store.session() as session:
            assert list_workers(session)[0].job_id == job_id
    with store.session() as session:
        assert list_workers(session) == []


def test_a_shorter_interval_takes_effect_at_once() -> None:
    calls: list[float] = []
    repeating = Repeating("test-reschedule", 60.0, lambda: calls.append(time.monotonic()))
    repeating.start()
    try:
        start = time.monotonic()
        repeating.interval = 0.05
        wait_for(lambda: len(calls) >= 2, timeout=10)
        assert calls[0] - start < 5  # not a minute later
    finally:
        repeating.stop()
