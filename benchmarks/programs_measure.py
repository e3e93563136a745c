"""Build a program of the suite three ways and time the builds interleaved, whole process by whole process.

Each variant is the program's own ``make`` in a scratch copy of the suite (the program and ``common/``):
the original (gcc), the file perfembed wrote swapped in (gcc, same flags) and the original through
clang-16 + Polly. Every round runs each variant once, in a rotating order, with ``OMP_NUM_THREADS`` the
benchmark's threads; a run's time is the program's whole process wall time, taken inside the sandbox as
suggest's whole-program check takes it (the sandbox's own start, 10-30 ms, left out: it cut a 0.05 s tuned
gemm's ratio from 19x to 16x); the program's own kernel time, on stderr, is kept beside it. Every run's
stdout (the checksum) must be the original's: a variant that prints anything else is a wrong output and
gets no speedup. Ratios are the geometric mean of the rounds' ratios with a bootstrap interval
(:func:`loopnest.harness.compare.interval`).
"""

from __future__ import annotations

import math
import re
import shlex
import shutil
import statistics
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks.programs_suite import GCC, GCC_FLAGS, Program, make_args
from loopnest.harness.compare import interval
from loopnest.harness.program import timed_inside
from loopnest.harness.sandbox import Limits, RunResult, run_working, share_with_sandbox
from loopnest.harness.timing_lock import timed_exclusively

CONFIDENCE = 0.95
KERNEL_TIME = re.compile(r":\s*([0-9.eE+-]+)\s*s\s*$", re.MULTILINE)


@dataclass
class Variant:
    """One build of a program: where it is, what became of it and its runs (None: not run that round)."""

    name: str
    root: Path | None = None
    status: str = "pending"  # pending | built | skipped | build-failed | failed | wrong-output
    reason: str = ""
    command: str = ""
    walls: list[float | None] = field(default_factory=list)
    kernels: list[float | None] = field(default_factory=list)
    checksum: str | None = None

    @property
    def active(self) -> bool:
        return self.status == "built"

    def fail(self, status: str, reason: str) -> None:
        self.status, self.reason = status, reason

    def summary(self) -> dict[str, Any]:
        walls = [w for w in self.walls if w is not None]
        kernels = [k for k in self.kernels if k is not None]
        return {"status": "ok" if self.active else self.status, "reason": self.reason, "command": self.command,
                "checksum": self.checksum, "runs": len(walls),
                "median_seconds": statistics.median(walls) if walls else None,
                "median_kernel_seconds": statistics.median(kernels) if kernels else None,
                "walls": [None if w is None else round(w, 4) for w in self.walls],
                "kernels": self.kernels}


def scratch_copy(program: Program, dest: Path, replacement: str | None = None) -> Path:
    """``dest`` holding a copy of the program and ``common/`` (no build outputs), with the kernel file's
    text replaced by ``replacement`` when given; its parent must let others through (mode 0755)."""
    skip = shutil.ignore_patterns("build", "*.o", program.name)
    for part in ("common", program.name):
        shutil.copytree(program.suite / part, dest / part, ignore=skip)
    if replacement is not None:
        (dest / program.name / program.kernel_file).write_text(replacement)
    dest.chmod(0o755)
    share_with_sandbox([dest])  # where the sandbox runs as nobody, make writes into the program's folder
    return dest


def build_variant(program: Program, name: str, dest: Path, *, dataset: str, limits: Limits, cc: str = GCC,
                  cflags: str = GCC_FLAGS, replacement: str | None = None) -> Variant:
    """Copy the suite to ``dest`` and build the program there with its Makefile; a ``build-failed`` variant
    carries the compiler's first error."""
    args = make_args(program, dataset, cc, cflags)
    variant = Variant(name, root=scratch_copy(program, dest, replacement), command=shlex.join(args))
    result = run_working(args, cwd=dest, limits=limits)
    if not result.ok:
        variant.fail("build-failed", first_error(result))
    elif not (dest / program.name / program.name).is_file():
        variant.fail("build-failed", f"make left no ./{program.name}")
    else:
        variant.status = "built"
    return variant


def first_error(result: RunResult) -> str:
    """The first line that says ``error``, else the last line of the output, else the status."""
    lines = [line.strip() for line in (result.stderr + "\n" + result.stdout).splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines[-1:] or [result.describe()])[0][:400]


def run_once(program: Program, variant: Variant, threads: int, limits: Limits) -> RunResult:
    """One timed run of ``variant``'s program in its folder, alone on the machine's timing lock."""
    assert variant.root is not None
    with timed_exclusively(limits.timing_lock):
        return timed_inside(shlex.split(program.run), cwd=variant.root / program.name, limits=limits,
                            env={"OMP_NUM_THREADS": str(threads)}, threads=threads, read_only=[])


def kernel_seconds(stderr: str) -> float | None:
    """The kernel time the program printed on stderr (``<prog> (<dataset>): <seconds> s``)."""
    found = KERNEL_TIME.findall(stderr)
    try:
        return float(found[-1]) if found else None
    except ValueError:
        return None


def record(variant: Variant, result: RunResult, reference: str | None) -> str | None:
    """Note one run of ``variant``; the reference checksum (the first original run's stdout)."""
    if not result.ok:
        variant.fail("failed", result.describe())
        return reference
    out = result.stdout.strip()
    variant.checksum = variant.checksum or out
    if reference is not None and out != reference:
        variant.fail("wrong-output", f"stdout {out!r}, the original printed {reference!r}")
        return reference
    variant.walls[-1] = result.wall_seconds
    variant.kernels[-1] = kernel_seconds(result.stderr)
    return out if reference is None else reference


def interleave(program: Program, variants: list[Variant], rounds: int, threads: int, limits: Limits,
               on_round: Callable[[int], None] | None = None) -> None:
    """``rounds`` rounds of every built variant, rotating the order; the first is the original, whose first
    run's stdout every run must print."""
    reference: str | None = None
    for r in range(rounds):
        order = [v for v in variants[r % len(variants):] + variants[:r % len(variants)] if v.active]
        if r == 0 or reference is None:
            order = [v for v in variants if v.active]  # the original first: its output is the reference
        for variant in variants:
            variant.walls.append(None)
            variant.kernels.append(None)
        for variant in order:
            reference = record(variant, run_once(program, variant, threads, limits), reference)
        if not variants[0].active:
            return
        if on_round is not None:
            on_round(r)


def paired_ratio(base: Variant, other: Variant) -> dict[str, Any] | None:
    """``other``'s speedup over ``base`` (base time / other time): the geometric mean of the rounds'
    ratios and its bootstrap interval; None unless both ran and printed the original's output."""
    if not (base.active and other.active):
        return None
    logs = [math.log(a / b) for a, b in zip(base.walls, other.walls, strict=True)
            if a is not None and b is not None and a > 0 and b > 0]
    if not logs:
        return None
    ratio, low, high = interval(logs, CONFIDENCE)
    return {"ratio": ratio, "low": low, "high": high if math.isfinite(high) else None, "pairs": len(logs),
            "confidence": CONFIDENCE, "text": ratio_text(ratio, low, high)}


def ratio_text(ratio: float, low: float, high: float) -> str:
    span = f"[{low:.2f}, {high:.2f}]" if math.isfinite(high) else "[no interval: under 3 rounds]"
    return f"{ratio:.2f}x {span}"
