"""The frontend sees C as a compiler does, and rejects what it cannot analyse with file:line."""

from __future__ import annotations

from pathlib import Path

import pytest

import loopnest.frontend.extract as extract
from loopnest import Harness, ParameterError, PreprocessOptions, SourceError, extract_scops
from tests.helpers.paths import CORPUS


def write(tmp_path: Path, text: str, name: str = "k.c") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def test_defines_and_quoted_includes_are_honoured(tmp_path: Path) -> None:
    (tmp_path / "inc").mkdir()
    write(tmp_path / "inc", "#define LEN (SIZE + 1)\ntypedef double real;\n", "sizes.h")
    src = write(tmp_path, '#include "sizes.h"\n#include <math.h>\nreal A[LEN];\n'
                          "void f(void) { for (int i = 0; i < LEN; i++) A[i] = sqrt(A[i]); }\n")
    scop = extract_scops(src, PreprocessOptions((str(tmp_path / "inc"),), (("SIZE", "99"),))).scops[0]
    assert scop.params == () and scop.arrays["A"].element_type == "double"
    with pytest.raises(SourceError, match="sizes.h"):
        extract_scops(src)


def test_parse_errors_name_the_line(tmp_path: Path) -> None:
    src = write(tmp_path, "void f(int n) {\n  for (int i = 0; i < n; i++)\n    x = = 1;\n}\n")
    with pytest.raises(SourceError, match=r"k\.c:3"):
        extract_scops(src)


def test_deep_nesting_is_a_parse_error_naming_the_file(tmp_path: Path) -> None:
    src = write(tmp_path, "int f(int x) { return " + "(" * 400 + "x" + ")" * 400 + "; }\n")
    with pytest.raises(SourceError, match=f"{src}: nested too deeply for the C parser"):
        extract_scops(src)


def test_a_parser_bug_is_not_reported_as_the_users_mistake(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Before: any exception of the parser became "C parse error: ..." (exit 2, HTTP 422), so a bug in
    # pycparser or in our use of it looked like bad C. Only ParseError (and running out of stack) may.
    def broken(self: object, text: str, filename: str = "") -> None:
        raise AttributeError("'NoneType' object has no attribute 'coord'")

    monkeypatch.setattr(extract.CParser, "parse", broken)
    with pytest.raises(AttributeError, match="coord"):
        extract_scops(write(tmp_path, "void f(void) {}\n"))


def test_partial_support_reports_both(tmp_path: Path) -> None:
    extraction = extract_scops(CORPUS / "kernels/reject/partial_support.c")
    assert len(extraction.scops) == 1 and len(extraction.rejected) == 1
    assert extraction.rejected[0].location.line > 0


def test_missing_parameter_is_named(tmp_path: Path) -> None:
    src = write(tmp_path, "void f(int n, int m, double A[n][m]) {\n"
                          "  for (int i = 0; i < n; i++) for (int j = 0; j < m; j++) A[i][j] = 0;\n}\n")
    scop = extract_scops(src).scops[0]
    assert scop.params == ("n", "m")
    with pytest.raises(ParameterError, match="m"):
        Harness(scop, {"n": 4, "unused": 3})


def test_out_of_bounds_parameters_are_refused(tmp_path: Path) -> None:
    src = write(tmp_path, "double A[10];\nvoid f(int n) { for (int i = 0; i < n; i++) A[i] = 1; }\n")
    with pytest.raises(ParameterError, match="extent"):
        Harness(extract_scops(src).scops[0], {"n": 20})


def test_negative_steps_triangular_bounds_and_conditions(tmp_path: Path) -> None:
    src = write(tmp_path, "void f(int n, double L[n][n], double x[n]) {\n"
                          "  for (int i = n - 1; i >= 0; i--) {\n"
                          "    for (int j = i + 1; j < n; j++) if (j % 2 == 0) x[i] -= L[i][j] * x[j];\n"
                          "    x[i] = x[i] / L[i][i];\n  }\n}\n")
    scop = extract_scops(src).scops[0]
    assert scop.schedule.rows[0][1] == "-i0"
    with Harness(scop, {"n": 12}, reps=1) as h:
        assert h.baseline().ok


@pytest.mark.parametrize("decls, body", [
    ("void f(int n, volatile double *a, double *b) {", "b[i] = a[i] * 2.0;"),  # pointee volatile
    ("volatile double a[100];\nvoid f(int n, double *b) {", "b[i] = a[i];"),  # volatile global array
    ("typedef volatile int reg_t;\nreg_t a[100];\nvoid f(int n, double *b) {", "a[i] = 1;"),  # through a typedef
    ("void f(int n, double *b) { volatile int s = 0;", "b[i] = s;"),  # volatile scalar read
    ("void f(volatile int n, double *b) {", "b[i] = 0;"),  # volatile bound
    ("void f(int n, double *b) {", "{ volatile double t = b[i]; b[i] = t; }"),  # declared in the body
])
def test_a_nest_touching_a_volatile_object_is_refused_with_its_line(tmp_path: Path, decls: str, body: str) -> None:
    # Before: qualifiers were dropped, so a recipe could vectorize, parallelize or merge the accesses
    # of a volatile object, whose every read and write C keeps, in order.
    src = write(tmp_path, f"{decls}\n  for (int i = 0; i < n; i++)\n    {body}\n}}\n")
    extraction = extract_scops(src)
    assert extraction.scops == [] and len(extraction.rejected) == 1
    loop_line = decls.count("\n") + 2
    assert "volatile" in str(extraction.rejected[0])
    assert extraction.rejected[0].location.line in (loop_line, loop_line + 1)


def test_a_volatile_object_outside_the_nest_does_not_refuse_it(tmp_path: Path) -> None:
    src = write(tmp_path, "volatile int flag;\nvoid f(int n, double *b) {\n"
                          "  for (int i = 0; i < n; i++) b[i] = 0;\n  flag = 1;\n}\n")
    assert len(extract_scops(src).scops) == 1
