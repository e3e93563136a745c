"""A path a run needs that the sandbox's user cannot reach (issue 59, item 4): as root, when a read-only
path (the interpreter under ``/root/.pyenv``: a Python kernel's check) sat below a 0700 directory,
``run_limited`` warned and sandboxed the run as root, which ``RLIMIT_NPROC`` does not bind (no process
limit). It now stays nobody's, with its process limit, and reads the path through a bind of its own."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from loopnest.harness.sandbox import Limits, detect_sandbox, run_limited

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("bwrap") is None
                                or not detect_sandbox("auto").as_nobody,
                                reason="only root sandboxes as nobody")

LIMITS = Limits(cpu_seconds=10, memory_mb=512, wall_seconds=20.0, processes=64)


def _max_processes(limits_text: str) -> str:
    return next(line.split()[2] for line in limits_text.splitlines() if line.startswith("Max processes"))


def test_a_private_path_keeps_the_process_limit(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    tool = private / "tool"
    tool.mkdir()
    (tool / "data.txt").write_text("seen by nobody\n")
    work = tmp_path / "work"
    work.mkdir()
    ran = run_limited(["/bin/sh", "-c", f"cat {tool}/data.txt; id -u; cat /proc/self/limits"], cwd=work,
                      limits=LIMITS, read_only=[tool])
    assert ran.ok, ran.describe()
    assert ran.stdout.startswith("seen by nobody\n65534\n"), ran.stdout
    assert _max_processes(ran.stdout) == str(LIMITS.processes), ran.stdout  # root's: unlimited


def test_the_stand_ins_are_removed_and_the_host_keeps_its_mounts(tmp_path: Path) -> None:
    private = tmp_path / "private"
    private.mkdir(mode=0o700)
    (private / "file.txt").write_text("one file\n")
    work = tmp_path / "work"
    work.mkdir()
    mounts = Path("/proc/self/mounts").read_text()
    before = set(Path(os.environ.get("TMPDIR", "/tmp")).glob("perfembed-stage-*"))
    ran = run_limited(["/bin/cat", str(private / "file.txt")], cwd=work, limits=LIMITS,
                      read_only=[private / "file.txt"])
    assert ran.stdout == "one file\n", ran.describe()
    assert set(Path(os.environ.get("TMPDIR", "/tmp")).glob("perfembed-stage-*")) == before
    assert Path("/proc/self/mounts").read_text() == mounts


@pytest.mark.skipif(not Path(sys.base_prefix).resolve().is_relative_to("/root"),
                    reason="the interpreter is not below /root here")
def test_the_interpreter_below_root_runs_as_nobody(tmp_path: Path) -> None:
    """The case of the issue: this interpreter, below /root (0700), run in the sandbox."""
    ran = run_limited([sys.executable, "-c", "import os; print(os.getuid())"], cwd=tmp_path, limits=LIMITS,
                      read_only=[Path(sys.prefix), Path(sys.base_prefix)])
    assert ran.stdout.strip() == "65534", ran.describe()
