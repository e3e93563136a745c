"""Speedups that hold up: the baseline and a variant timed interleaved in one process, repeated in
fresh processes until the speedup's confidence interval is clearly above or below the margin.

One driver holds both kernels and runs them alternately (AB BA AB ...), each from fresh inputs, so
both see the same process, caches, frequency and load; a pair's ratio cancels what drifts between
pairs. The interval is a bootstrap interval (scipy) of the geometric mean of the pair ratios. A run
that passes ``timeout_factor`` times the baseline's time is stopped and reported as such, so a busy
machine slows a comparison down instead of failing it. The machine's CPU pressure (Linux PSI, or
runnable tasks where PSI is missing) is sampled around every run and recorded with the result.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import bootstrap

from loopnest.config import thread_placement
from loopnest.harness.sandbox import RunResult

PSI_CPU = Path("/proc/pressure/cpu")


@dataclass(frozen=True)
class Speedup:
    """baseline time / variant time, from ``pairs`` interleaved pairs in ``runs`` fresh processes."""

    ratio: float  # geometric mean of the pair ratios
    low: float
    high: float
    confidence: float
    pairs: int
    runs: int
    threads: int
    cpu_pressure: float  # share of the measurement's wall time some task waited for a CPU
    loaded: bool  # the pressure was above the threshold: not a clean result
    # Where the threads ran: "unpinned" (the OS places them; OMP_PROC_BIND is unset), or the CPUs a
    # pinned worker (PERFEMBED_WORKER_THREADS) or a cpuset confined them to.
    placement: str = field(default_factory=thread_placement)

    def above(self, margin: float) -> bool:
        return self.low > margin

    def below(self, margin: float) -> bool:
        return self.high < margin

    def describe(self) -> str:
        text = (f"{self.ratio:.2f}x [{self.low:.2f}, {self.high:.2f}] ({self.confidence:.0%}, {self.pairs} pairs "
                f"in {self.runs} runs, {self.threads} thread{'s' if self.threads != 1 else ''}, {self.placement})")
        return text + (f", machine busy ({self.cpu_pressure:.0%} CPU pressure)" if self.loaded else "")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "text": self.describe()}


def interval(log_ratios: list[float], confidence: float) -> tuple[float, float, float]:
    """Geometric-mean ratio and its bootstrap interval; infinite while there are under 3 pairs."""
    mean = float(np.mean(log_ratios)) if log_ratios else 0.0
    if len(log_ratios) < 3:
        return math.exp(mean), 0.0, math.inf
    if float(np.ptp(log_ratios)) == 0.0:
        return math.exp(mean), math.exp(mean), math.exp(mean)
    result = bootstrap((np.asarray(log_ratios),), np.mean, confidence_level=confidence, n_resamples=2000,
                       method="percentile", rng=np.random.default_rng(0))
    return math.exp(mean), math.exp(result.confidence_interval.low), math.exp(result.confidence_interval.high)


def kernel_times(stdout: str, kernels: int) -> list[list[float]]:
    """Each kernel's repetition times from a multi-kernel driver's ``KERNEL TIME`` lines (at least 1 ns)."""
    times: list[list[float]] = [[] for _ in range(kernels)]
    for line in stdout.splitlines():
        kernel, seconds = line.split()
        times[int(kernel)].append(max(float(seconds), 1e-9))
    return times


def pair_log_ratios(stdout: str) -> list[float]:
    """log(baseline / variant) of each repetition of a two-kernel driver's ``KERNEL TIME`` lines."""
    baseline, variant = kernel_times(stdout, 2)
    return [math.log(a / b) for a, b in zip(baseline, variant, strict=False)]


class PressureMeter:
    """CPU pressure over a window: PSI's "some" stall time where the kernel has it, else the share of
    other runnable tasks sampled at the window's ends."""

    def __init__(self) -> None:
        self._start = time.monotonic()
        self._psi = self._psi_total()
        self._runnable = self._other_runnable()

    @staticmethod
    def _psi_total() -> float | None:
        try:
            first = PSI_CPU.read_text().splitlines()[0]
        except (OSError, IndexError):
            return None
        return float(dict(f.split("=") for f in first.split()[1:])["total"])

    @staticmethod
    def _other_runnable() -> int:
        try:
            for line in Path("/proc/stat").read_text().splitlines():
                if line.startswith("procs_running"):
                    return max(0, int(line.split()[1]) - 1)  # less this process
        except OSError:
            pass  # no /proc (not Linux): nothing is known to compete, as on an idle machine
        return 0

    def stop(self, cores: int) -> float:
        wall = max(time.monotonic() - self._start, 1e-6)
        psi = self._psi_total()
        if psi is not None and self._psi is not None:
            return min(1.0, (psi - self._psi) / 1e6 / wall)
        return min(1.0, max(self._runnable, self._other_runnable()) / max(cores, 1))


@dataclass
class PairedRuns:
    """The evidence gathered so far for one baseline/variant pair."""

    threads: int
    confidence: float
    load_threshold: float
    log_ratios: list[float]
    runs: int = 0
    pressure: float = 0.0

    def add(self, result: RunResult, pressure: float) -> None:
        self.log_ratios += pair_log_ratios(result.stdout)
        self.runs += 1
        self.pressure = max(self.pressure, pressure)

    def speedup(self) -> Speedup:
        ratio, low, high = interval(self.log_ratios, self.confidence)
        return Speedup(ratio, low, high, self.confidence, len(self.log_ratios), self.runs, self.threads,
                       round(self.pressure, 3), self.pressure > self.load_threshold)


@dataclass(frozen=True)
class AcceptancePolicy:
    """When a speedup counts: its interval must clear ``margin`` at ``confidence``."""

    margin: float = 1.1
    confidence: float = 0.95
    pairs_per_run: int = 5
    max_pairs: int = 40
    timeout_factor: float = 3.0  # a run is stopped at this multiple of the baseline's time
    load_threshold: float = 0.25  # CPU pressure above which a measurement is flagged as taken under load
    min_runs: int = 1  # fresh processes before a decision (a benchmark's re-measurement asks for 10)

    @classmethod
    def from_settings(cls, settings: object) -> AcceptancePolicy:
        return cls(margin=getattr(settings, "min_speedup", cls.margin),
                   confidence=getattr(settings, "confidence", cls.confidence),
                   timeout_factor=getattr(settings, "timeout_factor", cls.timeout_factor),
                   load_threshold=getattr(settings, "load_threshold", cls.load_threshold))

    def run_wall_seconds(self, baseline_seconds: float, pairs: int) -> float:
        """One paired run: warm-up, ``pairs`` pairs and two output runs, the variant at most
        ``timeout_factor`` x the baseline, plus a floor for process start-up."""
        return 2.0 + (pairs + 2) * baseline_seconds * (1.0 + self.timeout_factor)

    def decided(self, speedup: Speedup) -> bool:
        if speedup.runs < self.min_runs:
            return False
        return speedup.above(self.margin) or speedup.below(self.margin) or speedup.pairs >= self.max_pairs


@dataclass(frozen=True)
class Comparison:
    """A variant compared with its baseline in paired runs; ``speedup`` is set when it verified."""

    recipe: dict[str, Any]
    status: str  # "ok", "compile-error", "wrong-output", "stopped at 3x the baseline", or a sandbox status
    speedup: Speedup | None = None
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.speedup is not None

    def to_dict(self) -> dict[str, Any]:
        return {"recipe": self.recipe, "status": self.status, "message": self.message,
                "speedup": None if self.speedup is None else self.speedup.to_dict()}
