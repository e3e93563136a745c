"""Generated programs run under limits; a crash, hang or runaway output is reported, not measured."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from loopnest.harness.sandbox import Limits, run_limited

PROGRAMS = {
    "hang": "int main(void) { volatile int x = 0; for (;;) x++; }",
    "crash": "int main(void) { volatile int *p = 0; return *p; }",
    "output": '#include <stdio.h>\nint main(void) { for (;;) fputs("xxxxxxxxxxxxxxxx", stderr); }',
    "memory": "#include <stdlib.h>\n#include <string.h>\n"
              "int main(void) { char *p = malloc(1L << 31); if (!p) return 3; memset(p, 1, 1L << 31); return 0; }",
}


@pytest.mark.parametrize("name, status", [("hang", "wall-time limit"), ("crash", "crashed (SIGSEGV)"),
                                          ("memory", "failed")])
def test_limits_are_enforced(tmp_path: Path, name: str, status: str) -> None:
    src = tmp_path / f"{name}.c"
    src.write_text(PROGRAMS[name])
    subprocess.run(["gcc", "-O0", "-o", str(tmp_path / name), str(src)], check=True)
    limits = Limits(cpu_seconds=5, memory_mb=512, output_mb=1, wall_seconds=1.0)
    result = run_limited([str(tmp_path / name)], cwd=tmp_path, limits=limits)
    assert result.status == status


def test_output_size_limit(tmp_path: Path) -> None:
    src = tmp_path / "out.c"
    src.write_text('#include <stdio.h>\nint main(void) { FILE *f = fopen("big", "w"); '
                   'for (long i = 0; i < 100000000; i++) fputc(65, f); return 0; }')
    subprocess.run(["gcc", "-O0", "-o", str(tmp_path / "out"), str(src)], check=True)
    result = run_limited([str(tmp_path / "out")], cwd=tmp_path,
                         limits=Limits(cpu_seconds=5, memory_mb=512, output_mb=1, wall_seconds=10))
    assert result.status == "output-size limit"


def test_a_harness_built_without_limits_takes_them_from_the_settings(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Reproduction: ``Harness(scop, params)`` had ``Limits()``, the built-in defaults, whatever
    ``PERFEMBED_SANDBOX``, ``PERFEMBED_TIMING_LOCK`` or the resource limits said; a notebook or a
    benchmark that built one without ``limits=`` ran outside the operator's sandbox and lock."""
    from loopnest import Harness, extract_scops
    from loopnest.config import get_settings

    source = tmp_path / "axpy.c"
    source.write_text("void axpy(int n, double a, double x[n], double y[n])\n"
                      "{\n    for (int i = 0; i < n; i++)\n        y[i] += a * x[i];\n}\n")
    scop = extract_scops(source).scops[0]
    monkeypatch.setenv("PERFEMBED_SANDBOX", "none")
    monkeypatch.setenv("PERFEMBED_TIMING_LOCK", str(tmp_path / "timing.lock"))
    monkeypatch.setenv("PERFEMBED_WALL_TIME_LIMIT_S", "7")
    get_settings.cache_clear()
    try:
        limits = Harness(scop, {"n": 16}).limits
    finally:
        get_settings.cache_clear()
    assert (limits.sandbox, limits.timing_lock, limits.wall_seconds) == ("none", str(tmp_path / "timing.lock"), 7.0)
