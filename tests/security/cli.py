"""Running the installed ``perfembed`` entry point as a user would, for the CLI's regression tests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ENTRY = Path(sys.executable).with_name("perfembed")
COPY_KERNEL = "void copy(int n, double A[n], double B[n]) {\n  for (int i = 0; i < n; i++)\n    A[i] = B[i];\n}\n"


def run_perfembed(*args: str, cwd: Path, columns: int = 200, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``perfembed ARGS`` in ``cwd`` with its own data directory and no ``PERFEMBED_SERVER``."""
    env = {**os.environ, "PERFEMBED_DATA_DIR": str(cwd / "data"), "COLUMNS": str(columns)}
    env.pop("PERFEMBED_SERVER", None)
    return subprocess.run([str(ENTRY), *args], capture_output=True, text=True, timeout=timeout, check=False,
                          cwd=cwd, env=env)


def error_lines(proc: subprocess.CompletedProcess[str], *, code: int = 2) -> list[str]:
    """The non-blank stderr lines of a command that must have exited with ``code``, without a traceback."""
    output = proc.stdout + proc.stderr
    assert proc.returncode == code, output
    assert "Traceback" not in output, output
    return [line for line in proc.stderr.splitlines() if line.strip()]


def one_line_error(proc: subprocess.CompletedProcess[str], *needles: str, code: int = 2) -> str:
    """The one stderr line of such a command; each of ``needles`` must be in it (in any case)."""
    lines = error_lines(proc, code=code)
    assert len(lines) == 1, proc.stdout + proc.stderr
    for needle in needles:
        assert needle.lower() in lines[0].lower(), lines[0]
    return lines[0]
