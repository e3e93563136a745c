"""The paper benchmark's committed page and README row, rendered from a run's own result file.

A run with ``--out docs/benchmarks/paper.md`` writes ``paper.json`` beside its markdown and plot
(:func:`experiments.paper_report.write_report`); ``docs/gen/perfembed_docs.py`` renders the page and the
README's headline row from that JSON, as it does for the peak and sparse benchmarks' results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from experiments.paper_report import markdown_report

PLOT = "paper.png"  # the plot the run wrote beside its report


def render_markdown(report: Mapping[str, Any]) -> str:
    """The run's report, as the run wrote it, with its plot."""
    return markdown_report(report, PLOT) + "\n"


def readme_rows(report: Mapping[str, Any]) -> list[dict[str, str]]:
    """The headline: transfer's share of autotuning's geomean and of its evaluations, from the winners
    re-measured when the run confirmed them (else from their screening figures, and it says so)."""
    cfg = report["config"]
    confirmed = report.get("confirmed")
    summary = confirmed["summary"] if confirmed else report["summary"]
    which = "confirmed" if confirmed else "screened, not confirmed"
    reference = f"autotune-{cfg['tune_trials'][-1]}"
    checks = summary["targets"]["a"]["checks"]
    shares = "; ".join(f"k={c['k']}: {_pct(c['geomean_ratio'])} of {reference}'s geomean with "
                       f"{_pct(c['evaluation_ratio'])} of its evaluations" for c in checks)
    polly = next((m for m in summary["methods"] if m["kind"] == "polly"), None)
    if polly is not None and polly.get("geomean_speedup"):
        shares += f"; Polly {polly['geomean_speedup']:.2f}x"
    held_out = f"{summary['nests']} held-out nests, neighbours from other families only, {which}"
    interrupted = " (interrupted: part of the run)" if report.get("interrupted") else ""
    return [{"what": "transfer vs autotuning, leave one family out", "figure": shares + interrupted,
             "conditions": held_out}]


def _pct(value: float | None) -> str:
    return "not measured" if value is None else f"{value:.0%}"
