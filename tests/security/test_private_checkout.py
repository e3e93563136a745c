"""Run as root from a checkout under a private (0700) directory (issue 59, item 21): the sandbox's user
(nobody) could not reach the fake libc headers in the virtual environment, and every program failed with
"preprocessing program.c failed", in the CLI and the API alike, while nothing said why."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pycparser_fake_libc
import pytest

from loopnest.frontend import cpp_check, cpp_view
from loopnest.frontend.program import ProgramSource, extract_program
from loopnest.harness.sandbox import detect_sandbox

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("bwrap") is None
                                or not detect_sandbox("auto").as_nobody,
                                reason="only root sandboxes as nobody")

PROGRAM = ("#include <stdio.h>\n#include <math.h>\nvoid f(int n, double A[n]) {\n"
           "  for (int i = 0; i < n; i++)\n    A[i] = sqrt(A[i]);\n}\n")


@pytest.fixture
def private_checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The headers where a clone in /root or under ``mktemp -d`` has them: below a 0700 directory."""
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    shutil.copytree(cpp_view.OWN_INCLUDE, private / "include")
    shutil.copytree(pycparser_fake_libc.directory, private / "fake_libc")
    monkeypatch.setattr(cpp_view, "OWN_INCLUDE", private / "include")
    monkeypatch.setattr(pycparser_fake_libc, "directory", str(private / "fake_libc"))
    cpp_view.header_dirs.cache_clear()
    cpp_check.preprocessor_problem.cache_clear()
    yield private
    cpp_view.header_dirs.cache_clear()
    cpp_check.preprocessor_problem.cache_clear()


def test_a_program_preprocesses_from_a_private_checkout(private_checkout: Path) -> None:
    extraction = extract_program(ProgramSource(source=PROGRAM))
    assert len(extraction.scops) == 1
    assert not any(d.is_relative_to(private_checkout) for d in cpp_view.header_dirs("auto"))


def test_the_check_says_in_one_line_when_programs_cannot_be_preprocessed(private_checkout: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    assert cpp_check.preprocessor_problem("auto") is None
    cpp_check.preprocessor_problem.cache_clear()
    cpp_view.header_dirs.cache_clear()
    # The headers used in place now reach the sandbox (staged for nobody); a libc without its headers
    # still cannot preprocess, and the check says so in one line.
    shutil.rmtree(private_checkout / "fake_libc")
    (private_checkout / "fake_libc").mkdir()
    problem = cpp_check.preprocessor_problem("auto")
    assert problem is not None and "\n" not in problem and problem.startswith("programs cannot be preprocessed")
