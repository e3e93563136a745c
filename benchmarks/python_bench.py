"""NumPy kernels against their peers, in one run: ``python -m benchmarks.python_bench`` (``perfembed bench python``).

    python -m benchmarks.python_bench [--kernels gemm,lu] [--scale F] [--threads N] [--rounds R] [--trials N]
                                      [--quick] [--no-transfer] [--retune] [--json] [--out DIR] [--report MD]
                                      [--render JSON]

For each kernel of ``benchmarks/python/kernels.py`` (written as NumPy users write them: slices, ``@``, ufuncs,
scalar loops), at its :data:`SIZES` times ``--scale``:

- numpy: the original function;
- numba, numba-parallel: ``@njit`` and ``@njit(parallel=True)`` of the same source, ``range`` made ``prange``
  on the loops a Numba user would mark (:data:`PRANGE`), where ``numba`` installs (``pip install -e
  '.[peers]'``);
- dace: ``dace.program`` with its CPU auto-optimizer, where ``dace`` imports;
- perfembed-untuned: perfembed's module of the nest as it is (the C compiled, no recipe);
- perfembed-transfer: the recipe ``perfembed suggest --evaluate --k 5`` accepts, from a database holding only
  the shipped seed (C nests; no Python kernel), so that it measures transfer from C to NumPy;
- perfembed-autotune: the winner of ``perfembed tune --trials 40`` from nothing, in a database of its own.

perfembed runs as the CLI in data folders under OUT (``benchmarks/peak_tuning.py``), its recipes cached in
``OUT/tuning.json``; the modules are written as ``--write-best kernel_tuned.py`` writes them. Every variant's
outputs are checked against NumPy's on the same inputs; times are interleaved rounds on fresh copies, each
variant's speedup the geometric mean of its rounds' ratios to NumPy with a 95% bootstrap interval, and the
first call (JIT and C compiles) is reported apart. A peer that is missing or fails is a row with the reason.
The report goes to stdout, to ``OUT/python.json`` and ``OUT/python.md``, and to ``--report`` with its figure
and its JSON beside it (``--report docs/benchmarks/python.md`` is the committed result; ``--render`` renders
it again). Exit status: 0 when every figure is in, 1 otherwise, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from threadpoolctl import threadpool_limits

from benchmarks.entry import exit_after
from benchmarks.peak_measure import machine_load
from benchmarks.python_report import missing_figures, render_markdown, render_text, summarize, write_report
from benchmarks.python_variants import (
    KERNELS,
    Inputs,
    Variant,
    dace_variant,
    first_call,
    interleave,
    load_module,
    numba_variants,
    outputs,
    perfembed_variant,
    timing,
    write_best_decision,
)
from benchmarks.tuned_run import TunedRun, UsageParser, check_at_least, finish_report, run_main
from loopnest.config import Settings
from loopnest.frontend.python.check import example_inputs
from loopnest.frontend.python.extract import lower_python
from loopnest.harness import Limits

NAME = "python"
SUITE = load_module(KERNELS, "perfembed_benchmark_kernels")
TIME_LOOPS = ("TSTEPS",)  # scaled like sizes, but never below 2 steps
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")


@dataclass(frozen=True)
class PythonNest:
    """A kernel of the suite as :class:`benchmarks.peak_tuning.Nest` names it."""

    name: str
    file: str = str(KERNELS.relative_to(KERNELS.parents[2]))
    function: str = ""

    @classmethod
    def of(cls, name: str) -> PythonNest:
        return cls(name=name, function=name)


def sizes(name: str, scale: float) -> dict[str, int]:
    return {k: max(2 if k in TIME_LOOPS else 3, round(v * scale)) for k, v in SUITE.SIZES[name].items()}


def variants(name: str, tuning: dict[str, Any], work: Path, settings: Settings,
             threads: int) -> tuple[dict[str, Variant], dict[str, dict[str, Any]]]:
    """Every variant of kernel ``name`` (a callable, or why there is none), and for perfembed's the recipe in
    words (and for transfer's, whether ``--write-best`` would write it: ``write_best``)."""
    original = getattr(SUITE, name)
    out: dict[str, Variant] = {"numpy": original, **numba_variants(original, SUITE.PRANGE.get(name, ())),
                               "dace": dace_variant(original)}
    kernel = lower_python(KERNELS, name)
    notes: dict[str, dict[str, Any]] = {}
    for label, steps in (("perfembed-untuned", None), ("perfembed-transfer", tuning["transfer"]),
                         ("perfembed-autotune", tuning["autotune"])):
        if isinstance(steps, dict) and steps.get("status") in ("failed", "skipped"):
            out[label] = f"{steps['status']}: {steps.get('message', '')}"[:240]
            continue
        recipe = steps.get("recipe") if isinstance(steps, dict) else None
        out[label], text, dropin = perfembed_variant(kernel, recipe, work, label, settings.cflags)
        notes[label] = {"recipe": text}
        if label == "perfembed-transfer":
            notes[label]["write_best"] = write_best_decision(kernel, dropin, work / "inputs.npz",
                                                             Limits.from_settings(settings), threads)
    return out, notes


def measure_kernel(name: str, params: dict[str, int], tuning: dict[str, Any], rounds: int,
                   settings: Settings, threads: int = 1) -> dict[str, Any]:
    """One kernel's row: each variant checked against NumPy, then the ones that agree timed interleaved."""
    with tempfile.TemporaryDirectory(prefix=f"perfembed-pybench-{name}-") as tmp:
        work = Path(tmp)
        kernel = lower_python(KERNELS, name)
        example_inputs(kernel, params, work / "inputs.npz")
        inputs = Inputs(work / "inputs.npz", [a.name for a in kernel.args])
        found, notes = variants(name, tuning, work, settings, threads)
        want = outputs(getattr(SUITE, name), inputs.fresh())
        rows: dict[str, dict[str, Any]] = {}
        runnable = {}
        for label, fn in found.items():
            if isinstance(fn, str):
                rows[label] = {"status": "missing", "reason": fn}
                continue
            rows[label] = first_call(fn, inputs, want)
            rows[label].update(notes.get(label, {}))
            if rows[label]["status"] == "ok":
                runnable[label] = fn
        load_before = machine_load()  # other jobs on the machine, as the programs benchmark records it
        times = interleave(runnable, inputs, rounds)
        load_after = machine_load()
        for label in runnable:
            rows[label].update(timing(times["numpy"], times[label]))
    return {"kernel": name, "params": params, "variants": rows, "neighbours": _neighbours(tuning["transfer"]),
            "load_before_timing": load_before, "load_after_timing": load_after,
            "tuning": {part: {k: v for k, v in tuning[part].items() if k != "recipe"}
                       for part in ("transfer", "autotune")}}


def _neighbours(transfer: dict[str, Any]) -> list[dict[str, Any]]:
    names, distances = transfer.get("neighbours") or [], transfer.get("distances") or []
    return [{"name": n, "distance": d} for n, d in zip(names, distances, strict=False)]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = UsageParser(prog="perfembed bench python", description=__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kernels", type=lambda t: [k for k in t.split(",") if k], default=None,
                        help=f"comma-separated, from {','.join(SUITE.SIZES)} (default: all)")
    parser.add_argument("--scale", type=float, default=1.0, help="multiply every size by this (default 1)")
    parser.add_argument("--threads", type=int, default=2, help="threads of every variant (default 2)")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 7, --quick 2)")
    parser.add_argument("--trials", type=int, default=None, help="autotuning trials (default 40, --quick 2)")
    parser.add_argument("--quick", action="store_true", help="2 trials, 2 rounds, no transfer: a smoke run")
    parser.add_argument("--no-transfer", action="store_true", help="autotuning only (no seed load)")
    parser.add_argument("--retune", action="store_true", help="ignore the tuning cache")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--out", type=Path, default=None,
                        help="report, tuning cache and perfembed data (default: DATA_DIR/python, or python-quick)")
    parser.add_argument("--report", type=Path, default=None,
                        help="also write the markdown report, its figure and the result beside it (.png, .json)")
    parser.add_argument("--render", type=Path, default=None, metavar="JSON",
                        help="run nothing: render an earlier result (python.json) as text, or to --report")
    args = parser.parse_args(argv)
    unknown = [k for k in args.kernels or () if k not in SUITE.SIZES]
    if unknown:
        parser.error(f"unknown kernel(s) {', '.join(unknown)}; the suite has {', '.join(SUITE.SIZES)}")
    if args.scale <= 0:
        parser.error("--scale must be positive")
    check_at_least(parser, args, ("threads", 1), ("rounds", 1), ("trials", 1))
    args.kernels = args.kernels or list(SUITE.SIZES)
    return args


def run_benchmark(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    """Tune, check and time every kernel of ``--kernels``; with ``--render``, an earlier result instead (its
    summary computed again)."""
    if args.render is not None:
        report: dict[str, Any] = json.loads(args.render.read_text())
        report["summary"] = summarize(report)
        if args.report is not None:
            write_report(report, args.report)
        return report
    for variable in THREAD_VARIABLES:  # for the libraries loaded from now on (Numba, the modules' OpenMP)
        os.environ[variable] = str(args.threads)
    threadpool_limits(args.threads, user_api="blas")  # NumPy's BLAS was loaded on import; once, not per call
    bench = TunedRun.from_args(NAME, args, settings)
    rounds = args.rounds or (2 if args.quick else 7)
    report = bench.new_report(rounds, scale=args.scale, cflags=settings.cflags, seed="the shipped seed (C nests)")
    start = time.perf_counter()
    report["kernels"] = []
    try:
        for name in args.kernels:
            params = sizes(name, args.scale)
            tuning = bench.tune(PythonNest.of(name), params, retune=args.retune, cold_autotune=True)
            bench.progress(f"{name}: checking and timing the variants ({rounds} interleaved rounds)")
            report["kernels"].append(measure_kernel(name, params, tuning, rounds, settings, args.threads))
            finish_report(report, bench.out_dir, start, summarize, render_markdown)  # kept if the run is killed
    except KeyboardInterrupt:  # Ctrl-C: the report of the kernels measured so far, which says so
        report["interrupted"] = f"stopped after {len(report['kernels'])} of {len(args.kernels)} kernels"
        bench.progress(report["interrupted"])
    report = finish_report(report, bench.out_dir, start, summarize, render_markdown)
    if args.report is not None:
        write_report(report, args.report)
    return report


def main(argv: list[str] | None = None) -> int:
    return run_main(argv, parse_args, run_benchmark, render_text, missing_figures)


if __name__ == "__main__":
    exit_after(main)
