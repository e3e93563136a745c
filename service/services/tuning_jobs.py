"""Tuning jobs behind the routes: enqueue, read, list, cancel. No HTTP here.

A job is enqueued in one transaction. A job for a program sent along first checks everything a
user can get wrong (the C, the nest index, parameter values, recipes) before anything is
written; then the core stores the program and its nests (idempotent: the same source gives
the same rows), and the job is enqueued.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy.orm import Session

from autotune.config import AutotuneSettings
from autotune.workers.job_options import JobOptions
from database import Store, enqueue_job, get_nest, get_recipe, get_target, queued_before
from database import cancel_job as cancel_stored_job
from database import get_job as load_job
from database import list_jobs as load_jobs
from database.domain import ApiKey, JobStatus, TuningJob, Worker
from database.records import stored_param_values
from loopnest.errors import ParameterError
from loopnest.parameters import require_params
from loopnest.transform.recipe import Recipe
from loopnest.transform.recipe_text import recipe_text, stored_loop_names
from service.access import check_owner
from service.config import ServiceSettings
from service.core import Core
from service.errors import ConflictError
from service.mappers import program_source
from service.schemas import JobIn, ProgramIn
from service.services.programs import admit_program
from service.services.workers import job_status_text, live_workers


def create_job(body: JobIn, *, store: Store, settings: ServiceSettings, core: Core,
               key: ApiKey | None = None) -> TuningJob:
    """Enqueue a tuning job (``key``'s, with the program it sends); raises a 4xx-mapped
    :class:`PerfembedError` for anything the user got wrong."""
    budget = body.budget if body.budget is not None else settings.default_job_budget
    if budget > settings.max_job_budget:
        raise ParameterError(f"budget {budget} is over this server's limit of {settings.max_job_budget} trials")
    options = _options(body)
    if body.program is not None:
        nest_id = _store_program_nest(body.program, body.nest, settings=settings, core=core, params=options.params,
                                      key=key)
        options = options.with_program(program_source(body.program, settings=settings), body.nest, with_source=False)
    else:
        assert body.nest_id is not None
        nest_id = body.nest_id
    with store.session() as session:
        if body.program is None:
            nest = get_nest(session, nest_id=nest_id)
            # A stored nest (a seed nest) keeps the parameter values it was tuned at: they are the
            # default, and values given in the request win.
            params = {**stored_param_values(nest.normalized), **options.params}
            options = dataclasses.replace(options, params=params)
            _check_params(nest.normalized, params, what=f"nest {nest_id}")
        if body.target_id is not None:
            get_target(session, target_id=body.target_id)
        return enqueue_job(session, nest_id=nest_id, budget=budget, target_id=body.target_id,
                           options=options.to_json(), owner_key_id=None if key is None else key.id)


def _options(body: JobIn) -> JobOptions:
    """The request's run options (parameters, repetitions, threads, time, seed, warm start) as the worker reads them."""
    params = body.params if body.params is not None else (body.program.params if body.program else None)
    # A malformed recipe is refused now (422), not when a worker gets to it.
    warm_start = tuple(Recipe.from_dict(r.model_dump()).to_dict()["steps"] for r in body.warm_start or ())
    return JobOptions(params=dict(params or {}), reps=body.reps, threads=body.threads, timeout=body.timeout_s,
                      seed=body.seed, warm_start=warm_start)


def _store_program_nest(program: ProgramIn, index: int, *, settings: ServiceSettings, core: Core,
                        params: Mapping[str, int], key: ApiKey | None) -> int:
    # Analysed within the budget, once, in a worker: a macro bomb sent here ran 206 s and took 4.46 GB in
    # this thread before its 422.
    source = program_source(program, settings=settings)
    analysis = admit_program(source, settings)
    nests = analysis.nests
    if not 0 <= index < len(nests):
        raise ParameterError(f"nest {index}: the program has {len(nests)} supported loop nest(s)"
                             + "".join(f"; rejected {r.location}: {r.message}" for r in analysis.rejected[:3]))
    scop = nests[index].scop
    _check_params({"params": list(scop.params)}, params, what=scop.name)
    nest_ids = core.ingest(source, owner_key_id=None if key is None else key.id, analysis=analysis)
    return nest_ids[index]


def _check_params(normalized: Any, params: Mapping[str, int], *, what: str) -> None:
    """Every parameter of the nest needs a value, or the worker would fail the job later."""
    names = normalized.get("params") if isinstance(normalized, Mapping) else None
    if not isinstance(names, list):
        return
    require_params([str(p) for p in names], params, what=what,
                   hint="give them in 'params' (NAME: INT); the nest has no stored values for them")


def get_job(session: Session, job_id: int, *, settings: AutotuneSettings | None = None) -> dict[str, Any]:
    return job_public(session, load_job(session, job_id=job_id), settings=settings)


def list_jobs(session: Session, *, status: JobStatus | None, nest_id: int | None, limit: int,
              settings: AutotuneSettings | None = None) -> dict[str, Any]:
    workers = live_workers(session, settings)
    jobs = [job_public(session, job, settings=settings, workers=workers)
            for job in load_jobs(session, status=status, nest_id=nest_id, limit=limit)]
    return {"data": jobs, "count": len(jobs)}


def cancel_job(store: Store, job_id: int, *, key: ApiKey | None,
               settings: AutotuneSettings | None = None) -> dict[str, Any]:
    """Cancel a queued or running job (its worker stops after the current trial); through the API only the
    key that enqueued it, or an admin key, may (:class:`ForbiddenError`, 403). ``key`` None: the CLI on its
    own database, which acts on every job.

    Cancelling a cancelled job returns it unchanged; one that is done or failed is a
    :class:`ConflictError` (409).
    """
    with store.session() as session:
        if key is not None:
            check_owner(load_job(session, job_id=job_id).owner_key_id, key, what=f"tuning job {job_id}")
        job = cancel_stored_job(session, job_id=job_id)
        if job.status in (JobStatus.DONE, JobStatus.FAILED):
            raise ConflictError(f"tuning job {job_id} is already {job.status.value}; there is nothing to cancel")
        return job_public(session, job, settings=settings)


def job_public(session: Session, job: TuningJob, *, settings: AutotuneSettings | None = None,
               workers: Sequence[Worker] | None = None) -> dict[str, Any]:
    """The job as the API shows it; ``workers`` (the live ones) is looked up when not given."""
    best, text = None, None
    if job.best_recipe_id is not None:
        best = {"steps": get_recipe(session, recipe_id=job.best_recipe_id).steps}
        text = recipe_text(best, stored_loop_names(get_nest(session, nest_id=job.nest_id).normalized))
    workers = live_workers(session, settings) if workers is None else workers
    ahead = queued_before(session, job_id=job.id) if job.status is JobStatus.QUEUED and workers else 0
    return {
        "id": job.id, "nest_id": job.nest_id, "target_id": job.target_id, "status": job.status,
        "status_text": job_status_text(job, workers, ahead=ahead),
        "budget": job.budget, "trials_done": job.progress, "best_speedup": job.best_speedup,
        "best_recipe_id": job.best_recipe_id, "best_recipe": best, "best_recipe_text": text, "error": job.error,
        "worker": job.lease_owner, "attempts": job.attempts, "created_at": job.created_at,
        "updated_at": job.updated_at, "started_at": job.started_at, "finished_at": job.finished_at,
    }
