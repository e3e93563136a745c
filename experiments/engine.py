"""Engine benchmark: analysis time per corpus kernel, compile+run overhead per variant, and the
speedup of a tiled, interchanged, parallel gemm at 1000^3 over ``gcc -O3 -march=native``.

    python -m experiments.engine [--json] [--skip-gemm] [--gemm-n 1000]

Targets: analysis < 200 ms for a ~100-line kernel; a variant compiled in < 0.5 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from benchmarks._entry import exit_after
from loopnest import (
    Harness,
    PreprocessOptions,
    Recipe,
    compute_dependences,
    describe_scop,
    extract_scops,
)
from loopnest.config import get_settings
from loopnest.harness.sandbox import Limits

ROOT = Path(__file__).resolve().parents[1]

GEMM_RECIPE = {"steps": [{"op": "interchange", "order": [0, 2, 1]},
                         {"op": "tile", "loops": [0, 1, 2], "sizes": [32, 64, 256]},
                         {"op": "parallelize", "loop": 0}]}
ANALYSIS_TARGET_S = 0.200
COMPILE_TARGET_S = 0.5


def analysis_times(expected: dict) -> list[dict]:
    rows = []
    for rel, spec in sorted(expected.items()):
        path = ROOT / rel
        options = PreprocessOptions(tuple(str(ROOT / d) for d in spec.get("include_dirs", [])))
        samples = []
        for _ in range(3):
            start = time.perf_counter()
            extraction = extract_scops(path, options)
            for scop in extraction.scops:
                describe_scop(scop, spec["params"], compute_dependences(scop))
            samples.append(time.perf_counter() - start)
        rows.append({"kernel": rel, "lines": len(path.read_text().splitlines()),
                     "nests": len(extraction.scops), "seconds": statistics.median(samples)})
    return rows


def variant_overheads(expected: dict, kernels: list[str]) -> list[dict]:
    rows = []
    for rel in kernels:
        spec = expected[rel]
        scop = extract_scops(ROOT / rel).scops[0]
        params = {k: min(v, 32) for k, v in spec["params"].items()}
        with Harness(scop, params, reps=1, limits=Limits.from_settings(get_settings())) as harness:
            base = harness.baseline()
            start = time.perf_counter()
            ev = harness.evaluate(Recipe.from_dict({"steps": [{"op": "unroll", "loop": scop.depth - 1,
                                                                "factor": 2}]}))
            total = time.perf_counter() - start
            rows.append({"kernel": rel, "compile_s": ev.variant.compile_seconds, "evaluate_s": total,
                         "baseline_compile_s": base.compile_seconds, "verified": ev.verified})
    return rows


def gemm(n: int) -> dict:
    scop = extract_scops(ROOT / "corpus/kernels/blas3/gemm_ijk.c").scops[0]
    with Harness(scop, {"ni": n, "nj": n, "nk": n}, reps=3, limits=Limits.from_settings(get_settings())) as harness:
        base = harness.baseline()
        ev = harness.evaluate(Recipe.from_dict(GEMM_RECIPE))
    return {"n": n, "threads": harness.threads, "recipe": GEMM_RECIPE, "baseline_s": base.median,
            "variant_s": ev.variant.median, "speedup": ev.speedup, "verified": ev.verified,
            "max_rel_error": ev.verification.max_rel_error if ev.verification else None}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--skip-gemm", action="store_true")
    parser.add_argument("--gemm-n", type=int, default=1000)
    args = parser.parse_args()
    expected = json.loads((ROOT / "corpus/expected.json").read_text())
    analysis = analysis_times(expected)
    largest = max(analysis, key=lambda r: r["lines"])
    overheads = variant_overheads(expected, ["corpus/kernels/blas3/gemm_ijk.c", "corpus/kernels/stencil/jacobi2d.c",
                                             "corpus/kernels/conv/conv_layer.c"])
    result = {
        "analysis": analysis,
        "analysis_median_s": statistics.median(r["seconds"] for r in analysis),
        "analysis_max_s": max(r["seconds"] for r in analysis),
        "largest_kernel": largest,
        "analysis_target_met": largest["seconds"] < ANALYSIS_TARGET_S,
        "variants": overheads,
        "compile_median_s": statistics.median(r["compile_s"] for r in overheads),
        "compile_target_met": max(r["compile_s"] for r in overheads) < COMPILE_TARGET_S,
    }
    if not args.skip_gemm:
        result["gemm"] = gemm(args.gemm_n)
    if args.json:
        print(json.dumps(result))
        return 0
    print(f"{'kernel':58s} {'lines':>5s} {'nests':>5s} {'analysis ms':>11s}")
    for r in analysis:
        print(f"{r['kernel']:58s} {r['lines']:5d} {r['nests']:5d} {1000 * r['seconds']:11.1f}")
    print(f"\nanalysis: median {1000 * result['analysis_median_s']:.1f} ms, "
          f"max {1000 * result['analysis_max_s']:.1f} ms; "
          f"largest kernel ({largest['lines']} lines) {1000 * largest['seconds']:.1f} ms "
          f"[target < {1000 * ANALYSIS_TARGET_S:.0f} ms: {'PASS' if result['analysis_target_met'] else 'FAIL'}]")
    for r in overheads:
        print(f"variant of {r['kernel']}: compile {r['compile_s']:.3f} s, "
              f"compile+run+verify {r['evaluate_s']:.3f} s, "
              f"verified={r['verified']}")
    print(f"compile target < {COMPILE_TARGET_S} s: {'PASS' if result['compile_target_met'] else 'FAIL'}")
    if "gemm" in result:
        g = result["gemm"]
        print(f"\ngemm {g['n']}^3, {g['threads']} threads: baseline {g['baseline_s']:.3f} s, "
              f"tiled+interchanged+parallel "
              f"{g['variant_s']:.3f} s, speedup {g['speedup']:.2f}x (baseline measured in the same run), "
              f"verified={g['verified']}")
    return 0


if __name__ == "__main__":
    exit_after(main)
