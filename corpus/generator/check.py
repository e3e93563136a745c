"""``--check``: every generated file parses into exactly one nest with no rejection, its parameters are
the manifest's, it stays in bounds at small parameter values, and its baseline builds and runs."""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

from corpus.generator import small_params
from loopnest import Harness, extract_scops
from loopnest.harness.driver import array_layouts


def check_entry(out: str, entry: dict[str, Any], run: bool = True) -> dict[str, Any]:
    """Check one manifest entry; returns {"file", "family", "ok", "error", "ms"}."""
    result: dict[str, Any] = {"file": entry["file"], "family": entry["family"], "ok": False, "error": "", "ms": None}
    try:
        ex = extract_scops(Path(out) / entry["file"])
        if ex.rejected or len(ex.scops) != 1:
            result["error"] = f"{len(ex.scops)} nests, rejected: {[r.construct for r in ex.rejected]}"
            return result
        scop = ex.scops[0]
        if scop.region.function != entry["function"]:
            result["error"] = f"nest in function {scop.region.function}, manifest says {entry['function']}"
            return result
        if set(scop.params) != set(entry["params"]):
            result["error"] = f"parameters {sorted(scop.params)} != manifest {sorted(entry['params'])}"
            return result
        array_layouts(scop, small_params(entry["params"]))
        if run:
            with Harness(scop, entry["params"], reps=1) as harness:
                base = harness.baseline()
            if not base.ok:
                result["error"] = f"baseline {base.status}: {base.message}"
                return result
            result["ms"] = 1e3 * (base.median or 0.0)
        result["ok"] = True
    except Exception as exc:  # every failure is reported, none stops the check
        result["error"] = f"{type(exc).__name__}: {exc}"
    return result


def run_check(out: Path, workers: int = 2, run: bool = True) -> list[dict[str, Any]]:
    entries = json.loads((Path(out) / "manifest.json").read_text())
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(check_entry, str(out), e, run) for e in entries]
        return [f.result() for f in futures]


def summary(entries: list[dict[str, Any]], results: list[dict[str, Any]], lo_ms: float = 5.0,
            hi_ms: float = 200.0) -> str:
    lines = []
    fams: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        fams[r["family"]].append(r)
    types = Counter(e["element_type"] for e in entries)
    lines.append(f"{len(entries)} nests in {len(fams)} families; element types: "
                 + ", ".join(f"{t} {c}" for t, c in sorted(types.items())))
    lines.append(f"{'family':<16}{'nests':>6}{'fail':>6}{'min ms':>9}{'median':>9}{'max ms':>9}{'outside':>9}")
    for fam, rs in fams.items():
        ms = [r["ms"] for r in rs if r["ms"] is not None]
        outside = sum(1 for m in ms if not lo_ms <= m <= hi_ms)
        fails = sum(1 for r in rs if not r["ok"])
        if ms:
            lines.append(f"{fam:<16}{len(rs):>6}{fails:>6}{min(ms):>9.1f}{statistics.median(ms):>9.1f}"
                         f"{max(ms):>9.1f}{outside:>9}")
        else:
            lines.append(f"{fam:<16}{len(rs):>6}{fails:>6}")
    ms = [r["ms"] for r in results if r["ms"] is not None]
    if ms:
        outside = [r for r in results if r["ms"] is not None and not lo_ms <= r["ms"] <= hi_ms]
        lines.append(f"baseline times: min {min(ms):.1f} ms, median {statistics.median(ms):.1f} ms, "
                     f"max {max(ms):.1f} ms; {len(outside)} outside {lo_ms:g}-{hi_ms:g} ms")
        for r in outside:
            lines.append(f"  outside: {r['file']} {r['ms']:.1f} ms")
    failures = [r for r in results if not r["ok"]]
    lines.append(f"failures: {len(failures)}")
    for r in failures:
        lines.append(f"  FAIL {r['file']}: {r['error']}")
    return "\n".join(lines)
