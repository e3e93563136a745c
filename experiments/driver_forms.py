"""The measurement driver's array forms, side by side, over the corpus: does a nest run as fast in the
user's form as with the driver's static arrays, and does its best stored recipe gain as much in both?

    python -m experiments.driver_forms [--family F ...] [--limit N] [--scale 0.5] [--reps 5] [--json] [--out FILE]
    perfembed bench driver-forms [same options]

For each corpus nest (at the seed build's scaled sizes) one driver holds five kernels, timed interleaved
in one process (the order rotating each repetition, each from fresh inputs): the original and the seed's
best recipe, each in the ``global`` form (the driver's static arrays, the form the first seeds were
measured in) and in the ``parameters`` form (what the source declares as parameters passed to a
function the compiler cannot look through, as in the user's own file: the harness's form), and the
recipe once more with its array parameters ``restrict``-qualified. Every kernel's outputs are verified
against the original's in the global form.

Reported per nest: the original's time in each form and their ratio (parameters / global, with a 95%
interval over the repetitions), and the recipe's speedup in each form. The summary counts the nests whose
original runs within 25% in both forms and those 2x slower in the user's form, and compares the recipes'
speedups (geometric mean, best below 1x counted as 1x; nests at 1.1x or more).
"""

from __future__ import annotations

import argparse
import json
import math
import shlex
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from autotune.seed.build import read_manifest, scaled
from benchmarks.entry import exit_after
from database.seed import best_recipes
from loopnest import Harness, Recipe, apply_recipe, extract_scops, generate_c, verify_outputs
from loopnest.config import get_settings
from loopnest.errors import PerfembedError
from loopnest.harness.compare import interval, kernel_times
from loopnest.harness.driver import synthesize_driver
from loopnest.harness.sandbox import Limits, run_limited
from loopnest.harness.timing_lock import timed_exclusively, working_beside_timers
from loopnest.omp_clauses import reorders_reduction

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ("original/global", "original/parameters", "best/global", "best/parameters", "best/restrict")
FORMS = tuple(name.split("/")[1] for name in KERNELS)


def _ratio(num: Sequence[float], den: Sequence[float]) -> dict[str, float]:
    ratio, low, high = interval([math.log(a / b) for a, b in zip(num, den, strict=True)], 0.95)
    return {"ratio": ratio, "low": low, "high": high}


def measure_nest(file: Path, function: str | None, params: dict[str, int], recipe: Recipe, *, reps: int,
                 threads: int) -> dict[str, Any]:
    """The five kernels of one nest (:data:`KERNELS`), timed interleaved in one run and verified."""
    scop = extract_scops(file, function=function).scops[0]
    limits = Limits.from_settings(get_settings())  # PERFEMBED_TIMING_LOCK and the sandbox as configured
    # Its isl work, compile and verification hold the timing lock shared; its timed run takes it exclusively.
    with working_beside_timers(limits.timing_lock), Harness(scop, params, reps=reps, threads=threads,
                                                            limits=limits) as h:
        best = apply_recipe(scop, recipe, h.dependences)
        texts = [generate_c(best if name.startswith("best") else scop) for name in KERNELS]
        work = h.workdir
        src, exe = work / "forms.c", work / "forms"
        src.write_text(synthesize_driver(scop, texts, h.params, h.layouts, h.inputs, forms=FORMS))
        compiled = run_limited([h.cc, *shlex.split(h.cflags), "-o", str(exe), str(src), "-lm"], cwd=work,
                               limits=h.limits)
        if not compiled.ok:
            return {"status": "compile-error", "message": compiled.describe()[:300]}
        outs = [work / f"out.{k}" for k in range(len(KERNELS))]
        args = [str(exe), *(str(h.params[p]) for p in scop.params), str(reps), *map(str, outs)]
        with timed_exclusively(h.limits.timing_lock):
            ran = run_limited(args, cwd=work, limits=h.limits, env={"OMP_NUM_THREADS": str(threads)},
                              threads=threads)
        if not ran.ok:
            return {"status": ran.status, "message": ran.describe()[:300]}
        for k in range(1, len(KERNELS)):
            check = verify_outputs(outs[0], outs[k], h.layouts, reorders_reduction=k >= 2 and reorders_reduction(best))
            if not check.verified:
                return {"status": "wrong-output", "message": f"{KERNELS[k]}: {check.mismatch}"}
        times = kernel_times(ran.stdout, len(KERNELS))
    return {"status": "ok", "threads": threads, "repetitions": len(times[0]),
            "median_s": {name: statistics.median(ts) for name, ts in zip(KERNELS, times, strict=True)},
            "original_parameters_over_global": _ratio(times[1], times[0]),
            "speedup_global": _ratio(times[0], times[2]), "speedup_parameters": _ratio(times[1], times[3]),
            "speedup_restrict": _ratio(times[1], times[4])}


def summarize(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in rows if r["status"] == "ok"]
    if not ok:
        return {"nests": len(rows), "measured": 0}
    orig = [r["original_parameters_over_global"]["ratio"] for r in ok]
    glob = [max(r["speedup_global"]["ratio"], 1.0) for r in ok]
    par = [max(r["speedup_parameters"]["ratio"], 1.0) for r in ok]
    res = [max(r["speedup_restrict"]["ratio"], 1.0) for r in ok]
    geomean = lambda xs: math.exp(statistics.fmean(math.log(x) for x in xs))  # noqa: E731
    return {
        "nests": len(rows), "measured": len(ok),
        "original_within_25pct": sum(1 / 1.25 <= x <= 1.25 for x in orig),
        "original_parameters_2x_slower": sum(x >= 2.0 for x in orig),
        "original_parameters_2x_faster": sum(x <= 0.5 for x in orig),
        "original_ratio_geomean": geomean(orig),
        "best_speedup_geomean_global": geomean(glob), "best_speedup_geomean_parameters": geomean(par),
        "best_at_least_1.1x_global": sum(x >= 1.1 for x in glob),
        "best_at_least_1.1x_parameters": sum(x >= 1.1 for x in par),
        "best_speedup_geomean_restrict": geomean(res), "best_at_least_1.1x_restrict": sum(x >= 1.1 for x in res),
        "speedups_within_25pct": sum(1 / 1.25 <= p / g <= 1.25 for g, p in zip(glob, par, strict=True)),
    }


def run(families: Sequence[str], limit: int | None, scale: float, reps: int, threads: int,
        seed: Path, manifest: Path, progress: bool = True) -> dict[str, Any]:
    best = best_recipes(seed, per_nest=1)
    entries = [scaled(e, scale) for e in read_manifest(manifest) if not families or e.family in families]
    rows = []
    for n, entry in enumerate(entries[:limit] if limit else entries, start=1):
        row: dict[str, Any] = {"nest": entry.name, "params": entry.params}
        recipes = best.get((entry.name, 0))
        if not recipes:
            row.update(status="no-recipe")
        else:
            try:
                row.update(recipe=recipes[0], **measure_nest(entry.file, entry.function, entry.params,
                                                             Recipe.from_dict(recipes[0]), reps=reps,
                                                             threads=threads))
            except PerfembedError as exc:
                row.update(status="error", message=str(exc)[:300])
        rows.append(row)
        if progress:
            sys.stderr.write(f"[{n}/{len(entries)}] {_line(row)}\n")
    return {"scale": scale, "reps": reps, "threads": threads, "seed": str(seed), "summary": summarize(rows),
            "nests": rows}


def _line(row: dict[str, Any]) -> str:
    if row["status"] != "ok":
        return f"{row['nest']}: {row['status']} {row.get('message', '')}"
    m, o = row["median_s"], row["original_parameters_over_global"]
    return (f"{row['nest']}: original {m['original/global'] * 1e3:.2f} / {m['original/parameters'] * 1e3:.2f} ms "
            f"(x{o['ratio']:.2f} [{o['low']:.2f}, {o['high']:.2f}]); best recipe "
            f"{row['speedup_global']['ratio']:.2f}x / {row['speedup_parameters']['ratio']:.2f}x / "
            f"{row['speedup_restrict']['ratio']:.2f}x (global / parameters / restrict variant)")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", action="append", default=[])
    parser.add_argument("--limit", type=int)
    parser.add_argument("--scale", type=float, default=0.5, help="size factor, as the seed build's --scale")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=Path, default=ROOT / "seed" / "perfembed-seed.jsonl.gz")
    parser.add_argument("--manifest", type=Path, default=ROOT / "corpus" / "generated" / "manifest.json")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", type=Path, help="also write the JSON report here")
    args = parser.parse_args(argv)
    report = run(args.family, args.limit, args.scale, args.reps, args.threads, args.seed, args.manifest)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n")
    if args.json:
        sys.stdout.write(json.dumps(report) + "\n")
        return 0
    s = report["summary"]
    sys.stdout.write("\n".join([f"{k}: {v:.3g}" if isinstance(v, float) else f"{k}: {v}" for k, v in s.items()])
                     + "\n")
    return 0


if __name__ == "__main__":
    exit_after(main)
