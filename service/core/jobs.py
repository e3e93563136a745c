"""Jobs: the tuning job of a nest no neighbour helps (the fallback), with what a worker needs to
rebuild the nest and the candidates to warm-start from."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from autotune.workers.job_options import JobOptions
from database import JobRequest, open_or_enqueue_jobs
from service.core.context import CoreContext
from service.core.types import Candidate, ProgramSource


def job_options(program: ProgramSource, index: int, params: Mapping[str, int],
                candidates: Sequence[Candidate]) -> JobOptions:
    """What a worker needs to rebuild the nest (its program travels with the job), warm-started with the candidates."""
    return JobOptions(params=dict(params), warm_start=tuple(c.recipe for c in candidates)).with_program(
        program, index, with_source=True)


def fallback_jobs(ctx: CoreContext, requests: Sequence[JobRequest]) -> list[int]:
    """Each nest's open tuning job, else a new one (:func:`database.open_or_enqueue_jobs`), in one visit;
    their ids in order."""
    if not requests:
        return []
    target_id = ctx.target_id  # resolved before the session: SQLite runs one writer at a time
    with ctx.store.session() as session:
        jobs = open_or_enqueue_jobs(session, requests=requests, target_id=target_id)
    ctx.cache.changed()
    return [job.id for job in jobs]
