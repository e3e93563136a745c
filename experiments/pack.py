"""Packing on gemm: the original, a tiled recipe, and the same recipe with ``pack`` steps, timed
interleaved in one driver (ABC BCA CAB ...: each from fresh inputs, so all three see the same
process, caches and load), in several fresh processes.

    python -m experiments.pack [--n 1000] [--threads 2] [--reps 6] [--runs 3] [--sizes 32,64,256] [--jam F] [--json]

Reported: each kernel's median time and GFLOP/s, and the speedups (geometric mean of the per-
repetition ratios, with a 95% bootstrap interval) of tile over the original, tile+pack over the
original and tile+pack over tile. Every variant's outputs are verified against the original's.
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import statistics
import sys
from pathlib import Path
from typing import Any

from benchmarks.entry import exit_after
from loopnest import Harness, Recipe, apply_recipe, extract_scops, generate_c, verify_outputs
from loopnest.config import get_settings
from loopnest.harness.compare import interval, kernel_times
from loopnest.harness.driver import synthesize_driver
from loopnest.harness.sandbox import Limits, run_limited
from loopnest.harness.timing_lock import timed_exclusively, working_beside_timers

ROOT = Path(__file__).resolve().parents[1]

GEMM = ROOT / "corpus" / "kernels" / "blas3" / "gemm_ijk.c"
NAMES = ("original", "tile", "tile+pack")


def recipes(sizes: list[int], jam: int = 0) -> dict[str, Recipe]:
    """ikj order, tiled, the outer tile loop parallel, the innermost loop SIMD (or, with ``jam``, the
    i point loop unrolled and jammed by that factor); with packing, the block of A (i x k) copied at
    the k tile loop (it does not depend on j) and B's (k x j) at the j tile loop."""
    head = [{"op": "interchange", "order": [0, 2, 1]}, {"op": "tile", "loops": [0, 1, 2], "sizes": sizes}]
    tail = [{"op": "parallelize", "loop": 0},
            {"op": "unroll_jam", "loop": 3, "factor": jam} if jam else {"op": "vectorize", "loop": 5}]
    packs = [{"op": "pack", "array": "A", "loop": 1}, {"op": "pack", "array": "B", "loop": 2}]
    return {"tile": Recipe.from_dict(head + tail), "tile+pack": Recipe.from_dict(head + packs + tail)}


def measure(n: int, threads: int, reps: int, runs: int, sizes: list[int], jam: int = 0) -> dict[str, Any]:
    scop = extract_scops(GEMM).scops[0]
    params = {"ni": n, "nj": n, "nk": n}
    # Its isl work, compile and verification hold the timing lock shared (another process's timed run
    # waits for them); its timed runs take it exclusively.
    limits = Limits.from_settings(get_settings())  # PERFEMBED_TIMING_LOCK and the sandbox as configured
    with working_beside_timers(limits.timing_lock), Harness(scop, params, reps=reps, threads=threads,
                                                            limits=limits) as h:
        variants = {name: apply_recipe(scop, recipe, h.dependences) for name, recipe in recipes(sizes, jam).items()}
        kernels = [generate_c(scop), *(generate_c(v) for v in variants.values())]
        work = h.workdir
        src, exe = work / "pack_bench.c", work / "pack_bench"
        src.write_text(synthesize_driver(scop, kernels, h.params, h.layouts))
        compiled = run_limited([h.cc, *shlex.split(h.cflags), "-o", str(exe), str(src), "-lm"], cwd=work,
                               limits=h.limits)
        if not compiled.ok:
            raise SystemExit(f"compile failed: {compiled.describe()}")
        times: list[list[float]] = [[] for _ in kernels]
        errors = [0.0] * len(kernels)
        for run in range(runs):
            outs = [work / f"out{run}.{k}" for k in range(len(kernels))]
            args = [str(exe), *(str(h.params[p]) for p in scop.params), str(reps), *map(str, outs)]
            with timed_exclusively(h.limits.timing_lock):
                ran = run_limited(args, cwd=work, limits=h.limits, env={"OMP_NUM_THREADS": str(threads)},
                                  threads=threads)
            if not ran.ok:
                raise SystemExit(f"run failed: {ran.describe()}")
            for k in range(1, len(kernels)):
                check = verify_outputs(outs[0], outs[k], h.layouts)
                if not check.verified:
                    raise SystemExit(f"{NAMES[k]}: wrong output ({check.mismatch})")
                errors[k] = max(errors[k], check.max_rel_error)
            for k, ts in enumerate(kernel_times(ran.stdout, len(kernels))):
                times[k] += ts
    flops = 2.0 * n**3
    report: dict[str, Any] = {"n": n, "threads": threads, "pairs": len(times[0]), "tile_sizes": sizes,
                              "recipes": {k: r.to_dict() for k, r in recipes(sizes, jam).items()}, "kernels": {}}
    for name, ts, error in zip(NAMES, times, errors, strict=True):
        median = statistics.median(ts)
        report["kernels"][name] = {"median_s": median, "gflops": flops / median / 1e9, "max_rel_error": error}
    for a, b in ((0, 1), (0, 2), (1, 2)):
        ratio, low, high = interval([math.log(x / y) for x, y in zip(times[a], times[b], strict=True)], 0.95)
        report[f"{NAMES[b]} vs {NAMES[a]}"] = {"speedup": ratio, "low": low, "high": high}
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--reps", type=int, default=6)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="32,64,256", help="tile sizes of i, k, j")
    parser.add_argument("--jam", type=int, default=0, help="unroll-and-jam i by this factor instead of SIMD")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    report = measure(args.n, args.threads, args.reps, args.runs, [int(s) for s in args.sizes.split(",")], args.jam)
    if args.json:
        sys.stdout.write(json.dumps(report, indent=2) + "\n")
        return 0
    lines = [f"gemm {args.n}^3, {args.threads} threads, {report['pairs']} interleaved repetitions, tiles {args.sizes}"
             + (f", i jammed by {args.jam}" if args.jam else "")]
    for name, k in report["kernels"].items():
        lines.append(f"  {name:10s} {k['median_s']:.4f} s  {k['gflops']:.1f} GFLOP/s  "
                     f"max rel err {k['max_rel_error']:.2g}")
    for key in ("tile vs original", "tile+pack vs original", "tile+pack vs tile"):
        s = report[key]
        lines.append(f"  {key:22s} {s['speedup']:.2f}x [{s['low']:.2f}, {s['high']:.2f}]")
    sys.stdout.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    exit_after(main)
