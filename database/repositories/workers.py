"""Worker heartbeats: which tuning workers are alive.

A worker calls :func:`record_heartbeat` when it starts and every few seconds after (also when it
claims or ends a job), and :func:`remove_worker` when it stops. One that dies leaves its row
behind; :func:`live_workers` counts only rows seen within ``stale_after_s``, and the next worker
to register prunes rows silent for a day. Times come from the caller's clock (``now``).
"""

from __future__ import annotations

from datetime import datetime, timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from database.domain import Worker, utcnow
from database.errors import InvalidRecordError
from database.repositories._common import check_positive, get_or_create
from database.tables import WorkerModel

# Rows of workers silent this long are deleted (they crashed or were killed): they only served
# to say "last seen ..." for a while.
FORGET_AFTER = timedelta(days=1)


def record_heartbeat(
    session: Session,
    *,
    name: str,
    host: str,
    pid: int,
    cpus: str | None = None,
    job_id: int | None = None,
    now: datetime | None = None,
) -> Worker:
    """Create or refresh the row of worker ``name``, with the job it runs now (None: idle)."""
    if not name:
        raise InvalidRecordError("a worker needs a non-empty name")
    now = now or utcnow()
    row, created = get_or_create(
        session,
        lambda: session.scalar(select(WorkerModel).where(WorkerModel.name == name)),
        lambda: WorkerModel(name=name, host=host, pid=pid, cpus=cpus, job_id=job_id, started_at=now,
                            last_seen_at=now),
    )
    if created:
        session.execute(delete(WorkerModel).where(WorkerModel.last_seen_at < now - FORGET_AFTER))
    else:
        row.host, row.pid, row.cpus, row.job_id, row.last_seen_at = host, pid, cpus, job_id, now
    session.flush()
    return row.to_domain()


def remove_worker(session: Session, *, name: str) -> None:
    """Forget worker ``name`` (it stopped cleanly); nothing happens if it has no row."""
    session.execute(delete(WorkerModel).where(WorkerModel.name == name))


def list_workers(session: Session, *, stale_after_s: float | None = None, now: datetime | None = None) -> list[Worker]:
    """Workers by name; with ``stale_after_s``, only those whose last heartbeat is that recent."""
    stmt = select(WorkerModel).order_by(WorkerModel.name)
    if stale_after_s is not None:
        check_positive(stale_after_s, what="stale_after_s")
        stmt = stmt.where(WorkerModel.last_seen_at >= (now or utcnow()) - timedelta(seconds=stale_after_s))
    return [row.to_domain() for row in session.scalars(stmt)]


def live_workers(session: Session, *, stale_after_s: float, now: datetime | None = None) -> list[Worker]:
    """Workers whose last heartbeat is at most ``stale_after_s`` old."""
    return list_workers(session, stale_after_s=stale_after_s, now=now)
