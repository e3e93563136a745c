"""How the peak and sparse benchmarks time one kernel: every variant on the same inputs, interleaved, verified.

Every C variant is perfembed's measurement driver (:func:`loopnest.harness.synthesize_driver`) around
one kernel text, so all of them allocate the same arrays and fill them with the same pseudo-random
values: the gcc baseline is the nest as perfembed generates its baseline, in the user's form (the
arrays passed as the function declares them, the form the tuning harness times, README "What the
harness times"); Polly compiles that same program with clang-16; perfembed's recipes are the baseline's
nest transformed, as the drop-in code the user's file gets (its run-time overlap check included). The
library arms, numpy (OpenBLAS) and MKL, run on the very same input values (dumped by the driver), each
round in a fresh process of their own (``benchmarks/lib_arms.py``); scipy.sparse runs in this process.

A round runs each variant once, each C variant in a fresh sandboxed process (one untimed warm-up call,
then one timed call from freshly initialized inputs, or the median of ``KernelRun.reps`` of them); the
order rotates every round. A sparse nest's index arrays come from the run's inputs file, the same for
every variant. Outputs of the first round are checked against the gcc baseline's with perfembed's own
tolerances, and a variant whose outputs differ keeps its timings but is marked wrong.
"""

from __future__ import annotations

import dataclasses
import functools
import os
import re
import shlex
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from threadpoolctl import threadpool_limits

from benchmarks.polly import POLLY_CC, POLLY_FLAGS
from loopnest.harness import ArrayLayout, Limits, Verification, run_limited, synthesize_driver, verify_outputs
from loopnest.harness.driver import numpy_dtype
from loopnest.harness.index_data import write_inputs
from loopnest.harness.timing_lock import timed_exclusively, working_beside_timers
from loopnest.ir import Scop

DRIVER_FORM = "parameters"  # every C variant in the user's form (loopnest.harness.driver.ARRAY_FORMS)

Arrays = dict[str, np.ndarray]


@dataclass
class Variant:
    """One way to compute the kernel and what happened to it in this run."""

    name: str  # "gcc", "polly", "perfembed", "numpy", ...
    exe: Path | None = None  # a C variant's driver; None for numpy
    reorders: bool = False  # verified with the tolerance for reordered reductions
    loose_retry: bool = False  # another compiler: retry with that tolerance (floating-point contraction)
    times: list[float] = field(default_factory=list)
    status: str = "ok"
    message: str = ""
    verification: Verification | None = None
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status in ("ok", "wrong-output")

    def fail(self, status: str, message: str) -> None:
        self.status, self.message, self.times = status, message[:400], []

    def summary(self, work: float, unit: float) -> dict[str, Any]:
        """Times and rates (``work / time / unit``): median, and the range over the repetitions."""
        row: dict[str, Any] = {"status": self.status, "message": self.message, **self.info,
                               "verified": self.verification.verified if self.verification else None,
                               "max_rel_error": self.verification.max_rel_error if self.verification else None,
                               "times_s": list(self.times)}
        if self.times and self.ok:
            median = statistics.median(self.times)
            row.update(median_s=median, rate=work / median / unit, rate_low=work / max(self.times) / unit,
                       rate_high=work / min(self.times) / unit)
        return row


@dataclass
class KernelRun:
    """One kernel at fixed sizes in a private working folder.

    ``contents`` are the index arrays of a sparse nest (:func:`loopnest.harness.index_data.index_contents`):
    written to the folder's inputs file, which every driver of this run reads them from. ``reps`` timed
    calls per process (after the warm-up call): the round's time is their median."""

    scop: Scop
    params: Mapping[str, int]
    layouts: list[ArrayLayout]
    workdir: Path
    limits: Limits
    threads: int
    cc: str = "gcc"
    cflags: str = "-O3 -march=native -fopenmp"
    contents: Mapping[str, np.ndarray] = field(default_factory=dict)
    reps: int = 1
    # How the kernel reaches its variables (loopnest.harness.driver.ARRAY_FORMS): the user's form, as the
    # tuning harness times it, so a recipe is measured in the form it was chosen in (the static-array form
    # ranks recipes differently: conv2d's tuned recipe 36 GFLOP/s in the user's form, 8 in static arrays).
    form: str = DRIVER_FORM

    def __post_init__(self) -> None:
        if self.contents:
            write_inputs(self.workdir, self.layouts, self.contents)

    def args(self, exe: Path, reps: int, out: Path) -> list[str]:
        return [str(exe), *(str(self.params[p]) for p in self.scop.params), str(reps), str(out)]

    def out(self, name: str) -> Path:
        return self.workdir / f"{_slug(name)}.out"

    def source(self, name: str, kernel_text: str, layouts: list[ArrayLayout] | None = None) -> tuple[Path, Path]:
        """The driver around ``kernel_text`` written to NAME.c; (source, executable path)."""
        slug = _slug(name)
        src, exe = self.workdir / f"{slug}.c", self.workdir / slug
        src.write_text(synthesize_driver(self.scop, kernel_text, self.params, layouts or self.layouts,
                                         inputs=tuple(self.contents), forms=self.form))
        return src, exe

    def compile(self, variant: Variant, command: list[str]) -> bool:
        """Run one compile step in the sandbox; a failure marks ``variant`` and returns False."""
        with working_beside_timers(self.limits.timing_lock):  # not beside another process's timed run
            done = run_limited(command, cwd=self.workdir, limits=self.limits)
        if not done.ok:
            variant.fail("compile-error", done.describe())
        return done.ok

    def build(self, name: str, kernel_text: str, *, layouts: list[ArrayLayout] | None = None) -> Variant:
        """A variant: the driver around ``kernel_text`` compiled with perfembed's compiler and flags."""
        src, exe = self.source(name, kernel_text, layouts)
        variant = Variant(name, exe)
        self.compile(variant, [self.cc, *shlex.split(self.cflags), "-o", str(exe), str(src), "-lm"])
        return variant

    def run_once(self, variant: Variant) -> None:
        """One fresh process: a warm-up call, then ``reps`` timed calls; their median is appended."""
        assert variant.exe is not None
        with timed_exclusively(self.limits.timing_lock):  # no tuning trial or other timed run beside it
            done = run_limited(self.args(variant.exe, self.reps, self.out(variant.name)), cwd=self.workdir,
                               limits=self.limits, env={"OMP_NUM_THREADS": str(self.threads)}, threads=self.threads)
        if not done.ok:
            variant.fail(done.status, done.describe())
            return
        try:
            times = [float(t) for t in done.stdout.split()[: self.reps]]
        except ValueError:
            times = []
        if len(times) < self.reps:
            variant.fail("failed", f"the driver printed {len(times)} of {self.reps} times: {done.stdout[:200]!r}")
            return
        variant.times.append(statistics.median(times))


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]", "_", name)


def load_inputs(run: KernelRun) -> Arrays:
    """Every variable's initial value as the driver sets it (a driver with an empty kernel dumps them all)."""
    everything = [dataclasses.replace(lay, info=dataclasses.replace(lay.info, written=True))
                  for lay in run.layouts if lay.info.storage != "region"]
    probe = run.build("inputs", "{}", layouts=everything)
    if not probe.ok:
        raise RuntimeError(f"the input driver did not compile: {probe.message}")
    path = run.out("inputs")
    done = run_limited(run.args(probe.exe, 0, path), cwd=run.workdir, limits=run.limits)  # type: ignore[arg-type]
    if not done.ok:
        raise RuntimeError(f"the input driver failed: {done.describe()}")
    data, arrays, offset = path.read_bytes(), {}, 0
    for lay in everything:
        dtype = numpy_dtype(lay.info.element_type)
        flat = np.frombuffer(data, dtype=dtype, count=lay.count, offset=offset)
        arrays[lay.info.name] = flat.reshape(lay.extents).copy()
        offset += lay.nbytes
    return arrays


def dump_outputs(arrays: Arrays, layouts: Sequence[ArrayLayout], path: Path) -> None:
    """The written variables in the driver's output format (its order, its element types)."""
    with path.open("wb") as fh:
        for lay in layouts:
            if lay.info.written and lay.info.storage != "region":
                fh.write(np.ascontiguousarray(arrays[lay.info.name], dtype=numpy_dtype(lay.info.element_type))
                         .tobytes())


def build_polly(run: KernelRun, kernel_text: str) -> Variant:
    """The baseline's driver through Polly, in two steps: clang-16 with the Polly flags to LLVM IR (where
    Polly runs, and where :func:`polly_codegen` reads what it did), then code generation from that IR
    without running the optimizer again (``-disable-llvm-optzns``), so Polly's costly pass runs once.
    The machine code equals a one-step build up to register allocation."""
    src, exe = run.source("polly", kernel_text)
    ir = run.workdir / "polly.ll"
    variant = Variant("polly", exe, loose_retry=True)
    backend = [f for f in shlex.split(POLLY_FLAGS) if f not in ("-mllvm",) and not f.startswith("-polly")]
    if run.compile(variant, [POLLY_CC, *shlex.split(POLLY_FLAGS), "-fno-discard-value-names", "-S", "-emit-llvm",
                             "-o", str(ir), str(src)]) and \
            run.compile(variant, [POLLY_CC, *backend, "-Xclang", "-disable-llvm-optzns", "-o", str(exe), str(ir),
                                  "-lm"]):
        variant.info["codegen"] = polly_codegen(ir.read_text(errors="replace"))
    return variant


def polly_codegen(ir: str) -> dict[str, Any]:
    """What Polly did to the driver program, from its LLVM IR: code of its own at all, BLIS-style packing
    (its matrix-multiplication pattern), OpenMP-parallel subfunctions. (The kernel is the only nest of
    the driver that Polly could pack or parallelize.)"""
    return {"polly_code": "polly." in ir, "packed": "Packed_" in ir, "parallel": "_polly_subfn" in ir}


def numpy_variant(impl: Callable[[Arrays], None], inputs: Arrays, run: KernelRun, *, name: str = "numpy",
                  threads: int | None = None) -> tuple[Variant, Callable[[], None]]:
    """A twin in this process (scipy.sparse, single-threaded) on ``inputs``: one untimed call whose outputs
    are dumped for verification, then per round one untimed warm-up call and the median of ``run.reps``
    timed calls (each on a fresh copy, the copy not timed), under ``threads`` BLAS threads (default
    ``run.threads``), a limit set once and held.

    Not for a multi-threaded BLAS: every C variant's sandboxed process is forked from this one, and
    OpenBLAS's fork handler shuts its thread pools down each time; the pools that come back (at the next
    call, or when a thread limit is set again) busy-wait for about 0.1 s, and so a timed call here shared
    its cores with them (numpy's gemm 2x slower than alone, ``docs/benchmarks/peak.md``). numpy and MKL
    run in a fresh process of their own instead (``benchmarks/lib_arms.py``)."""
    variant = Variant(name, reorders=True)
    threadpool_limits(limits=run.threads if threads is None else threads, user_api="blas")

    def call() -> tuple[Arrays, float]:
        arrays = {k: v.copy() for k, v in inputs.items()}
        start = time.perf_counter()
        impl(arrays)
        return arrays, time.perf_counter() - start

    try:
        dump_outputs(call()[0], run.layouts, run.out(name))
    except Exception as exc:  # a broken twin is reported in its row, not fatal to the benchmark
        variant.fail("failed", f"{type(exc).__name__}: {exc}")

    def timed() -> None:
        try:
            with timed_exclusively(run.limits.timing_lock):
                call()
                variant.times.append(statistics.median(call()[1] for _ in range(run.reps)))
        except Exception as exc:
            variant.fail("failed", f"{type(exc).__name__}: {exc}")

    return variant, timed


def verify(run: KernelRun, reference: Variant, variant: Variant) -> None:
    """``variant``'s outputs against ``reference``'s; outputs that differ mark it wrong (timings kept)."""
    want, got = run.out(reference.name), run.out(variant.name)
    check = verify_outputs(want, got, run.layouts, reorders_reduction=variant.reorders)
    if not check.verified and variant.loose_retry and not variant.reorders:
        loose = verify_outputs(want, got, run.layouts, reorders_reduction=True)
        if loose.verified:
            check = loose
            variant.info["tolerance"] = "reordered-reduction"
    variant.verification = check
    if not check.verified:
        variant.status = "wrong-output"
        variant.message = (f"{check.mismatch} differs from the gcc baseline: max relative error "
                           f"{check.max_rel_error:.3g}")


def interleave(run: KernelRun, variants: Sequence[Variant], rounds: int,
               extra: Sequence[tuple[Variant, Callable[[], None] | None]] = ()) -> None:
    """``rounds`` rounds of one timed call per variant, in an order rotating every round; outputs of the
    first round verified against the first variant's (the gcc baseline). ``extra``: variants with a call
    of their own (a library arm, a twin in this process); one without a call is not measured."""
    slots: list[tuple[Variant, Callable[[], None]]] = [(v, functools.partial(run.run_once, v))
                                                        for v in variants if v.ok]
    slots += [(variant, call) for variant, call in extra if call is not None and variant.ok]
    for r in range(rounds):
        shift = r % max(len(slots), 1)
        for variant, call in slots[shift:] + slots[:shift]:
            if variant.ok:
                call()
        if r == 0:
            reference = variants[0]
            if not reference.ok:
                return
            for variant, _ in slots[1:]:
                if variant.ok:
                    verify(run, reference, variant)


def working_limits(limits: Limits, memory_mb: int) -> Limits:
    """The harness limits, with the memory the kernel's arrays need, a work directory and a file size that
    hold their input and output files (SpMM with 256 dense columns on a 131,072-row matrix writes 268 MB
    arrays: the default quota of 1 GB and file size of 256 MB stopped it), and room for 1-2 s kernels."""
    return dataclasses.replace(limits, memory_mb=max(limits.memory_mb, memory_mb),
                               disk_mb=max(limits.disk_mb, 2 * memory_mb),
                               output_mb=max(limits.output_mb, memory_mb),
                               wall_seconds=max(limits.wall_seconds, 300.0),
                               cpu_seconds=max(limits.cpu_seconds, 600))


def machine_load() -> dict[str, Any]:
    """Load averages and, where Linux has PSI, the share of time some task waited for a CPU (10 s avg)."""
    load: dict[str, Any] = {"loadavg": list(os.getloadavg()), "cpus": os.cpu_count()}
    psi = Path("/proc/pressure/cpu")
    if psi.exists():
        match = re.search(r"some avg10=([0-9.]+)", psi.read_text())
        if match:
            load["cpu_pressure_avg10"] = float(match.group(1)) / 100
    return load
