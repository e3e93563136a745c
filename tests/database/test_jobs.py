"""Tuning jobs: the lease protocol, concurrent claimers, and re-claiming after a crash."""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta

import pytest

from database import JobStatus, LeaseLostError, Store
from database.errors import NotFoundError
from database.repositories import jobs as repo
from tests.database.factories import Seed, committed

T0 = datetime(2026, 11, 21, 12, 0, tzinfo=UTC)


def _enqueue(store: Store, seed: Seed, count: int, budget: int = 50) -> list[int]:
    with store.session() as session:
        return [
            repo.enqueue_job(session, nest_id=seed.nest_id, target_id=seed.target_id, budget=budget).id
            for _ in range(count)
        ]


def test_job_life_cycle(store: Store, seed: Seed) -> None:
    (job_id,) = _enqueue(store, seed, 1)
    with store.session() as session:
        queued = repo.get_job(session, job_id=job_id)
    assert queued.status is JobStatus.QUEUED and queued.attempts == 0 and queued.lease_owner is None

    claimed = committed(store, repo.claim_next_job, worker_id="w1", lease_seconds=60, now=T0)
    assert claimed is not None and claimed.id == job_id
    assert claimed.status is JobStatus.RUNNING and claimed.lease_owner == "w1"
    assert claimed.lease_expires_at == T0 + timedelta(seconds=60)
    assert claimed.started_at == T0 and claimed.attempts == 1
    assert committed(store, repo.claim_next_job, worker_id="w2", lease_seconds=60, now=T0) is None

    beat = committed(store, repo.heartbeat_job, job_id=job_id, worker_id="w1", lease_seconds=60,
                     now=T0 + timedelta(seconds=50))
    assert beat.lease_expires_at == T0 + timedelta(seconds=110)
    progressed = committed(store, repo.update_job_progress, job_id=job_id, worker_id="w1", progress=10,
                           best_recipe_id=seed.recipe_id, best_speedup=1.7)
    assert (progressed.progress, progressed.best_recipe_id, progressed.best_speedup) == (10, seed.recipe_id, 1.7)

    done = committed(store, repo.finish_job, job_id=job_id, worker_id="w1", best_speedup=2.0,
                     now=T0 + timedelta(seconds=90))
    assert done.status is JobStatus.DONE and done.finished_at == T0 + timedelta(seconds=90)
    assert done.best_speedup == 2.0 and done.best_recipe_id == seed.recipe_id and done.lease_expires_at is None
    assert committed(store, repo.claim_next_job, worker_id="w2", lease_seconds=60, now=T0 + timedelta(days=1)) is None
    with store.session() as session:
        assert [j.id for j in repo.list_jobs(session, status=JobStatus.DONE)] == [job_id]
        assert repo.list_jobs(session, status="queued") == []


def test_a_job_whose_winner_did_not_hold_up_ends_without_a_best_recipe(store: Store, seed: Seed) -> None:
    """Reproduction: the best trial's screening figure (set while the job ran) stayed the job's result
    after its re-measurement refused it (`jobs list` showed 2.41x for a winner re-measured at 0.55x)."""
    (job_id,) = _enqueue(store, seed, 1)
    committed(store, repo.claim_next_job, worker_id="w1", lease_seconds=60, now=T0)
    committed(store, repo.update_job_progress, job_id=job_id, worker_id="w1", progress=40,
              best_recipe_id=seed.recipe_id, best_speedup=2.41)
    done = committed(store, repo.finish_job, job_id=job_id, worker_id="w1", clear_best=True,
                     now=T0 + timedelta(seconds=90))
    assert done.status is JobStatus.DONE and done.best_recipe_id is None and done.best_speedup is None


def test_a_claim_limited_to_some_jobs_leaves_the_others_queued(store: Store, seed: Seed) -> None:
    older, mine, also_mine = _enqueue(store, seed, 3)
    claimed = [committed(store, repo.claim_next_job, worker_id="w", lease_seconds=60, now=T0, job_ids={also_mine, mine})
               for _ in range(3)]
    assert [c.id if c else None for c in claimed] == [mine, also_mine, None]
    with store.session() as session:
        assert repo.get_job(session, job_id=older).status is JobStatus.QUEUED


def test_expired_lease_is_claimed_again(store: Store, seed: Seed) -> None:
    (job_id,) = _enqueue(store, seed, 1)
    assert committed(store, repo.claim_next_job, worker_id="crashed", lease_seconds=30, now=T0) is not None
    assert committed(store, repo.claim_next_job, worker_id="w2", lease_seconds=30,
                     now=T0 + timedelta(seconds=29)) is None
    again = committed(store, repo.claim_next_job, worker_id="w2", lease_seconds=30, now=T0 + timedelta(seconds=31))
    assert again is not None and again.id == job_id
    assert again.lease_owner == "w2" and again.attempts == 2 and again.started_at == T0

    # The crashed worker comes back: it has lost the lease and must stop.
    with pytest.raises(LeaseLostError, match="held by 'w2'"):
        committed(store, repo.heartbeat_job, job_id=job_id, worker_id="crashed", lease_seconds=30)
    with pytest.raises(LeaseLostError):
        committed(store, repo.finish_job, job_id=job_id, worker_id="crashed")
    assert committed(store, repo.finish_job, job_id=job_id, worker_id="w2").status is JobStatus.DONE


def test_a_finished_job_keeps_the_note_its_worker_wrote(store: Store, seed: Seed) -> None:
    """Why a job stopped before its budget (the recipe space ran out) is shown with it once done;
    a worker that no longer holds the job writes nothing."""
    (job_id,) = _enqueue(store, seed, 1)
    committed(store, repo.claim_next_job, worker_id="w1", lease_seconds=60, now=T0)
    committed(store, repo.note_job, job_id=job_id, worker_id="stale", note="not mine")
    committed(store, repo.note_job, job_id=job_id, worker_id="w1", note="the recipe space ran out" + "!" * 5000)
    done = committed(store, repo.finish_job, job_id=job_id, worker_id="w1")
    assert done.status is JobStatus.DONE
    assert done.error is not None and done.error.startswith("the recipe space ran out") and len(done.error) == 4000


def test_real_clock_lease_expiry(store: Store, seed: Seed) -> None:
    (job_id,) = _enqueue(store, seed, 1)
    assert committed(store, repo.claim_next_job, worker_id="w1", lease_seconds=0.001) is not None
    threading.Event().wait(0.01)
    again = committed(store, repo.claim_next_job, worker_id="w2", lease_seconds=60)
    assert again is not None and again.id == job_id and again.lease_owner == "w2"


def test_fail_retry_and_cancel(store: Store, seed: Seed) -> None:
    first, second, third = _enqueue(store, seed, 3)
    assert committed(store, repo.claim_next_job, worker_id="w", lease_seconds=60).id == first  # type: ignore[union-attr]
    retried = committed(store, repo.fail_job, job_id=first, worker_id="w", error="compiler crashed", retry=True)
    assert retried.status is JobStatus.QUEUED and retried.error == "compiler crashed"
    assert retried.lease_owner is None and retried.finished_at is None
    again = committed(store, repo.claim_next_job, worker_id="w", lease_seconds=60)
    assert again is not None and again.id == first and again.attempts == 2 and again.error is None
    failed = committed(store, repo.fail_job, job_id=first, worker_id="w", error="compiler crashed again")
    assert failed.status is JobStatus.FAILED and failed.finished_at is not None

    assert committed(store, repo.cancel_job, job_id=third).status is JobStatus.CANCELLED  # queued
    running = committed(store, repo.claim_next_job, worker_id="w", lease_seconds=60)
    assert running is not None and running.id == second
    assert committed(store, repo.cancel_job, job_id=second).status is JobStatus.CANCELLED  # running
    with pytest.raises(LeaseLostError, match="cancelled"):
        committed(store, repo.update_job_progress, job_id=second, worker_id="w", progress=3)
    assert committed(store, repo.cancel_job, job_id=first).status is JobStatus.FAILED  # already ended: unchanged
    assert committed(store, repo.claim_next_job, worker_id="w", lease_seconds=60) is None
    with pytest.raises(NotFoundError):
        committed(store, repo.cancel_job, job_id=999)


def test_bad_job_arguments(store: Store, seed: Seed) -> None:
    with pytest.raises(ValueError):
        committed(store, repo.claim_next_job, worker_id="", lease_seconds=60)
    with pytest.raises(ValueError):
        committed(store, repo.claim_next_job, worker_id="w", lease_seconds=0)
    with store.session() as session:
        with pytest.raises(NotFoundError):
            repo.enqueue_job(session, nest_id=999, budget=10)
        with pytest.raises(ValueError):
            repo.enqueue_job(session, nest_id=seed.nest_id, budget=-1)


def test_concurrent_claimers_never_share_a_job(store: Store, seed: Seed) -> None:
    job_ids = _enqueue(store, seed, 40, budget=1)
    workers = 8
    barrier = threading.Barrier(workers)

    def worker(index: int) -> list[int]:
        name = f"worker-{index}"
        claimed: list[int] = []
        barrier.wait()
        while (job := committed(store, repo.claim_next_job, worker_id=name, lease_seconds=300)) is not None:
            assert job.lease_owner == name
            claimed.append(job.id)
            committed(store, repo.finish_job, job_id=job.id, worker_id=name)  # raises if another worker held the lease
        return claimed

    with ThreadPoolExecutor(workers) as pool:
        per_worker = list(pool.map(worker, range(workers)))
    counts = Counter(job_id for claimed in per_worker for job_id in claimed)
    assert sorted(counts) == job_ids
    assert set(counts.values()) == {1}
    with store.session() as session:
        assert {j.status for j in repo.list_jobs(session)} == {JobStatus.DONE}
        assert {j.attempts for j in repo.list_jobs(session)} == {1}


def test_concurrent_claimers_on_expired_leases(store: Store, seed: Seed) -> None:
    """Crashed workers' jobs are re-claimed exactly once each, even by racing claimers."""
    job_ids = _enqueue(store, seed, 12)
    for _ in job_ids:
        assert committed(store, repo.claim_next_job, worker_id="crashed", lease_seconds=10, now=T0) is not None
    later = T0 + timedelta(seconds=11)
    barrier = threading.Barrier(6)

    def worker(index: int) -> list[int]:
        barrier.wait()
        claimed = []
        while (job := committed(store, repo.claim_next_job, worker_id=f"w{index}", lease_seconds=300,
                                now=later)) is not None:
            claimed.append(job.id)
        return claimed

    with ThreadPoolExecutor(6) as pool:
        claimed = [job_id for ids in pool.map(worker, range(6)) for job_id in ids]
    assert sorted(claimed) == job_ids
