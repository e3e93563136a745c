"""Sparse kernels in GFLOP/s: gcc, perfembed's transferred and autotuned recipes, scipy.sparse and Intel MKL.

    python -m benchmarks.sparse [--json] [--quick] [--retune] [--kernels spmv,spmm16] [--matrices banded]
                                [--threads N] [--rounds R] [--reps N] [--trials N] [--no-transfer] [--out DIR]

Cases (``benchmarks/sparse_cases.py``): SpMV and SpMM with 4, 16, 64 and 256 dense columns (CSR,
double; ``benchmarks/sparse_kernels.c``) on generated uniform, banded and powerlaw matrices, and on the
2-D Poisson matrix and three stand-ins for SuiteSparse matrices (3-D Poisson, a 3-D FEM mesh with 3 x 3
blocks, a Delaunay triangulation), written as Matrix Market files into the output folder and run
through ``--matrix``. Per case:

- gcc: perfembed's baseline (its measurement driver, ``gcc -O3 -march=native -fopenmp``);
- transfer: ``perfembed suggest --evaluate --k 5`` from the shipped seed, loaded into the benchmark's
  data folder (its accepted recipe, or the original when it accepted none);
- autotune: ``perfembed tune --trials N`` warm-started with transfer's recipe (its confirmed winner, or
  the original); both at the benchmark's sizes on the same matrix (``benchmarks/peak_tuning.py``,
  cached in ``OUT/tuning.json``);
- scipy: ``A @ x`` / ``C += A @ B`` with scipy.sparse on the driver's very matrix and input values (A
  built outside the timed call). scipy.sparse is single-threaded: its figure is one thread's;
- MKL: its inspector-executor (``mkl_sparse_d_mv`` / ``mkl_sparse_d_mm`` on a handle hinted and
  optimized before the warm-up call) at the threads of gcc and perfembed (``MKL_NUM_THREADS``), in a fresh
  process each round (``benchmarks/lib_arms.py``, ``benchmarks/mkl.py``), its outputs checked against
  gcc's and scipy's; from the optional extra ``pip install -e '.[mkl]'``, else the column says why.

Every variant runs once per round in a rotating order (``benchmarks/peak_measure.py``), each round's time
the median of ``--reps`` calls; figures are medians over the rounds with the range beside them,
transfer against autotuning and against MKL the geometric mean of the rounds' ratios with its interval
(11 rounds by default: at 7 the per-case intervals spanned up to 0.66-1.28), and every output is checked
against gcc's. The report leads with issue 63's headline: transfer's SpMM against MKL, geomean and per
case (``python -m benchmarks.sparse_report OUT/sparse.json`` renders it again from the result file).
The report goes to stdout (a table, or with ``--json`` one JSON object) and to ``OUT/sparse.md`` and
``OUT/sparse.json``; progress goes to stderr. Exit status: 0 when every figure was measured and
verified, 1 otherwise, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import scipy

from benchmarks.entry import exit_after
from benchmarks.lib_arms import LibArm, lib_variant
from benchmarks.peak import candidates, kernel_scop, recipe_variant
from benchmarks.peak_kernels import select_named
from benchmarks.peak_measure import (
    DRIVER_FORM,
    KernelRun,
    Variant,
    interleave,
    load_inputs,
    numpy_variant,
    working_limits,
)
from benchmarks.sparse_cases import FULL, KERNELS, MATRICES, QUICK, Case, make_cases, scipy_twin
from benchmarks.sparse_report import missing_figures, render_markdown, render_text, summarize
from benchmarks.tuned_run import TunedRun, UsageParser, check_at_least, finish_report, run_main
from loopnest.codegen import generate_c
from loopnest.config import Settings
from loopnest.harness import Limits, array_layouts, verify_outputs
from loopnest.harness.index_data import index_contents


def measure_case(case: Case, tuning: dict[str, Any], *, rounds: int, reps: int, threads: int,
                 settings: Settings) -> dict[str, Any]:
    """Build every variant of ``case`` on its matrix, time them interleaved over ``rounds`` rounds, verify,
    summarize."""
    scop = kernel_scop(case)
    layouts = array_layouts(scop, case.params)
    contents = index_contents(scop, case.params, layouts, case.sparse)
    nnz = int(contents[scop.index_structures[0].pointers][case.params["n"]])
    memory_mb = int(sum(lay.nbytes for lay in layouts) / 2**20 * 3) + 256  # the scipy twin copies its inputs
    limits = working_limits(Limits.from_settings(settings), memory_mb)
    with tempfile.TemporaryDirectory(prefix="perfembed-sparse-") as tmp:
        run = KernelRun(scop, case.params, layouts, Path(tmp), limits, threads, settings.cc, settings.cflags,
                        contents=contents, reps=reps)
        gcc = run.build("gcc", generate_c(scop))
        found = [recipe_variant(run, scop, source, recipe) for source, recipe in candidates(tuning)]
        (twin, twin_call), (mkl, mkl_call) = library_arms(case, run, threads)
        # A recipe that leaves the code as it is gets the original's figure rather than a second noisy one.
        interleave(run, [gcc, *(v for v in found if v.ok and not v.info.get("same_code"))], rounds,
                   [(twin, twin_call), (mkl, mkl_call)])
        check_against(run, twin, mkl)
    return case_row(case, nnz, tuning, gcc=gcc, found=found, twin=twin, threads=threads, mkl=mkl)


Arm = tuple[Variant, Callable[[], None] | None]


def library_arms(case: Case, run: KernelRun, threads: int) -> tuple[Arm, Arm]:
    """scipy.sparse in this process (single-threaded), and MKL in a fresh process per round at ``threads``
    threads (``MKL_NUM_THREADS``; ``benchmarks/lib_arms.py``), both on the driver's matrix and inputs."""
    try:
        inputs = load_inputs(run)
    except RuntimeError as exc:  # the input dump did not build or run: the libraries have no inputs
        twin, mkl = Variant("scipy"), Variant("mkl")
        twin.fail("failed", str(exc))
        mkl.fail("failed", str(exc))
        return (twin, None), (mkl, None)
    twin, twin_call = numpy_variant(scipy_twin(case, inputs), inputs, run, name="scipy", threads=1)
    arm = LibArm("mkl", "mkl", "sparse:" + ("spmv" if case.kernel.function == "spmv_csr" else "spmm"))
    return (twin, twin_call), lib_variant(run, inputs, arm, threads=threads)


def check_against(run: KernelRun, reference: Variant, variant: Variant) -> None:
    """``variant``'s outputs (already checked against gcc's) checked against ``reference``'s as well (MKL
    against scipy.sparse): a difference marks it wrong."""
    if not (variant.ok and variant.times and reference.ok and run.out(reference.name).exists()):
        return
    check = verify_outputs(run.out(reference.name), run.out(variant.name), run.layouts, reorders_reduction=True)
    variant.info["against_" + reference.name] = {"verified": check.verified, "max_rel_error": check.max_rel_error}
    if not check.verified:
        variant.status = "wrong-output"
        variant.message = (f"{check.mismatch} differs from {reference.name}'s: max relative error "
                           f"{check.max_rel_error:.3g}")


def case_row(case: Case, nnz: int, tuning: dict[str, Any], *, gcc: Variant, found: list[Variant], twin: Variant,
             threads: int, mkl: Variant | None = None) -> dict[str, Any]:
    """The JSON of one case: each figure's times and rates; transfer's and autotuning's figure is their
    recipe's, or the original's where perfembed kept it; perfembed's is its fastest recipe."""
    work = case.work(nnz)
    row: dict[str, Any] = {"case": case.name, "kernel": case.kernel.name, "matrix": case.matrix.name,
                           "file": case.file, "function": case.function, "note": case.kernel.note,
                           "matrix_note": case.matrix.note, "params": case.params, "nnz": nnz,
                           "structure": case.sparse.key(), "perfembed_args": list(case.args), "work": work,
                           "unit": "GFLOP/s", "threads": threads, "tuning": tuning}
    row["gcc"] = {**gcc.summary(work, 1e9), "verified": gcc.ok, "role": "reference"}
    row["candidates"] = [({**row["gcc"], **v.info, "role": "same code as the original"} if v.info.get("same_code")
                          else v.summary(work, 1e9)) | {"name": v.name} for v in found]
    original = {**row["gcc"], "role": "original", "recipe": None}
    for part in ("transfer", "autotune"):
        row[part] = _part_figure(row["candidates"], tuning.get(part) or {}, part, original)
    measured = [c for c in row["candidates"] if c.get("rate")]
    row["perfembed"] = max(measured, key=lambda c: c["rate"]) if measured else \
        {**row["candidates"][0], "rate": None} if found else {**original, "source": "original kept"}
    row["scipy"] = twin.summary(work, 1e9) | {"threads": 1, "note": "scipy.sparse is single-threaded",
                                              "version": scipy.__version__}
    if mkl is not None:
        row["mkl"] = mkl.summary(work, 1e9) | {"threads": threads, "process": "fresh, one warm-up call"}
    return row


def _part_figure(found: list[dict[str, Any]], part: dict[str, Any], name: str,
                 original: dict[str, Any]) -> dict[str, Any]:
    status = part.get("status", "failed")
    if status == "skipped":
        return {"status": "skipped", "message": part.get("message", "")}
    if status == "failed":
        return {"status": "failed", "message": part.get("message", ""), "rate": None}
    mine = [c for c in found if name in str(c.get("source", "")).split("+")]
    if mine:
        return mine[0]
    return {**original, "source": f"original kept ({status})"}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = UsageParser(prog="benchmarks/sparse.py", description=__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true",
                        help="tiny sizes, 2 trials, 2 rounds of 1 call, no transfer: a smoke run")
    parser.add_argument("--retune", action="store_true", help="ignore the tuning cache")

    def names(text: str) -> list[str]:
        return [k for k in text.split(",") if k]

    parser.add_argument("--kernels", type=names, default=None,
                        help=f"comma-separated, from {','.join(k.name for k in KERNELS)} (default: all)")
    parser.add_argument("--matrices", type=names, default=None,
                        help=f"comma-separated, from {','.join(m.name for m in MATRICES)} (default: all)")
    parser.add_argument("--threads", type=int, default=0,
                        help="threads of gcc, perfembed and MKL (default: every core)")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 11, --quick 2)")
    parser.add_argument("--reps", type=int, default=None, help="timed calls per round (default 5, --quick 1)")
    parser.add_argument("--trials", type=int, default=None, help="autotuning trials (default 40, --quick 2)")
    parser.add_argument("--no-transfer", action="store_true", help="autotuning only (no seed load)")
    parser.add_argument("--out", type=Path, default=None,
                        help="report, matrix file, tuning cache and perfembed data (default: DATA_DIR/sparse, "
                             "or sparse-quick)")
    args = parser.parse_args(argv)
    try:
        args.kernels = select_named(args.kernels, KERNELS, "kernel(s)")
        args.matrices = select_named(args.matrices, MATRICES, "matrix(es)")
    except ValueError as exc:
        parser.error(str(exc))
    check_at_least(parser, args, ("threads", 0), ("rounds", 1), ("reps", 1), ("trials", 1))
    return args


def run_benchmark(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    bench = TunedRun.from_args("sparse", args, settings)
    rounds, reps = args.rounds or (2 if args.quick else 11), args.reps or (1 if args.quick else 5)
    cases = make_cases(args.kernels, args.matrices, QUICK if args.quick else FULL, bench.out_dir)
    report = bench.new_report(rounds, reps=reps, gcc=f"{settings.cc} {settings.cflags}", scipy=scipy.__version__,
                               form=DRIVER_FORM)
    report["cases"] = []
    start = time.perf_counter()
    for case in cases:
        tuning = bench.tune(case, case.params, retune=args.retune, extra=case.args)
        bench.progress(f"{case.name}: measuring ({rounds} interleaved rounds of {reps} calls)")
        report["cases"].append(measure_case(case, tuning, rounds=rounds, reps=reps, threads=bench.threads,
                                            settings=settings))
    return finish_report(report, bench.out_dir, start, summarize, render_markdown)


def main(argv: list[str] | None = None) -> int:
    return run_main(argv, parse_args, run_benchmark, render_text, missing_figures)


if __name__ == "__main__":
    exit_after(main)
