"""Page data of the overview and the jobs page: counts, best speedups by family, recent activity,
the sandbox and the live workers; tuning jobs with their progress, lease and errors. No HTTP here."""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from database import (
    best_per_nest,
    jobs_by_status,
    list_embedding_models,
    list_programs,
    nest_summaries,
    recent_jobs,
    recent_measurements,
    table_counts,
)
from database.domain import JobStatus
from loopnest.frontend.program import nest_name
from service.services.readiness import isolation
from service.services.tuning_jobs import job_public
from service.services.workers import live_workers

if TYPE_CHECKING:
    from database import NestBest, Store
    from service.config import ServiceSettings
    from service.core import Core

# What a program's name says about its family: the seed's programs are ``FAMILY/FILE.c``.
OTHER_FAMILY = "other"
RECENT = 10
FINISHED_JOBS_SHOWN = 50


def family_of(program: str) -> str:
    """The family of a program named ``FAMILY/FILE.c`` (the seed's names); any other name is ``other``."""
    head, sep, tail = program.partition("/")
    return head if sep and head and tail else OTHER_FAMILY


@dataclass(frozen=True)
class FamilyRow:
    family: str
    nests: int
    tuned: int  # nests with a verified recipe at least min_speedup faster
    best: float | None
    best_nest_id: int | None
    best_nest: str | None
    geomean: float | None  # of the best verified speedups of the nests that have one


def families(rows: Sequence[NestBest], *, min_speedup: float) -> list[FamilyRow]:
    """One row per family, the families with the best speedups first."""
    by_family: dict[str, list[NestBest]] = defaultdict(list)
    for row in rows:
        by_family[family_of(row.program)].append(row)
    out = []
    for family, members in by_family.items():
        measured = [m for m in members if m.speedup is not None]
        top = max(measured, key=lambda m: m.speedup or 0.0, default=None)
        geomean = math.exp(sum(math.log(m.speedup or 1.0) for m in measured) / len(measured)) if measured else None
        out.append(FamilyRow(family, len(members), sum(1 for m in measured if (m.speedup or 0.0) >= min_speedup),
                             top.speedup if top else None, top.nest_id if top else None,
                             top.name if top else None, geomean))
    return sorted(out, key=lambda f: (-(f.best or 0.0), f.family))


def overview(store: Store, settings: ServiceSettings, core: Core) -> dict[str, Any]:
    """Everything the overview page shows (a few queries, none per nest). The families' table reads every
    nest's best result: it is remembered by the core until the database changes (under a keyless flood of
    ``/ui`` its rows, 2,000 nests a load, held the interpreter's lock that ``/healthz`` waited for)."""
    table = core.view(f"ui-families-{settings.min_speedup}", lambda: _families_table(store, settings.min_speedup))
    with store.session() as session:
        counts = table_counts(session)
        programs = list_programs(session, offset=max(0, counts["programs"] - RECENT))
        models = list_embedding_models(session)
        data: dict[str, Any] = {"counts": counts, "jobs": jobs_by_status(session), **table,
                "recent_measurements": recent_measurements(session, limit=RECENT),
                "recent_jobs": recent_jobs(session, limit=RECENT), "recent_programs": programs[::-1],
                "workers": live_workers(session, settings), "model": models[-1] if models else None}
    data["isolation"] = isolation(settings)
    data["min_speedup"] = settings.min_speedup
    return data


def _families_table(store: Store, min_speedup: float) -> dict[str, Any]:
    with store.session() as session:
        best = best_per_nest(session)
    return {"families": families(best, min_speedup=min_speedup),
            "tuned": sum(1 for b in best if (b.speedup or 0.0) >= min_speedup)}


def jobs_page(store: Store, settings: ServiceSettings, *, status: JobStatus | None) -> dict[str, Any]:
    """Queued and running jobs (all of them), then the newest finished ones, each as the API shows it
    plus its lease expiry; ``status``: only jobs in that state."""
    open_states = [JobStatus.QUEUED, JobStatus.RUNNING]
    with store.session() as session:
        workers = live_workers(session, settings)
        if status is None:
            jobs = recent_jobs(session, statuses=open_states, limit=None)[::-1]
            jobs += recent_jobs(session, statuses=[s for s in JobStatus if s not in open_states],
                                limit=FINISHED_JOBS_SHOWN)
        else:
            jobs = recent_jobs(session, statuses=[status], limit=FINISHED_JOBS_SHOWN * 4)
        names = {i: nest_name(p, x) for i, (p, x, *_) in
                 nest_summaries(session, nest_ids=list({j.nest_id for j in jobs})).items()} if jobs else {}
        rows = [{**job_public(session, job, settings=settings, workers=workers), "nest": names.get(job.nest_id),
                 "lease_expires_at": job.lease_expires_at, "lease_left_s": _left_s(job.lease_expires_at)}
                for job in jobs]
    return {"jobs": rows, "workers": workers, "status": status, "statuses": list(JobStatus)}


def _left_s(when: datetime | None) -> float | None:
    return None if when is None else (when - datetime.now(UTC)).total_seconds()
