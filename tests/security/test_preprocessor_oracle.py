"""The preprocessor is no oracle (issue 59, item 15): a program sent to the server cannot learn whether a
file of the server exists, nor read a line of it, however it spells the include or the probe. The
directive checks read raw lines; the confinement itself is structural: cpp runs where the only
headers are the fake libc and the request's own files.

And it is bounded (item 4): a macro bomb stops at the preprocessed size limit, while cpp runs."""

from __future__ import annotations

import shutil
import time

import pytest

from loopnest.errors import SourceError
from loopnest.frontend.program import ProgramSource, extract_program
from loopnest.harness.sandbox import detect_sandbox

pytestmark = pytest.mark.skipif(shutil.which("bwrap") is None or not detect_sandbox("auto").isolated,
                                reason="the confinement is the sandbox's")

ONE = "void f(int n, double A[n]) {\n  for (int i = 0; i < n; i++)\n    A[i] = 1.0;\n}\n"
TWO = ONE + "void g(int n, double B[n]) {\n  for (int i = 0; i < n; i++)\n    B[i] = 2.0;\n}\n"
EXISTING, MISSING = "/usr/include/stdio.h", "/usr/include/perfembed-no-such-header.h"
ERROR_HEADER = "/usr/include/x86_64-linux-gnu/bits/mathcalls.h"  # its first directive is an #error


def answer(source: str, defines: dict[str, str | None] | None = None) -> str:
    """What a client learns: the number of nests, or the refusal's message."""
    try:
        extraction = extract_program(ProgramSource(source=source, defines=defines or {}))
    except SourceError as exc:
        return f"refused: {exc}"
    return f"{len(extraction.scops)} nest(s)"


def probe(test: str) -> str:
    return f"#if {test}\n{TWO}#else\n{ONE}#endif\n"


@pytest.mark.parametrize("spelling, defines", [
    ("__has_inc\\\nlude(\"{path}\")", None),                    # a line splice hides it from the line check
    ("CAT(__has_, include)(\"{path}\")", None),                  # a ## paste
    ("HI(\"{path}\")", {"HI": "__has_include"}),                  # a macro from the request's defines
])
def test_has_include_cannot_tell_an_existing_file_from_a_missing_one(spelling: str,
                                                                    defines: dict[str, str | None] | None) -> None:
    cat = "#define CAT(a, b) a ## b\n"
    seen = {answer(cat + probe(spelling.format(path=path)), defines) for path in (EXISTING, MISSING)}
    assert len(seen) == 1, seen
    procs = {answer(cat + probe(spelling.format(path=path)), defines) for path in ("/proc/self/status",
                                                                                      "/proc/no-such-file")}
    assert len(procs) == 1, procs


def test_a_spliced_include_quotes_no_line_of_a_system_header() -> None:
    message = answer(f"#inc\\\nlude \"{ERROR_HEADER}\"\n{ONE}")
    assert message.startswith("refused") and "Never include" not in message, message
    assert message == answer(f"#inc\\\nlude \"{MISSING}\"\n{ONE}").replace(
        "perfembed-no-such-header.h", "mathcalls.h"), message


def test_a_computed_include_names_nothing_a_system_header_includes() -> None:
    message = answer(f"#define H <{EXISTING}>\n#include H\n{ONE}")
    missing = answer(f"#define H <{MISSING}>\n#include H\n{ONE}")
    assert message == missing.replace("perfembed-no-such-header.h", "stdio.h"), (message, missing)


def test_a_macro_bomb_stops_at_the_preprocessed_size_limit() -> None:
    """Reproduction: 372 bytes of ``#define A1 A0,A0,...`` ten deep expanded into an initializer ran
    206 s and took 4.46 GB (1M elements of a few bytes each)."""
    levels = "".join(f"#define A{k} A{k - 1},A{k - 1},A{k - 1},A{k - 1}\n" for k in range(1, 11))
    source = f"#define A0 1\n{levels}int bomb[] = {{ A10 }};\n{ONE}"
    start = time.monotonic()
    message = answer(source)
    assert message.startswith("refused") and "preprocessed" in message, message
    assert time.monotonic() - start < 10
