"""After screening, the fastest candidate that runs on one thread is offered with a loop in parallel.

Reproduction: in the paper benchmark (2026-12-03, Intel Xeon, two runs) covariance_rank1_f64's best
candidate was two_mm_ikj_f64's ``distribute; unroll_jam 0 x2; unroll_jam 1 x4`` (1.8x), a recipe of a
family without a parallel loop; the same recipe with its outer loop run in parallel as an array
reduction measured 3.0x and 3.5x (autotuning: 4-5x, with that loop in parallel too).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from autotune.transfer import PARALLEL, Candidate, Neighbour, TransferTuner, loop_roles
from autotune.transfer.parallel import parallel_outer
from loopnest import Harness, Recipe, extract_scops
from loopnest.harness.measure import Evaluation
from loopnest.polyhedral import compute_dependences
from loopnest.transform.recipe import apply_recipe

ROOT = Path(__file__).resolve().parents[2]
COVARIANCE = extract_scops(ROOT / "corpus/generated/datamining/covariance_rank1_f64.c").scops[0]
COV_DEPS = compute_dependences(COVARIANCE)
PARAMS = {"m": 40, "n": 56}


def _recipe(*steps: dict[str, object]) -> Recipe:
    return Recipe.from_dict({"steps": list(steps)})


TWO_MM_LENT = _recipe({"op": "distribute", "loop": 0}, {"op": "unroll_jam", "factor": 2, "loop": 0},
                      {"op": "unroll_jam", "factor": 4, "loop": 1})
PARALLEL_LENT = _recipe({"op": "parallelize", "loop": 0, "reduction": True}, {"op": "vectorize", "loop": 2})


def _screened(recipe: Recipe, speedup: float, neighbour: Neighbour | None = None) -> Candidate:
    return Candidate(neighbour, recipe, speedup=speedup, verified=True, status="ok")


def test_covariance_gets_two_mms_block_with_its_row_loop_as_a_parallel_reduction() -> None:
    two_mm = Neighbour(58, "two_mm_ikj_f64", 10.2, TWO_MM_LENT, loop_roles(COVARIANCE, PARAMS), 2.7)
    screened = [_screened(PARALLEL_LENT, 1.82), _screened(TWO_MM_LENT, 1.80, two_mm)]
    extra = TransferTuner().followup(COVARIANCE, COV_DEPS, screened, threads=2)
    assert extra is not None and extra.variant == PARALLEL and extra.source == "two_mm_ikj_f64 (in parallel)"
    assert extra.recipe.to_dict()["steps"] == [
        {"op": "distribute", "loop": 0}, {"op": "parallelize", "loop": 0},
        {"op": "unroll_jam", "factor": 2, "loop": 0}, {"op": "unroll_jam", "factor": 4, "loop": 1}]
    # Real code: it compiles, runs on two threads and gives the original's covariance.
    with Harness(COVARIANCE, PARAMS, reps=1, threads=2) as harness:
        result = harness.evaluate(extra.recipe)
    assert result.variant.ok and result.verified, result.to_dict()


def test_no_followup_on_one_thread_for_a_slow_or_unverified_recipe_or_one_already_offered() -> None:
    tuner = TransferTuner()
    assert tuner.followup(COVARIANCE, COV_DEPS, [_screened(TWO_MM_LENT, 1.8)], threads=1) is None
    assert tuner.followup(COVARIANCE, COV_DEPS, [_screened(TWO_MM_LENT, 0.9)], threads=2) is None
    wrong = dataclasses.replace(_screened(TWO_MM_LENT, 3.0), verified=False)
    assert tuner.followup(COVARIANCE, COV_DEPS, [wrong], threads=2) is None
    already = parallel_outer(TWO_MM_LENT, COVARIANCE, COV_DEPS)
    assert already is not None
    assert tuner.followup(COVARIANCE, COV_DEPS, [_screened(TWO_MM_LENT, 1.8), _screened(already, 1.0)],
                          threads=2) is None
    # The same code under another recipe text (the reduction clause the code generator adds by itself).
    same_code = _recipe({"op": "distribute", "loop": 0}, {"op": "parallelize", "loop": 0, "reduction": True},
                        {"op": "unroll_jam", "factor": 2, "loop": 0}, {"op": "unroll_jam", "factor": 4, "loop": 1})
    assert same_code.hash != already.hash
    assert tuner.followup(COVARIANCE, COV_DEPS, [_screened(TWO_MM_LENT, 1.8), _screened(same_code, 1.0)],
                          threads=2) is None
    # Recipes that already run in parallel (isl's schedule does too) have no such variant.
    assert parallel_outer(PARALLEL_LENT, COVARIANCE, COV_DEPS) is None
    assert parallel_outer(_recipe({"op": "autoschedule"}), COVARIANCE, COV_DEPS) is None


class SteadyTimer(Harness):
    """A real harness (compile, run, verify) whose screening figure is fixed: the timing is what is faked."""

    def evaluate(self, recipe: Recipe, **kwargs: Any) -> Evaluation:
        result = super().evaluate(recipe, **kwargs)
        return dataclasses.replace(result, speedup=1.5 if result.verified else None)


def test_the_screening_offers_the_parallel_variant_as_one_more_candidate() -> None:
    """Through the real screening flow: the lent recipe is screened, then its parallel variant."""
    two_mm = Neighbour(58, "two_mm_ikj_f64", 10.2, TWO_MM_LENT, loop_roles(COVARIANCE, PARAMS), 2.7)
    tuner = TransferTuner(min_speedup=1e9)
    with SteadyTimer(COVARIANCE, PARAMS, reps=1, threads=2) as harness:
        lent = [c for c in tuner.candidates(COVARIANCE, PARAMS, [two_mm], COV_DEPS) if c.variant == ""]
        result = tuner.evaluate_candidates(harness, lent)
    assert result.evaluations == 2
    assert [(c.variant, c.verified) for c in result.candidates] == [("", True), (PARALLEL, True)]
    with SteadyTimer(COVARIANCE, PARAMS, reps=1, threads=1) as harness:  # one thread: nothing to add
        assert tuner.evaluate_candidates(harness, lent).evaluations == 1


@settings(max_examples=25, deadline=None)
@given(jam_outer=st.sampled_from([None, 2, 4]), jam_inner=st.sampled_from([None, 2, 4]),
       tile=st.sampled_from([None, 8, 32]))
def test_the_parallel_variant_keeps_every_step_and_applies(jam_outer: int | None, jam_inner: int | None,
                                                          tile: int | None) -> None:
    """Whatever the serial recipe on covariance: the variant is its steps with one parallelize inserted
    before the first vectorize/unroll/jam, on one of the two outermost loops, and it is legal."""
    steps: list[dict[str, object]] = [{"op": "distribute", "loop": 0}]
    if tile is not None:
        steps.append({"op": "tile", "loops": [2], "sizes": [tile]})
    if jam_outer is not None:
        steps.append({"op": "unroll_jam", "factor": jam_outer, "loop": 0})
    if jam_inner is not None:
        steps.append({"op": "unroll_jam", "factor": jam_inner, "loop": 1})
    recipe = _recipe(*steps)
    variant = parallel_outer(recipe, COVARIANCE, COV_DEPS)
    assert variant is not None
    got = variant.to_dict()["steps"]
    (where,) = [k for k, step in enumerate(got) if step["op"] == "parallelize"]
    assert got[:where] + got[where + 1:] == recipe.to_dict()["steps"]
    assert got[where]["loop"] in (0, 1)
    apply_recipe(COVARIANCE, variant, COV_DEPS)
