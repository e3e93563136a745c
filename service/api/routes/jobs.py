"""``/v1/tuning-jobs``: enqueue (202), follow, list and cancel tuning jobs."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response

from database.domain import JobStatus
from service.api.deps import PipelineDep, ReadKeyDep, SessionDep, SettingsDep, StoreDep, WriteKeyDep
from service.api.responses import READ_AUTH, WRITE, errors
from service.schemas import MAX_ID, JobIn, JobPublic, JobsPublic
from service.services_jobs import cancel_job, create_job, get_job, job_public, list_jobs

router = APIRouter(prefix="/tuning-jobs", tags=["tuning-jobs"])

JobId = Annotated[int, Path(ge=1, le=MAX_ID, description="Tuning job id")]


@router.post("", status_code=202, response_model=JobPublic, responses=errors(*WRITE, 404),
             operation_id="tuning-jobs-create")
def create(body: JobIn, response: Response, _: WriteKeyDep, db: StoreDep, settings: SettingsDep,
           pipeline: PipelineDep) -> dict[str, Any]:
    """Enqueue a tuning job; a worker (`perfembed worker`) runs it. Follow it at the Location."""
    job = create_job(body, store=db, settings=settings, pipeline=pipeline)
    response.headers["Location"] = f"/v1/tuning-jobs/{job.id}"
    with db.session() as session:
        return job_public(session, job, settings=settings)


@router.get("", response_model=JobsPublic, responses=errors(*READ_AUTH), operation_id="tuning-jobs-list")
def index(session: SessionDep, _: ReadKeyDep, settings: SettingsDep, status: JobStatus | None = None,
          nest_id: Annotated[int | None, Query(ge=1, le=MAX_ID)] = None,
          limit: Annotated[int, Query(ge=1, le=1000)] = 100) -> dict[str, Any]:
    """Tuning jobs, oldest first."""
    return list_jobs(session, status=status, nest_id=nest_id, limit=limit, settings=settings)


@router.get("/{job_id}", response_model=JobPublic, responses=errors(*READ_AUTH, 404),
            operation_id="tuning-jobs-get")
def read(job_id: JobId, session: SessionDep, _: ReadKeyDep, settings: SettingsDep) -> dict[str, Any]:
    """Status (in words too: "waiting for a worker" while none is alive), trials done of the budget,
    best recipe and speedup so far, error."""
    return get_job(session, job_id, settings=settings)


@router.delete("/{job_id}", response_model=JobPublic, responses=errors(401, 404, 409, 422, 503),
               operation_id="tuning-jobs-cancel")
def cancel(job_id: JobId, _: WriteKeyDep, db: StoreDep, settings: SettingsDep) -> dict[str, Any]:
    """Cancel a queued or running job (409 if it already ended)."""
    return cancel_job(db, job_id, settings=settings)
