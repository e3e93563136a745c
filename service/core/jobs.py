"""Jobs: the tuning job of a nest no neighbour helps (the fallback), with what a worker needs to
rebuild the nest and the candidates to warm-start from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from autotune.workers.job_options import JobOptions
from database import enqueue_job, list_jobs
from service.core.context import CoreContext
from service.core.types import Candidate, ProgramSource


def job_options(program: ProgramSource, index: int, params: Mapping[str, int],
                candidates: Sequence[Candidate]) -> JobOptions:
    """What a worker needs to rebuild the nest (its program travels with the job), warm-started with the candidates."""
    return JobOptions(params=dict(params), warm_start=tuple(c.recipe for c in candidates)).with_program(
        program, index, with_source=True)


def fallback_job(ctx: CoreContext, *, nest_id: int, budget: int, options: JobOptions,
                 owner_key_id: int | None = None) -> int:
    """The nest's open tuning job, else a new one (``owner_key_id``: the API key of the request, which may
    cancel it): a repeated request reuses it instead of queueing another."""
    target_id = ctx.target_id  # resolved before the session: SQLite runs one writer at a time
    with ctx.store.session() as session:
        open_jobs = [j for j in list_jobs(session, nest_id=nest_id) if not j.status.is_terminal]
        job = open_jobs[0] if open_jobs else enqueue_job(session, nest_id=nest_id, budget=budget,
                                                         target_id=target_id, options=options.to_json(),
                                                         owner_key_id=owner_key_id)
    ctx.cache.changed()
    return job.id
