"""A program sent to the server reads no file of the server through the preprocessor (item 3)."""

from __future__ import annotations

import pytest

from loopnest.errors import SourceError
from loopnest.frontend.program import ProgramSource, extract_program

BODY = "void f(int n, double A[n]) {\n  for (int i = 0; i < n; i++)\n    A[i] = 1.0;\n}\n"
# Text of /etc/os-release (and of /etc/passwd) that must never come back in a message.
SECRETS = ("PRETTY_NAME", "NAME=", "root:x:0")


def refused(source: str, headers: dict[str, str] | None = None) -> str:
    with pytest.raises(SourceError) as info:
        extract_program(ProgramSource(source=source, headers=headers or {}))
    message = str(info.value)
    assert not any(secret in message for secret in SECRETS), message
    return message


@pytest.mark.parametrize("include", ['"/etc/os-release"', "</etc/os-release>", '"../../../../etc/os-release"',
                                     '"/etc/passwd"'])
def test_absolute_and_parent_includes_are_refused_with_the_line(include: str) -> None:
    message = refused(f"#include {include}\n{BODY}")
    assert message.startswith("program.c:1:") and "own headers" in message


def test_an_include_on_the_right_hand_side_echoes_nothing() -> None:
    refused('void f(int n, double A[n]) { for (int i = 0; i < n; i++) A[i] =\n#include "/etc/os-release"\n; }')


def test_an_existing_and_a_missing_file_get_the_same_answer() -> None:
    """A macro-computed name passes the line check; cpp's view decides, and says the same thing."""
    exists = refused(f'#define P "/etc/os-release"\n#include P\n{BODY}')
    missing = refused(f'#define P "/etc/no-such-file"\n#include P\n{BODY}')
    assert exists.replace("os-release", "X") == missing.replace("no-such-file", "X")


def test_a_header_cannot_include_outside_either() -> None:
    message = refused(f'#include "k.h"\n{BODY}', {"k.h": '#include "/etc/passwd"\n'})
    assert message.startswith("k.h:1:")


def test_probing_for_files_is_refused() -> None:
    message = refused(f'#if __has_include("/etc/shadow")\nint x;\n#endif\n{BODY}')
    assert "__has_include" in message


def test_the_programs_own_headers_and_the_fake_libc_still_work() -> None:
    source = ('#include <math.h>\n#include <stdio.h>\n#include "kernels/k.h"\n'
              "void f(int n, double A[n]) {\n  for (int i = 0; i < n; i++)\n    A[i] = SCALE * sqrt(A[i]);\n}\n")
    extraction = extract_program(ProgramSource(source=source, headers={"kernels/k.h": "#define SCALE 2.0\n"}))
    assert len(extraction.scops) == 1 and not extraction.rejected
