"""Whole-database reads for the dashboard: table counts, each nest's best recipe, recent activity.

Each is one or two queries whatever the database's size (the dashboard's overview and map must
stay fast on 10k nests), and returns plain frozen records, never ORM rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from database.domain import JobStatus, TuningJob
from database.repositories._common import chunks
from database.tables import (
    MeasurementModel,
    NestModel,
    ProgramModel,
    RecipeModel,
    TargetModel,
    TuningJobModel,
)
from loopnest.frontend.program import nest_name


@dataclass(frozen=True)
class NestBest:
    """A nest with its name and its best verified measurement on any target (None: none verified)."""

    nest_id: int
    program: str
    index: int
    speedup: float | None
    target_id: int | None
    recipe_id: int | None

    @property
    def name(self) -> str:
        return nest_name(self.program, self.index)


@dataclass(frozen=True)
class RecentMeasurement:
    """A measurement with the name of its nest, newest first in :func:`recent_measurements`."""

    id: int
    nest_id: int
    nest: str
    recipe_id: int
    target_id: int
    speedup: float | None
    speedup_low: float | None
    speedup_high: float | None
    verified: bool
    origin: str
    measured_at: datetime


def table_counts(session: Session) -> dict[str, int]:
    """Rows per table (programs, nests, recipes, measurements, verified measurements, targets, jobs)."""
    def count(column: object, *where: object) -> int:
        stmt = select(func.count(column))  # type: ignore[arg-type]
        for clause in where:
            stmt = stmt.where(clause)  # type: ignore[arg-type]
        return int(session.scalar(stmt) or 0)

    return {
        "programs": count(ProgramModel.id), "nests": count(NestModel.id), "recipes": count(RecipeModel.id),
        "measurements": count(MeasurementModel.id),
        "verified_measurements": count(MeasurementModel.id, MeasurementModel.verified.is_(True)),
        "targets": count(TargetModel.id), "tuning_jobs": count(TuningJobModel.id),
    }


def jobs_by_status(session: Session) -> dict[str, int]:
    """How many tuning jobs are in each state (states without jobs are left out)."""
    rows = session.execute(select(TuningJobModel.status, func.count()).group_by(TuningJobModel.status))
    return {str(status): int(n) for status, n in rows}


def best_per_nest(session: Session, *, program_id: int | None = None) -> list[NestBest]:
    """Every nest (or ``program_id``'s), by id, with its best verified speedup and the recipe and target
    it was measured with; one query (a window over the verified measurements)."""
    rank = func.row_number().over(partition_by=MeasurementModel.nest_id,
                                  order_by=(MeasurementModel.speedup.desc(), MeasurementModel.id))
    best = (select(MeasurementModel.nest_id, MeasurementModel.speedup, MeasurementModel.target_id,
                   MeasurementModel.recipe_id, rank.label("rank"))
            .where(MeasurementModel.verified.is_(True), MeasurementModel.speedup.is_not(None)))
    nests = select(NestModel.id, ProgramModel.name, NestModel.index)
    if program_id is not None:
        nests = nests.where(NestModel.program_id == program_id)
        best = best.join(NestModel, NestModel.id == MeasurementModel.nest_id).where(NestModel.program_id == program_id)
    sub = best.subquery()
    stmt = (nests.add_columns(sub.c.speedup, sub.c.target_id, sub.c.recipe_id)
            .join(ProgramModel, ProgramModel.id == NestModel.program_id)
            .outerjoin(sub, (sub.c.nest_id == NestModel.id) & (sub.c.rank == 1))
            .order_by(NestModel.id))
    return [NestBest(int(nest_id), str(name), int(index), None if speedup is None else float(speedup),
                     None if target_id is None else int(target_id), None if recipe_id is None else int(recipe_id))
            for nest_id, name, index, speedup, target_id, recipe_id in session.execute(stmt)]


def recent_measurements(session: Session, *, limit: int = 10) -> list[RecentMeasurement]:
    """The newest measurements (by id), each with its nest's name."""
    stmt = (select(MeasurementModel, ProgramModel.name, NestModel.index)
            .join(NestModel, NestModel.id == MeasurementModel.nest_id)
            .join(ProgramModel, ProgramModel.id == NestModel.program_id)
            .order_by(MeasurementModel.id.desc()).limit(limit))
    return [RecentMeasurement(m.id, m.nest_id, nest_name(name, index), m.recipe_id, m.target_id, m.speedup,
                              m.speedup_low, m.speedup_high, m.verified, m.origin, m.measured_at)
            for m, name, index in session.execute(stmt)]


def recent_jobs(session: Session, *, statuses: Sequence[JobStatus | str] | None = None,
                limit: int | None = 50) -> list[TuningJob]:
    """Tuning jobs newest first (by id), optionally only those in ``statuses``, at most ``limit``."""
    stmt = select(TuningJobModel).order_by(TuningJobModel.id.desc()).limit(limit)
    if statuses is not None:
        stmt = stmt.where(TuningJobModel.status.in_([JobStatus(s).value for s in statuses]))
    return [row.to_domain() for row in session.scalars(stmt)]


def recipe_steps(session: Session, *, recipe_ids: Iterable[int]) -> dict[int, list[dict[str, Any]]]:
    """The steps of each recipe in ``recipe_ids`` (unknown ids are left out), a few queries in all."""
    out: dict[int, list[dict[str, Any]]] = {}
    for batch in chunks(sorted(set(recipe_ids))):
        for row in session.scalars(select(RecipeModel).where(RecipeModel.id.in_(batch))):
            out[row.id] = list(row.to_domain().steps)
    return out


def nest_loop_names(session: Session, *, nest_ids: Iterable[int]) -> dict[int, list[str] | None]:
    """The source names of each nest's loops by depth (``normalized["loop_names"]``; None: not stored)."""
    out: dict[int, list[str] | None] = {}
    for batch in chunks(sorted(set(nest_ids))):
        for nest_id, normalized in session.execute(select(NestModel.id, NestModel.normalized)
                                                   .where(NestModel.id.in_(batch))):
            names = normalized.get("loop_names") if isinstance(normalized, dict) else None
            out[int(nest_id)] = [str(n) for n in names] if isinstance(names, list) else None
    return out
