"""The database's *stamp*: what changes whenever an answer read from the database alone could change
(nests, measurements, the newest embedding model, the open tuning jobs and the newest job id). The
service keys its cached answers by it (:mod:`service.core.answer_cache`)."""

from __future__ import annotations

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from database.domain import JobStatus
from database.repositories import list_embedding_models
from database.tables import MeasurementModel, NestModel, TuningJobModel

Stamp = tuple[int, int, str | None, int, int | None]

_OPEN = (JobStatus.QUEUED.value, JobStatus.RUNNING.value)


def read_stamp(session: Session) -> Stamp:
    """The stamp, in four queries: nest and measurement counts, the newest model's version, the open jobs
    (how many, and the newest job's id: a job that ends, or a new one, changes it; an answer names the
    open job of each nest that needs one)."""
    nests = session.scalar(select(func.count()).select_from(NestModel)) or 0
    measurements = session.scalar(select(func.count()).select_from(MeasurementModel)) or 0
    models = list_embedding_models(session)
    jobs = session.execute(select(func.count(TuningJobModel.id).filter(TuningJobModel.status.in_(_OPEN)),
                                  func.max(TuningJobModel.id))).one()
    return nests, measurements, models[-1].version if models else None, int(jobs[0] or 0), jobs[1]
