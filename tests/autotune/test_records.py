"""Every measurement goes through MeasurementRecorder: trials, confirmed winners, and the service's
transfer runs (baseline, screening figures, re-measured candidates) alike."""

from __future__ import annotations

import math

from database import MeasurementOrigin, get_recipe, list_measurements
from database.records import MeasurementRecorder, ensure_local_target, register_nest
from loopnest.harness import VariantResult
from loopnest.harness.compare import Speedup
from tests.autotune.kernels import GEMM, GEMM_PARAMS

TILE = [{"op": "tile", "loop": 2, "size": 16}]


def test_a_transfer_run_is_stored_baseline_screening_and_confirmed(store, gemm) -> None:
    nest = register_nest(store, source=GEMM.read_text(), name=GEMM.name, index=0, scop=gemm)
    target = ensure_local_target(store)
    recorder = MeasurementRecorder(store, nest_id=nest.id, target_id=target.id, params=GEMM_PARAMS,
                                   origin=MeasurementOrigin.TRANSFER)
    base = VariantResult(label="baseline", status="ok", times=(2.0, 2.2, 1.8))
    assert base.ok and base.median == 2.0
    recorder.baseline(base, repetitions=3)
    recorder.screened(TILE, speedup=4.0, verified=False, baseline_seconds=2.0, repetitions=3, threads=2)
    recorder.confirmed(TILE, Speedup(1.5, 1.2, math.inf, 0.95, 10, 5, 2, 0.0, False), 2.0)
    with store.session() as session:
        rows = list_measurements(session, nest_id=nest.id)
        steps = [get_recipe(session, recipe_id=m.recipe_id).steps for m in rows]
    assert steps == [[], TILE, TILE] and {m.origin for m in rows} == {MeasurementOrigin.TRANSFER}
    baseline, screened, confirmed = rows
    assert (baseline.speedup, baseline.verified, baseline.median_time_s) == (1.0, True, 2.0)
    assert (screened.speedup, screened.verified, screened.median_time_s) == (None, False, 0.5)  # never a success
    figures = (confirmed.speedup, confirmed.speedup_low, confirmed.speedup_high, confirmed.repetitions)
    assert figures == (1.5, 1.2, 1e300, 10)  # an unbounded interval is stored bounded
    assert confirmed.median_time_s == 2.0 / 1.5 and dict(confirmed.params) == GEMM_PARAMS
