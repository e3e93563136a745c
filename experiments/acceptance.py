"""Does acceptance hold up? Transfer on held-out corpus nests and on the programs in ``examples/``,
then every verified candidate re-measured in 10 fresh processes, on an idle machine and with a CPU
hog on one core.

    python -m experiments.acceptance [--per-family 1] [--families a,b] [--fresh 10] [--hog] [--json]

Reported, per condition (idle, hog):
- slower: the share of accepted recipes that the re-measurement finds slower than the baseline (target 0);
- error: the median of |claimed / re-measured - 1| over accepted recipes (target <= 5%);
- missed: the share of nests with a truly faster candidate (re-measured interval above the margin)
  for which acceptance accepted nothing.
The database is the one in ``PERFEMBED_DATA_DIR`` (``make serve`` loads the seed there).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from autotune.config import get_autotune_settings
from autotune.transfer import TransferTuner
from benchmarks.entry import exit_after
from database import best_recipe_for, get_store
from database.embedding_store import EmbeddingStore
from database.neighbourhood import targets_by_preference
from database.records import ensure_local_target
from experiments.paper_nests import neighbours_outside, rebuild_scop, select_held_out
from loopnest.errors import PerfembedError
from loopnest.frontend.extract import extract_scops
from loopnest.frontend.program import program_from_file
from loopnest.harness import Harness, Limits
from loopnest.harness.compare import AcceptancePolicy
from loopnest.harness.program import ProgramSpec, compare_programs
from service.core import SuggestOptions, TransferCore
from service.core.program import tuned_source

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = {"heat2d.c": ("heat", {"n": 1200, "steps": 40}), "matmul.c": ("matmul", {"n": 800})}


@contextmanager
def cpu_hog(enabled: bool) -> Iterator[None]:
    """A busy loop pinned to the last core for the duration (nothing when not ``enabled``)."""
    if not enabled:
        yield
        return
    core = (os.cpu_count() or 1) - 1
    hog = subprocess.Popen([sys.executable, "-c", f"import os; os.sched_setaffinity(0, {{{core}}})\nwhile True: pass"])
    try:
        time.sleep(0.5)
        yield
    finally:
        hog.kill()
        hog.wait()


def remeasure(harness: Any, recipe: Any, fresh: int) -> Any:
    """The recipe's speedup from ``fresh`` fresh processes of 5 interleaved pairs each."""
    policy = AcceptancePolicy(pairs_per_run=5, max_pairs=5 * fresh, min_runs=fresh)
    comparison = harness.compare(recipe, policy=policy)
    return comparison.speedup


def nest_rows(settings: Any, store: Any, per_family: int, families: list[str] | None, fresh: int) -> list[dict]:
    es = EmbeddingStore.for_store(store, data_dir=settings.data_dir)
    selection, target = None, None
    with store.session() as session:  # this machine's target, else the seed's (as the core falls back)
        preferred = targets_by_preference(session, ensure_local_target(store, cc=settings.cc).id)
    for candidate in preferred:
        with contextlib.suppress(PerfembedError):
            selection = select_held_out(store, candidate, per_family=per_family, families=families)
            target = candidate
            break
    if selection is None or target is None:
        raise SystemExit("no tuned nests in the database: load the seed first (make serve, or perfembed seed load)")
    policy = AcceptancePolicy.from_settings(settings)
    rows = []
    with tempfile.TemporaryDirectory(prefix="perfembed-acceptance-") as tmp:
        for held in selection.held:
            scop = rebuild_scop(held, Path(tmp))
            with store.session() as session:
                ranked = best_recipe_for(session, nest_id=held.nest_id, target_id=target)
            params = {k: int(v) for k, v in ranked.measurement.params.items()} if ranked else {}
            neighbours = neighbours_outside(store, es, held.features, k=5, target_id=target,
                                            exclude=selection.family_ids[held.family], settings=settings,
                                            min_speedup=policy.margin)
            with Harness(scop, params, reps=3, threads=settings.threads or None,
                         limits=Limits.from_settings(settings)) as harness:
                result = TransferTuner(policy=policy).evaluate(harness, neighbours)
                truth = {c.recipe.hash: remeasure(harness, c.recipe, fresh) for c in result.candidates if c.verified}
            rows.append(_row(f"{held.name}#{held.index}", result, truth, policy.margin))
            print(f"  {rows[-1]['name']}: {rows[-1]['summary']}", file=sys.stderr)
    return rows


def _row(name: str, result: Any, truth: dict[str, Any], margin: float) -> dict[str, Any]:
    best = result.best
    claimed = best.confirmed if best is not None else None
    actual = truth.get(best.recipe.hash) if best is not None else None
    truly_faster = [h for h, s in truth.items() if s is not None and s.above(margin)]
    summary = (f"accepted {claimed.describe()}, re-measured {actual.describe()}" if claimed and actual else
               f"nothing accepted; {len(truly_faster)} of {len(truth)} verified candidates truly faster")
    return {"name": name, "accepted": best is not None, "claimed": claimed.ratio if claimed else None,
            "remeasured": actual.ratio if actual else None, "truly_faster": len(truly_faster),
            "verified": len(truth), "loaded": bool(claimed and claimed.loaded), "summary": summary}


def program_rows(settings: Any, store: Any, fresh: int) -> list[dict]:
    policy = AcceptancePolicy.from_settings(settings)
    rows = []
    for file, (function, params) in EXAMPLES.items():
        path = ROOT / "examples" / file
        program = program_from_file(path, params=params, function=function)
        result = TransferCore(store, settings).suggest(program, SuggestOptions(k=5, evaluate=True, name=file)).to_dict()
        text, tuned = tuned_source(path, extract_scops(path, function=function).scops, result)
        spec = ProgramSpec(cc=settings.cc, cflags=settings.cflags, threads=settings.threads or os.cpu_count() or 1)
        claimed = compare_programs(path.read_text(), text, spec, name=file, policy=replace(policy, max_pairs=15))
        speedup = claimed.speedup
        accepted = tuned > 0 and claimed.ok and speedup is not None and speedup.above(policy.margin)
        actual = compare_programs(path.read_text(), text, spec, name=file,
                                  policy=replace(policy, max_pairs=fresh, min_runs=fresh)) if accepted else None
        row = {"name": f"examples/{file}", "accepted": accepted,
               "claimed": speedup.ratio if accepted and speedup else None,
               "remeasured": actual.speedup.ratio if actual and actual.speedup else None,
               "truly_faster": int(bool(actual and actual.speedup and actual.speedup.above(policy.margin))),
               "verified": tuned, "loaded": bool(accepted and speedup and speedup.loaded),
               "summary": (f"program accepted {speedup.describe()}" if accepted and speedup
                           else f"program not accepted ({claimed.status}"
                                + (f", {speedup.describe()})" if speedup else ")"))}
        rows.append(row)
        print(f"  {row['name']}: {row['summary']}", file=sys.stderr)
    return rows


def summarize(rows: list[dict]) -> dict[str, Any]:
    accepted = [r for r in rows if r["accepted"] and r["remeasured"]]
    errors = [abs(r["claimed"] / r["remeasured"] - 1.0) for r in accepted]
    with_truth = [r for r in rows if r["truly_faster"]]
    return {"nests": len(rows), "accepted": len(accepted),
            "slower_than_baseline": sum(r["remeasured"] < 1.0 for r in accepted) / len(accepted) if accepted else 0.0,
            "median_error": statistics.median(errors) if errors else None,
            "missed": sum(not r["accepted"] for r in with_truth) / len(with_truth) if with_truth else 0.0,
            "truly_faster_nests": len(with_truth), "loaded": sum(r["loaded"] for r in rows)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--per-family", type=int, default=1)
    parser.add_argument("--families", type=lambda t: [f for f in t.split(",") if f], default=None)
    parser.add_argument("--fresh", type=int, default=10, help="fresh processes of the re-measurement")
    parser.add_argument("--hog", action="store_true", help="also run with a CPU hog on one core")
    parser.add_argument("--no-programs", action="store_true", help="skip the examples/ programs")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    settings = get_autotune_settings()
    store = get_store(settings.resolved_database_url)
    report: dict[str, Any] = {"threads": settings.threads or os.cpu_count(), "fresh": args.fresh, "conditions": {}}
    for condition in ["idle", "hog"] if args.hog else ["idle"]:
        print(f"{condition}:", file=sys.stderr)
        start = time.perf_counter()
        with cpu_hog(condition == "hog"):
            rows = nest_rows(settings, store, args.per_family, args.families, args.fresh)
            if not args.no_programs:
                rows += program_rows(settings, store, args.fresh)
        report["conditions"][condition] = {"summary": summarize(rows), "rows": rows,
                                           "seconds": round(time.perf_counter() - start, 1)}
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        for condition, data in report["conditions"].items():
            s = data["summary"]
            error = "-" if s["median_error"] is None else f"{s['median_error']:.1%}"
            print(f"{condition}: {s['accepted']} of {s['nests']} accepted; slower than baseline "
                  f"{s['slower_than_baseline']:.0%} (target 0); median claim error {error} (target <= 5%); "
                  f"missed {s['missed']:.0%} of {s['truly_faster_nests']} truly faster; "
                  f"{s['loaded']} flagged as loaded; {data['seconds']} s")
    return 0


if __name__ == "__main__":
    exit_after(main)
