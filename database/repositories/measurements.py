"""Measurements of a nest under a recipe on a target, and the recipe rankings built on them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import replace
from typing import Any

from sqlalchemy import delete, func, select
from sqlalchemy.orm import Session

from database.domain import (
    JsonValue,
    Measurement,
    MeasurementIn,
    MeasurementOrigin,
    RankedRecipe,
    canonical_json,
    recipe_hash,
)
from database.repositories._common import check_non_negative, check_positive, chunks, json_object, json_value
from database.tables import PROGRAM_CHECK_LENGTH, MeasurementModel, NestModel, ProgramModel, RecipeModel, TargetModel


def add_measurement(session: Session, measurement: MeasurementIn) -> Measurement:
    """Record one measurement (repeated measurements are kept, not merged).

    Raises :class:`NotFoundError` for an unknown nest, recipe or target and
    :class:`InvalidRecordError` for an impossible value.
    """
    m = measurement
    origin = MeasurementOrigin(m.origin)
    check_non_negative(m.median_time_s, what="median time")
    check_non_negative(m.spread_s, what="spread")
    check_positive(m.repetitions, what="repetitions")
    if m.speedup is not None:
        check_positive(m.speedup, what="speedup")
    NestModel.find_or_raise_by_id(session, m.nest_id)
    RecipeModel.find_or_raise_by_id(session, m.recipe_id)
    TargetModel.find_or_raise_by_id(session, m.target_id)
    row = MeasurementModel(
        nest_id=m.nest_id,
        recipe_id=m.recipe_id,
        target_id=m.target_id,
        params=json_object(m.params, what="parameter values"),
        median_time_s=float(m.median_time_s),
        spread_s=float(m.spread_s),
        repetitions=int(m.repetitions),
        speedup=None if m.speedup is None else float(m.speedup),
        verified=bool(m.verified),
        origin=origin.value,
        speedup_low=None if m.interval is None else float(m.interval[0]),
        speedup_high=None if m.interval is None else float(m.interval[1]),
        confidence=m.confidence,
        threads=m.threads,
        cpu_pressure=m.cpu_pressure,
        loaded=bool(m.loaded),
        structure=m.structure,
    )
    if m.measured_at is not None:
        row.measured_at = m.measured_at
    session.add(row)
    session.flush()
    return row.to_domain()


def list_measurements(
    session: Session,
    *,
    nest_id: int | None = None,
    recipe_id: int | None = None,
    target_id: int | None = None,
    origin: MeasurementOrigin | str | None = None,
    verified: bool | None = None,
    limit: int | None = None,
) -> list[Measurement]:
    """Measurements matching every filter given, oldest first."""
    stmt = select(MeasurementModel).order_by(MeasurementModel.id)
    if nest_id is not None:
        stmt = stmt.where(MeasurementModel.nest_id == nest_id)
    if recipe_id is not None:
        stmt = stmt.where(MeasurementModel.recipe_id == recipe_id)
    if target_id is not None:
        stmt = stmt.where(MeasurementModel.target_id == target_id)
    if origin is not None:
        stmt = stmt.where(MeasurementModel.origin == MeasurementOrigin(origin).value)
    if verified is not None:
        stmt = stmt.where(MeasurementModel.verified == verified)
    return [row.to_domain() for row in session.scalars(stmt.limit(limit))]


def ranked_recipes_for(
    session: Session,
    *,
    nest_id: int,
    target_id: int,
    params: Mapping[str, Any] | None = None,
    verified_only: bool = True,
    limit: int = 5,
) -> list[RankedRecipe]:
    """Distinct recipes for a nest on a target, best first, each with the measurement that ranks it.

    A recipe re-measured against the baseline (paired runs, with an interval: a worker's confirmation,
    ``seed confirm``) ranks by its latest such figure; any other by its highest speedup, the best of
    its noisy screening readings (the seed's gemm_ijk_acc_tt_f64: isl's schedule jammed 2 x 2 read
    11.26x in its study and 7.28x [6.05, 9.90] re-measured, jammed 2 x 4 9.32x and 10.04x [9.83, 10.30]).
    Measurements
    without a speedup come last, by median time. With ``params``, only measurements at exactly those
    parameter values count.
    """
    stmt = (
        select(MeasurementModel, RecipeModel)
        .join(RecipeModel, RecipeModel.id == MeasurementModel.recipe_id)
        .where(MeasurementModel.nest_id == nest_id, MeasurementModel.target_id == target_id)
        .order_by(
            MeasurementModel.speedup.desc().nulls_last(),
            MeasurementModel.median_time_s,
            MeasurementModel.id,
        )
    )
    if verified_only:
        stmt = stmt.where(MeasurementModel.verified.is_(True))
    wanted = None if params is None else canonical_json(json_object(params, what="parameter values"))
    chosen: dict[int, tuple[MeasurementModel, RecipeModel]] = {}
    verdicts: dict[int, tuple[int, str]] = {}  # recipe id: its latest whole-program verdict (measurement id, text)
    for measurement, recipe in session.execute(stmt):
        if wanted is not None and canonical_json(measurement.params) != wanted:
            continue
        if measurement.program_check and measurement.id > verdicts.get(measurement.recipe_id, (-1, ""))[0]:
            verdicts[measurement.recipe_id] = (measurement.id, measurement.program_check)
        held = chosen.get(measurement.recipe_id)
        if held is None or (_re_measured(measurement) and (not _re_measured(held[0]) or measurement.id > held[0].id)):
            chosen[measurement.recipe_id] = (measurement, recipe)
    ranked = [RankedRecipe(recipe=recipe.to_domain(), measurement=replace(
        measurement.to_domain(), program_check=verdicts.get(measurement.recipe_id, (0, None))[1]))
        for measurement, recipe in chosen.values()]
    # A recipe the user's whole program refused is no nest's best (its nest figure did not hold there).
    ranked.sort(key=lambda r: (r.measurement.refused_in_program, r.measurement.speedup is None,
                               -(r.measurement.speedup or 0.0), r.measurement.median_time_s, r.measurement.id))
    return ranked[:limit]


def _re_measured(measurement: MeasurementModel) -> bool:
    return measurement.speedup_low is not None and measurement.speedup is not None


def best_recipe_for(
    session: Session,
    *,
    nest_id: int,
    target_id: int,
    params: Mapping[str, Any] | None = None,
    verified_only: bool = True,
) -> RankedRecipe | None:
    """The best recipe measured for a nest on a target (see :func:`ranked_recipes_for`)."""
    ranked = ranked_recipes_for(
        session, nest_id=nest_id, target_id=target_id, params=params, verified_only=verified_only, limit=1
    )
    return ranked[0] if ranked and not ranked[0].measurement.refused_in_program else None


def record_program_check(session: Session, *, nest_id: int, target_id: int, steps: JsonValue,
                         params: Mapping[str, Any], verdict: str) -> int:
    """Say on the latest measurement of the recipe ``steps`` for a nest, target and parameter values what
    it did in the user's whole program (``held: ...`` or ``refused: ...``); how many were marked (0 when
    the recipe was never measured there)."""
    steps = steps["steps"] if isinstance(steps, dict) and set(steps) == {"steps"} else steps
    recipe = RecipeModel.find_by_hash(session, recipe_hash(json_value(steps, what="recipe steps")))
    if recipe is None:
        return 0
    wanted = canonical_json(json_object(params, what="parameter values"))
    rows = session.scalars(select(MeasurementModel).where(
        MeasurementModel.nest_id == nest_id, MeasurementModel.target_id == target_id,
        MeasurementModel.recipe_id == recipe.id).order_by(MeasurementModel.id.desc()))
    latest = next((m for m in rows if canonical_json(m.params) == wanted), None)
    if latest is None:
        return 0
    latest.program_check = verdict[:PROGRAM_CHECK_LENGTH]
    return 1


def delete_measurements(session: Session, *, nest_id: int) -> int:
    """Delete every measurement of ``nest_id`` (on every target); how many were deleted."""
    result = session.execute(delete(MeasurementModel).where(MeasurementModel.nest_id == nest_id))
    return int(getattr(result, "rowcount", 0) or 0)


def measured_nest_ids(session: Session, *, target_id: int, verified: bool = True) -> set[int]:
    """Ids of the nests with at least one (verified) measurement on ``target_id``."""
    stmt = select(MeasurementModel.nest_id).where(MeasurementModel.target_id == target_id).distinct()
    if verified:
        stmt = stmt.where(MeasurementModel.verified.is_(True))
    return set(session.scalars(stmt))


def nest_summaries(session: Session, *,
                   nest_ids: Iterable[int] | None = None) -> dict[int, tuple[str, int, float | None, int | None]]:
    """Per nest: its program's name, its index, its best verified speedup on any target, and that target.

    One query (a search describes its hits with it; a query per hit was most of its time).
    """
    def query(ids: list[int] | None) -> Any:
        rank = func.row_number().over(partition_by=MeasurementModel.nest_id,
                                      order_by=(MeasurementModel.speedup.desc(), MeasurementModel.id))
        best = (select(MeasurementModel.nest_id, MeasurementModel.speedup, MeasurementModel.target_id,
                       rank.label("rank"))
                .where(MeasurementModel.verified.is_(True), MeasurementModel.speedup.is_not(None)))
        nests = select(NestModel.id, ProgramModel.name, NestModel.index)
        if ids is not None:
            best, nests = best.where(MeasurementModel.nest_id.in_(ids)), nests.where(NestModel.id.in_(ids))
        sub = best.subquery()
        return session.execute(nests.add_columns(sub.c.speedup, sub.c.target_id)
                               .join(ProgramModel, ProgramModel.id == NestModel.program_id)
                               .outerjoin(sub, (sub.c.nest_id == NestModel.id) & (sub.c.rank == 1)))

    out: dict[int, tuple[str, int, float | None, int | None]] = {}
    rows = list(query(None)) if nest_ids is None else [r for part in chunks(nest_ids) for r in query(part)]
    for nest_id, name, index, speedup, target_id in rows:
        out[int(nest_id)] = (str(name), int(index), float(speedup) if speedup is not None else None,
                             int(target_id) if target_id is not None else None)
    return out
