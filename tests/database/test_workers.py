"""Worker heartbeats: a worker's row is refreshed, counted as alive while recent, and removed or
forgotten; the job it runs is recorded."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from database import (
    Store,
    claim_next_job,
    enqueue_job,
    list_workers,
    live_workers,
    queued_before,
    record_heartbeat,
    remove_worker,
)
from tests.database.factories import Seed, committed

T0 = datetime(2026, 11, 24, 12, 0, tzinfo=UTC)


def _live(store: Store, now: datetime, stale_after_s: float = 30) -> list[str]:
    with store.session() as session:
        return [w.name for w in live_workers(session, stale_after_s=stale_after_s, now=now)]


def test_a_worker_is_alive_while_its_heartbeats_are_recent(store: Store) -> None:
    first = committed(store, record_heartbeat, name="h:1:a", host="h", pid=1, cpus="0-1", now=T0)
    assert (first.started_at, first.last_seen_at, first.cpus, first.job_id) == (T0, T0, "0-1", None)
    committed(store, record_heartbeat, name="h:2:b", host="h", pid=2, now=T0)
    assert _live(store, T0 + timedelta(seconds=29)) == ["h:1:a", "h:2:b"]

    again = committed(store, record_heartbeat, name="h:1:a", host="h", pid=1, cpus="0-1",
                      now=T0 + timedelta(seconds=20))
    assert again.started_at == T0 and again.last_seen_at == T0 + timedelta(seconds=20)
    # Worker b stopped sending heartbeats (killed): it drops out, its row stays for a while.
    assert _live(store, T0 + timedelta(seconds=45)) == ["h:1:a"]
    assert _live(store, T0 + timedelta(seconds=45), stale_after_s=60) == ["h:1:a", "h:2:b"]
    with store.session() as session:
        assert [w.name for w in list_workers(session)] == ["h:1:a", "h:2:b"]


def test_a_stopping_worker_is_removed_and_a_dead_one_forgotten_after_a_day(store: Store) -> None:
    committed(store, record_heartbeat, name="h:1:a", host="h", pid=1, now=T0)
    committed(store, record_heartbeat, name="h:2:b", host="h", pid=2, now=T0)
    committed(store, remove_worker, name="h:1:a")
    committed(store, remove_worker, name="h:1:a")  # twice is harmless
    assert _live(store, T0) == ["h:2:b"]
    committed(store, record_heartbeat, name="h:3:c", host="h", pid=3, now=T0 + timedelta(days=1, seconds=1))
    with store.session() as session:
        assert [w.name for w in list_workers(session)] == ["h:3:c"]


def test_the_job_a_worker_runs_is_recorded(store: Store, seed: Seed) -> None:
    with store.session() as session:
        job = enqueue_job(session, nest_id=seed.nest_id, budget=5)
    busy = committed(store, record_heartbeat, name="h:1:a", host="h", pid=1, job_id=job.id, now=T0)
    assert busy.job_id == job.id
    idle = committed(store, record_heartbeat, name="h:1:a", host="h", pid=1, job_id=None, now=T0 + timedelta(seconds=1))
    assert idle.job_id is None


def test_queued_jobs_ahead_of_a_job(store: Store, seed: Seed) -> None:
    with store.session() as session:
        ids = [enqueue_job(session, nest_id=seed.nest_id, budget=5).id for _ in range(3)]
    committed(store, claim_next_job, worker_id="w", lease_seconds=60)
    with store.session() as session:
        assert [queued_before(session, job_id=i) for i in ids] == [0, 0, 1]


def test_a_worker_needs_a_name(store: Store) -> None:
    with pytest.raises(ValueError, match="non-empty name"):
        committed(store, record_heartbeat, name="", host="h", pid=1)
