"""The tuning workers as the service sees them: live ones from their heartbeats, and what a job's
status means for its owner ("waiting for a worker" while none is alive). No HTTP here."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any

from autotune.config import get_autotune_settings
from database import live_workers as load
from database.domain import JobStatus, TuningJob, Worker, utcnow

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from autotune.config import AutotuneSettings

START_HINT = "start one with `perfembed worker`, or serve with `perfembed serve --workers 1`"


def live_workers(session: Session, settings: AutotuneSettings | None = None, *,
                 now: datetime | None = None) -> list[Worker]:
    """Workers whose last heartbeat is younger than ``settings.worker_stale_after_s`` (default settings:
    :func:`~autotune.config.get_autotune_settings`, for callers outside the app such as the notebook)."""
    stale_after_s = (settings or get_autotune_settings()).worker_stale_after_s
    return load(session, stale_after_s=stale_after_s, now=now)


def workers_public(workers: Sequence[Worker], *, now: datetime | None = None) -> dict[str, Any]:
    now = now or utcnow()
    data = [{"name": w.name, "host": w.host, "pid": w.pid, "cpus": w.cpus, "job_id": w.job_id,
             "last_seen_s": round(max(0.0, (now - w.last_seen_at).total_seconds()), 1)} for w in workers]
    return {"alive": len(data), "busy": sum(w.job_id is not None for w in workers), "data": data}


def workers_check(workers: Sequence[Worker]) -> str:
    """``/readyz``'s one-line worker check."""
    if not workers:
        return f"none alive: tuning jobs stay queued until a worker runs ({START_HINT})"
    busy = sum(w.job_id is not None for w in workers)
    return f"{len(workers)} alive, {busy} busy"


def job_status_text(job: TuningJob, workers: Sequence[Worker], *, ahead: int = 0) -> str:
    """``job``'s status in words, given the live ``workers`` and the queued jobs ``ahead`` of it."""
    if job.status is JobStatus.DONE:
        return f"done: {job.progress} of {job.budget} trials" + (f" ({job.error})" if job.error else "")
    if job.status is JobStatus.FAILED:
        return f"failed: {job.error or 'no reason recorded'}"
    if job.status is JobStatus.CANCELLED:
        return "cancelled"
    if job.status is JobStatus.RUNNING:
        if any(w.name == job.lease_owner for w in workers):
            return f"running on worker {job.lease_owner}: {job.progress} of {job.budget} trials"
        gone = f"its worker {job.lease_owner} stopped sending heartbeats"
        if not workers:
            return f"waiting for a worker: {gone} and no other worker is alive ({START_HINT})"
        return f"waiting for a worker: {gone}; another one resumes it when its lease expires"
    if not workers:
        return f"waiting for a worker: none is alive ({START_HINT})"
    idle = sum(w.job_id is None for w in workers)
    return (f"queued: {ahead} job(s) ahead of it; {len(workers)} worker(s) alive, {idle} idle"
            + (", so one claims it within seconds" if idle and not ahead else ""))
