"""Transfer offers a lent recipe with its innermost loop vectorized when that loop is a floating-point
reduction the neighbour could not vectorize.

Reproduction: in the paper benchmark (2026-12-02/03, Intel Xeon) dot_f64's neighbours outside its
family were histograms and a scatter; transfer accepted scatter_add_f32's ``tile 64; parallel
reduction; unroll 2`` at 2.1x, while its inner loop vectorized with the reduction clause, tried by no
one, runs it at 3.05x (autotuning's best: 2.94x).
"""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from autotune.transfer import SIMD_REDUCTION, Neighbour, TransferTuner, loop_roles
from autotune.transfer.simd import simd_reduction
from loopnest import Harness, Recipe, extract_scops, generate_c
from loopnest.errors import RecipeError
from loopnest.polyhedral import compute_dependences
from loopnest.transform.recipe import apply_recipe

ROOT = Path(__file__).resolve().parents[2]
GENERATED = ROOT / "corpus" / "generated"
DOT = extract_scops(GENERATED / "reduction" / "dot_f64.c").scops[0]
DOT_DEPS = compute_dependences(DOT)


def _recipe(*steps: dict[str, object]) -> Recipe:
    return Recipe.from_dict({"steps": list(steps)})


SCATTER_LENT = _recipe({"op": "tile", "loops": [0], "sizes": [64]},
                       {"op": "parallelize", "loop": 0, "reduction": True},
                       {"op": "unroll", "factor": 2, "loop": 1})


def test_dot_is_offered_the_scatters_recipe_with_its_inner_loop_vectorized_instead_of_unrolled() -> None:
    params = {"n": 1000}
    neighbour = Neighbour(425, "scatter_add_f32", 2.0, SCATTER_LENT, loop_roles(DOT, params), 1.6)
    cands = TransferTuner().candidates(DOT, params, [neighbour])
    assert [(c.variant, c.source) for c in cands] == [("", "scatter_add_f32"),
                                                      (SIMD_REDUCTION, "scatter_add_f32 (SIMD reduction)")]
    assert cands[1].recipe.to_dict()["steps"] == [
        {"op": "tile", "loops": [0], "sizes": [64]}, {"op": "parallelize", "loop": 0, "reduction": True},
        {"op": "vectorize", "loop": 1, "reduction": True}]
    # Real code: it compiles, runs and gives the original's sum within the floating-point tolerance.
    with Harness(DOT, params, reps=1, threads=2) as harness:
        result = harness.evaluate(cands[1].recipe)
    assert result.variant.ok and result.verified, result.to_dict()


def test_no_simd_variant_where_gcc_vectorizes_alone_or_the_recipe_already_does() -> None:
    sum_i32 = extract_scops(GENERATED / "reduction" / "sum1d_i32.c").scops[0]  # integer: gcc vectorizes it
    assert simd_reduction(SCATTER_LENT, sum_i32, compute_dependences(sum_i32)) is None
    axpby = extract_scops(GENERATED / "elementwise" / "axpby_f64.c").scops[0]  # no reduction: SIMD-legal as is
    assert simd_reduction(_recipe({"op": "tile", "loops": [0], "sizes": [64]}), axpby,
                          compute_dependences(axpby)) is None
    vectorized = _recipe({"op": "tile", "loops": [0], "sizes": [64]}, {"op": "vectorize", "loop": 1})
    assert simd_reduction(vectorized, DOT, DOT_DEPS) is None
    assert simd_reduction(_recipe({"op": "autoschedule"}), DOT, DOT_DEPS) is None
    # A register block is left as lent (not measured with SIMD), though gemm_ijk's k loop is a reduction.
    gemm = extract_scops(ROOT / "corpus" / "kernels" / "blas3" / "gemm_ijk.c").scops[0]
    gemm_deps = compute_dependences(gemm)
    assert simd_reduction(_recipe({"op": "tile", "loops": [0], "sizes": [16]}), gemm, gemm_deps) is not None
    assert simd_reduction(_recipe({"op": "unroll_jam", "loop": 0, "factor": 2}), gemm, gemm_deps) is None


@settings(max_examples=30, deadline=None)
@given(tile=st.sampled_from([None, 16, 64, 256]), parallel=st.booleans(), unroll=st.sampled_from([None, 2, 4, 8]))
def test_the_simd_variant_keeps_every_other_step_and_vectorizes_the_innermost_loop(
        tile: int | None, parallel: bool, unroll: int | None) -> None:
    """Whatever dot's lent recipe: the variant is the same steps, the innermost loop's unroll dropped,
    with that loop vectorized with the reduction clause, and it applies."""
    steps: list[dict[str, object]] = []
    if tile is not None:
        steps.append({"op": "tile", "loops": [0], "sizes": [tile]})
    if parallel:
        steps.append({"op": "parallelize", "loop": 0, "reduction": True})
    inner = 1 if tile is not None else 0
    if unroll is not None:
        steps.append({"op": "unroll", "factor": unroll, "loop": inner})
    lent = _recipe(*steps)
    variant = simd_reduction(lent, DOT, DOT_DEPS)
    try:
        apply_recipe(DOT, lent, DOT_DEPS)
    except RecipeError:  # gcc takes no OpenMP pragma on an unrolled loop: nothing to vary
        assert variant is None and parallel and tile is None and unroll is not None
        return
    assert variant is not None
    expected = [s for s in steps if s["op"] != "unroll"] + [{"op": "vectorize", "loop": inner, "reduction": True}]
    assert variant.to_dict()["steps"] == expected


def test_a_row_of_csr_is_vectorized_with_four_lanes() -> None:
    """SpMV's lent ``expand; tile 64; parallel guided; unroll 4`` (the banded matrix's transfer in the sparse
    benchmark): the variant vectorizes the row loop (bounds read from rowptr) with ``simdlen`` 4, where
    gcc's widest vectors lost to the scalar row (autotune.search.space.inner); dot's loop keeps no length."""
    spmv = extract_scops(ROOT / "tests" / "loopnest" / "sparse_kernels" / "spmv_csr.c").scops[0]
    lent = _recipe({"op": "expand", "scalar": "s"}, {"op": "tile", "loops": [0], "sizes": [64]},
                   {"op": "parallelize", "loop": 0, "schedule": "guided"}, {"op": "unroll", "factor": 4, "loop": 2})
    variant = simd_reduction(lent, spmv, compute_dependences(spmv))
    assert variant is not None
    assert variant.to_dict()["steps"][-1] == {"op": "vectorize", "loop": 2, "reduction": True, "simdlen": 4}
    assert "simdlen(4)" in generate_c(apply_recipe(spmv, variant))
    dot = simd_reduction(SCATTER_LENT, DOT, DOT_DEPS)
    assert dot is not None and "simdlen" not in dot.to_dict()["steps"][-1]


def test_a_lent_simd_row_without_a_length_is_offered_with_four_lanes() -> None:
    """The uniform matrix's transfer in the sparse benchmark kept ``parallel guided; simd j (reduction)``
    as lent (gcc's 16 lanes); its variant asks for 4. A recipe that names a length, or vectorizes a dense
    loop (dot), gets no variant."""
    spmv = extract_scops(ROOT / "tests" / "loopnest" / "sparse_kernels" / "spmv_csr.c").scops[0]
    deps = compute_dependences(spmv)
    lent = _recipe({"op": "parallelize", "loop": 0, "schedule": "guided"},
                   {"op": "vectorize", "loop": 1, "reduction": True})
    variant = simd_reduction(lent, spmv, deps)
    assert variant is not None and variant.to_dict()["steps"] == [
        {"op": "parallelize", "loop": 0, "schedule": "guided"},
        {"op": "vectorize", "loop": 1, "reduction": True, "simdlen": 4}]
    assert simd_reduction(variant, spmv, deps) is None
    assert simd_reduction(_recipe({"op": "vectorize", "loop": 0, "reduction": True}), DOT, DOT_DEPS) is None
