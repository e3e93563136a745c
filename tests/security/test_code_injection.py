"""No text of the source reaches generated C: injection through every construct that carries text.

Each program tries to run ``touch MARKER`` from inside a loop nest. The harness runs here *without*
the sandbox (``sandbox="none"``), so the test proves the code generator itself: whatever the
frontend accepts is rebuilt from the IR, and nothing of the attacker's text is compiled.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from loopnest import PreprocessOptions, extract_scops
from loopnest.codegen import generate_c
from loopnest.errors import PerfembedError
from loopnest.harness import Harness, Limits
from loopnest.transform.recipe import Recipe

HEAD = "#include <stdlib.h>\n"
SIG = ("void f(int n, double A[n][n], double B[n][n]) {\n  for (int i = 0; i < n; i++)\n"
       "    for (int j = 0; j < n; j++)\n")


def in_body(expr: str) -> str:
    return f"{HEAD}{SIG}      A[i][j] = B[i][j] * 2.0 + {expr};\n}}\n"


CASES = {
    "sizeof type": in_body('sizeof(char[system("touch MARKER") + 1])'),
    "cast type": in_body('(long)(char (*)[system("touch MARKER") + 1])0'),
    "cast to typedef'd array": "typedef char big[8];\n" + in_body("(long)sizeof(big)"),
    "compound literal": in_body('(int[]){system("touch MARKER")}[0]'),
    "statement expression": in_body('({ system("touch MARKER"); 1; })'),
    "_Generic": in_body('_Generic(1, int: system("touch MARKER"))'),
    "string literal": in_body('"touch MARKER"[0]'),
    "char literal": in_body("'\\x41'"),
    "pragma in the body": (f"{HEAD}{SIG}    {{\n#pragma omp parallel for if(system(\"touch MARKER\") == 0)\n"
                           "      for (int k = 0; k < 1; k++) A[i][j] = B[i][j];\n    }\n}\n"),
    "_Pragma": in_body('0\n_Pragma("omp parallel for if(system(\\"touch MARKER\\"))")'),
    "macro": '#define RUN system("touch MARKER")\n' + in_body("RUN"),
    "macro through -D": in_body("INJECT"),
    "constructor attribute": ('__attribute__((constructor)) static void pwn(void) { system("touch MARKER"); }\n'
                              + in_body("1.0")),
    "function pointer cast": 'typedef int (*fp)(const char *);\n' + in_body('((fp)system)("touch MARKER")'),
    "loop bound": (f"{HEAD}void f(int n, double A[n]) {{\n  for (int i = 0; i < n + system(\"touch MARKER\"); i++)\n"
                   "    A[i] = 1.0;\n}\n"),
    "array extent": (f"{HEAD}void f(int n, double A[n + 0 * system(\"touch MARKER\")]) {{\n"
                     "  for (int i = 0; i < n; i++)\n    A[i] = 1.0;\n}\n"),
    "local declaration type": (f"{HEAD}{SIG}    {{ __typeof__(system(\"touch MARKER\")) t = 1; A[i][j] = t; }}\n}}\n"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_nothing_of_the_source_runs(tmp_path: Path, name: str) -> None:
    source = tmp_path / "attack.c"
    source.write_text(CASES[name].replace("MARKER", str(tmp_path / "pwned")))
    options = PreprocessOptions(defines=(("INJECT", f'system("touch {tmp_path / "pwned"}")'),))
    try:
        scops = extract_scops(source, options).scops
    except PerfembedError:
        scops = []  # refused as a whole: nothing to run
    for scop in scops:
        assert "system" not in generate_c(scop) and "MARKER" not in generate_c(scop)
        with contextlib.suppress(PerfembedError), Harness(scop, dict.fromkeys(scop.params, 8), reps=1, threads=1,
                                                          limits=Limits(sandbox="none")) as harness:
            harness.evaluate(Recipe())
            for c_file in harness.workdir.glob("*.c"):
                assert "system" not in c_file.read_text()
    assert not (tmp_path / "pwned").exists(), f"{name}: the attacker's command ran"


def test_the_accepted_forms_are_rebuilt_from_values(tmp_path: Path) -> None:
    """What the frontend accepts is printed from the IR: sizeof folded, a typedef'd cast resolved."""
    source = tmp_path / "ok.c"
    source.write_text("typedef double real;\ntypedef real realer;\n"
                      "void f(int n, real A[n], real B[n]) {\n  for (int i = 0; i < n; i++)\n"
                      "    A[i] = (realer)B[i] * (real)2 + sizeof(real) + sizeof B[i] + 'a';\n}\n")
    scop = extract_scops(source).scops[0]
    code = generate_c(scop)
    assert "real" not in code and "sizeof" not in code
    assert "((double) " in code and "8UL" in code and "97" in code
