"""Linearized subscripts over flat arrays (``A[i*n + j]`` over ``const double *restrict A``) are read as
the rows they reach, as Polly delinearizes them; the drop-in code keeps the user's declarations."""

from __future__ import annotations

import subprocess
from pathlib import Path

import islpy as isl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopnest import Harness, Recipe, apply_recipe, extract_scops, replace_regions
from loopnest.analysis import assumptions
from loopnest.frontend.delinearize import RowLayout, dimensions
from loopnest.frontend.polynomial import Poly
from loopnest.ir import FlatArray, Scop

MV = """void mv(int m, int n, const double *restrict A, const double *restrict x, double *restrict y) {
  for (int i = 0; i < m; i++) {
    double s = 0;
    for (int j = 0; j < n; j++)
      s += A[i*n + j] * x[j];
    y[i] = s;
  }
}
"""
GEMM_LD = """void gemm(int m, int n, int p, int lda, int ldb, int ldc, double *restrict C, const double *restrict A,
          const double *restrict B) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < p; k++)
        C[i*ldc + j] += A[i*lda + k] * B[k*ldb + j];
}
"""
CUBE = """void scale(int l, int n, int m, const double *A, double *B) {
  for (int i = 0; i < l; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < m; k++)
        B[(i*n + j)*m + k] = 2.0 * A[(i*n + j)*m + k];
}
"""
MAIN = """
#include <stdio.h>
#include <stdlib.h>
int main(void) {
  int m = 37, n = 29, p = 23;
  double *A = malloc(sizeof(double) * 64 * 64), *B = malloc(sizeof(double) * 64 * 64);
  double *C = calloc(64 * 64, sizeof(double)), *x = malloc(sizeof(double) * 64), y[64];
  for (int k = 0; k < 64 * 64; k++) { A[k] = (k % 17) * 0.25; B[k] = (k % 13) * 0.5; }
  for (int k = 0; k < 64; k++) x[k] = k * 0.125;
  mv(m, n, A, x, y);
  gemm(m, n, p, LDA, 40, 40, C, A, B);
  double s = 0;
  for (int k = 0; k < m; k++) s += y[k] * (k + 1);
  for (int k = 0; k < 64 * 64; k++) s += C[k] * (k % 7);
  printf("%.17g\\n", s);
  return 0;
}
"""


def extract(tmp_path: Path, source: str) -> tuple[Path, list[Scop]]:
    path = tmp_path / "k.c"
    path.write_text(source)
    extraction = extract_scops(path)
    assert not extraction.rejected, extraction.rejected
    return path, extraction.scops


def refusal(tmp_path: Path, source: str) -> str:
    path = tmp_path / "k.c"
    path.write_text(source)
    extraction = extract_scops(path)
    assert not extraction.scops and len(extraction.rejected) == 1
    return str(extraction.rejected[0].location) + ": " + extraction.rejected[0].message


def test_a_flat_matrix_vector_product_is_read_as_rows(tmp_path: Path) -> None:
    _, (scop,) = extract(tmp_path, MV)
    a = scop.arrays["A"]
    assert a.dims == (None, "n") and a.flat == FlatArray(const=True, restrict=True)
    assert scop.arrays["x"].flat is None  # affine already: left as written
    reads = [acc.subscript_text() for stmt in scop.statements for acc in stmt.reads]
    assert "A[i0][i1]" in reads
    assert scop.is_exact


def test_three_linearized_dimensions_split_into_three_subscripts(tmp_path: Path) -> None:
    _, (scop,) = extract(tmp_path, CUBE)
    assert scop.arrays["A"].dims == (None, "n", "m") == scop.arrays["B"].dims
    assert scop.statements[0].writes[0].subscript_text() == "B[i0][i1][i2]"


def test_leading_dimensions_are_assumed_of_the_sizes_as_blas_states_them(tmp_path: Path) -> None:
    """k < p in rows of lda: the loop bounds alone do not prove it; the analysis assumes p <= lda (and the
    drop-in code checks it at run time), as Polly does."""
    _, (scop,) = extract(tmp_path, GEMM_LD)
    assert [scop.arrays[a].dims for a in "ABC"] == [(None, "lda"), (None, "ldb"), (None, "ldc")]
    context = isl.Set(scop.context)
    assumed = isl.Set("[m, n, p, lda, ldb, ldc] -> { : lda >= p and ldb >= n and ldc >= n }")
    assert context.is_subset(assumed)
    assert not context.intersect(isl.Set("[p, lda] -> { : p = 8 and lda = 8 }")).is_empty()
    assert assumptions(scop) == [
        "A is declared flat and subscripted in rows of lda: analysed as an array of 2 dimensions",
        "B is declared flat and subscripted in rows of ldb: analysed as an array of 2 dimensions",
        "C is declared flat and subscripted in rows of ldc: analysed as an array of 2 dimensions",
        "the analysis assumes lda >= p and ldb >= n and ldc >= n; the drop-in code checks it at run time and runs "
        "the nest as written where it fails"]


def test_a_declared_product_extent_gives_the_outer_extent(tmp_path: Path) -> None:
    _, (scop,) = extract(tmp_path, MV.replace("const double *restrict A", "const double A[m * n]"))
    assert scop.arrays["A"].dims == ("m", "n")


def test_a_reversed_column_stays_in_its_row(tmp_path: Path) -> None:
    """``i*n + n - 1 - j`` divides as row i + 1, column -1 - j; it is row i, column n - 1 - j."""
    _, (scop,) = extract(tmp_path, MV.replace("A[i*n + j]", "A[i*n + n - 1 - j]"))
    assert scop.statements[1].reads[0].subscripts == ("i0", "((n) - (i1)) - (1)")


@pytest.mark.parametrize(("body", "said"), [
    ("A[i*n + j]", "the loop bounds do not keep j in [0, n) for any value of the sizes"),
    ("A[i*n + j*m]", "its strides n and m are not multiples of one row length"),
    ("A[i*n*m + j]", "the row length m*n is a product of size parameters"),
    ("A[i*n + j] + A[idx[j]]", "idx[j] is not a sum of multiples of the row length n"),
])
def test_a_flat_array_that_does_not_split_says_why_and_how_to_declare_it(tmp_path: Path, body: str,
                                                                         said: str) -> None:
    source = f"""void f(int m, int n, const double *restrict A, const int *idx, double *y) {{
  for (int i = 0; i < m; i++)
    for (int j = 0; j <= n; j++)
      y[i] += {body};
}}
"""
    message = refusal(tmp_path, source)
    assert said in message
    assert "declare it as a pointer to rows, e.g. const double (*restrict A)[" in message
    assert message.startswith(f"{tmp_path / 'k.c'}:4:")


def test_a_genuinely_non_affine_subscript_keeps_its_message(tmp_path: Path) -> None:
    message = refusal(tmp_path, MV.replace("A[i*n + j]", "A[i*j]"))
    assert "non-affine subscript" in message and "A has no declared extent in dimension 0" in message


def test_an_array_with_a_declared_extent_falls_back_to_spanning_it(tmp_path: Path) -> None:
    """Rows that may overlap (j runs to n): the declared extent still bounds the access, as before."""
    source = MV.replace("const double *restrict A", "const double A[4096]").replace("j < n", "j <= n")
    _, (scop,) = extract(tmp_path, source)
    assert scop.arrays["A"].dims == ("4096",) and scop.arrays["A"].flat is None
    assert not scop.is_exact


@pytest.mark.parametrize(("source", "recipe", "params"), [
    (MV, [{"op": "expand", "scalar": "s"}, {"op": "autoschedule"}], {"m": 70, "n": 90}),
    (GEMM_LD, [{"op": "interchange", "order": [0, 2, 1]}, {"op": "tile", "loops": [0, 1, 2], "sizes": [8, 16, 32]}],
     {"m": 40, "n": 48, "p": 36, "lda": 40, "ldb": 50, "ldc": 48}),
    (CUBE, [{"op": "interchange", "order": [2, 1, 0]}], {"l": 6, "n": 7, "m": 9}),
])
def test_flat_nests_transform_and_verify_in_the_harness(tmp_path: Path, source: str, recipe: list[dict],
                                                        params: dict[str, int]) -> None:
    _, (scop,) = extract(tmp_path, source)
    with Harness(scop, params, reps=1, threads=1) as harness:
        evaluation = harness.evaluate(Recipe.from_dict({"steps": recipe}))
        assert evaluation.variant.ok, evaluation.variant.message
        assert evaluation.verified
        # The driver holds each flat array as its rows: the outer extent from the loop bounds.
        sizes = {lay.info.name: lay.extents for lay in harness.layouts}
    if source is GEMM_LD:
        assert sizes["A"] == (40, 40) and sizes["B"] == (36, 50) and sizes["C"] == (40, 48)


@pytest.mark.parametrize("lda", [40, 16])  # 16 < p: the assumption fails, the user's own code runs
def test_the_drop_in_file_keeps_the_users_declarations_and_agrees(tmp_path: Path, lda: int) -> None:
    path = tmp_path / "k.c"
    path.write_text(MV + GEMM_LD + MAIN.replace("LDA", str(lda)))
    scops = extract_scops(path).scops
    recipes = {"mv": [{"op": "expand", "scalar": "s"}, {"op": "autoschedule"}],
               "gemm": [{"op": "interchange", "order": [0, 2, 1]},
                        {"op": "tile", "loops": [0, 1, 2], "sizes": [8, 8, 8]}]}
    tuned = {k: apply_recipe(scop, Recipe.from_dict({"steps": recipes[scop.region.function]}))
             for k, scop in enumerate(scops) if scop.region.function in recipes}
    assert len(tuned) == 2
    new = replace_regions(path, tuned, scops)
    assert "void mv(int m, int n, const double *restrict A, const double *restrict x, double *restrict y)" in new
    assert "const double (*restrict A)[n] = (const double (*)[n])" in new
    assert "double (*restrict C)[ldc] = (double (*)[ldc])" in new
    assert "C[i*ldc + j] += A[i*lda + k] * B[k*ldb + j];" in new  # kept for sizes the rows do not fit
    out = tmp_path / "new.c"
    out.write_text(new)
    assert _run(out, tmp_path / "new") == _run(path, tmp_path / "old")


def _run(source: Path, exe: Path) -> str:
    # The views of the flat arrays keep their qualifiers: no conversion a compiler would warn of.
    subprocess.run(["gcc", "-std=c99", "-O2", "-fopenmp", "-Werror=discarded-qualifiers",
                    "-Werror=incompatible-pointer-types", "-o", str(exe), str(source)], check=True,
                   capture_output=True, text=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True, timeout=60).stdout


_SIZES = st.sampled_from([Poly.name("n"), Poly.name("m"), Poly.name("n") + Poly.constant(2),
                          Poly.constant(2) * Poly.name("m") + Poly.constant(1)])


@settings(max_examples=200, deadline=None, derandomize=True, database=None)
@given(sizes=st.lists(_SIZES, min_size=1, max_size=2, unique=True), data=st.data())
def test_the_rows_reach_the_linear_address(sizes: list[Poly], data: st.DataObject) -> None:
    """Split by the extents its strides give, a linearized subscript's rows recombine to it: the same
    polynomial, so the same address for every value of the sizes and iterators."""
    its = ["i", "j", "k"][: len(sizes) + 1]
    subscripts = [Poly.constant(data.draw(st.integers(1, 2))) * Poly.name(it) for it in its]
    tail = Poly.constant(data.draw(st.integers(-3, 3))) + Poly.constant(data.draw(st.integers(0, 1))) * Poly.name("n")
    subscripts[-1] = subscripts[-1] + tail  # a constant, a size: what divides into the next row
    linear = subscripts[0]
    for size, sub in zip(sizes, subscripts[1:], strict=True):
        linear = linear * size + sub
    steps = [s for it in its if (s := linear.coefficient(it)) is not None and s.value is None]
    found, clash = dimensions(steps)
    assert clash is None and found == tuple(sizes)
    parts = RowLayout("A", found, None, False).split(linear)
    assert parts is not None
    rebuilt = parts[0]
    for size, part in zip(found, parts[1:], strict=True):
        rebuilt = rebuilt * size + part
    assert rebuilt == linear
    values = {name: data.draw(st.integers(0, 50)) for name in ("i", "j", "k", "n", "m")}
    assert rebuilt.evaluate(values) == linear.evaluate(values)
