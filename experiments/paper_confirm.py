"""The paper benchmark's winners confirmed as the service accepts a recipe: each method's accepted recipe
compared with the baseline interleaved (AB BA ...) in fresh processes until its interval clears the margin.

A report's figures are single measurements, and each method's result is the best of several (transfer:
every candidate of its k neighbours; autotuning: its three best trials re-measured), so run-to-run noise
favours whichever got the luckiest reading: batched/baxpy_2d's transfer winner once read 1.64x in
one run and 1.12x in the next, on the same seed and code. Here every distinct accepted recipe of a nest is
compared once more (:meth:`Harness.compare`, at least :data:`CONFIRM_RUNS` processes); a method keeps its
figure only when the interval's low end clears the margin (the geometric-mean ratio of the pairs then
counts), else the original is kept (1.0x). Evaluations are not changed: a confirmation is not a candidate.

Run after a paper run (``python -m experiments.paper`` does it per nest) or on a saved report:

    python -m experiments.paper_confirm REPORT.json [--url URL] [--data-dir DIR] [--json] [--out FILE.md]

The saved report's nests are rebuilt from the database it was measured on (the same seed loaded).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from benchmarks.entry import exit_after
from database import get_store
from database.config import get_database_settings
from database.records import ensure_local_target
from experiments.paper_nests import rebuild_scop, select_held_out
from experiments.paper_report import summarize, write_report
from loopnest.errors import PerfembedError
from loopnest.harness import Harness, Limits
from loopnest.harness.compare import AcceptancePolicy
from loopnest.harness.timing_lock import working_beside_timers
from loopnest.transform.recipe import Recipe

CONFIRM_RUNS = 3  # fresh processes before a comparison may decide (5 pairs each)
CONFIRM_POLICY = AcceptancePolicy(pairs_per_run=5, max_pairs=40, min_runs=CONFIRM_RUNS)
METHODS = ("transfer", "autotune")


def winners(row: Mapping[str, Any]) -> dict[str, Recipe]:
    """The distinct recipes a nest's methods accepted (every k and budget), by recipe hash."""
    out: dict[str, Recipe] = {}
    for kind in METHODS:
        for cell in row[kind].values():
            if cell.get("accepted") and cell.get("recipe"):
                recipe = Recipe.from_dict(cell["recipe"])
                out.setdefault(recipe.hash, recipe)
    return out


def confirm_row(harness: Any, row: Mapping[str, Any], policy: AcceptancePolicy = CONFIRM_POLICY) -> dict[str, Any]:
    """Each accepted recipe of ``row`` compared in ``harness``; what each method's cell becomes."""
    compared: dict[str, dict[str, Any]] = {}
    for key, recipe in winners(row).items():
        try:
            cmp = harness.compare(recipe, policy=policy)
            compared[key] = {"status": cmp.status, "message": cmp.message[:300],
                             "speedup": cmp.speedup.to_dict() if cmp.speedup else None}
        except Exception as exc:  # as in RecipeCache: a broken recipe costs its own confirmation only
            compared[key] = {"status": "error", "message": f"{type(exc).__name__}: {exc}"[:300], "speedup": None}
    cells = {kind: {budget: confirmed_cell(cell, compared, policy.margin) for budget, cell in row[kind].items()}
             for kind in METHODS}
    return {"recipes": compared, **cells}


def confirmed_cell(cell: Mapping[str, Any], compared: Mapping[str, Mapping[str, Any]], margin: float) -> dict[str, Any]:
    """A method's result after confirmation: its comparison's ratio when the interval clears ``margin``, else 1.0
    (``held`` None: the method had kept the original, nothing to confirm)."""
    if not cell.get("accepted") or not cell.get("recipe"):
        return {"speedup": 1.0, "accepted": False, "held": None}
    result = compared.get(Recipe.from_dict(cell["recipe"]).hash) or {"status": "not compared", "speedup": None}
    sp = result.get("speedup")
    if sp is None:
        return {"speedup": 1.0, "accepted": False, "held": False, "status": result["status"]}
    held = sp["low"] > margin
    return {"speedup": sp["ratio"] if held else 1.0, "accepted": held, "held": held, "ratio": sp["ratio"],
            "low": sp["low"], "high": sp["high"], "pairs": sp["pairs"], "status": result["status"]}


def confirmed_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows with each method's speedup and acceptance replaced by the confirmed ones (evaluations kept),
    for :func:`summarize`; rows without a confirmation are left out."""
    out = []
    for row in rows:
        conf = row.get("confirmed")
        if not conf:
            continue
        new = dict(row)
        for kind in METHODS:
            new[kind] = {budget: {**cell, "speedup": conf[kind][budget]["speedup"],
                                  "accepted": conf[kind][budget]["accepted"]} for budget, cell in row[kind].items()}
        out.append(new)
    return out


def confirmed_summary(report: Mapping[str, Any], policy: AcceptancePolicy = CONFIRM_POLICY) -> dict[str, Any]:
    """The report's summary over the confirmed figures, and how many winners held up."""
    cfg = report["config"]
    rows = confirmed_rows(report["nests"])
    polly = cfg.get("polly", {})
    summary = summarize(rows, cfg["k_values"], cfg["tune_trials"], polly_requested=bool(polly.get("requested")),
                        polly_available=bool(polly.get("available")))
    cells = [c for r in rows for kind in METHODS for c in r["confirmed"][kind].values() if c["held"] is not None]
    recipes = [c for r in rows for c in r["confirmed"]["recipes"].values()]
    return {"policy": asdict(policy), "nests": len(rows), "summary": summary,
            "held": sum(bool(c["held"]) for c in cells), "confirmed_cells": len(cells),
            "recipes_compared": len(recipes),
            "loaded": sum(bool((c.get("speedup") or {}).get("loaded")) for c in recipes)}


def confirm_report(report: dict[str, Any], url: str, *, margin: float | None = None,
                   progress: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Confirm a saved report's winners on the database at ``url`` (the seed it was measured on); the
    report with ``confirmed`` in every row it could rebuild and the confirmed summary beside the summary."""
    cfg = report["config"]
    store = get_store(url)
    settings = get_database_settings()
    target_id = ensure_local_target(store, cc=cfg["cc"]).id
    selection = select_held_out(store, target_id, per_family=cfg["per_family"], families=cfg["families"])
    held_by_id = {h.nest_id: h for h in selection.held}
    policy = replace(CONFIRM_POLICY, margin=margin or cfg["min_speedup"])
    limits = Limits.from_settings(settings)
    with tempfile.TemporaryDirectory(prefix="perfembed-confirm-") as scratch:
        for pos, row in enumerate(report["nests"]):
            held = held_by_id.get(row["nest_id"])
            if held is None or held.name != row["name"]:
                row["confirmed"] = None  # the database is not the one measured: never confirm another nest
                continue
            try:
                scop = rebuild_scop(held, Path(scratch))
            except (LookupError, PerfembedError):  # measured before, but the source no longer extracts here
                row["confirmed"] = None
                continue
            with working_beside_timers(settings.timing_lock), \
                    Harness(scop, row["params"], reps=cfg["reps"], threads=cfg["threads"], limits=limits, cc=cfg["cc"],
                            cflags=cfg["cflags"]) as harness:  # no work of ours beside another's timed run
                row["confirmed"] = confirm_row(harness, row, policy)
            if progress is not None:
                line = confirmed_line(row["confirmed"], cfg["k_values"][-1], cfg["tune_trials"][-1])
                progress(f"[{pos + 1}/{len(report['nests'])}] {row['name']} {line}")
    report["confirmed"] = confirmed_summary(report, policy)
    return report


def confirmed_line(conf: Mapping[str, Any], k: int, n: int) -> str:
    """A confirmed nest in a few words: transfer k's and autotune n's confirmed figures."""
    return f"T{k} {conf['transfer'][str(k)]['speedup']:.2f}x A{n} {conf['autotune'][str(n)]['speedup']:.2f}x"


REPORT_CONFIG = ("k_values", "tune_trials", "per_family", "families", "reps", "threads", "cc", "cflags", "min_speedup")


def _missing_fields(report: Any) -> str:
    """The first field a saved paper report lacks (what :func:`confirm_report` reads), or ""."""
    if not isinstance(report, dict) or not isinstance(report.get("config"), dict):
        return "config"
    if not isinstance(report.get("nests"), list):
        return "nests"
    return next((f"config.{key}" for key in REPORT_CONFIG if key not in report["config"]), "")


def main(argv: list[str] | None = None) -> int:
    """The command line: confirm a saved report, write it back (JSON on stdout with ``--json``)."""
    parser = argparse.ArgumentParser(description="Confirm a paper benchmark report's winners by interleaved "
                                                 "re-measurement.")
    parser.add_argument("report", type=Path, help="the JSON report of a paper run")
    parser.add_argument("--url", default=None, help="database URL the run used (default: PERFEMBED_* settings)")
    parser.add_argument("--json", action="store_true", help="print the confirmed report as one JSON object")
    parser.add_argument("--out", default="", help="markdown report to write ('' for none)")
    args = parser.parse_args(argv)
    try:
        report = json.loads(args.report.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        print(f"error: {args.report}: not a readable JSON report ({exc})", file=sys.stderr)
        return 2
    url = args.url or get_database_settings().resolved_database_url
    missing = _missing_fields(report)
    if missing:
        print(f"error: {args.report}: not a paper benchmark report (no {missing})", file=sys.stderr)
        return 2
    try:
        report = confirm_report(report, url, progress=lambda line: print(line, file=sys.stderr, flush=True))
    except PerfembedError as exc:  # e.g. a database without the tuned nests the report held out
        print(f"error: {exc}", file=sys.stderr)
        return getattr(exc, "exit_code", 2)
    if args.out:
        write_report(report, Path(args.out))
    if args.json:
        sys.stdout.write(json.dumps(report, default=str) + "\n")
    else:
        for target in report["confirmed"]["summary"]["targets"].values():
            print(f"confirmed: {target['name']}: {target['status']}")
    return 0


if __name__ == "__main__":
    exit_after(main)
