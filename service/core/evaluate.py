"""Evaluate: a nest's candidates compiled, verified and timed in the harness, the winner re-measured,
and every run stored (verified with its speedup, or unverified: never a success)."""

from __future__ import annotations

from collections.abc import Sequence

from autotune.transfer import Candidate as TransferCandidate
from autotune.transfer import Neighbour, TransferResult, TransferTuner
from database import add_measurement, get_or_create_recipe
from loopnest.harness import VariantResult
from loopnest.harness.progress import Progress, ProgressFn
from loopnest.ir import Scop
from loopnest.transform.recipe import Recipe
from loopnest.transform.recipe_text import recipe_text
from service.core.context import CoreContext
from service.core.model import AcceptedRecipe, MeasuredCandidate, Measurement

ORIGIN = "transfer"


def evaluate_nest(ctx: CoreContext, scop: Scop, params: dict[str, int], *, nest_id: int,  # noqa: PLR0913
                  neighbours: Sequence[Neighbour], tuner: TransferTuner, reps: int,
                  loop_names: Sequence[str], progress: ProgressFn | None = None) -> Measurement:
    """Screen every candidate adapted from ``neighbours``, re-measure the best, store every run."""
    target_id = ctx.target_id  # resolved before any session: SQLite runs one writer at a time
    with ctx.harness(scop, params, reps=reps) as harness:
        result = tuner.evaluate(harness, neighbours, progress=progress)
        base = harness.baseline()
        threads = harness.threads or 1
        if progress is not None:
            progress(Progress("storing results"))
        _store_runs(ctx, nest_id=nest_id, target_id=target_id, params=params, reps=reps, threads=threads,
                    base=base, result=result)
    return _measurement(result, threads, loop_names)


def _store_runs(ctx: CoreContext, *, nest_id: int, target_id: int, params: dict[str, int],  # noqa: PLR0913
                reps: int, threads: int, base: VariantResult, result: TransferResult) -> None:
    """The baseline (the identity recipe, 1.0x) and each candidate that ran; a confirmed candidate is
    stored with its re-measured figure and interval, never the screening one."""
    with ctx.store.session() as session:
        if base.ok and base.median is not None:
            rec = get_or_create_recipe(session, steps=Recipe().to_dict()["steps"])
            add_measurement(session, nest_id=nest_id, recipe_id=rec.id, target_id=target_id,
                            median_time_s=base.median, spread_s=(base.spread or 0.0) * base.median,
                            repetitions=reps, verified=True, origin=ORIGIN, params=params, speedup=1.0)
        for cand in result.candidates:
            conf = cand.confirmed
            speedup = conf.ratio if conf is not None else cand.speedup
            rec = get_or_create_recipe(session, steps=cand.recipe.to_dict()["steps"])
            if speedup is None or not base.median:
                continue
            add_measurement(session, nest_id=nest_id, recipe_id=rec.id, target_id=target_id,
                            median_time_s=base.median / speedup, spread_s=0.0,
                            repetitions=conf.pairs if conf is not None else reps,
                            verified=cand.verified, origin=ORIGIN, params=params,
                            speedup=speedup if cand.verified else None, threads=threads,
                            interval=None if conf is None else (conf.low, min(conf.high, 1e300)),
                            confidence=None if conf is None else conf.confidence,
                            cpu_pressure=None if conf is None else conf.cpu_pressure,
                            loaded=conf is not None and conf.loaded)
    ctx.cache.changed()


def _measurement(result: TransferResult, threads: int, names: Sequence[str]) -> Measurement:
    evaluated = tuple(_measured(c, names) for c in result.candidates)
    return Measurement(baseline_seconds=result.baseline_seconds, threads=threads, evaluated=evaluated,
                       best=_accepted(result.best, names), evaluations=result.evaluations)


def _measured(c: TransferCandidate, names: Sequence[str]) -> MeasuredCandidate:
    recipe = c.recipe.to_dict()
    return MeasuredCandidate(source=c.neighbour.name, recipe=recipe, recipe_text=recipe_text(recipe, names),
                             speedup=c.speedup, verified=c.verified, status=c.status, message=c.message,
                             confirmed=None if c.confirmed is None else c.confirmed.to_dict())


def _accepted(best: TransferCandidate | None, names: Sequence[str]) -> AcceptedRecipe | None:
    if best is None or best.confirmed is None:
        return None
    conf, recipe = best.confirmed, best.recipe.to_dict()
    return AcceptedRecipe(source=best.neighbour.name, recipe=recipe, recipe_text=recipe_text(recipe, names),
                          speedup=conf.ratio, interval=(conf.low, conf.high), confidence=conf.confidence,
                          pairs=conf.pairs, threads=conf.threads, loaded=conf.loaded, text=conf.describe())
