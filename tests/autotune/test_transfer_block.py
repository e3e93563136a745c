"""Transfer offers a neighbour's register block taller on a nest much larger than the neighbour, and
the nearest neighbour's block taller whatever the sizes.

Reproduction: on examples/matmul.c at n = 800, transfer accepted the 4 x 4 block its neighbour
residual_block_f64 (140 x 181 x 181) lends (whole program 2.55x on an AMD EPYC machine, 8.55x on an
Intel Xeon), while the 8 x 4 block, tried by no one, ran the nest 1.3-1.6x faster on both. On
syr2k_lower_f32 its nearest neighbour lent 2 x 2 (4.8x); 4 x 2, tried by no one, ran it at 6.0-7.5x.
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from autotune.transfer import TALLER_BLOCK, Lent, Neighbour, TransferTuner, loop_roles
from autotune.transfer.adapt import LoopRoles
from autotune.transfer.block import MAX_BLOCK_COPIES, MAX_JAM_FACTOR, much_larger, taller_block
from loopnest import Harness, Recipe, extract_scops
from loopnest.polyhedral import compute_dependences

ROOT = Path(__file__).resolve().parents[2]
MATMUL = extract_scops(ROOT / "examples" / "matmul.c", function="matmul").scops[0]
GEMM = extract_scops(ROOT / "corpus/kernels/blas3/gemm_ijk.c").scops[0]
SMALL = {"ni": 24, "nj": 24, "nk": 24}  # the neighbour's sizes: 64x fewer iterations than n = 96


def _block(outer: int, inner: int, *, expand: bool = False) -> Recipe:
    steps = [{"op": "autoschedule"}, {"op": "unroll_jam", "loop": 0, "factor": outer},
             {"op": "unroll_jam", "loop": 1, "factor": inner}]
    return Recipe.from_dict({"steps": [{"op": "expand", "scalar": "sum"}, *steps] if expand else steps})


def _jams(recipe: Recipe) -> list[tuple[int, int]]:
    return [(s["loop"], s["factor"]) for s in recipe.to_dict()["steps"] if s["op"] == "unroll_jam"]


def test_a_much_larger_nest_is_offered_the_neighbours_block_and_the_block_made_taller() -> None:
    neighbour = Neighbour(1, "gemm_ijk", 0.0, _block(4, 4), loop_roles(GEMM, SMALL), 3.0)
    params = {"n": 96}
    cands = TransferTuner().candidates(MATMUL, params, [neighbour])
    assert [(_jams(c.recipe), c.variant, c.source) for c in cands] == [
        ([(0, 4), (1, 4)], "", "gemm_ijk"), ([(0, 8), (1, 4)], "taller block", "gemm_ijk (taller block)")]
    # Real code: the taller block compiles, runs and gives the original's output.
    with Harness(MATMUL, params, reps=1, threads=1) as harness:
        result = harness.evaluate(cands[1].recipe)
    assert result.variant.ok and result.verified, result.to_dict()


def test_a_neighbour_of_about_our_size_lends_its_block_as_it_is_unless_it_is_the_nearest() -> None:
    about_our_size = loop_roles(GEMM, {"ni": 64, "nj": 64, "nk": 64})  # 3.4x fewer iterations: not 8x
    nearest = Neighbour(1, "gemm_near", 0.0, _block(2, 2), about_our_size, 3.0)
    second = Neighbour(2, "gemm_second", 1.0, _block(4, 4), about_our_size, 3.0)
    cands = TransferTuner().candidates(MATMUL, {"n": 96}, [nearest, second])
    assert [(_jams(c.recipe), c.source) for c in cands] == [
        ([(0, 2), (1, 2)], "gemm_near"), ([(0, 4), (1, 2)], "gemm_near (taller block)"),
        ([(0, 4), (1, 4)], "gemm_second")]


SYR2K = extract_scops(ROOT / "corpus/generated/triangular/syr2k_lower_f32.c").scops[0]
# What gemm_scale_cols_f64, syr2k_lower_f32's nearest neighbour in the paper benchmark, lent it.
SYR2K_LENT = Recipe.from_dict({"steps": [
    {"op": "tile", "loops": [0, 1, 2], "sizes": [32, 1, 64]}, {"op": "parallelize", "loop": 0},
    {"op": "unroll", "factor": 4, "loop": 5}, {"op": "unroll_jam", "factor": 2, "loop": 3},
    {"op": "unroll_jam", "factor": 2, "loop": 4}]})


def test_syr2k_is_offered_its_nearest_neighbours_2_x_2_block_as_4_x_2() -> None:
    params = {"m": 24, "n": 20}
    best = _block(2, 2)  # the neighbour's best uses isl's schedule (0.75x on syr2k); the tiled one is another family
    neighbour = Neighbour(402, "gemm_scale_cols_f64", 3.8, best, loop_roles(SYR2K, params), 21.4,
                          others=(Lent(SYR2K_LENT, 15.0),))
    cands = TransferTuner().candidates(SYR2K, params, [neighbour])
    tiled = [(_jams(c.recipe), c.variant) for c in cands if c.lent is not None and c.lent.recipe == SYR2K_LENT]
    assert tiled[:2] == [([(3, 2), (4, 2)], ""), ([(3, 4), (4, 2)], TALLER_BLOCK)]
    taller = next(c for c in cands if c.variant == TALLER_BLOCK and _jams(c.recipe) == [(3, 4), (4, 2)])
    with Harness(SYR2K, params, reps=1, threads=2) as harness:
        result = harness.evaluate(taller.recipe)
    assert result.variant.ok and result.verified, result.to_dict()


def test_of_a_much_smaller_neighbour_not_the_nearest_only_the_best_recipe_is_made_taller() -> None:
    other_family = Lent(Recipe.from_dict({"steps": [
        {"op": "parallelize", "loop": 0}, {"op": "unroll_jam", "loop": 0, "factor": 2},
        {"op": "unroll_jam", "loop": 1, "factor": 2}]}), 2.0)
    small = loop_roles(GEMM, SMALL)
    nearest = Neighbour(1, "gemm_near", 0.0, Recipe.from_dict({"steps": [{"op": "tile", "loops": [0], "sizes": [8]}]}),
                        small, 3.0)
    second = Neighbour(2, "gemm_ijk", 1.0, _block(2, 2), small, 3.0, others=(other_family,))
    cands = TransferTuner().candidates(MATMUL, {"n": 96}, [nearest, second])
    taller = [c for c in cands if c.variant == TALLER_BLOCK]
    assert [(c.neighbour.name, _jams(c.recipe)) for c in taller] == [("gemm_ijk", [(0, 4), (1, 2)])]
    assert taller[0].lent is not None and taller[0].lent.recipe == second.recipe
    # The nearest neighbour's other family is made taller too.
    cands = TransferTuner().candidates(MATMUL, {"n": 96}, [second])
    assert [_jams(c.recipe)[0] for c in cands if c.variant == TALLER_BLOCK] == [(0, 4), (0, 4)]


ROLES = loop_roles(MATMUL, {"n": 96})
DEPS = compute_dependences(MATMUL)


@settings(max_examples=40, deadline=None)
@given(outer=st.sampled_from([2, 4, 8, 16]), inner=st.sampled_from([2, 4, 8, 16]), single=st.booleans())
def test_a_taller_block_doubles_only_the_outer_factor_within_8_and_32_copies(outer: int, inner: int,
                                                                            single: bool) -> None:
    """Whatever the block: either no taller block, or the same recipe with the outer jam's factor
    doubled, no jam above 8 and at most 32 copies."""
    block = _block(outer, inner, expand=True)  # matmul's block, as transfer adapts it: `sum` expanded first
    recipe = Recipe.from_dict({"steps": block.to_dict()["steps"][:3]}) if single else block
    taller = taller_block(recipe, MATMUL, DEPS)
    expected = not single and 2 * outer <= MAX_JAM_FACTOR and 2 * outer * inner <= MAX_BLOCK_COPIES
    assert (taller is not None) == expected
    if taller is not None:
        assert _jams(taller) == [(0, 2 * outer), (1, inner)]
        assert [s for s in taller.steps if s.op != "unroll_jam"] == [s for s in recipe.steps if s.op != "unroll_jam"]


@given(side=st.integers(1, 200))
def test_a_nest_is_much_larger_from_8_times_the_neighbours_iterations(side: int) -> None:
    assert much_larger(LoopRoles(ROLES.vectors, (float(side),) * 3), ROLES) == (side ** 3 * 8 <= 96 ** 3)
