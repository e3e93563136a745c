"""Evaluate: a nest's candidates compiled, verified and timed in the harness, the winner re-measured,
and every run stored (verified with its speedup, or unverified: never a success)."""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Sequence

from autotune.transfer import Candidate as TransferCandidate
from autotune.transfer import TransferResult, TransferTuner
from database import MeasurementOrigin
from database.records import MeasurementRecorder
from loopnest.harness import VariantResult
from loopnest.harness.compare import PressureMeter
from loopnest.harness.index_data import SparseChoice, structure_key
from loopnest.harness.progress import Progress, ProgressFn
from loopnest.ir import Scop
from loopnest.transform.recipe_text import recipe_text
from service.core.context import CoreContext
from service.core.types import AcceptedRecipe, MeasuredCandidate, Measurement


def measure_candidates(ctx: CoreContext, scop: Scop, params: dict[str, int], *, nest_id: int,
                  candidates: Sequence[TransferCandidate], tuner: TransferTuner, reps: int,
                  loop_names: Sequence[str], progress: ProgressFn | None = None,
                  sparse: SparseChoice | None = None) -> Measurement:
    """Screen ``candidates`` (drawn up by ``tuner`` for ``scop``), re-measure the best, store every run."""
    # Resolved before any session (SQLite runs one writer at a time); the recorder checks the database takes writes.
    recorder = MeasurementRecorder(ctx.store, nest_id=nest_id, target_id=ctx.target_id, params=params,
                                   origin=MeasurementOrigin.TRANSFER, structure=structure_key(sparse))
    with ctx.harness(scop, params, reps=reps, sparse=sparse) as harness:
        meter = PressureMeter()
        result = tuner.evaluate_candidates(harness, candidates, progress=progress)
        pressure = round(meter.stop(os.cpu_count() or 1), 3)
        base = harness.baseline()
        threads = harness.threads or 1
        if progress is not None:
            progress(Progress("storing results"))
        _store_runs(recorder, reps=reps, threads=threads, base=base, result=result)
    ctx.cache.changed()
    return dataclasses.replace(_measurement(result, threads, loop_names), screening_pressure=pressure)


def _store_runs(recorder: MeasurementRecorder, *, reps: int, threads: int, base: VariantResult,
                result: TransferResult) -> None:
    """The baseline (the identity recipe, 1.0x) and each candidate that ran; a confirmed candidate is
    stored with its re-measured figure and interval, never the screening one."""
    recorder.baseline(base, repetitions=reps)
    for cand in result.candidates:
        steps = cand.recipe.to_dict()["steps"]
        if not base.median or (cand.confirmed is None and cand.speedup is None):
            recorder.recipe_id(steps)  # the recipe is known even when it did not run
        elif cand.confirmed is not None:
            recorder.confirmed(steps, cand.confirmed, base.median)
        else:
            assert cand.speedup is not None
            recorder.screened(steps, speedup=cand.speedup, verified=cand.verified, baseline_seconds=base.median,
                              repetitions=reps, threads=threads)


def _measurement(result: TransferResult, threads: int, names: Sequence[str]) -> Measurement:
    evaluated = tuple(_measured(c, names) for c in result.candidates)
    return Measurement(baseline_seconds=result.baseline_seconds, threads=threads, evaluated=evaluated,
                       best=_accepted(result.best, names), evaluations=result.evaluations)


def _measured(c: TransferCandidate, names: Sequence[str]) -> MeasuredCandidate:
    recipe = c.recipe.to_dict()
    return MeasuredCandidate(source=c.source, recipe=recipe, recipe_text=recipe_text(recipe, names),
                             speedup=c.speedup, verified=c.verified, status=c.status, message=c.message,
                             confirmed=None if c.confirmed is None else c.confirmed.to_dict())


def _accepted(best: TransferCandidate | None, names: Sequence[str]) -> AcceptedRecipe | None:
    if best is None or best.confirmed is None:
        return None
    conf, recipe = best.confirmed, best.recipe.to_dict()
    return AcceptedRecipe(source=best.source, recipe=recipe, recipe_text=recipe_text(recipe, names),
                          speedup=conf.ratio, interval=(conf.low, conf.high), confidence=conf.confidence,
                          pairs=conf.pairs, threads=conf.threads, loaded=conf.loaded, text=conf.describe())
