"""The service benchmark's dashboard part: each page loaded by one client, checked against its target."""

from __future__ import annotations

import sys
import time
from typing import Any

import httpx

PAGE_TARGET_MS = 1000.0


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    rank = (len(sorted_values) - 1) * q / 100
    low = int(rank)
    high = min(low + 1, len(sorted_values) - 1)
    return sorted_values[low] + (sorted_values[high] - sorted_values[low]) * (rank - low)


def page_loads(url: str, probe_nest: int, repeats: int) -> list[dict[str, Any]]:
    """Each dashboard page (and the baseline read) loaded ``repeats`` times in a row by one client;
    the map's first load (``/ui/map (first)``) is kept apart: it computes the projection."""
    pages = [("baseline: GET /v1/nests?limit=100", "/v1/nests?limit=100"), ("/ui (overview)", "/ui"),
             ("/ui/map (first)", "/ui/map"), ("/ui/map", "/ui/map"), ("/ui/nests", "/ui/nests"),
             (f"/ui/nests/{probe_nest}", f"/ui/nests/{probe_nest}"), ("/ui/jobs", "/ui/jobs")]
    rows = []
    with httpx.Client(base_url=url, timeout=120) as http:
        for name, path in pages:
            times, size = [], 0
            for _ in range(1 if name.endswith("(first)") else repeats):
                start = time.perf_counter()
                response = http.get(path)
                times.append((time.perf_counter() - start) * 1000)
                if response.status_code != 200:
                    raise RuntimeError(f"{path}: HTTP {response.status_code}: {response.text[:300]}")
                size = len(response.content)
            ms = sorted(times)
            rows.append({"page": name, "loads": len(ms), "p50_ms": round(percentile(ms, 50), 1),
                         "max_ms": round(ms[-1], 1), "kb": round(size / 1024, 1)})
            sys.stderr.write(f"{name}: p50 {rows[-1]['p50_ms']} ms, max {rows[-1]['max_ms']} ms, "
                             f"{rows[-1]['kb']} KiB\n")
    return rows


def page_checks(pages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    checks = []
    for row in pages:
        if row["page"].startswith(("/ui (overview)", "/ui/map")):
            value = row["max_ms"] if row["page"].endswith("(first)") else row["p50_ms"]
            what = "load" if row["page"].endswith("(first)") else "p50"
            checks.append({"target": f"{row['page']} {what} < {PAGE_TARGET_MS:g} ms", "value": value,
                           "pass": value < PAGE_TARGET_MS})
    return checks


def format_pages(pages: list[dict[str, Any]]) -> list[str]:
    lines = ["", f"{'dashboard page':<36} {'loads':>5} {'p50 ms':>7} {'max ms':>7} {'KiB':>7}"]
    for r in pages:
        lines.append(f"{r['page']:<36} {r['loads']:>5} {r['p50_ms']:>7.1f} {r['max_ms']:>7.1f} {r['kb']:>7.1f}")
    return lines
