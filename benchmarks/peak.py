"""How close perfembed gets to the machine: dense kernels in GFLOP/s and stencils in GB/s.

gcc, Polly, perfembed's best recipe, numpy (OpenBLAS) and Intel MKL, measured side by side in one run.

    python -m benchmarks.peak [--json] [--quick] [--retune] [--kernels gemm,jacobi2d] [--threads N]
                              [--rounds R] [--trials N] [--no-transfer] [--out DIR]

Kernels (``benchmarks/peak_kernels.py``): gemm, 2mm, syrk, a CNN layer and a batched product from the
corpus, at sizes of 1-2 s under gcc, and the stencils jacobi2d, heat2d, heat3d and seidel2d against
the machine's STREAM bandwidth (``benchmarks/peak_stream.c``). Per kernel:

- gcc: perfembed's baseline (its measurement driver in the user's form, ``gcc -O3 -march=native -fopenmp``);
- Polly: the same program through ``clang-16 -O3 -march=native -fopenmp -mllvm -polly -mllvm
  -polly-parallel``, with what Polly did (packing, parallel code) read from its LLVM IR;
- perfembed: what perfembed finds for the kernel (``benchmarks/peak_tuning.py``: transfer from the
  shipped seed, then autotuning), cached in ``OUT/tuning.json``, timed as the drop-in code the user's
  file gets (its run-time overlap check included);
- numpy: the same computation on the same input values, as a user calls it: in a fresh process each
  round, one warm-up call, with the same number of threads of its own (``OPENBLAS_NUM_THREADS``);
- MKL: ``cblas_dgemm`` / ``cblas_dsyrk`` the same way (``MKL_NUM_THREADS``; gemm, 2mm, syrk and the
  batched product), from the optional extra ``pip install -e '.[mkl]'``; without it the column says why
  (``benchmarks/lib_arms.py``, ``benchmarks/mkl.py``). perfembed's share of the better of the two is
  the report's headline for gemm.

Every variant runs once per round in a rotating order (``benchmarks/peak_measure.py``); figures are
medians over the rounds with the range beside them, and every output is checked against gcc's.
The report goes to stdout (a table, or with ``--json`` one JSON object) and to ``OUT/peak.md`` and
``OUT/peak.json``; progress goes to stderr. Exit status: 0 when every figure was measured and
verified, 1 otherwise, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.entry import exit_after
from benchmarks.lib_arms import LibArm, lib_variant, unavailable
from benchmarks.mkl import PEAK_TWINS as MKL_TWINS
from benchmarks.peak_kernels import KERNELS, Kernel, select
from benchmarks.peak_measure import (
    DRIVER_FORM,
    POLLY_CC,
    POLLY_FLAGS,
    KernelRun,
    Variant,
    build_polly,
    interleave,
    load_inputs,
    working_limits,
)
from benchmarks.peak_report import missing_figures, render_markdown, render_text, summarize
from benchmarks.peak_stream import measure_stream
from benchmarks.peak_tuning import ROOT, Nest
from benchmarks.polly import polly_problem
from benchmarks.tuned_run import TunedRun, UsageParser, check_at_least, finish_report, run_main
from loopnest.codegen import generate_c
from loopnest.codegen.overlap_guard import guarded_c
from loopnest.config import Settings
from loopnest.errors import PerfembedError
from loopnest.frontend.extract import extract_scops
from loopnest.harness import Limits, array_layouts
from loopnest.ir import Scop
from loopnest.omp_clauses import reorders_reduction
from loopnest.polyhedral import compute_dependences
from loopnest.transform.recipe import Recipe, apply_recipe


def kernel_scop(kernel: Nest) -> Scop:
    """The first nest of the kernel's function."""
    scops = [s for s in extract_scops(ROOT / kernel.file).scops if s.region.function == kernel.function]
    if not scops:
        raise RuntimeError(f"{kernel.file}: no supported nest in {kernel.function}")
    return scops[0]


def candidates(tuning: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """perfembed's distinct recipes as (source, recipe): transfer's accepted one, the confirmed tuning winner."""
    found: dict[str, tuple[list[str], dict[str, Any]]] = {}
    for source in ("transfer", "autotune"):
        recipe = (tuning.get(source) or {}).get("recipe")
        if recipe:
            key = json.dumps(recipe, sort_keys=True)
            found.setdefault(key, ([], recipe))[0].append(source)
    return [("+".join(sources), recipe) for sources, recipe in found.values()]


def recipe_variant(run: KernelRun, scop: Scop, source: str, recipe: dict[str, Any]) -> Variant:
    """perfembed's recipe applied to the nest (legality checked again at these sizes) and compiled by gcc;
    ``same_code`` in its info when the recipe leaves the nest's code as it is."""
    name = f"perfembed:{source}"
    try:
        transformed = apply_recipe(scop, Recipe.from_dict(recipe), compute_dependences(scop))
    except PerfembedError as exc:
        variant = Variant(name, info={"source": source, "recipe": recipe})
        variant.fail("refused", str(exc))
        return variant
    variant = run.build(name, guarded_c(scop, transformed))
    variant.reorders = reorders_reduction(transformed)
    variant.info.update(source=source, recipe=recipe, same_code=generate_c(transformed) == generate_c(scop))
    return variant


def measure_kernel(kernel: Kernel, tuning: dict[str, Any], *, quick: bool, rounds: int, threads: int,
                   settings: Settings) -> dict[str, Any]:
    """Build every variant of ``kernel``, time them interleaved over ``rounds`` rounds, verify, summarize."""
    params = kernel.params(quick)
    scop = kernel_scop(kernel)
    layouts = array_layouts(scop, params)
    memory_mb = int(sum(lay.nbytes for lay in layouts) / 2**20 * 1.5) + 256
    limits = working_limits(Limits.from_settings(settings), memory_mb)
    with tempfile.TemporaryDirectory(prefix="perfembed-peak-") as tmp:
        run = KernelRun(scop, params, layouts, Path(tmp), limits, threads, settings.cc, settings.cflags)
        base = generate_c(scop)
        gcc = run.build("gcc", base)
        variants = [gcc]
        problem = polly_problem(POLLY_CC, POLLY_FLAGS, limits)
        if problem is not None:
            polly = Variant("polly")
            polly.fail("not available", problem)
        else:
            polly = build_polly(run, base)
            variants.append(polly)
        found = [recipe_variant(run, scop, source, recipe) for source, recipe in candidates(tuning)]
        variants += [v for v in found if v.ok]
        arms = library_arms(kernel, run, threads) if kernel.numpy is not None else []
        interleave(run, variants, rounds, arms)
    libs = {variant.name: variant for variant, _ in arms}
    return kernel_row(kernel, params, tuning, gcc=gcc, polly=polly, found=found, numpy=libs.get("numpy"),
                      mkl=libs.get("mkl"), threads=threads)


def library_arms(kernel: Kernel, run: KernelRun, threads: int) -> list[tuple[Variant, Callable[[], None] | None]]:
    """numpy (OpenBLAS) and MKL on the driver's inputs, each round in a fresh process with ``threads``
    threads of their own (``benchmarks/lib_arms.py``); MKL only for the kernels it has a twin of."""
    try:
        inputs = load_inputs(run)
    except RuntimeError as exc:  # the input dump did not build or run: the libraries have no inputs
        failed = [Variant("numpy"), Variant("mkl")]
        for variant in failed:
            variant.fail("failed", str(exc))
        return [(variant, None) for variant in failed]
    arms = [lib_variant(run, inputs, LibArm("numpy", "numpy", f"peak:{kernel.name}"), threads=threads)]
    if kernel.name in MKL_TWINS:
        arms.append(lib_variant(run, inputs, LibArm("mkl", "mkl", f"peak:{kernel.name}"), threads=threads))
    else:
        arms.append((unavailable("mkl", f"no MKL twin of {kernel.name} here (BLAS-3 calls for gemm, 2mm, syrk "
                                        "and the batched product)"), None))
    return arms


def kernel_row(kernel: Kernel, params: dict[str, int], tuning: dict[str, Any], *, gcc: Variant, polly: Variant,
               found: list[Variant], numpy: Variant | None, threads: int,
               mkl: Variant | None = None) -> dict[str, Any]:
    """The JSON of one kernel: each variant's times and rates, and perfembed's figure (its fastest recipe,
    or the original when perfembed kept it)."""
    work = kernel.work(params)
    unit = "GFLOP/s" if kernel.kind == "dense" else "GB/s"
    row: dict[str, Any] = {"kernel": kernel.name, "kind": kernel.kind, "file": kernel.file,
                           "function": kernel.function, "note": kernel.note, "params": params, "work": work,
                           "unit": unit, "threads": threads, "tuning": tuning}
    row["gcc"] = {**gcc.summary(work, 1e9), "verified": gcc.ok, "role": "reference"}
    row["polly"] = polly.summary(work, 1e9)
    row["candidates"] = [v.summary(work, 1e9) | {"name": v.name} for v in found]
    measured = [c for c in row["candidates"] if c.get("rate")]
    if measured:
        row["perfembed"] = max(measured, key=lambda c: c["rate"])
    elif found:  # perfembed had a recipe, but it did not build or run here
        row["perfembed"] = {**row["candidates"][0], "rate": None}
    else:
        row["perfembed"] = {**row["gcc"], "role": "original", "source": "original kept", "recipe": None}
    if numpy is not None:
        row["numpy"] = numpy.summary(work, 1e9) | {"threads": threads, "process": "fresh, one warm-up call"}
    if mkl is not None:
        row["mkl"] = mkl.summary(work, 1e9) | {"threads": threads, "process": "fresh, one warm-up call"}
    return row


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = UsageParser(prog="benchmarks/peak.py", description=__doc__,
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--quick", action="store_true", help="tiny sizes, 2 trials, 2 rounds, no transfer: a smoke run")
    parser.add_argument("--retune", action="store_true", help="ignore the tuning cache")
    parser.add_argument("--kernels", type=lambda t: [k for k in t.split(",") if k], default=None,
                        help=f"comma-separated, from {','.join(k.name for k in KERNELS)} (default: all)")
    parser.add_argument("--threads", type=int, default=0, help="threads for every variant (default: every core)")
    parser.add_argument("--rounds", type=int, default=None, help="interleaved rounds (default 5, --quick 2)")
    parser.add_argument("--trials", type=int, default=None, help="autotuning trials (default 40, --quick 2)")
    parser.add_argument("--no-transfer", action="store_true", help="autotuning only (no seed load)")
    parser.add_argument("--out", type=Path, default=None,
                        help="report, tuning cache and perfembed data (default: DATA_DIR/peak, or peak-quick)")
    args = parser.parse_args(argv)
    try:
        args.kernels = select(args.kernels)
    except ValueError as exc:
        parser.error(str(exc))
    check_at_least(parser, args, ("threads", 0), ("rounds", 1), ("trials", 1))
    return args


def run_benchmark(args: argparse.Namespace, settings: Settings) -> dict[str, Any]:
    bench = TunedRun.from_args("peak", args, settings)
    rounds = args.rounds or (2 if args.quick else 5)
    report = bench.new_report(rounds, gcc=f"{settings.cc} {settings.cflags}", polly=f"{POLLY_CC} {POLLY_FLAGS}",
                               form=DRIVER_FORM)
    start = time.perf_counter()
    if any(k.kind == "stencil" for k in args.kernels):
        bench.progress("STREAM bandwidth")
        report["stream"] = measure_stream(threads=bench.threads, quick=args.quick,
                                          limits=Limits.from_settings(settings), cc=settings.cc,
                                          cflags=settings.cflags)
    report["kernels"] = []
    for kernel in args.kernels:
        tuning = bench.tune(kernel, kernel.tune_params(args.quick), retune=args.retune)
        bench.progress(f"{kernel.name}: measuring ({rounds} interleaved rounds)")
        report["kernels"].append(measure_kernel(kernel, tuning, quick=args.quick, rounds=rounds,
                                                threads=bench.threads, settings=settings))
    return finish_report(report, bench.out_dir, start, summarize, render_markdown)


def main(argv: list[str] | None = None) -> int:
    return run_main(argv, parse_args, run_benchmark, render_text, missing_figures)


if __name__ == "__main__":
    exit_after(main)
