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
