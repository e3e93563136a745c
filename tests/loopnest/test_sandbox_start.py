"""Issue 58: a sandbox that could not start is its own status with its reason, never ``compile-error`` (a
user read "compile-error" for ``bwrap: Creating new namespace failed: Resource temporarily unavailable``),
and never an exception (the process limit reached made ``subprocess.Popen`` raise ``BlockingIOError``)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from loopnest import Harness, extract_scops
from loopnest.harness.program import ProgramSpec, program_error
from loopnest.harness.sandbox import SANDBOX_ERROR, Limits, detect_sandbox, run_limited

# One task for every sandboxed process of this user (nobody's when perfembed is root): no room to start one.
NO_ROOM = Limits(processes=1, wall_seconds=20.0)
pytestmark = pytest.mark.skipif(os.getuid() == 0 and not detect_sandbox("auto").as_nobody,
                                reason="root outside a sandbox has no process limit")


def test_a_run_whose_sandbox_cannot_start_says_so() -> None:
    with tempfile.TemporaryDirectory() as tmp:  # below /tmp, which nobody may cross (pytest's tmp_path: not)
        Path(tmp).chmod(0o755)
        result = run_limited(["/bin/true"], cwd=Path(tmp), limits=NO_ROOM)
    assert result.status == SANDBOX_ERROR and not result.ok
    assert "Resource temporarily unavailable" in result.stderr or "bwrap" in result.stderr


def test_a_nest_compile_whose_sandbox_cannot_start_is_not_a_compile_error(tmp_path: Path) -> None:
    source = tmp_path / "axpy.c"
    source.write_text("void axpy(int n, double a, double x[n], double y[n])\n"
                      "{\n    for (int i = 0; i < n; i++)\n        y[i] += a * x[i];\n}\n")
    scop = extract_scops(source).scops[0]
    with Harness(scop, {"n": 64}, limits=NO_ROOM) as harness:
        assert harness.baseline().status == SANDBOX_ERROR


def test_a_program_build_whose_sandbox_cannot_start_is_not_a_build_error(tmp_path: Path) -> None:
    failed = program_error("int main(void) { return 0; }\n", ProgramSpec(cflags="-O1"), limits=NO_ROOM)
    assert failed is not None and failed.status == SANDBOX_ERROR
