"""The C that real code is written in: calls of the file's own small functions, and size_t, int64_t,
long and unsigned loops at their real widths."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from loopnest import Harness, Recipe, apply_recipe, extract_scops, generate_c, replace_regions
from loopnest.harness.driver import synthesize_driver
from loopnest.ir import Scop

HELPERS = """#include <math.h>
static inline double sq(double x) { return x * x; }
static inline int at(int i, int j, int n) { return i * n + j; }
static double dist(double a, double b) { double d = a - b; d = fabs(d); return sq(d) + 0.5 * d; }
static inline double first(const double *v, int k) { return v[k]; }
void f(int m, int n, const double *restrict A, const double *restrict x, double *restrict y) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      y[i] += sq(A[at(i, j, n)]) + dist(x[j], 1) + first(x, j);
}
"""
REFUSED = [
    ("static double h(double x) { double s = 0; for (int k = 0; k < 3; k++) s += x; return s; }",
     "its body has a for loop; only a function whose body is local declarations and assignments, then one "
     "return, is inlined", 2),
    ("static double h(double x) { return x > 1 ? h(x / 2) : x; }", "h() calls itself (h -> h)", 2),
    ("int g;\nstatic double h(double x) { g = 1; return x; }", "it assigns g, which is not one of its scalar locals",
     3),
    ("double g;\nstatic double h(double x) { return x + g; }", "it reads 'g', which is not one of its parameters", 3),
    ("static double h(double *p) { return p[0]; }", "its pointer parameter 'p' is passed y + 1", 2),
    ("int puts(const char *);\nstatic double h(double x) { puts(\"\"); return x; }", "its body has a call as a "
     "statement", 3),
    ("static double h(double x) { return x + rand(); }", "it calls rand(), which is neither a math function nor "
     "defined in this file", 2),
]


def extract(tmp_path: Path, source: str, name: str = "k.c") -> tuple[Path, list[Scop]]:
    path = tmp_path / name
    path.write_text(source)
    extraction = extract_scops(path, function="f")
    assert not extraction.rejected, extraction.rejected
    return path, extraction.scops


def test_calls_of_the_files_small_functions_are_inlined(tmp_path: Path) -> None:
    _, (scop,) = extract(tmp_path, HELPERS)
    (stmt,) = scop.statements
    arrays = sorted({acc.subscript_text() for acc in stmt.reads})
    # at(i, j, n) inlined, then read as rows of A; first(x, j) reads x through its parameter.
    assert arrays == ["A[i0][i1]", "x[i1]", "y[i0]"]
    code = generate_c(scop)
    assert "sq(" not in code and "dist(" not in code and "fabs(" in code
    with Harness(scop, {"m": 30, "n": 40}, reps=1, threads=1) as harness:
        evaluation = harness.evaluate(Recipe.from_dict({"steps": [{"op": "interchange", "order": [1, 0]}]}))
        assert evaluation.variant.ok and evaluation.verified


@pytest.mark.parametrize(("helper", "said", "line"), REFUSED)
def test_a_helper_that_cannot_be_inlined_is_refused_with_its_line(tmp_path: Path, helper: str, said: str,
                                                                  line: int) -> None:
    call = "h(y + 1)" if "double *p" in helper else "h(y[i])"
    path = tmp_path / "k.c"
    path.write_text(f"#include <stdlib.h>\n{helper}\nvoid f(int n, double *y) {{\n"
                    f"  for (int i = 0; i < n; i++) y[i] = {call};\n}}\n")
    extraction = extract_scops(path)
    rejected = [r for r in extraction.rejected if r.function == "f"]
    assert len(rejected) == 1
    message = rejected[0].message
    assert said in message
    assert f"h() at {path}:{line}:" in message  # the helper's own line
    assert rejected[0].location.line == line + 2  # the call's


def test_inlined_helpers_keep_the_programs_result(tmp_path: Path) -> None:
    main = """
#include <stdio.h>
int main(void) {
  double A[12 * 9], x[9], y[12] = {0};
  for (int k = 0; k < 12 * 9; k++) A[k] = k * 0.25 - 3;
  for (int k = 0; k < 9; k++) x[k] = k * 0.5;
  f(12, 9, A, x, y);
  for (int k = 0; k < 12; k++) printf("%.17g\\n", y[k]);
  return 0;
}
"""
    path, scops = extract(tmp_path, HELPERS + main)
    tuned = apply_recipe(scops[0], Recipe.from_dict({"steps": [{"op": "tile", "loops": [0, 1], "sizes": [4, 4]}]}))
    new = tmp_path / "new.c"
    new.write_text(replace_regions(path, {0: tuned}, scops))
    assert _run(new, tmp_path / "new") == _run(path, tmp_path / "old")


def test_helpers_that_grow_the_nest_past_the_limits_are_refused(tmp_path: Path) -> None:
    chain = "\n".join(["static double h0(double x) { return x + 1; }",
                       *(f"static double h{k}(double x) {{ return h{k - 1}(x) * 2; }}" for k in range(1, 30))])
    doubled = "y[i]"
    for _ in range(30):  # 2^30 nodes once inlined, each argument used twice
        doubled = f"d({doubled})"
    path = tmp_path / "k.c"
    path.write_text(f"{chain}\nstatic double d(double x) {{ return x + x; }}\nvoid f(int n, double *y) {{\n"
                    f"  for (int i = 0; i < n; i++) y[i] = h29(y[i]);\n"
                    f"  for (int i = 0; i < n; i++) y[i] = {doubled};\n}}\n")
    deep, large = extract_scops(path, function="f").rejected
    assert "helpers call each other more than 16 deep (h29 -> ... -> h13)" in deep.message
    assert large.construct == "expression too large"


SIZES = """#include <stddef.h>
#include <stdint.h>
void f(size_t n, int64_t m, long k, double *restrict y, const double *restrict x) {
  for (size_t i = 0; i < n; i++)
    for (int64_t j = 0; j < m; j++)
      y[i] += x[j] * k;
}
"""


def test_size_t_and_int64_t_keep_their_width(tmp_path: Path) -> None:
    _, (scop,) = extract(tmp_path, SIZES)
    assert scop.param_types == {"n": "unsigned long", "m": "long"}
    assert scop.arrays["k"].element_type == "long"
    assert scop.index_type == "long"
    code = generate_c(scop)
    assert "for (long c1 = 0; c1 < ((long)n); c1 += 1)" in code and "int " not in code
    with Harness(scop, {"n": 20, "m": 30, "k": 3}, reps=1, threads=1) as harness:
        driver = synthesize_driver(scop, generate_c(scop), harness.params, harness.layouts, forms="parameters")
        driver = driver.replace("perfembed_v_", "")  # the driver's prefix on the nest's names
        assert "static unsigned long n;" in driver and "static long m;" in driver
        assert "void perfembed_body_0(unsigned long n, long m, long k, " in driver


def test_int_loops_stay_int(tmp_path: Path) -> None:
    _, (scop,) = extract(tmp_path, "void f(int n, double *y) { for (int i = 0; i < n; i++) y[i] = 1; }")
    assert scop.index_type == "int" and "for (int c1" in generate_c(scop)


def test_an_unsigned_counter_computes_as_in_the_source(tmp_path: Path) -> None:
    """``i - 1`` of an unsigned counter at 0 is UINT_MAX in C: the generated loop's counter is signed, so its
    value is read back as the counter's own type."""
    source = """#include <stdio.h>
void f(unsigned n, double *y) {
  for (unsigned i = 0; i < n; i++)
    y[i] = (double)(i - 1) + (double)(i * 2u);
}
int main(void) { double y[5]; f(5, y); for (int k = 0; k < 5; k++) printf("%.17g\\n", y[k]); return 0; }
"""
    path, scops = extract(tmp_path, source)
    assert scops[0].index_type == "long"
    assert "((unsigned int) c1) - 1" in generate_c(scops[0])
    new = tmp_path / "new.c"
    new.write_text(replace_regions(path, {0: scops[0]}, scops))
    assert _run(new, tmp_path / "new") == _run(path, tmp_path / "old")
    assert "4294967295" in _run(path, tmp_path / "old")


def test_a_volatile_loop_counter_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "k.c"
    path.write_text("void f(int n, double *y) {\n  for (volatile int i = 0; i < n; i++) y[i] = 1;\n}\n")
    (rejected,) = extract_scops(path).rejected
    assert rejected.construct == "volatile object" and rejected.location.line == 2


def _run(source: Path, exe: Path) -> str:
    subprocess.run(["gcc", "-O2", "-fopenmp", "-o", str(exe), str(source), "-lm"], check=True, capture_output=True,
                   text=True)
    return subprocess.run([str(exe)], check=True, capture_output=True, text=True, timeout=60).stdout
