"""Transfer tuning vs autotuning, leave one family out (the issue-4 view of ``experiments/paper.py``).

    python -m experiments.transfer [--json] [--url URL] [--per-family N] [--families F ...]
                                  [--k 1,3,5] [--tune-trials 10,25,100] [--polly] [--out FILE.md]

Same run as the paper benchmark (one harness per held-out nest; autotuning fresh in a scratch storage,
its winners re-measured beside the transfer candidates), Polly off unless ``--polly``. Prints the
speedup and the evaluations of each method; ``--json`` prints one JSON object (the full report plus a
``transfer_vs_autotune`` section); ``--out`` also writes the markdown report and plot.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import Any

from autotune.config import get_autotune_settings
from benchmarks.entry import exit_after
from experiments.paper import ProgressEvent, build_parser, config_from_args, run_paper_benchmark


def transfer_view(report: Mapping[str, Any]) -> dict[str, Any]:
    """Per method: geomean speedup and mean evaluations; per nest: each method's speedup and evaluations."""
    summary = report["summary"]
    methods = [{k: m.get(k) for k in ("method", "geomean_speedup", "mean_evaluations", "nests", "accepted")}
               for m in summary["methods"] if m["kind"] in ("transfer", "autotune", "baseline")]
    nests = []
    for row in report["nests"]:
        nests.append({
            "name": row["name"], "family": row["family"], "baseline_s": row["baseline_s"],
            "transfer": {k: {"speedup": t["speedup"], "evaluations": t["evaluations"], "accepted": t["accepted"]}
                         for k, t in row["transfer"].items()},
            "autotune": {n: {"speedup": a["speedup"], "evaluations": a["evaluations"], "accepted": a["accepted"]}
                         for n, a in row["autotune"].items()},
        })
    return {"methods": methods, "near_autotune": summary["near_autotune"], "target_a": summary["targets"]["a"],
            "nests": nests}


def render(report: Mapping[str, Any]) -> str:
    view = transfer_view(report)
    cfg = report["config"]
    head = ["nest", "base ms"] + [f"T{k}" for k in cfg["k_values"]] + [f"A{n}" for n in cfg["tune_trials"]]
    lines = ["  ".join(f"{h:>14}" if i else f"{h:<32}" for i, h in enumerate(head))]
    for row in view["nests"]:
        cells = [f"{row['name']:<32}", f"{row['baseline_s'] * 1e3:>14.2f}"]
        for part in ("transfer", "autotune"):
            for item in row[part].values():
                cells.append(f"{item['speedup']:>8.2f}x ({item['evaluations']:>3})")
        lines.append("  ".join(cells))
    lines.append("")
    for m in view["methods"]:
        gm, ev = m["geomean_speedup"], m["mean_evaluations"]
        lines.append(f"{m['method']:<16} geomean {'-' if gm is None else f'{gm:.2f}x':>7}   mean evaluations "
                     f"{'-' if ev is None else f'{ev:.1f}':>6}")
    near = view["near_autotune"]
    lines.append(f"transfer >= 90% of {near['reference']}: "
                 + ", ".join(f"{k} {v:.0%}" for k, v in near.items()
                             if k not in ("reference", "threshold") and v is not None))
    lines.append(f"target (a): {view['target_a']['status']}: {view['target_a']['name']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser("Transfer tuning vs autotuning, leave one family out.")
    parser.add_argument("--polly", action="store_true", help="also compare with clang-16 + Polly")
    parser.add_argument("--out", default=None, help="also write this markdown report and its plot")
    args = parser.parse_args(argv)
    settings = get_autotune_settings()

    def progress(event: ProgressEvent) -> None:
        if not args.json and event.phase in ("done", "skip"):
            print(f"[{event.index}/{event.total}] {event.name}: {event.detail}", file=sys.stderr, flush=True)

    report = run_paper_benchmark(args.url or settings.resolved_database_url,
                                 data_dir=args.data_dir or settings.data_dir,
                                 config=config_from_args(args, polly=args.polly), out=args.out, settings=settings,
                                 progress=progress)
    if args.json:
        sys.stdout.write(json.dumps({**report, "transfer_vs_autotune": transfer_view(report)}, default=str) + "\n")
    else:
        print(render(report))
    return 0


if __name__ == "__main__":
    exit_after(main)
