"""The library arms of the peak and sparse benchmarks: numpy (OpenBLAS) and Intel MKL, each round in a fresh process.

:func:`lib_variant` gives a :class:`~benchmarks.peak_measure.Variant` and the call that times one round
of it: ``python -m benchmarks.lib_run`` (see its docstring) on the run's inputs, under the machine's
timing lock as a C variant's driver runs, with the library's own threads set in its environment the way
a user sets them: numpy ``OPENBLAS_NUM_THREADS`` (and ``OMP_NUM_THREADS``), MKL ``MKL_NUM_THREADS``
(numpy's OpenBLAS at 1 thread there: it computes nothing, and a pool of its own would busy-wait at
start). The round's time is the median of the run's ``reps`` timed calls after a warm-up call. The
warm-up call's outputs are written in the driver's format for verification. MKL without its extra
(:func:`benchmarks.mkl.mkl_problem`) gives a variant "not available" that says why.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.mkl import mkl_environment, mkl_problem
from benchmarks.peak_measure import Arrays, KernelRun, Variant, dump_outputs
from loopnest.harness.timing_lock import timed_exclusively

ROOT = Path(__file__).resolve().parents[1]
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "GOTO_NUM_THREADS",
                    "MKL_RT", "MKL_INTERFACE_LAYER")
NOT_AVAILABLE = "not available"


@dataclass(frozen=True)
class LibArm:
    name: str  # the variant's name: "numpy", "mkl"
    lib: str  # "numpy" or "mkl"
    twin: str  # benchmarks/lib_run.py's twin: "peak:gemm", "sparse:spmm", ...


def arm_environment(lib: str, threads: int, base: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's environment: ``base`` (default this process's) without thread settings, then the
    library's own at ``threads``; the checkout first on ``PYTHONPATH``."""
    env = {k: v for k, v in (os.environ if base is None else base).items() if k not in THREAD_VARIABLES}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env["OMP_NUM_THREADS"] = str(threads)
    if lib == "mkl":
        env.update(mkl_environment(threads), OPENBLAS_NUM_THREADS="1")
    else:
        env["OPENBLAS_NUM_THREADS"] = str(threads)
    return env


def unavailable(name: str, reason: str) -> Variant:
    """A library column that could not be measured here, with the reason in its message."""
    variant = Variant(name)
    variant.fail(NOT_AVAILABLE, reason)
    return variant


def lib_variant(run: KernelRun, inputs: Arrays, arm: LibArm, *,
                threads: int) -> tuple[Variant, Callable[[], None] | None]:
    """``arm`` on ``inputs`` (the driver's initial values): its variant and its round's call, or no call
    when the library is not available here."""
    if arm.lib == "mkl" and (problem := mkl_problem()) is not None:
        return unavailable(arm.name, problem), None
    variant = Variant(arm.name, reorders=True)  # a library reorders its sums
    inputs_path = run.workdir / "inputs.npz"
    if not inputs_path.exists():
        values: dict[str, Any] = dict(inputs)
        np.savez(inputs_path, **values)
    outputs = run.workdir / f"{arm.name}.npz"
    written = [lay.info.name for lay in run.layouts if lay.info.written and lay.info.storage != "region"]
    spec = {"lib": arm.lib, "twin": arm.twin, "inputs": str(inputs_path), "outputs": str(outputs),
            "written": written, "reps": run.reps, "threads": threads, "params": dict(run.params)}
    spec_path = run.workdir / f"{arm.name}.spec.json"
    spec_path.write_text(json.dumps(spec))
    command = [sys.executable, "-m", "benchmarks.lib_run", str(spec_path)]
    env = arm_environment(arm.lib, threads)

    def call() -> None:
        with timed_exclusively(run.limits.timing_lock):
            try:
                done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, check=False,
                                      timeout=run.limits.wall_seconds)
            except subprocess.TimeoutExpired:
                variant.fail("timeout", f"{arm.name} ran past {run.limits.wall_seconds:.0f} s")
                return
        record_round(variant, done, run, outputs)

    return variant, call


def record_round(variant: Variant, done: subprocess.CompletedProcess[str], run: KernelRun, outputs: Path) -> None:
    """One round's result: its median time, the arm's info; the outputs converted once for verification."""
    lines = done.stdout.strip().splitlines()
    try:
        result = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        result = {}
    if "times" not in result:
        reason = result.get("error") or f"exit status {done.returncode}: {(done.stderr or done.stdout)[-300:]}"
        variant.fail("failed", str(reason))
        return
    variant.times.append(statistics.median(result["times"]))
    if not variant.info:
        variant.info.update(result.get("info") or {})
    if not run.out(variant.name).exists():
        with np.load(outputs) as data:
            dump_outputs({k: data[k] for k in data.files}, run.layouts, run.out(variant.name))
