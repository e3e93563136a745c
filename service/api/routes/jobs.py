"""``/v1/tuning-jobs``: enqueue (202), follow, list and cancel tuning jobs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query, Response

from database.domain import JobStatus
from service.api.deps import CoreDep, ReadKeyDep, SessionDep, SettingsDep, StoreDep, WriteKeyDep
from service.api.examples import JOB_EXAMPLES
from service.api.responses import ANALYSES, READ_AUTH, WRITE, errors
from service.schemas import MAX_ID, JobIn, JobPublic, JobsPublic
from service.services.tuning_jobs import cancel_job, create_job, get_job, job_public, list_jobs

router = APIRouter(prefix="/tuning-jobs", tags=["tuning-jobs"])

JobId = Annotated[int, Path(ge=1, le=MAX_ID, description="Tuning job id", examples=[1])]


@router.post("", status_code=202, response_model=JobPublic, responses=errors(*WRITE, *ANALYSES, 404),
             operation_id="tuning-jobs-create", summary="Enqueue a tuning job")
def create(body: Annotated[JobIn, Body(openapi_examples=JOB_EXAMPLES)], response: Response, key: WriteKeyDep,
           db: StoreDep, settings: SettingsDep, core: CoreDep) -> dict[str, Any]:
    """Autotune a stored nest (``nest_id``) or a nest of a program sent along (stored first) with
    Optuna, ``budget`` trials, warm-started with ``warm_start`` recipes. A worker (``perfembed
    worker``) runs it; the answer is 202 with the queued job. Follow it at the ``Location``."""
    job = create_job(body, store=db, settings=settings, core=core, key=key)
    response.headers["Location"] = f"/v1/tuning-jobs/{job.id}"
    with db.session() as session:
        return job_public(session, job, settings=settings)


@router.get("", response_model=JobsPublic, responses=errors(*READ_AUTH), operation_id="tuning-jobs-list",
            summary="List tuning jobs")
def index(session: SessionDep, _: ReadKeyDep, settings: SettingsDep,
          status: Annotated[JobStatus | None, Query(description="Only jobs in this state", examples=["queued"])] = None,
          nest_id: Annotated[int | None, Query(ge=1, le=MAX_ID, description="Only jobs of this nest",
                                               examples=[1])] = None,
          limit: Annotated[int, Query(ge=1, le=1000, description="At most this many")] = 100) -> dict[str, Any]:
    """Tuning jobs, oldest first, optionally of one state or one nest."""
    return list_jobs(session, status=status, nest_id=nest_id, limit=limit, settings=settings)


@router.get("/{job_id}", response_model=JobPublic, responses=errors(*READ_AUTH, 404),
            operation_id="tuning-jobs-get", summary="Follow a tuning job")
def read(job_id: JobId, session: SessionDep, _: ReadKeyDep, settings: SettingsDep) -> dict[str, Any]:
    """Status (in words too: "waiting for a worker" while none is alive), trials done of the budget,
    best recipe and speedup so far, the worker holding it, error."""
    return get_job(session, job_id, settings=settings)


@router.delete("/{job_id}", response_model=JobPublic, responses=errors(401, 403, 404, 409, 422, 503),
               operation_id="tuning-jobs-cancel", summary="Cancel a tuning job")
def cancel(job_id: JobId, key: WriteKeyDep, db: StoreDep, settings: SettingsDep) -> dict[str, Any]:
    """Cancel a queued or running job; a running one stops after its current trial. Cancelling a
    cancelled job returns it unchanged; one that is done or failed is a 409. Only the key that enqueued
    the job, or an admin key, may cancel it (403)."""
    return cancel_job(db, job_id, key=key, settings=settings)
