"""autoschedule: isl's scheduler as one recipe step. Time tiling with a wavefront on a Jacobi stencil,
tiling with a unit-stride innermost loop on gemm, refusals, and (property) random autoschedule recipes
on the corpus preserve the outputs through the real harness."""

from __future__ import annotations

import atexit
import re
from pathlib import Path

import pytest
from hypothesis import strategies as st

from loopnest import Harness, Recipe, RecipeError, apply_recipe, generate_c
from tests.helpers.kernels import REDUCTION
from tests.helpers.paths import ROOT, load_expected
from tests.helpers.scops import nest
from tests.loopnest.recipe_check import apply_and_verify, random_corpus_outcomes

EXPECTED = load_expected()
KERNELS = sorted(EXPECTED)

JACOBI_2D = """
void jacobi2d(int steps, int n, double A[n][n], double B[n][n]) {
    for (int t = 0; t < steps; t++) {
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                B[i][j] = 0.2 * (A[i][j] + A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                A[i][j] = B[i][j];
    }
}
"""
JACOBI = """
void jacobi(int steps, int n, double A[n], double B[n]) {
    for (int t = 0; t < steps; t++) {
        for (int i = 1; i < n - 1; i++)
            B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
        for (int i = 1; i < n - 1; i++)
            A[i] = B[i];
    }
}
"""
TRSM = (ROOT / "corpus/generated/triangular/trsm_lower_f64.c").read_text()


def _recipe(**args: object) -> Recipe:
    return Recipe.from_dict({"steps": [{"op": "autoschedule", **args}]})


def _harness(tmp_path: Path, source: str, params: dict[str, int]) -> Harness:
    harness = Harness(nest(tmp_path, source), params, reps=1, threads=2)
    atexit.register(harness.close)
    return harness


def test_jacobi_is_time_tiled_with_a_parallel_wavefront_and_verifies(tmp_path: Path) -> None:
    harness = _harness(tmp_path, JACOBI, {"steps": 37, "n": 301})
    recipe = _recipe(tile=8)
    tiled = apply_recipe(harness.scop, recipe)
    rows = tiled.schedule.rows
    # Skewed in time (2t + i, and the copy shifted by one), tiled, the two outer tile loops a wavefront.
    assert "2*i0 + i1" in rows[0][-2] and "2*i0 + i1 + 1" in rows[1][-2]
    assert rows[0][1] == "(floor((2*i0 + i1)/8)) + 1*(floor((i0)/8))"
    # isl fuses both statements into the innermost loop, the copy shifted by one: they are distributed
    # into a loop each (fused, gcc sees a distance-1 dependence between them and vectorizes nothing).
    assert rows[0][-3] != rows[1][-3] and tiled.schedule.marks[1] == ("parallel",)
    code = generate_c(tiled)
    assert not any("B[" in body and "A[" in body and "=" in body and body.count(";") > 1
                   for body in re.findall(r"for \(int c\d+ [^{]*\{([^{}]*)\}", code))
    assert apply_and_verify(harness, recipe)


def test_slabs_tile_the_time_loop_and_rows_and_leave_the_innermost_whole(tmp_path: Path) -> None:
    harness = _harness(tmp_path, JACOBI_2D, {"steps": 13, "n": 61})
    recipe = _recipe(sizes=[4, 16])
    row = apply_recipe(harness.scop, recipe).schedule.rows[0]
    tile_loops = [e for e in row[1::2] if isinstance(e, str) and "floor" in e]
    # Time by 4 and rows by 16 (as a wavefront w = I + T, then T); the columns (i2) are not tiled.
    assert len(tile_loops) == 2 and "/4)" in tile_loops[1] and "/16)" in tile_loops[0]
    assert not any("i2" in e for e in tile_loops)
    assert apply_and_verify(harness, recipe)
    with pytest.raises(RecipeError, match=r"4 tile sizes, but isl's permutable band has 3 loops"):
        apply_recipe(harness.scop, _recipe(sizes=[4, 16, 1, 1]))
    with pytest.raises(RecipeError, match="tile \\(every loop\\) or sizes"):
        apply_recipe(harness.scop, _recipe(tile=4, sizes=[4, 16]))


def test_gemm_is_tiled_with_the_unit_stride_loop_innermost_and_the_outer_tile_loop_parallel(tmp_path: Path) -> None:
    harness = _harness(tmp_path, REDUCTION, {"n": 45})
    recipe = _recipe(tile=16)
    tiled = apply_recipe(harness.scop, recipe)
    row = tiled.schedule.rows[0]
    assert row[1:6:2] == ("floor((i0)/16)", "floor((i1)/16)", "floor((i2)/16)")
    assert row[7:12:2] == ("i0", "i2", "i1")  # j (the unit-stride loop of C and B) innermost
    # The tile and point loops of i and j carry nothing: the code says so to gcc; k's carry the reduction.
    assert tiled.schedule.marks == {0: ("parallel",), 1: ("ivdep",), 3: ("ivdep",), 5: ("ivdep",)}
    assert "#pragma omp parallel for" in generate_c(tiled)
    assert apply_and_verify(harness, recipe)


def test_without_a_tile_size_the_loops_are_reordered_but_not_tiled(tmp_path: Path) -> None:
    scop = apply_recipe(nest(tmp_path, REDUCTION), _recipe(parallel=False))
    assert scop.schedule.rows[0] == (0, "i0", 0, "i2", 0, "i1", 0)
    assert scop.schedule.marks == {0: ("ivdep",), 2: ("ivdep",)}  # no parallel loop; i and j carry nothing


GEMM_RELU = """
void f(int ni, int nj, int nk, double C[ni][nj], double A[ni][nk], double B[nk][nj]) {
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++) {
      double acc = 0.0;
      for (int k = 0; k < nk; k++)
        acc += A[i][k] * B[k][j];
      C[i][j] = fmax(acc, 0.0);
    }
}
"""


def test_an_epilogue_after_the_reduction_leaves_the_unit_stride_loop_innermost(tmp_path: Path) -> None:
    """gemm + ReLU, its accumulator expanded: isl fused the initialization, the k loop and the epilogue
    under (i, j), so k was innermost (a strided dot product: jammed 4 x 4, 2.4x against 26.6x at the
    corpus nest's seed size); the
    statements are distributed at j and the reduction's j goes below k, as for a gemm without epilogue."""
    harness = _harness(tmp_path, GEMM_RELU, {"ni": 23, "nj": 19, "nk": 17})
    recipe = Recipe.from_dict({"steps": [{"op": "expand", "scalar": "acc"}, {"op": "autoschedule"}]})
    scheduled = apply_recipe(harness.scop, recipe)
    assert scheduled.schedule.rows[1][1::2][:3] == ("i0", "i2", "i1")  # the update: i, k, j
    code = generate_c(scheduled)
    init, update, epilogue = (code.index(text) for text in (
        "C[c1][c5] = 0.0;", "C[c1][c5] += (A[c1][c3] * B[c3][c5]);", "C[c1][c5] = fmax(C[c1][c5], 0.0);"))
    assert init < update < epilogue, code
    assert apply_and_verify(harness, recipe)
    blocked = Recipe.from_dict({"steps": [*recipe.to_dict()["steps"], {"op": "unroll_jam", "loop": 0, "factor": 4},
                                          {"op": "unroll_jam", "loop": 1, "factor": 2}]})
    assert apply_and_verify(harness, blocked)


def test_a_parallel_loop_under_two_sequential_loops_is_left_sequential(tmp_path: Path) -> None:
    """Before: untiled, trsm's column loop (innermost for unit stride, under its rows and their
    predecessors) was parallelized, forking a team n^2/2 times a call: 0.06x of the original at
    426 x 404. Tiled, its column tiles run in parallel outside."""
    harness = _harness(tmp_path, TRSM, {"n": 40, "m": 36})
    untiled = generate_c(apply_recipe(harness.scop, _recipe(), harness.dependences))
    assert "omp parallel" not in untiled and apply_and_verify(harness, _recipe())
    tiled = generate_c(apply_recipe(harness.scop, _recipe(tile=16), harness.dependences))
    assert re.search(r"#pragma omp parallel for\n\s*for \(int c1 = 0; c1 <= perfembed_floord\(\(m - 1\), 16\)",
                     tiled), tiled
    assert apply_and_verify(harness, _recipe(tile=16))


@pytest.mark.parametrize("steps, message", [
    ([{"op": "tile", "loops": [0], "sizes": [4]}, {"op": "autoschedule"}], "only expand may come before"),
    ([{"op": "autoschedule", "tile": 1}], "out of range [2, 1024]"),
    ([{"op": "autoschedule", "tile": 4096}], "out of range [2, 1024]"),
    ([{"op": "autoschedule", "parallel": 1}], "must be true or false"),
    ([{"op": "autoschedule", "sizes": [0, 4]}], "out of range [1, 65536]"),
    ([{"op": "autoschedule", "scalar": "s"}], "unknown arguments ['scalar']"),
])
def test_malformed_autoschedule_steps_are_recipe_errors(tmp_path: Path, steps: list[dict], message: str) -> None:
    with pytest.raises(RecipeError, match=re.escape(message)):
        apply_recipe(nest(tmp_path, REDUCTION), Recipe.from_dict({"steps": steps}))


def _random_autoschedule(data: st.DataObject, harness: Harness) -> Recipe:
    args: dict[str, object] = {"parallel": data.draw(st.booleans())}
    tile = data.draw(st.sampled_from([None, 2, 3, 8, 32, "slab"]))
    if tile == "slab":
        args["sizes"] = [data.draw(st.sampled_from([2, 4, 8])), data.draw(st.sampled_from([1, 4, 16]))]
    elif tile is not None:
        args["tile"] = tile
    return _recipe(**args)


def test_random_autoschedule_recipes_preserve_outputs_and_are_mostly_applied() -> None:
    outcomes = random_corpus_outcomes(KERNELS, _random_autoschedule, examples=30, size_cap=19)  # no tile divides
    assert len(outcomes) >= 15
    assert outcomes.count("applied") >= 0.6 * len(outcomes), outcomes
