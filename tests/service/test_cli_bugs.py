"""A bug of perfembed's own reaches a CLI user as one line that asks for a report, exit 1, not a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Any command whose code raises an exception nobody anticipated (here: the command itself).
FAILING = (
    "import sys\n"
    "import typer\n"
    "import service.cli as cli\n"
    "def broken(*args, **kwargs):\n"
    "    raise RuntimeError('the index is inside out')\n"
    "typer.main.get_command = lambda app: type('Command', (), {'main': staticmethod(broken)})()\n"
    "sys.argv = ['perfembed', 'db', 'status']\n"
    "cli.main()\n"
)


def _run(**env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", FAILING], cwd=ROOT, capture_output=True, text=True, check=False,
                          env={**os.environ, "COLUMNS": "300", **env}, timeout=120)


def test_an_unexpected_exception_is_one_line_asking_for_a_report() -> None:
    done = _run()
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert "RuntimeError: the index is inside out" in lines[0] and "please report it" in lines[0]


def test_the_traceback_is_printed_on_request() -> None:
    done = _run(PERFEMBED_TRACEBACK="1")
    assert done.returncode == 1
    assert "Traceback" in done.stderr and "please report it" in done.stderr
