"""Drop-in code runs the tuned nest only where its arrays do not overlap (loopnest/codegen/overlap_guard.py).

Every recipe's legality assumes distinct arrays are distinct objects, and the generated code now says so to
gcc (``#pragma GCC ivdep``, ``omp simd``). A caller that passes overlapping pointers (``scale(n, x + 1, x)``)
got a different answer from the tuned file than from the original; the drop-in code checks the overlap at
run time, as Polly does, and runs the original's schedule there.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

import loopnest.dropin
from loopnest import Recipe, Scop, apply_recipe, extract_scops, generate_c, replace_regions
from loopnest.codegen import helper_macros
from loopnest.codegen.overlap_guard import tuned_code_condition

PROGRAM = """#include <stdio.h>
void scale(int n, double *a, double *b)
{
  for (int i = 0; i < n; i++)
    a[i] = 0.5 * b[i] + 1.0;
}
int main(void)
{
  static double x[1025], y[1024], z[1024];
  for (int k = 0; k < 1025; k++) x[k] = k % 7;
  for (int k = 0; k < 1024; k++) z[k] = k % 5;
  void (*volatile call)(int, double *, double *) = scale;  /* not inlined: gcc sees no more than perfembed */
  call(1024, x + 1, x);
  call(1024, y, z);
  double s = 0, t = 0;
  for (int k = 0; k < 1025; k++) s = 0.75 * s + x[k];
  for (int k = 0; k < 1024; k++) t = 0.75 * t + y[k];
  printf("%.17g %.17g\\n", s, t);
  return 0;
}
"""
VECTORIZE = Recipe.from_dict({"steps": [{"op": "vectorize", "loop": 0}]})


def _run(tmp_path: Path, name: str, text: str) -> str:
    src, exe = tmp_path / f"{name}.c", tmp_path / name
    src.write_text(text)
    subprocess.run(["gcc", "-O3", "-march=native", "-fopenmp", "-o", str(exe), str(src), "-lm"], check=True,
                   capture_output=True, text=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True, timeout=60).stdout


def test_overlapping_arrays_run_the_original_schedule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "scale.c"
    path.write_text(PROGRAM)
    scops = extract_scops(path).scops
    assert scops[0].region.function == "scale"
    tuned = {0: apply_recipe(scops[0], VECTORIZE)}
    original = _run(tmp_path, "original", PROGRAM)
    guarded = replace_regions(path, tuned, scops)
    assert "#pragma omp simd" in guarded and "__UINTPTR_TYPE__" in guarded
    assert _run(tmp_path, "guarded", guarded) == original
    # Without the check the tuned loop reads x[k + 1] before the store of the iteration before writes it.
    monkeypatch.setattr(loopnest.dropin, "guarded_c", lambda _original, new: generate_c(new))
    assert _run(tmp_path, "unguarded", replace_regions(path, tuned, scops)) != original


def _two_nests(tmp_path: Path, source: str) -> tuple[Path, Scop, Scop]:
    path = tmp_path / "k.c"
    path.write_text(source)
    f, g = extract_scops(path).scops
    return path, f, g


def test_the_check_names_only_the_nests_variables_and_pairs_with_a_pointer(tmp_path: Path) -> None:
    _, f, g = _two_nests(tmp_path, "static double G[64], H[64];\n"
                                   "void f(int n, double *p, double q[n]) {\n"
                                   "  for (int i = 0; i < n; i++) { G[i] = p[i] + H[i]; q[i] = 2.0 * H[i]; }\n}\n"
                                   "void g(void) {\n  for (int i = 0; i < 64; i++) G[i] = H[i];\n}\n")
    check = tuned_code_condition(f)
    assert check is not None
    condition, _ = check
    assert set(re.findall(r"[A-Za-z_]\w*", condition)) <= {"G", "H", "p", "q", "n", "__UINTPTR_TYPE__"}
    # G-H: two arrays of the file, never the same object; every other pair has a pointer and a write.
    pairs = re.findall(r"&(\w+)\[[^]]*\] \+ 1\) <= \(__UINTPTR_TYPE__\)&(\w+)\[", condition)
    assert {tuple(sorted(p)) for p in pairs} == {("G", "p"), ("G", "q"), ("H", "q"), ("p", "q")}
    assert tuned_code_condition(g) is None  # only the file's own arrays: nothing to check


def test_a_global_scalar_is_checked_against_pointers_and_arrays_of_pointers_row_by_row(tmp_path: Path) -> None:
    """Review findings: a pointer may reach a global scalar the nest writes; the rows of ``double **`` are
    separate allocations, so the first and last element bound no address range: each row is checked
    (tests/loopnest/test_row_pointer_guard.py)."""
    path, f, g = _two_nests(tmp_path, "double total;\n"
                                      "void f(int n, double *p) {\n  for (int i = 0; i < n; i++) total += p[i];\n}\n"
                                      "void g(int n, double **a, double **b) {\n  for (int i = 0; i < n; i++)"
                                      " for (int j = 0; j < n; j++) a[i][j] = 0.5 * b[i][j];\n}\n")
    check = tuned_code_condition(f)
    assert check is not None and "&total" in check[0] and "&p[" in check[0]
    tuned = apply_recipe(g, Recipe.from_dict({"steps": [{"op": "interchange", "order": [1, 0]}]}))
    code = replace_regions(path, {1: tuned}, [f, g])
    assert "holds pointers to rows" not in code and "&a[perfembed_check_row][0]" in code
    assert "&b[perfembed_check_row][0]" in code and "&total" not in code.split("void g", 1)[1]
    assert code.count("a[c1][c3] = (0.5 * b[c1][c3])") == 1 and "a[c3][c1] = (0.5 * b[c3][c1])" in code  # both orders


SWEEP = """#include <stdio.h>
void sweep(int n, int k, double A[n + 2][n + 2])
{
  for (int i = 1; i <= n; i++)
    for (int j = 0; j < n; j++)
      A[i][j] = A[i + k][j + 1] + 1.0;
}
int main(void)
{
  static double A[66][66];
  for (int i = 0; i < 66; i++) for (int j = 0; j < 66; j++) A[i][j] = (i * 3 + j) % 11;
  void (*volatile call)(int, int, double (*)[66]) = sweep;
  call(64, -1, A);
  double s = 0;
  for (int i = 0; i < 66; i++) for (int j = 0; j < 66; j++) s = 0.75 * s + A[i][j];
  printf("%.17g\\n", s);
  return 0;
}
"""


def test_a_negative_parameter_runs_the_original_schedule(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Review finding (reproduced): the analysis takes parameters to be >= 0, where interchanging this nest
    is legal; with k = -1 the nest reads A[i - 1][j + 1], a dependence (1, -1) the interchange reverses.
    One array, so no overlap test: the drop-in code ran the tuned loops unchecked and printed another sum."""
    path = tmp_path / "sweep.c"
    path.write_text(SWEEP)
    scops = extract_scops(path).scops
    tuned = {0: apply_recipe(scops[0], Recipe.from_dict({"steps": [{"op": "interchange", "order": [1, 0]}]}))}
    original = _run(tmp_path, "original", SWEEP)
    guarded = replace_regions(path, tuned, scops)
    assert "if (((n >= 0) && (k >= 0)))" in guarded
    assert _run(tmp_path, "guarded", guarded) == original
    monkeypatch.setattr(loopnest.dropin, "guarded_c", lambda _original, new: generate_c(new))
    assert _run(tmp_path, "unguarded", replace_regions(path, tuned, scops)) != original


def test_the_check_admits_adjacent_arrays_and_refuses_one_shared_element(tmp_path: Path) -> None:
    """The bounds themselves: ``a`` touches a[0..n-1] and ``b`` b[0..n-1]; b = a + n is adjacent (tuned
    code), b = a + n - 1 shares one element (original), and so does a = b + n - 1."""
    path = tmp_path / "scale.c"
    path.write_text(PROGRAM)
    check = tuned_code_condition(extract_scops(path).scops[0])
    assert check is not None
    condition, helpers = check
    probe = "\n".join(["#include <stdio.h>", *helper_macros(helpers)[0],
                        f"static int tuned(int n, double *a, double *b) {{ return {condition}; }}",
                        "int main(void) {", "  static double x[4096];",
                        "  printf(\"%d %d %d %d %d\\n\", tuned(1024, x, x + 1024), tuned(1024, x, x + 1023),",
                        "         tuned(1024, x + 1023, x), tuned(1024, x + 1024, x), tuned(-1, x, x));",
                        "  return 0;", "}"])
    assert _run(tmp_path, "probe", probe).split() == ["1", "0", "0", "1", "0"]


def test_a_local_accumulator_is_checked_only_where_its_address_is_taken(tmp_path: Path) -> None:
    """Review finding (reproduced): the check took ``&s`` of every written local scalar, so a ``register``
    accumulator made the drop-in file fail to compile ("address of register variable requested"). A
    local whose address the function never takes cannot be reached by a pointer: no test; one whose
    address is taken is still checked against the pointers."""
    path = tmp_path / "dot.c"
    path.write_text("#include <stdio.h>\n"
                    "double dot(int n, double *a, double *b) {\n  register double s = 0.0;\n"
                    "  for (int i = 0; i < n; i++)\n    s += a[i] * b[i];\n  return s;\n}\n"
                    "double dot2(int n, double *a, double *b, double **where) {\n  double s = 0.0;\n  *where = &s;\n"
                    "  for (int i = 0; i < n; i++)\n    s += a[i] * b[i];\n  return s;\n}\n"
                    "int main(void) {\n  static double x[100], y[100]; double *w;\n"
                    "  for (int i = 0; i < 100; i++) { x[i] = i % 3; y[i] = i % 5; }\n"
                    "  printf(\"%g %g\\n\", dot(100, x, y), dot2(100, x, y, &w));\n  return 0;\n}\n")
    scops = extract_scops(path).scops
    dot, dot2 = scops[:2]
    unroll = Recipe.from_dict({"steps": [{"op": "unroll", "loop": 0, "factor": 4}]})
    check, check2 = tuned_code_condition(dot), tuned_code_condition(dot2)
    assert check is not None and "&s" not in check[0]
    assert check2 is not None and "&s" in check2[0]
    code = replace_regions(path, {0: apply_recipe(dot, unroll), 1: apply_recipe(dot2, unroll)}, scops)
    assert _run(tmp_path, "tuned", code) == _run(tmp_path, "original", path.read_text())
