"""Issue 10, item 11: rejected nests in ``suggest``, ``measure`` and ``tune`` are reported as
``analyze`` reports them (``file:line: message`` on stderr), with exit 2 when nothing is
supported; an empty file or a file without loops says so in one line."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.security.cli import error_lines, run_perfembed

REJECTED = """void f(int n, double *A, int idx[n]) {
  for (int i = 0; i < n; i++)
    A[idx[i]] = 1.0;
}
"""
SUPPORTED = """void g(int n, double B[n]) {
  for (int i = 0; i < n; i++)
    B[i] = 2.0;
}
"""
COMMANDS = ["suggest", "measure", "tune", "analyze"]


def perfembed(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_perfembed(*args, cwd=cwd, columns=200, timeout=300)


@pytest.mark.parametrize("command", COMMANDS)
@pytest.mark.parametrize("text", ["", "int f(int x) { return x + 1; }\n"], ids=["empty", "no-loop"])
def test_a_file_without_loops_says_so_in_one_line(tmp_path: Path, command: str, text: str) -> None:
    path = tmp_path / "plain.c"
    path.write_text(text)
    proc = perfembed(command, str(path), "--param", "n=100", cwd=tmp_path)
    assert error_lines(proc) == [f"error: {path}: no loop nest found"], proc.stdout + proc.stderr


@pytest.mark.parametrize("command", COMMANDS)
def test_a_file_whose_only_nest_is_rejected_names_it_and_exits_2(tmp_path: Path, command: str) -> None:
    path = tmp_path / "indirect.c"
    path.write_text(REJECTED)
    proc = perfembed(command, str(path), "--param", "n=100", cwd=tmp_path)
    output = proc.stdout + proc.stderr
    error_lines(proc)
    assert f"rejected {path}:3" in proc.stderr and "indirect subscript" in proc.stderr, output
    assert f"{path}: no supported loop nest (1 rejected)" in proc.stderr, output


def test_json_output_carries_the_rejected_regions(tmp_path: Path) -> None:
    path = tmp_path / "indirect.c"
    path.write_text(REJECTED)
    proc = perfembed("measure", str(path), "--param", "n=100", "--json", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    data = json.loads(proc.stdout)
    assert data["error"] == "NoLoopNestError" and data["rejected"][0]["location"]["line"] == 3


def test_suggest_reports_rejected_regions_beside_supported_ones(tmp_path: Path) -> None:
    path = tmp_path / "mixed.c"
    path.write_text(REJECTED + SUPPORTED)
    proc = perfembed("suggest", str(path), "--param", "n=100", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"rejected {path}:3" in proc.stderr and "indirect subscript" in proc.stderr
    assert "mixed.c#0 (function g, nest 0)" in proc.stdout
