"""Illegal steps are refused with the dependence that forbids them; legal ones are accepted."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from loopnest import Recipe, RecipeError, apply_recipe
from tests.helpers.kernels import JACOBI_1D, REDUCTION, SKEWED
from tests.helpers.scops import nest, refuse

PRODUCER_CONSUMER = """
void f(int n, double A[n], double B[n], double X[n]) {
#pragma scop
  for (int i = 0; i < n - 1; i++)
    A[i] = X[i] * 2.0;
  for (int i = 0; i < n - 1; i++)
    B[i] = A[i + 1] + 1.0;
#pragma endscop
}
"""
FUSABLE = PRODUCER_CONSUMER.replace("A[i + 1]", "A[i]")


def test_interchange_across_lt_gt_dependence_is_refused(tmp_path: Path) -> None:
    err = refuse(nest(tmp_path, SKEWED), [{"op": "interchange", "order": [1, 0]}])
    assert err.dependence == "RAW S0 -> S0 on A"
    assert "step 0" in str(err)


def test_parallelizing_a_loop_that_carries_a_dependence_is_refused(tmp_path: Path) -> None:
    scop = nest(tmp_path, REDUCTION)
    err = refuse(scop, [{"op": "parallelize", "loop": 2}])
    assert "carries the dependence" in str(err) and "on C" in str(err)
    apply_recipe(scop, Recipe.from_dict({"steps": [{"op": "parallelize", "loop": 0}]}))


def test_fusing_against_a_dependence_is_refused(tmp_path: Path) -> None:
    err = refuse(nest(tmp_path, PRODUCER_CONSUMER), [{"op": "fuse", "loop": 0}])
    assert "on A" in (err.dependence or "")
    fused = apply_recipe(nest(tmp_path, FUSABLE), Recipe.from_dict({"steps": [{"op": "fuse", "loop": 0}]}))
    assert fused.schedule.rows[0][0] == fused.schedule.rows[1][0]


def test_a_parallel_mark_made_illegal_by_a_later_step_is_refused(tmp_path: Path) -> None:
    # Fusing is legal (A[i-1] is produced one iteration earlier) but the fused loop carries it.
    source = PRODUCER_CONSUMER.replace("A[i + 1]", "A[i - 1]").replace("int i = 0; i < n - 1", "int i = 1; i < n - 1")
    scop = nest(tmp_path, source)
    apply_recipe(scop, Recipe.from_dict({"steps": [{"op": "fuse", "loop": 0}]}))
    err = refuse(scop, [{"op": "parallelize", "loop": 0}, {"op": "fuse", "loop": 0}])
    assert err.step == 1 and "marked parallel" in str(err)


def test_skew_enables_a_wavefront(tmp_path: Path) -> None:
    scop = nest(tmp_path, JACOBI_1D)
    refuse(scop, [{"op": "interchange", "order": [1, 0]}])
    skewed = apply_recipe(scop, Recipe.from_dict({"steps": [
        {"op": "skew", "loop": 1, "factor": 2}, {"op": "interchange", "order": [1, 0]},
        {"op": "skew", "loop": 1, "factor": 1}]}))
    assert skewed.schedule.n_levels == 2


@pytest.mark.parametrize("steps, message", [
    ([{"op": "spin"}], "unknown op"),
    ([{"op": "tile", "loops": [0, 2], "sizes": [4, 4]}], "consecutive"),
    ([{"op": "tile", "loops": [0], "sizes": [0]}], "out of range [1, 65536]"),
    ([{"op": "tile", "loops": [0], "sizes": [10**23]}], "out of range [1, 65536]"),
    ([{"op": "tile", "loops": [0], "sizes": ["32); system(\"id\""]}], "must be an integer"),
    ([{"op": "parallelize", "loop": True}], "must be an integer"),
    ([{"op": "interchange", "order": [0, 0, 1]}], "permutation"),
    ([{"op": "parallelize", "loop": 7}], "does not exist"),
    ([{"op": "unroll", "loop": 2, "factor": 1000}], "out of range [2, 64]"),
    ([{"op": "vectorize", "loop": 0}], "not innermost"),
    ([{"op": "tile", "loops": [0], "sizes": [4], "extra": 1}], "unknown arguments"),
])
def test_malformed_steps_are_recipe_errors(tmp_path: Path, steps: list[dict], message: str) -> None:
    with pytest.raises(RecipeError, match=re.escape(message)):
        apply_recipe(nest(tmp_path, REDUCTION), Recipe.from_dict({"steps": steps}))


def test_recipe_json_round_trip_and_hash() -> None:
    text = '{"steps": [{"sizes": [32, 32], "op": "tile", "loops": [0, 1]}, {"op": "parallelize", "loop": 0}]}'
    recipe = Recipe.from_json(text)
    again = Recipe.from_json(recipe.canonical_json())
    assert again == recipe and again.hash == recipe.hash
    with pytest.raises(RecipeError, match="line 1"):
        Recipe.from_json("{steps: }")
