"""Compile, run, verify and time the original nest and its variants, each in a sandbox."""

from __future__ import annotations

import os
import shlex
import statistics
import tempfile
import time
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

import numpy as np

from loopnest.codegen import generate_c
from loopnest.codegen.overlap_guard import guarded_c
from loopnest.errors import CompileError, ExecutionError, ParameterError
from loopnest.harness.compare import AcceptancePolicy, Comparison, PairedRuns, PressureMeter
from loopnest.harness.driver import (
    ArrayLayout,
    array_layouts,
    check_parameters,
    check_static_size,
    numpy_dtype,
    static_bytes,
    synthesize_driver,
)
from loopnest.harness.index_data import SparseChoice, index_contents, input_names, write_inputs
from loopnest.harness.progress import StepFn, report_step
from loopnest.harness.sandbox import Limits, RunResult, run_limited, run_working
from loopnest.harness.timing_lock import timed_exclusively, working_beside_timers
from loopnest.ir import Scop
from loopnest.omp_clauses import reorders_reduction
from loopnest.parameters import require_params
from loopnest.polyhedral import Dependence, compute_dependences
from loopnest.transform.recipe import Recipe, apply_recipe

# Relative tolerances by element kind. Legal recipes keep every reduction's order, so outputs differ
# only by the compiler's floating-point contraction; a recipe that reorders a reduction gets the
# looser pair.
TOLERANCE = {"f8": 1e-9, "f4": 1e-4}
REORDERED_TOLERANCE = {"f8": 1e-6, "f4": 1e-3}


@dataclass(frozen=True)
class VariantResult:
    """One compiled program run in the harness: its status, repetition times and compile time."""

    label: str
    status: str  # "ok", "compile-error", "wrong-output", or the sandbox status of the run
    times: tuple[float, ...] = ()
    compile_seconds: float = 0.0
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def median(self) -> float | None:
        return statistics.median(self.times) if self.times else None

    def require_median(self, what: str) -> float:
        """The median of a run that must have worked (``what`` names it in the error).

        A variant perfembed generated that does not compile is :class:`CompileError` (a perfembed bug);
        one that crashed, timed out or ran past a limit is :class:`ExecutionError`.
        """
        if self.status == "compile-error":
            raise CompileError(f"{what}: the generated code did not compile: {self.message}".strip())
        if not self.ok or not self.median:
            raise ExecutionError(f"{what} does not run: {self.status} {self.message}".strip())
        return self.median

    @property
    def spread(self) -> float | None:
        """(max - min) / median of the repetitions."""
        if not self.times:
            return None
        return (max(self.times) - min(self.times)) / max(statistics.median(self.times), 1e-12)

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "median": self.median, "spread": self.spread}


@dataclass(frozen=True)
class Verification:
    verified: bool
    max_rel_error: float
    tolerance: float
    mismatch: str | None = None


@dataclass(frozen=True)
class Evaluation:
    """A recipe's variant run in the harness: its timings, its outputs checked against the original, its speedup."""

    recipe: dict[str, Any]
    variant: VariantResult
    verification: Verification | None
    speedup: float | None

    @property
    def verified(self) -> bool:
        return self.verification is not None and self.verification.verified

    def to_dict(self) -> dict[str, Any]:
        return {"recipe": self.recipe, "variant": self.variant.to_dict(),
                "verification": asdict(self.verification) if self.verification else None,
                "verified": self.verified, "speedup": self.speedup}


BASELINE_RUNS = 2  # processes the baseline is timed in; the faster is kept (Harness.baseline)


@dataclass
class Harness:
    """One nest at fixed parameter values: the baseline is built once (timed twice), variants on demand.

    Use as a context manager; the private working directory is removed on exit.
    """

    scop: Scop
    params: Mapping[str, int]
    reps: int = 5
    threads: int | None = None
    limits: Limits = field(default_factory=Limits.configured)  # PERFEMBED_* settings
    cc: str = "gcc"
    cflags: str = "-O3 -march=native -fopenmp"
    sparse: SparseChoice | None = None  # the structure of the index arrays of a sparse nest (default: uniform)
    # How the kernels reach the nest's variables (loopnest.harness.driver.ARRAY_FORMS): as the source
    # declares them, by default, so the original runs as it does in the user's function.
    form: str = "parameters"
    _tmp: tempfile.TemporaryDirectory[str] | None = None
    _baseline: VariantResult | None = None
    _deps: list[Dependence] | None = None

    def __post_init__(self) -> None:
        self.params = require_params(self.scop.params, self.params, what=self.scop.name, hint="give --param {name}=N")
        check_parameters(self.scop, self.params)
        self.layouts: list[ArrayLayout] = array_layouts(self.scop, self.params)
        # Before the index arrays are generated: their copies in the driver count as well.
        names = input_names(self.scop, self.sparse)
        check_static_size(self.scop, self.params, self.layouts, names)
        total = sum(static_bytes(self.layouts, names))
        if total > self.limits.memory_mb * 1024 * 1024 * 0.8:
            raise ParameterError(f"{self.scop.name}: the arrays need {total / 2**20:.0f} MiB at these parameter "
                                 f"values, over the {self.limits.memory_mb} MiB limit")
        self.threads = self.threads or os.cpu_count() or 1
        self.inputs = index_contents(self.scop, self.params, self.layouts, self.sparse)

    # -- lifecycle -------------------------------------------------------------------------------
    def __enter__(self) -> Harness:
        self._dir()
        return self

    def __exit__(self, *exc: type[BaseException] | BaseException | TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def _dir(self) -> Path:
        if self._tmp is None:
            self._tmp = tempfile.TemporaryDirectory(prefix="perfembed-")
            write_inputs(Path(self._tmp.name), self.layouts, self.inputs)
        return Path(self._tmp.name)

    @property
    def workdir(self) -> Path:
        """The private working directory (``baseline.out`` holds the original's outputs)."""
        return self._dir()

    @property
    def dependences(self) -> list[Dependence]:
        if self._deps is None:
            self._deps = compute_dependences(self.scop)
        return self._deps

    # -- running ---------------------------------------------------------------------------------
    def _working(self) -> AbstractContextManager[None]:
        """Hold the timing lock shared over this harness's own work between its timed runs (isl,
        code generation, compiles, verification), so that another process's timed run never has it
        beside it. Never held while a run is timed or waited for (that converts it), so a caller
        waiting on a child process that times cannot deadlock on it."""
        return working_beside_timers(self.limits.timing_lock)

    def _compile(self, src: Path, exe: Path) -> RunResult:
        return run_working([self.cc, *shlex.split(self.cflags), "-o", str(exe), str(src), "-lm"],
                           cwd=self._dir(), limits=self.limits)

    def _build_and_run(self, label: str, kernel: str, limits: Limits | None = None,
                       on_step: StepFn | None = None, runs: int = 1) -> VariantResult:
        """Compile once, then run ``runs`` times in fresh processes and keep the run of the lowest median."""
        work = self._dir()
        src, exe, out = work / f"{label}.c", work / label, work / f"{label}.out"
        report_step(on_step, "compiling")
        start = time.perf_counter()
        with self._working():
            src.write_text(synthesize_driver(self.scop, kernel, self.params, self.layouts, self.inputs, self.form))
            compiled = self._compile(src, exe)
        compile_s = time.perf_counter() - start
        if not compiled.ok:
            return VariantResult(label, compiled.failure("compile-error"), (), compile_s, compiled.describe())
        args = [str(exe), *(str(self.params[p]) for p in self.scop.params), str(self.reps), str(out)]
        env = {"OMP_NUM_THREADS": str(self.threads)}
        report_step(on_step, "timing")
        best: VariantResult | None = None
        for _ in range(runs):
            with timed_exclusively(self.limits.timing_lock):
                ran = run_limited(args, cwd=work, limits=limits or self.limits, env=env, threads=self.threads or 1)
            if not ran.ok:
                return VariantResult(label, ran.status, (), compile_s, ran.describe())
            result = VariantResult(label, "ok", tuple(float(x) for x in ran.stdout.split()), compile_s)
            if best is None or (result.median or 0.0) < (best.median or 0.0):
                best = result
        assert best is not None
        return best

    def baseline(self, *, on_step: StepFn | None = None) -> VariantResult:
        """The original nest, built once and run in two processes, the faster kept (later calls return it).

        Every speedup :meth:`evaluate` reports divides by this one figure, so a slow outlier here would
        inflate them all: a seed-build study of axpby timed its baseline at 28.6 ms once (4.7 ms when
        re-measured) and stored 14.3x for recipes that measure 0.8-1.4x. Timing noise only slows a run, so
        the faster of two is the safer figure."""
        if self._baseline is None:
            with self._working():
                kernel = generate_c(self.scop)
            self._baseline = self._build_and_run("baseline", kernel, on_step=on_step, runs=BASELINE_RUNS)
        return self._baseline

    def evaluate(self, recipe: Recipe, *, transformed: Scop | None = None,
                 wall_seconds: float | None = None, on_step: StepFn | None = None) -> Evaluation:
        """Apply (legality-checked), generate, compile, run, verify against the baseline and time;
        ``on_step`` hears ``compiling``, ``timing`` and ``verifying`` as they start."""
        base = self.baseline()
        if not base.ok:
            return Evaluation(recipe.to_dict(), VariantResult("variant", "baseline-failed", message=base.message),
                              None, None)
        with self._working():
            scop = transformed or apply_recipe(self.scop, recipe, self.dependences)
            # The tuned branch of the drop-in code (its locals included: the driver's arrays never overlap),
            # or the original's code where the recipe changes nothing, as guarded_c prints them.
            kernel = generate_c(scop, registers=scop != self.scop)
        label = f"variant_{recipe.hash[:12]}"
        limits = self.limits if wall_seconds is None else self.limits.with_wall(wall_seconds)
        result = self._build_and_run(label, kernel, limits, on_step)
        if not result.ok:
            return Evaluation(recipe.to_dict(), result, None, None)
        report_step(on_step, "verifying")
        with self._working():
            check = verify_outputs(self._dir() / "baseline.out", self._dir() / f"{label}.out", self.layouts,
                                   reorders_reduction=reorders_reduction(scop))
        if not check.verified:
            result = VariantResult(label, "wrong-output", result.times, result.compile_seconds,
                                   f"{check.mismatch}: max relative error {check.max_rel_error:.3g}")
            return Evaluation(recipe.to_dict(), result, check, None)
        speedup = (base.median or 0.0) / max(result.median or 0.0, 1e-12)
        return Evaluation(recipe.to_dict(), result, check, speedup)


    def compare(self, recipe: Recipe, *, transformed: Scop | None = None,
                policy: AcceptancePolicy | None = None, on_step: StepFn | None = None) -> Comparison:
        """Baseline and variant interleaved in one driver, in fresh processes, until the speedup's
        interval is clearly above or below the margin; outputs verified from the first run. The variant
        is the drop-in code the user's file gets (:func:`~loopnest.codegen.overlap_guard.guarded_c`: its run-time
        overlap check included), so an accepted figure is one the user's program can have.
        ``on_step`` hears ``compiling``, then ``timing run N`` for each run."""
        policy = policy or AcceptancePolicy()
        base = self.baseline()
        if not base.ok or base.median is None:
            return Comparison(recipe.to_dict(), "baseline-failed", message=base.message)
        work, label = self._dir(), f"pair_{recipe.hash[:12]}"
        src, exe = work / f"{label}.c", work / label
        report_step(on_step, "compiling")
        with self._working():
            scop = transformed or apply_recipe(self.scop, recipe, self.dependences)
            src.write_text(synthesize_driver(self.scop, [generate_c(self.scop), guarded_c(self.scop, scop)],
                                             self.params, self.layouts, self.inputs, self.form))
            compiled = self._compile(src, exe)
        if not compiled.ok:
            return Comparison(recipe.to_dict(), compiled.failure("compile-error"), message=compiled.describe())
        pairs = max(policy.pairs_per_run, 3)
        limits = self.limits.with_wall(policy.run_wall_seconds(base.median, pairs))
        outs = [work / f"{label}.{k}.out" for k in (0, 1)]
        args = [str(exe), *(str(self.params[p]) for p in self.scop.params), str(pairs), *map(str, outs)]
        evidence = PairedRuns(self.threads or 1, policy.confidence, policy.load_threshold, [])
        while True:
            report_step(on_step, f"timing run {evidence.runs + 1}")
            with timed_exclusively(self.limits.timing_lock):
                meter = PressureMeter()
                ran = run_limited(args, cwd=work, limits=limits, env={"OMP_NUM_THREADS": str(self.threads)},
                                  threads=self.threads or 1)
                pressure = meter.stop(os.cpu_count() or 1)
            if ran.status == "wall-time limit":
                return Comparison(recipe.to_dict(), f"stopped at {policy.timeout_factor:g}x the baseline",
                                  message=f"a run took over {limits.wall_seconds:.1f} s")
            if not ran.ok:
                return Comparison(recipe.to_dict(), ran.status, message=ran.describe())
            if evidence.runs == 0:
                with self._working():
                    check = verify_outputs(outs[0], outs[1], self.layouts,
                                           reorders_reduction=reorders_reduction(scop))
                if not check.verified:
                    return Comparison(recipe.to_dict(), "wrong-output",
                                      message=f"{check.mismatch}: max relative error {check.max_rel_error:.3g}")
            evidence.add(ran, pressure)
            speedup = evidence.speedup()
            if policy.decided(speedup):
                return Comparison(recipe.to_dict(), "ok", speedup)


def verify_outputs(expected: Path, actual: Path, layouts: list[ArrayLayout], *,
                   reorders_reduction: bool = False) -> Verification:
    """Compare every written variable of two runs; integers exactly, floats by relative error."""
    table = REORDERED_TOLERANCE if reorders_reduction else TOLERANCE
    want, got = expected.read_bytes(), actual.read_bytes()
    if len(want) != len(got):
        return Verification(False, float("inf"), 0.0, "output size differs")
    offset, worst, worst_tol = 0, 0.0, 0.0
    for lay in layouts:
        if not lay.info.written or lay.info.storage == "region":
            continue
        dtype = numpy_dtype(lay.info.element_type)
        a = np.frombuffer(want, dtype=dtype, count=lay.count, offset=offset)
        b = np.frombuffer(got, dtype=dtype, count=lay.count, offset=offset)
        offset += lay.nbytes
        if dtype.kind != "f":
            if not np.array_equal(a, b):
                return Verification(False, float("inf"), 0.0, lay.info.name)
            continue
        tol = table.get(dtype.str[1:], 1e-9)
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        same_nan = np.isnan(a64) == np.isnan(b64)
        if not same_nan.all():
            return Verification(False, float("inf"), tol, lay.info.name)
        finite = np.isfinite(a64)
        if not np.array_equal(a64[~finite], b64[~finite], equal_nan=True):
            return Verification(False, float("inf"), tol, lay.info.name)
        scale = max(float(np.max(np.abs(a64[finite]))) if finite.any() else 0.0, 1e-300)
        denom = np.maximum(np.abs(a64[finite]), 1e-6 * scale)
        err = float(np.max(np.abs(a64[finite] - b64[finite]) / denom)) if finite.any() else 0.0
        worst, worst_tol = max(worst, err), tol
        if err > tol:
            return Verification(False, err, tol, lay.info.name)
    return Verification(True, worst, worst_tol)


def measure(scop: Scop, recipe: Recipe, params: Mapping[str, int], **options: Any) -> tuple[VariantResult, Evaluation]:
    """Baseline and one variant of ``scop``: the ``perfembed measure`` operation."""
    with Harness(scop, params, **options) as harness:
        return harness.baseline(), harness.evaluate(recipe)

