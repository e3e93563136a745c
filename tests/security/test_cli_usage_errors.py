"""Issue 10, items 9 and 13 (CLI side): every usage error is one line naming the problem, exit 2,
never a traceback; numbers are bounded; ``--version`` answers.

Runs the installed entry point (``[project.scripts] perfembed = "service.cli:main"``) in a
subprocess, as a user does.
"""

from __future__ import annotations

import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest

from tests.security.cli import COPY_KERNEL, one_line_error, run_perfembed

KERNEL = COPY_KERNEL


def perfembed(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_perfembed(*args, cwd=cwd, columns=100, timeout=120)


@pytest.fixture
def kernel(tmp_path: Path) -> Path:
    path = tmp_path / "copy.c"
    path.write_text(KERNEL)
    return path


@pytest.mark.parametrize(("args", "needles"), [
    (["--bogus"], ["--bogus"]),
    (["nosuchcmd"], ["nosuchcmd"]),
    (["suggest"], ["FILE"]),
    (["analyze"], ["FILE"]),
    (["suggest", "missing.c"], ["missing.c"]),
    (["measure", "missing.c"], ["missing.c"]),
    (["tune", "missing.c"], ["missing.c"]),
    (["apply", "missing.c", "--recipe", "r.json"], ["missing.c"]),
    (["suggest", "{kernel}", "--k", "abc"], ["--k", "abc"]),
    (["suggest", "{kernel}", "--k", "0"], ["--k", "0"]),
    (["suggest", "{kernel}", "--k", "51"], ["--k", "51"]),
    (["suggest", "{kernel}", "--trials", "0"], ["--trials"]),
    (["tune", "{kernel}", "--trials", "100001"], ["--trials"]),
    (["tune", "{kernel}", "--threads", "-1"], ["--threads"]),
    (["measure", "{kernel}", "--threads", "5000"], ["--threads"]),
    (["measure", "{kernel}", "--nest", "-1"], ["--nest"]),
    (["tune", "{kernel}", "--seed", "-3"], ["--seed"]),
    (["worker", "--max-jobs", "0"], ["--max-jobs"]),
    (["serve", "--port", "70000"], ["--port"]),
])
def test_usage_errors_are_one_line_with_exit_2(tmp_path: Path, kernel: Path, args: list[str],
                                               needles: list[str]) -> None:
    proc = perfembed(*(a.replace("{kernel}", str(kernel)) for a in args), cwd=tmp_path)
    line = one_line_error(proc, *needles)
    # Said as an error, and nothing on stdout: a script reading the answer there gets none, not half of one.
    assert line.startswith("error: ") and not proc.stdout.strip(), (line, proc.stdout)


def test_bare_perfembed_prints_help_and_exits_2_as_click_does(tmp_path: Path) -> None:
    proc = perfembed(cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert "Usage" in proc.stdout + proc.stderr and "suggest" in proc.stdout + proc.stderr


def test_version_prints_the_installed_distribution_version(tmp_path: Path) -> None:
    proc = perfembed("--version", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"perfembed {version('perfembed')}"
