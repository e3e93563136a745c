"""Tuning jobs and the lease protocol of the workers that run them.

A worker claims a job with :func:`claim_next_job`, which hands it a lease; it renews the lease
with :func:`heartbeat_job` (or :func:`update_job_progress`) and ends it with
:func:`finish_job` or :func:`fail_job`. A job whose lease has expired (its worker crashed) is
claimed again. Every worker-side call checks that the caller still holds the lease and raises
:class:`LeaseLostError` if not (lease taken over, or job cancelled): the worker must stop.

Each worker-side call should run in its own short transaction, ``with store.session() as
session:``: a claim is only visible to other workers once committed. Times come from the
caller's clock (``now``).

These functions are the one entry for job operations. ``Store`` once had a method per worker
call as well, each wrapping one of these in a session; they went, and the functions stayed,
because the service enqueues, lists and cancels jobs inside its own request transactions (which
methods that commit on their own cannot join), and because every other concept of the database
(programs, recipes, measurements, workers) is reached the same way: a repository function over
a session, so there is one pattern to learn and one place to change.

The queue is hand-written rather than a task-queue library's (Celery, RQ, Dramatiq): those need a broker
beside the database, whereas here a job, its lease and the measurements it records live in the one
database the service already has (SQLite on one machine, PostgreSQL across machines), a claim commits
with them, and a crashed worker's job comes back when its lease expires, with no other service to run.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, Update, and_, func, literal, or_, select, update
from sqlalchemy.orm import Session

from database.domain import JobStatus, TuningJob, utcnow
from database.errors import InvalidRecordError, NotFoundError, StorageError
from database.repositories._common import check_non_negative, check_positive, json_object
from database.tables import NestModel, RecipeModel, TargetModel, TuningJobModel, UTCDateTime

# Claims lost to a concurrent claimer before giving up; each lost race means another worker
# got a job, so running out of attempts only happens under heavy contention.
_CLAIM_ATTEMPTS = 16


class LeaseLostError(StorageError):
    """The worker no longer holds the job's lease (expired and re-claimed, or cancelled)."""


def enqueue_job(
    session: Session,
    *,
    nest_id: int,
    budget: int,
    target_id: int | None = None,
    options: Mapping[str, Any] | None = None,
    owner_key_id: int | None = None,
) -> TuningJob:
    """Queue a tuning job of ``budget`` trials (``owner_key_id``: the API key enqueuing it); raises
    :class:`NotFoundError` for a bad id."""
    check_non_negative(budget, what="budget")
    NestModel.find_or_raise_by_id(session, nest_id)
    if target_id is not None:
        TargetModel.find_or_raise_by_id(session, target_id)
    now = utcnow()
    row = TuningJobModel(
        nest_id=nest_id,
        target_id=target_id,
        status=JobStatus.QUEUED.value,
        budget=budget,
        progress=0,
        options=json_object(options, what="job options"),
        attempts=0,
        created_at=now,
        updated_at=now,
        owner_key_id=owner_key_id,
    )
    session.add(row)
    session.flush()
    return row.to_domain()


@dataclass(frozen=True)
class JobRequest:
    """A nest that needs a tuning job (:func:`open_or_enqueue_jobs`): ``budget`` trials, the job's
    ``options`` (what a worker needs), the API key asking (``owner_key_id``), which may cancel it."""

    nest_id: int
    budget: int
    options: Mapping[str, Any] | None = None
    owner_key_id: int | None = None


def open_or_enqueue_jobs(session: Session, *, requests: Sequence[JobRequest],
                         target_id: int | None = None) -> list[TuningJob]:
    """Each requested nest's open tuning job, else a new one queued, in order: a repeated request reuses
    the open job instead of queueing another."""
    jobs: list[TuningJob] = []
    for request in requests:
        open_jobs = [j for j in list_jobs(session, nest_id=request.nest_id) if not j.status.is_terminal]
        jobs.append(open_jobs[0] if open_jobs else enqueue_job(
            session, nest_id=request.nest_id, budget=request.budget, target_id=target_id, options=request.options,
            owner_key_id=request.owner_key_id))
    return jobs


def get_job(session: Session, *, job_id: int) -> TuningJob:
    """Raises :class:`NotFoundError` for an unknown id."""
    return _reload(session, job_id)


def list_jobs(
    session: Session,
    *,
    status: JobStatus | str | None = None,
    nest_id: int | None = None,
    limit: int | None = None,
) -> list[TuningJob]:
    """Tuning jobs by id, optionally only those of one status or nest, at most ``limit``."""
    stmt = select(TuningJobModel).order_by(TuningJobModel.id)
    if status is not None:
        stmt = stmt.where(TuningJobModel.status == JobStatus(status).value)
    if nest_id is not None:
        stmt = stmt.where(TuningJobModel.nest_id == nest_id)
    return [row.to_domain() for row in session.scalars(stmt.limit(limit))]


def queued_before(session: Session, *, job_id: int) -> int:
    """Queued jobs older than job ``job_id``: those a worker claims first."""
    return int(session.scalar(select(func.count()).select_from(TuningJobModel).where(
        TuningJobModel.status == JobStatus.QUEUED.value, TuningJobModel.id < job_id)) or 0)


def _update() -> Update:
    # The ORM must not try to mirror these UPDATEs in the session: callers reload the row.
    return update(TuningJobModel).execution_options(synchronize_session=False)


def _claimable(now: datetime, job_ids: Collection[int] | None = None) -> ColumnElement[bool]:
    claimable = or_(
        TuningJobModel.status == JobStatus.QUEUED.value,
        and_(TuningJobModel.status == JobStatus.RUNNING.value, TuningJobModel.lease_expires_at < now),
    )
    return claimable if job_ids is None else and_(claimable, TuningJobModel.id.in_(list(job_ids)))


def claim_next_job(
    session: Session, *, worker_id: str, lease_seconds: float, now: datetime | None = None,
    job_ids: Collection[int] | None = None,
) -> TuningJob | None:
    """Take the oldest queued job, or a running one whose lease expired; None if there is none.
    With ``job_ids``, only one of those jobs (a caller running the jobs it enqueued, never others').

    PostgreSQL locks the candidate with ``SELECT ... FOR UPDATE SKIP LOCKED``, so concurrent
    workers take different jobs without waiting. Elsewhere (SQLite) the claim is one conditional
    ``UPDATE`` that re-checks the job is still claimable, retried if another worker won.
    """
    if not worker_id:
        raise InvalidRecordError("a worker needs a non-empty worker_id")
    check_positive(lease_seconds, what="lease_seconds")
    now = now or utcnow()
    values = {
        "status": JobStatus.RUNNING.value,
        "lease_owner": worker_id,
        "lease_expires_at": now + timedelta(seconds=lease_seconds),
        "attempts": TuningJobModel.attempts + 1,
        "started_at": func.coalesce(TuningJobModel.started_at, literal(now, UTCDateTime())),
        "updated_at": now,
        "error": None,
    }
    if session.get_bind().dialect.name == "postgresql":
        candidate = session.scalar(
            select(TuningJobModel.id)
            .where(_claimable(now, job_ids))
            .order_by(TuningJobModel.id)
            .limit(1)
            .with_for_update(skip_locked=True)
        )
        if candidate is None:
            return None
        session.execute(_update().where(TuningJobModel.id == candidate).values(**values))
        return _reload(session, candidate)
    for _ in range(_CLAIM_ATTEMPTS):
        candidate = session.scalar(
            select(TuningJobModel.id).where(_claimable(now, job_ids)).order_by(TuningJobModel.id).limit(1)
        )
        if candidate is None:
            return None
        claimed = session.execute(
            _update()
            .where(TuningJobModel.id == candidate, _claimable(now, job_ids))
            .values(**values)
            .returning(TuningJobModel.id)
        ).scalar_one_or_none()
        if claimed is not None:
            return _reload(session, claimed)
    return None


def heartbeat_job(
    session: Session, *, job_id: int, worker_id: str, lease_seconds: float, now: datetime | None = None
) -> TuningJob:
    """Extend the lease; raises :class:`LeaseLostError` if the worker no longer holds it."""
    check_positive(lease_seconds, what="lease_seconds")
    now = now or utcnow()
    return _owned_update(
        session, job_id, worker_id, lease_expires_at=now + timedelta(seconds=lease_seconds), updated_at=now
    )


def update_job_progress(
    session: Session,
    *,
    job_id: int,
    worker_id: str,
    progress: int,
    best_recipe_id: int | None = None,
    best_speedup: float | None = None,
    lease_seconds: float | None = None,
    now: datetime | None = None,
) -> TuningJob:
    """Record trials done and the best result so far; with ``lease_seconds``, also extend the lease."""
    check_non_negative(progress, what="progress")
    now = now or utcnow()
    values: dict[str, Any] = {"progress": progress, "updated_at": now}
    values.update(_best(session, best_recipe_id, best_speedup))
    if lease_seconds is not None:
        check_positive(lease_seconds, what="lease_seconds")
        values["lease_expires_at"] = now + timedelta(seconds=lease_seconds)
    return _owned_update(session, job_id, worker_id, **values)


def finish_job(
    session: Session,
    *,
    job_id: int,
    worker_id: str,
    best_recipe_id: int | None = None,
    best_speedup: float | None = None,
    clear_best: bool = False,
    now: datetime | None = None,
) -> TuningJob:
    """Mark the job done and release its lease. The best recipe and speedup recorded while it ran are
    kept unless new ones are given, or ``clear_best`` drops them (a winner that did not hold up when
    re-measured is nobody's result)."""
    now = now or utcnow()
    values: dict[str, Any] = {
        "status": JobStatus.DONE.value,
        "lease_expires_at": None,
        "finished_at": now,
        "updated_at": now,
    }
    if clear_best:
        values.update(best_recipe_id=None, best_speedup=None)
    values.update(_best(session, best_recipe_id, best_speedup))
    return _owned_update(session, job_id, worker_id, **values)


def fail_job(
    session: Session,
    *,
    job_id: int,
    worker_id: str,
    error: str,
    retry: bool = False,
    now: datetime | None = None,
) -> TuningJob:
    """Mark the job failed with ``error``; with ``retry``, put it back in the queue instead."""
    now = now or utcnow()
    values: dict[str, Any] = {"error": error, "lease_expires_at": None, "updated_at": now}
    if retry:
        values.update(status=JobStatus.QUEUED.value, lease_owner=None)
    else:
        values.update(status=JobStatus.FAILED.value, finished_at=now)
    return _owned_update(session, job_id, worker_id, **values)


def cancel_job(session: Session, *, job_id: int, now: datetime | None = None) -> TuningJob:
    """Cancel a queued or running job (its worker learns at its next heartbeat).

    A job that already ended is returned unchanged; check its ``status``. Raises
    :class:`NotFoundError` for an unknown id.
    """
    now = now or utcnow()
    session.execute(
        _update()
        .where(
            TuningJobModel.id == job_id,
            TuningJobModel.status.in_([JobStatus.QUEUED.value, JobStatus.RUNNING.value]),
        )
        .values(status=JobStatus.CANCELLED.value, lease_expires_at=None, finished_at=now, updated_at=now)
    )
    return _reload(session, job_id)


def note_job(session: Session, *, job_id: int, worker_id: str, note: str) -> None:
    """Write ``note`` (at most 4000 characters) into the job's free-form ``error`` field, shown by
    ``GET /v1/tuning-jobs/{id}``, while ``worker_id`` holds the job (else nothing changes):
    why a job that finishes stopped before its budget."""
    session.execute(_update().where(TuningJobModel.id == job_id, TuningJobModel.lease_owner == worker_id)
                    .values(error=note[:4000]))


def _best(session: Session, recipe_id: int | None, speedup: float | None) -> dict[str, Any]:
    values: dict[str, Any] = {}
    if recipe_id is not None:
        RecipeModel.find_or_raise_by_id(session, recipe_id)
        values["best_recipe_id"] = recipe_id
    if speedup is not None:
        check_positive(speedup, what="best speedup")
        values["best_speedup"] = speedup
    return values


def _owned_update(session: Session, job_id: int, worker_id: str, **values: Any) -> TuningJob:
    updated = session.execute(
        _update()
        .where(
            TuningJobModel.id == job_id,
            TuningJobModel.status == JobStatus.RUNNING.value,
            TuningJobModel.lease_owner == worker_id,
        )
        .values(**values)
        .returning(TuningJobModel.id)
    ).scalar_one_or_none()
    job = _reload(session, job_id)
    if updated is None:
        if job.status is not JobStatus.RUNNING:
            reason = f"it is {job.status.value}"
        else:
            reason = f"its lease is now held by {job.lease_owner!r}"
        raise LeaseLostError(f"worker {worker_id!r} no longer holds job {job_id}: {reason}; stop working on it")
    return job


def _reload(session: Session, job_id: int) -> TuningJob:
    row = session.get(TuningJobModel, job_id, populate_existing=True)
    if row is None:
        raise NotFoundError(f"tuning job {job_id} does not exist")
    return row.to_domain()
