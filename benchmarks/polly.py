"""Polly, the peer every C benchmark compares with: its compiler, its flags, and whether it can build
an OpenMP program here (checked once, at the start)."""

from __future__ import annotations

import shlex
import shutil
import tempfile
from pathlib import Path

from loopnest.harness.sandbox import Limits, run_working

POLLY_CC = "clang-16"
POLLY_FLAGS = "-O3 -march=native -fopenmp -mllvm -polly -mllvm -polly-parallel"


POLLY_PACKAGES = "Debian: clang-16 libpolly-16-dev libomp-16-dev"
# A program every Polly build of the benchmark needs to compile and link: OpenMP's runtime included.
POLLY_PROBE = """int main(void)
{
    double s = 0.0;
#pragma omp parallel for reduction(+: s)
    for (int i = 0; i < 64; i++)
        s += i;
    return s == 2016.0 ? 0 : 1;
}
"""


def polly_problem(cc: str = POLLY_CC, flags: str = POLLY_FLAGS, limits: Limits | None = None) -> str | None:
    """Why Polly cannot build the benchmark's nests here, or None when it can: ``cc`` is not on PATH,
    or a small OpenMP program built with ``flags`` (in the sandbox, like every build) fails. Found at
    the start, not per nest: with clang-16 but without libomp-16-dev, every one of 15 nests' Polly
    builds failed on ``-lomp`` and the run said so only after 48 minutes."""
    if shutil.which(cc) is None:
        return f"{cc} not found ({POLLY_PACKAGES})"
    with tempfile.TemporaryDirectory(prefix="perfembed-polly-") as tmp:
        work = Path(tmp)
        (work / "probe.c").write_text(POLLY_PROBE)
        res = run_working([cc, *shlex.split(flags), "probe.c", "-o", "probe"], cwd=work,
                          limits=limits or Limits.configured())
    if res.ok:
        return None
    return f"{cc} {flags} cannot build an OpenMP program: {res.describe()} ({POLLY_PACKAGES})"
