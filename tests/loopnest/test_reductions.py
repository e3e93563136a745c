"""Parallel and SIMD reductions: legality, pragma text, and random recipes that preserve outputs."""

from __future__ import annotations

import atexit
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopnest import Harness, IllegalTransformError, Recipe, RecipeError, Scop, apply_recipe, extract_scops
from loopnest.codegen import generate_c
from loopnest.omp_clauses import reorders_reduction
from tests.helpers.kernels import GEMM, MATMUL
from tests.loopnest.recipe_check import apply_and_verify

DOT = """
double dot(int n, double a[n], double b[n]) {
  double s = 0.0;
  for (int i = 0; i < n; i++)
    s += a[i] * b[i];
  return s;
}
"""
TOTALS = """
void totals(int n, int m, double A[n][m], double *hi, long *count, double *sum) {
  double top = -1e300; long c = 0; double s = 0.0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      top = fmax(top, A[i][j]);
      c += 1;
      s = s - A[i][j];
    }
  *hi = top; *count = c; *sum = s;
}
"""
NORM = """
void normalize(int n, double x[n], double y[n]) {
  double ss = 0.0;
#pragma scop
  for (int i = 0; i < n; i++)
    ss += x[i] * x[i];
  for (int i = 0; i < n; i++)
    y[i] = x[i] / sqrt(ss);
#pragma endscop
}
"""
NOT_A_REDUCTION = DOT.replace("s += a[i] * b[i];", "s = s * 0.5 + a[i];")
MIXED = DOT.replace("s += a[i] * b[i];", "{ s += a[i]; s *= b[i]; }")


def nest(tmp_path: Path, source: str) -> Scop:
    path = tmp_path / "k.c"
    path.write_text("#include <math.h>\n" + source)
    return extract_scops(path).scops[0]


def apply(scop: Scop, steps: list[dict]) -> Scop:
    return apply_recipe(scop, Recipe.from_dict({"steps": steps}))


def test_a_scalar_reduction_is_parallelized_with_a_clause(tmp_path: Path) -> None:
    scop = nest(tmp_path, DOT)
    code = generate_c(apply(scop, [{"op": "parallelize", "loop": 0, "schedule": "dynamic", "chunk": 16}]))
    assert "#pragma omp parallel for reduction(+: s) schedule(dynamic, 16)\n" in code
    simd = generate_c(apply(scop, [{"op": "vectorize", "loop": 0}]))
    assert "#pragma omp simd reduction(+: s)\n" in simd
    assert "schedule(guided)" in generate_c(apply(scop, [{"op": "parallelize", "loop": 0, "schedule": "guided"}]))


def test_min_max_and_subtraction_get_their_operators(tmp_path: Path) -> None:
    scop = nest(tmp_path, TOTALS)
    transformed = apply(scop, [{"op": "parallelize", "loop": 0}])
    code = generate_c(transformed)
    assert "#pragma omp parallel for reduction(+: c, s) reduction(max: top)\n" in code
    assert reorders_reduction(transformed) and not reorders_reduction(scop)


def test_a_sibling_loop_that_only_reads_the_variable_gets_no_clause(tmp_path: Path) -> None:
    code = generate_c(apply(nest(tmp_path, NORM), [{"op": "parallelize", "loop": 0}]))
    first, second = code.split("#pragma omp parallel for")[1:]
    assert first.startswith(" reduction(+: ss)\n") and second.startswith("\n")


def test_reduction_false_keeps_the_refusal(tmp_path: Path) -> None:
    err = _refused(nest(tmp_path, DOT), [{"op": "parallelize", "loop": 0, "reduction": False}])
    assert err.dependence is not None and err.dependence.endswith("on s")


@pytest.mark.parametrize("source", [NOT_A_REDUCTION, MIXED])
def test_a_loop_carrying_a_non_reduction_dependence_is_refused(tmp_path: Path, source: str) -> None:
    scop = nest(tmp_path, source)
    for step in ({"op": "parallelize", "loop": 0}, {"op": "vectorize", "loop": 0}):
        err = _refused(scop, [step])
        assert re.fullmatch(r"(RAW|WAR|WAW) S\d -> S\d on s", err.dependence or ""), err
        assert "carries the dependence" in str(err)


def test_an_array_element_reduction_on_an_inner_loop_is_refused_with_a_clear_message(tmp_path: Path) -> None:
    err = _refused(nest(tmp_path, GEMM), [{"op": "parallelize", "loop": 2}])
    assert "on C" in (err.dependence or "") and "offered on an outermost loop only" in str(err)


GEMM_NT = GEMM.replace("B[k][j]", "B[j][k]")  # dot products: k innermost and unit-stride in A and B
DOT_BLOCK = [{"op": "vectorize", "loop": 2}, {"op": "unroll_jam", "loop": 0, "factor": 2},
             {"op": "unroll_jam", "loop": 1, "factor": 2}]


def test_a_simd_loop_keeps_the_element_it_reduces_into_in_locals(tmp_path: Path) -> None:
    # Reproduction: vectorize of an innermost k reducing into C[i][j] was refused ("an array-section
    # reduction clause is offered on an outermost loop only"), and unroll_jam refused a simd loop inside,
    # so no recipe made register blocks of dot products: the batched gemm of the peak benchmark (B
    # transposed, 64 x 256^3) ran its best recipe at 4.4 GFLOP/s in the user's form, 41.9 with this.
    scop = nest(tmp_path, GEMM_NT)
    out = apply(scop, DOT_BLOCK)
    text = generate_c(out)
    locals_ = [f"perfembed_acc{k}" for k in range(4)]
    assert f"#pragma omp simd reduction(+: {', '.join(locals_)})" in text
    assert "double perfembed_acc0 = C[(2 * c1)][(2 * c3)];" in text
    assert "C[(2 * c1)][(2 * c3)] = perfembed_acc0;" in text
    assert "perfembed_acc0 += (A[(2 * c1)][c5] * B[(2 * c3)][c5]);" in text
    assert reorders_reduction(out)
    # n odd: the remainders of both jams run, printed as plain loops (their element names a loop inside).
    harness = Harness(scop, {"n": 13}, reps=1, threads=2)
    atexit.register(harness.close)
    assert apply_and_verify(harness, Recipe.from_dict({"steps": DOT_BLOCK}))


CSR_ROWS = """
void spmv(int n, int m, int nnz, const int rowptr[n + 1], const int col[nnz], const double val[nnz],
          const double x[m], double y[n]) {
  for (int i = 0; i < n; i++)
    for (int k = rowptr[i]; k < rowptr[i + 1]; k++)
      y[i] += val[k] * x[col[k]];
}
"""


def test_a_row_of_a_sparse_matrix_is_reduced_in_a_local_within_its_data_dependent_bounds(tmp_path: Path) -> None:
    scop = nest(tmp_path, CSR_ROWS)
    steps = [{"op": "parallelize", "loop": 0}, {"op": "vectorize", "loop": 1}]
    text = generate_c(apply(scop, steps))
    assert "double perfembed_acc0 = y[c1];" in text and "#pragma omp simd reduction(+: perfembed_acc0)" in text
    # The element is loaded only when the row has an entry (the loop's own test at its first iteration).
    load_at = text.index("double perfembed_acc0")
    assert "if (c3 < perfembed_min(nnz, rowptr[(c1 + 1)])) {" in text[:load_at]
    harness = Harness(scop, {"n": 50, "m": 40, "nnz": 300}, reps=1, threads=2)
    atexit.register(harness.close)
    assert apply_and_verify(harness, Recipe.from_dict({"steps": steps}))


def test_an_element_the_simd_loop_indexes_or_another_statement_reads_is_refused(tmp_path: Path) -> None:
    read_too = GEMM.replace("C[i][j] += A[i][k] * B[k][j];", "{ C[i][j] += A[i][k] * B[k][j]; D[k] = C[i][j]; }"
                            ).replace("double B[n][n]", "double B[n][n], double D[n]")
    halves = GEMM.replace("C[i][j] += A[i][k] * B[k][j];", "C[i][k / 2] += A[i][k] * B[k][j];")
    for source in (read_too, halves):
        err = _refused(nest(tmp_path, source), [{"op": "vectorize", "loop": 2}])
        assert "on C" in (err.dependence or "")
        assert "a SIMD loop accumulates only an element it does not index" in str(err)


GEMV_T = """
void f(int m, int n, double A[m][n], double x[m], double y[n], double h[8], int idx[m]) {
  for (int i = 0; i < m; i++)
    for (int j = 2; j < n; j++)
      y[j] += A[i][j] * x[i];
}
"""


def test_an_outermost_array_reduction_runs_in_parallel_with_an_array_section(tmp_path: Path) -> None:
    recipe = Recipe.from_dict({"steps": [{"op": "parallelize", "loop": 0}]})
    harness = Harness(nest(tmp_path, GEMV_T), {"m": 37, "n": 29}, reps=1, threads=2)
    atexit.register(harness.close)
    code = generate_c(apply_recipe(harness.scop, recipe))
    # The section is the elements the loop writes, from the domain: y[2 .. n-1].
    assert "#pragma omp parallel for reduction(+: y[2:(n - 2)])" in code
    assert apply_and_verify(harness, recipe)
    tiled = Recipe.from_dict({"steps": [{"op": "tile", "loops": [0, 1], "sizes": [8, 8]},
                                        {"op": "parallelize", "loop": 0}]})
    assert apply_and_verify(harness, tiled)


def test_a_later_step_cannot_smuggle_a_dependence_into_a_reduction_loop(tmp_path: Path) -> None:
    # k parallel by reduction; interchanging k outward makes that depth carry the writes of s = 0.
    scop = nest(tmp_path, MATMUL)
    apply(scop, [{"op": "parallelize", "loop": 2}])
    with pytest.raises((IllegalTransformError, RecipeError)):
        apply(scop, [{"op": "parallelize", "loop": 2}, {"op": "interchange", "order": [2, 0, 1]}])


@pytest.mark.parametrize("step, message", [
    ({"op": "parallelize", "loop": 0, "schedule": "fast"}, "must be one of static, dynamic, guided"),
    ({"op": "parallelize", "loop": 0, "schedule": "static", "chunk": 0}, "out of range [1, 65536]"),
    ({"op": "parallelize", "loop": 0, "schedule": "static", "chunk": 70000}, "out of range [1, 65536]"),
    ({"op": "parallelize", "loop": 0, "schedule": "static", "chunk": "4) num_threads(99"}, "must be an integer"),
    ({"op": "parallelize", "loop": 0, "chunk": 4}, "chunk needs a schedule"),
    ({"op": "parallelize", "loop": 0, "reduction": "yes"}, "must be true or false"),
    ({"op": "vectorize", "loop": 0, "schedule": "static"}, "unknown arguments"),
])
def test_malformed_reduction_arguments_are_recipe_errors(tmp_path: Path, step: dict, message: str) -> None:
    with pytest.raises(RecipeError, match=re.escape(message)):
        apply(nest(tmp_path, DOT), [step])


def _refused(scop: Scop, steps: list[dict]) -> IllegalTransformError:
    with pytest.raises(IllegalTransformError) as info:
        apply(scop, steps)
    return info.value


# ---------------------------------------------------------------------------------------------
# Property: random recipes with reductions preserve the outputs within the reordering tolerance.

KERNELS = {"dot": (DOT, {"n": 40}), "matmul": (MATMUL, {"n": 12}), "totals": (TOTALS, {"n": 9, "m": 13}),
           "gemm": (GEMM, {"n": 10}), "gemm_nt": (GEMM_NT, {"n": 11}), "norm": (NORM, {"n": 33})}


@st.composite
def reduction_recipes(draw: st.DrawFn, depth: int) -> Recipe:
    steps: list[dict] = []
    if depth > 1 and draw(st.booleans()):
        steps.append({"op": "interchange", "order": draw(st.permutations(list(range(depth))))})
    if draw(st.booleans()):
        level = draw(st.integers(0, depth - 1))
        steps.append({"op": "tile", "loops": [level], "sizes": [draw(st.sampled_from([2, 3, 4, 8]))]})
        depth += 1
    step: dict = {"op": "parallelize", "loop": draw(st.integers(0, depth - 1))}
    if draw(st.booleans()):
        step["schedule"] = draw(st.sampled_from(["static", "dynamic", "guided"]))
        if draw(st.booleans()):
            step["chunk"] = draw(st.integers(1, 8))
    steps.append(step)
    if draw(st.booleans()):
        steps.append({"op": "vectorize", "loop": depth - 1})
        # Register blocks around the SIMD loop: its reductions into elements become locals per copy.
        for loop in sorted(draw(st.sets(st.integers(0, depth - 2), max_size=2)) if depth > 1 else []):
            steps.append({"op": "unroll_jam", "loop": loop, "factor": draw(st.sampled_from([2, 3, 4]))})
    return Recipe.from_dict({"steps": steps})


def test_random_reduction_recipes_preserve_outputs(tmp_path_factory: pytest.TempPathFactory) -> None:
    outcomes: list[bool] = []
    for name, (source, params) in KERNELS.items():
        scop = nest(tmp_path_factory.mktemp(name), source)
        harness = Harness(scop, params, reps=1, threads=2)
        atexit.register(harness.close)
        outcomes += _check_kernel(harness)
    # The generator aims at reduction loops: most of its recipes must be applied, not refused.
    assert sum(outcomes) >= 0.5 * len(outcomes), f"only {sum(outcomes)} of {len(outcomes)} recipes applied"


def _check_kernel(harness: Harness) -> list[bool]:
    outcomes: list[bool] = []

    @settings(max_examples=8, deadline=None, derandomize=True, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(recipe=reduction_recipes(harness.scop.depth))
    def check(recipe: Recipe) -> None:
        outcomes.append(apply_and_verify(harness, recipe))

    check()
    return outcomes
