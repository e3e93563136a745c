"""Dependences and legality on sparse nests (issue 15): approximated writes and statements under data
guards or bounds are may-writes (they never hide a dependence), reads through index arrays of arrays
the nest never writes make none, and a loop with bounds on data is kept whole while the steps that
matter for SpMV/SpMM (parallel rows, dense loop outward, tiled and SIMD dense loop) stay legal."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopnest.codegen import generate_c
from loopnest.errors import IllegalTransformError, RecipeError
from loopnest.ir import Scop
from loopnest.polyhedral import ScheduleSpace, compute_dependences
from loopnest.transform.recipe import Recipe, apply_recipe
from tests.helpers.scops import scop_from, scop_of

KERNELS = Path(__file__).parent / "sparse_kernels"


def kinds(scop: Scop) -> set[tuple[str, int, int, str]]:
    return {(d.kind, d.source, d.sink, d.array) for d in compute_dependences(scop)}


def carried(scop: Scop, level: int) -> set[tuple[str, str]]:
    space = ScheduleSpace(scop, compute_dependences(scop))
    return {(d.kind, d.array) for d in space.carried_deps(level)}


def apply(scop: Scop, steps: list[dict]) -> Scop:
    return apply_recipe(scop, Recipe.from_dict(steps))


def refusal(scop: Scop, steps: list[dict]) -> str:
    with pytest.raises((IllegalTransformError, RecipeError)) as info:
        apply(scop, steps)
    return str(info.value)


# -- dependences ---------------------------------------------------------------------------------

def test_indirect_read_of_a_read_only_array_makes_no_dependence() -> None:
    assert kinds(scop_of("gather.c")) == set()
    assert not any(d.array in ("x", "col", "val") for d in compute_dependences(scop_of("spmm_csr.c")))


def test_indirect_write_is_a_loop_carried_output_dependence() -> None:
    scop = scop_of("scatter.c")
    assert kinds(scop) == {("WAW", 0, 0, "y")}
    assert carried(scop, 0) == {("WAW", "y")}


def test_a_guarded_write_does_not_hide_the_write_before_it(tmp_path: Path) -> None:
    """Must-write S0, may-write S1 (under a data guard), read in S2: S2 may read either value."""
    scop = scop_from(tmp_path, """void f(int n, const int m[n], double y[n], double z[n]) {
  for (int i = 0; i < n; i++) {
    y[i] = 1.0;
    if (m[i] > 0)
      y[i] = 2.0;
    z[i] = y[i];
  }
}""")
    raw = {(d.source, d.sink) for d in compute_dependences(scop) if d.kind == "RAW"}
    assert raw == {(0, 2), (1, 2)}


def test_without_a_guard_the_later_write_kills_the_earlier_one(tmp_path: Path) -> None:
    scop = scop_from(tmp_path, """void f(int n, double y[n], double z[n]) {
  for (int i = 0; i < n; i++) {
    y[i] = 1.0;
    y[i] = 2.0;
    z[i] = y[i];
  }
}""")
    assert {(d.source, d.sink) for d in compute_dependences(scop) if d.kind == "RAW"} == {(1, 2)}


def test_a_write_in_a_loop_with_data_bounds_does_not_hide_the_initialization() -> None:
    """SpMV: the row's loop may be empty, so ``y[i] = s`` may read the ``s = 0`` directly."""
    assert ("RAW", 0, 2, "s") in kinds(scop_of("spmv_csr.c"))


def test_dependences_stay_exact_where_affine() -> None:
    scop = scop_of("spmm_csr.c")
    assert carried(scop, 0) == set() and carried(scop, 2) == set()
    assert carried(scop, 1) == {("RAW", "C"), ("WAR", "C"), ("WAW", "C")}


# -- legality ------------------------------------------------------------------------------------

def test_parallel_row_loop_with_a_dynamic_schedule() -> None:
    for kernel in ("spmv_csr.c", "spmm_csr.c", "sddmm.c"):
        code = generate_c(apply(scop_of(kernel), [{"op": "parallelize", "loop": 0, "schedule": "dynamic",
                                                    "chunk": 8}]))
        assert "#pragma omp parallel for" in code and "schedule(dynamic, 8)" in code, kernel


def test_tiling_or_jamming_the_data_bounded_loop_is_refused_with_the_reason() -> None:
    scop = scop_of("spmm_csr.c")
    for steps in ([{"op": "tile", "loops": [1, 2], "sizes": [4, 8]}], [{"op": "unroll_jam", "loop": 1, "factor": 2}],
                  [{"op": "skew", "loop": 2, "outer": 1}]):
        message = refusal(scop, steps)
        assert "loop j of S0 has bounds read from data" in message and "cannot be tiled" in message, steps


def test_the_row_loop_must_stay_outside_the_loop_its_bounds_read() -> None:
    message = refusal(scop_of("spmm_csr.c"), [{"op": "interchange", "order": [1, 0, 2]}])
    assert "read i, whose loop must stay outside it" in message


def test_dense_loop_interchanged_outward_tiled_and_the_rows_tiled() -> None:
    scop = scop_of("spmm_csr.c")
    outward = apply(scop, [{"op": "interchange", "order": [0, 2, 1]}, {"op": "tile", "loops": [1], "sizes": [32]},
                           {"op": "parallelize", "loop": 0}])
    code = generate_c(outward)
    inner = code.splitlines()[[k for k, line in enumerate(code.splitlines()) if "rowptr" in line][0]]
    assert "c7 = perfembed_max(0, rowptr[c1])" in inner and "c7 < perfembed_min(nnz, rowptr[(c1 + 1)])" in inner
    rows = generate_c(apply(scop, [{"op": "tile", "loops": [0], "sizes": [16]}, {"op": "vectorize", "loop": 3}]))
    assert "rowptr[c3]" in rows and "#pragma omp simd" in rows


def test_simd_on_the_data_bounded_loop_keeps_openmp_canonical_form() -> None:
    code = generate_c(apply(scop_of("spmv_csr.c"), [{"op": "parallelize", "loop": 0}, {"op": "vectorize", "loop": 1}]))
    assert "#pragma omp simd reduction(+: s)" in code
    assert "for (int c3 = perfembed_max(0, rowptr[c1]); c3 < perfembed_min(nnz, rowptr[(c1 + 1)]); c3 += 1)" in code


def test_simd_with_a_vector_length_prints_simdlen_and_refuses_other_lengths() -> None:
    scop = scop_of("spmv_csr.c")
    code = generate_c(apply(scop, [{"op": "parallelize", "loop": 0, "schedule": "guided"},
                                   {"op": "vectorize", "loop": 1, "reduction": True, "simdlen": 4}]))
    assert "#pragma omp parallel for private(s) schedule(guided)\n" in code
    assert "#pragma omp simd reduction(+: s) simdlen(4)\n" in code
    # The length survives a later step that rechecks the marks (the reduction clause is recomputed).
    expanded = generate_c(apply(scop, [{"op": "expand", "scalar": "s"}, {"op": "parallelize", "loop": 0},
                                       {"op": "vectorize", "loop": 1, "simdlen": 8}]))
    assert "reduction(+: perfembed_acc0) simdlen(8)" in expanded
    for bad in (3, 32, 0, True, "4"):
        assert "simdlen" in refusal(scop, [{"op": "vectorize", "loop": 1, "simdlen": bad}])


def test_a_parallel_simd_loop_takes_its_schedule_and_its_vector_length(tmp_path: Path) -> None:
    scop = scop_from(tmp_path, """void f(int n, const double a[n], double b[n]) {
    for (int i = 0; i < n; i++)
        b[i] = 2.0 * a[i];
}""")
    code = generate_c(apply(scop, [{"op": "parallelize", "loop": 0, "schedule": "static", "chunk": 64},
                                   {"op": "vectorize", "loop": 0, "simdlen": 8}]))
    assert "#pragma omp parallel for simd schedule(static, 64) simdlen(8)" in code


def test_fusing_a_dense_loop_into_a_data_bounded_one_is_refused(tmp_path: Path) -> None:
    scop = scop_from(tmp_path, """void f(int n, int nnz, int K, const int p[n + 1], double a[nnz], double b[n][K]) {
  for (int i = 0; i < n; i++) {
    for (int j = p[i]; j < p[i + 1]; j++)
      a[j] = 0.0;
    for (int j = 0; j < K; j++)
      b[i][j] = 1.0;
  }
}""")
    assert "S1 would run inside loop j of S0, whose bounds read data" in refusal(scop, [{"op": "fuse", "loop": 1}])


def test_parallel_histogram_only_as_a_reduction() -> None:
    scop = scop_of("histogram.c")
    assert "reduction(+: hist[0:nbins])" in generate_c(apply(scop, [{"op": "parallelize", "loop": 0}]))
    assert "cannot run parallel" in refusal(scop, [{"op": "parallelize", "loop": 0, "reduction": False}])


def test_parallel_scatter_is_refused_and_csc_runs_as_an_array_reduction() -> None:
    assert "WAW S0 -> S0 on y" in refusal(scop_of("scatter.c"), [{"op": "parallelize", "loop": 0}])
    code = generate_c(apply(scop_of("spmv_csc.c"), [{"op": "parallelize", "loop": 0}]))
    assert "reduction(+: y[0:n])" in code


def test_pack_is_refused_on_an_approximated_nest() -> None:
    assert "approximated model" in refusal(scop_of("spmm_csr.c"), [{"op": "pack", "array": "C", "loop": 0}])


def test_expand_keeps_the_data_bounds() -> None:
    code = generate_c(apply(scop_of("spmv_csr.c"), [{"op": "expand", "scalar": "s"}]))
    assert "y[c1] += (val[c3] * x[col[c3]]);" in code and "rowptr[(c1 + 1)]" in code


def test_autoschedule_gives_a_legal_schedule_or_a_clean_refusal() -> None:
    for kernel in ("spmv_csr.c", "spmm_csr.c", "spmv_csc.c", "histogram.c", "masked.c"):
        try:
            scop = apply(scop_of(kernel), [{"op": "autoschedule"}])
        except (IllegalTransformError, RecipeError) as exc:
            assert "step 0" in str(exc), kernel
            continue
        assert generate_c(scop).startswith("{"), kernel
