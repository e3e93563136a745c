"""The NumPy benchmark's summary, its markdown and text report, and its figure (``benchmarks/python_bench.py``).

perfembed's figure is its transfer column: what ``perfembed suggest --evaluate --write-best kernel_tuned.py``
gives a user, from a database of C nests only. Issue 61's targets are judged on it; the cross-language
section compares it with autotuning (40 trials, from nothing) kernel by kernel, beside the C neighbours found.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

Report = Mapping[str, Any]
VARIANTS = ("numpy", "numba", "numba-parallel", "dace", "perfembed-untuned", "perfembed-transfer",
            "perfembed-autotune")
OURS = ("perfembed-untuned", "perfembed-transfer", "perfembed-autotune")
HEADLINE = "perfembed-transfer"
USER = "perfembed"  # what a user runs after suggest --write-best: transfer's module where written, else NumPy
TRANSFER_SHARE = 0.85  # issue 61: transfer (k = 5) at least 85% of autotune-40
ISSUE_TRIALS = 40
ANSI = re.compile(r"\x1b\[[0-9;]*m")  # Numba colours its errors


def _row(kernel: Mapping[str, Any], label: str) -> Mapping[str, Any]:
    """``label``'s row; for :data:`USER`, transfer's row where ``--write-best`` wrote its module, else NumPy's
    (the user keeps the original: 1x by definition), else why there is none."""
    if label != USER:
        return kernel["variants"].get(label) or {}
    transfer = kernel["variants"].get(HEADLINE) or {}
    decision = transfer.get("write_best") or {}
    if transfer.get("status") != "ok" or not decision:
        return {"status": transfer.get("status", "missing"), "reason": transfer.get("reason", "not run")}
    if decision["written"]:
        return {**transfer, "recipe": f"written: {transfer.get('recipe')}"}
    numpy = kernel["variants"]["numpy"]
    check = f"{decision['check_speedup']:.2f}x" if decision.get("check_speedup") else decision.get("status")
    return {**numpy, "speedup": 1.0, "speedup_low": 1.0, "speedup_high": 1.0,
            "recipe": f"nothing written (perfembed's check: {check}); NumPy kept"}


def _speedup(kernel: Mapping[str, Any], label: str) -> float | None:
    row = _row(kernel, label)
    value = row.get("speedup") if row.get("status") == "ok" else None
    return float(value) if value else None


def _geomean(values: Sequence[float]) -> float | None:
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


def _relative(kernels: Sequence[Mapping[str, Any]], label: str, other: str) -> tuple[float | None, int]:
    """The geometric mean of ``label``'s speedup over ``other``'s, over the kernels where both ran."""
    pairs = [(a, b) for k in kernels if (a := _speedup(k, label)) and (b := _speedup(k, other))]
    return _geomean([a / b for a, b in pairs]), len(pairs)


def summarize(report: Report) -> dict[str, Any]:
    kernels = report["kernels"]
    methods: dict[str, dict[str, Any]] = {}
    for label in (*VARIANTS, USER):
        statuses = [_row(k, label).get("status") for k in kernels]
        values = [v for k in kernels if (v := _speedup(k, label))]
        methods[label] = {"geomean_speedup": _geomean(values), "ok": statuses.count("ok"),
                          "wrong": statuses.count("wrong-output"), "failed": statuses.count("failed"),
                          "missing": statuses.count("missing")}
    over_numba, n_numba = _relative(kernels, USER, "numba-parallel")
    over_dace, n_dace = _relative(kernels, USER, "dace")
    share, n_share = _relative(kernels, HEADLINE, "perfembed-autotune")
    slower = [k["kernel"] for k in kernels if (row := _row(k, USER)).get("status") == "ok"
              and (row.get("speedup_high") or row["speedup"]) < 1.0]
    wrong = sum(methods[label]["wrong"] for label in OURS)
    head = methods[USER]["geomean_speedup"]
    trials = ((report.get("config") or {}).get("tuning") or {}).get("trials", ISSUE_TRIALS)
    targets = {
        "over_numpy": _target("geomean at least 5x over NumPy", head, 5.0),
        "over_numba_parallel": _target("geomean at least 2x over Numba parallel=True", over_numba, 2.0, n_numba),
        "over_dace": _target("ahead of DaCe's auto-optimizer where it ran", over_dace, 1.0, n_dace),
        "transfer_share": _target(f"transfer at least 85% of autotune-{trials}"
                                  + (f" (issue: autotune-{ISSUE_TRIALS})" if trials != ISSUE_TRIALS else ""),
                                  share, TRANSFER_SHARE, n_share),
        "no_slowdown": {"name": "no kernel slower than NumPy (interval below 1x)", "value": slower,
                        "status": "MET" if not slower else "NOT MET"},
        "correct": {"name": "0 wrong outputs (perfembed)", "value": wrong, "status": "MET" if not wrong else "NOT MET"},
    }
    return {"kernels": len(kernels), "methods": methods, "transfer_over_numba_parallel": over_numba,
            "transfer_over_dace": over_dace, "transfer_share_of_autotune": share, "trials": trials,
            "written": sum(1 for k in kernels if ((k["variants"].get(HEADLINE) or {}).get("write_best") or {})
                           .get("written")), "load": load_summary(report), "targets": targets}


def load_summary(report: Report) -> dict[str, Any]:
    """The 1-minute load average when each kernel's timing began and ended (other jobs on the machine)."""
    loads = [k[key]["loadavg"][0] for k in report["kernels"] for key in ("load_before_timing", "load_after_timing")
             if k.get(key)]
    return {"during_1min_mean": sum(loads) / len(loads) if loads else None, "during_1min_max": max(loads, default=None),
            "before": (report.get("load_before") or {}).get("loadavg"),
            "after": (report.get("load_after") or {}).get("loadavg")}


def headline(report: Report) -> list[dict[str, str]]:
    """The README's row (``docs/gen/perfembed_docs.py``): what a user gets, over NumPy and Numba parallel, and
    transfer from the C seed against autotuning."""
    s = summarize(report)
    figure = (f"{_x(s['methods'][USER]['geomean_speedup'])} over NumPy, "
              f"{_x(s['targets']['over_numba_parallel']['value'])} over Numba parallel, {s['kernels']} kernels; "
              f"transfer {_pct(s['transfer_share_of_autotune'])} of autotune-{s['trials']}")
    cfg, load = report.get("config") or {}, s["load"]["during_1min_mean"]
    conditions = f"sizes x{cfg.get('scale')}" + (f", load {load:.1f}" if load else "")
    return [{"what": "NumPy kernels", "figure": figure, "conditions": conditions}]


def _target(name: str, value: float | None, goal: float, pairs: int | None = None) -> dict[str, Any]:
    status = "not measured" if value is None else "MET" if value >= goal else "NOT MET"
    return {"name": name, "value": value, "goal": goal, "kernels": pairs, "status": status}


def missing_figures(report: Report) -> list[str]:
    """perfembed's and NumPy's cells that were not measured and verified (a missing peer is a result), and
    the kernels an interrupted run did not reach."""
    cut = [report["interrupted"]] if report.get("interrupted") else []
    return cut + [f"{k['kernel']}: {label}: {row.get('status', 'not run')} ({row.get('reason', '')})"[:200]
                  for k in report["kernels"] for label in ("numpy", *OURS)
                  if (row := k["variants"].get(label) or {}).get("status") != "ok"]


def _cell(row: Mapping[str, Any], reasons: list[str]) -> str:
    if row.get("status") != "ok":
        reason = ANSI.sub("", row.get("reason") or "") or (
            f"max relative error {row['max_rel_error']:.2g}" if "max_rel_error" in row else "")
        if reason not in reasons:
            reasons.append(reason)
        return f"{row.get('status')} [{reasons.index(reason) + 1}]"
    high = row.get("speedup_high")
    span = f" [{row['speedup_low']:.2f}, {high:.2f}]" if high is not None else ""
    return f"{row['median_s'] * 1e3:.1f} ms, {row['speedup']:.2f}x{span}; first {row['first_s'] * 1e3:.0f} ms"


def _speed_table(report: Report) -> list[str]:
    reasons: list[str] = []
    columns = (*VARIANTS, USER)
    lines = ["| kernel | " + " | ".join(columns) + " | load |", "|---" * (len(columns) + 2) + "|"]
    for k in report["kernels"]:
        cells = [_cell(_row(k, label) or {"status": "missing", "reason": "not run"}, reasons) for label in columns]
        load = (k.get("load_before_timing") or {}).get("loadavg")
        lines.append(f"| {k['kernel']} | " + " | ".join(cells) + f" | {f'{load[0]:.1f}' if load else '-'} |")
    methods = report["summary"]["methods"]
    lines.append("| **geomean over NumPy** | " + " | ".join(
        f"**{m['geomean_speedup']:.2f}x** ({m['ok']} ran)" if m["geomean_speedup"] else "-"
        for m in (methods[label] for label in columns)) + " | |")
    lines += ["", "Each cell: median time, speedup over NumPy (geometric mean of the interleaved rounds' ratios, "
              "95% bootstrap interval), first call apart (Numba's JIT compile, the module's C compile). "
              f"*{USER}*: what `perfembed suggest --evaluate --write-best kernel_tuned.py` leaves the user: "
              "transfer's module where perfembed's own check in the sandbox (same results, not slower than NumPy "
              "on one call, best of 5) wrote it, else the NumPy function kept (1x). *load*: the 1-minute load "
              "average when the kernel's timing began."]
    lines += ["", *(f"- [{i}] {reason}" for i, reason in enumerate(reasons, 1))]
    return lines


def _transfer_table(report: Report) -> list[str]:
    trials = report["summary"]["trials"]
    lines = [f"| kernel | nearest C neighbours (distance) | transfer | autotune-{trials} | share | transfer's recipe "
             "| written by --write-best |", "|---|---|---|---|---|---|---|"]
    for k in report["kernels"]:
        near = ", ".join(f"{n['name']} ({n['distance']:.2f})" for n in k["neighbours"][:3]
                         if n.get("distance") is not None) or "-"
        t, a = _speedup(k, HEADLINE), _speedup(k, "perfembed-autotune")
        recipe = (k["variants"].get(HEADLINE) or {}).get("recipe", "-")
        lines.append(f"| {k['kernel']} | {near} | {_x(t)} | {_x(a)} | "
                     f"{f'{t / a:.0%}' if t and a else '-'} | {recipe} | {_row(k, USER).get('recipe', '-')} |")
    return lines


def _x(value: float | None) -> str:
    return f"{value:.2f}x" if value else "-"


def _frame(report: Report) -> list[str]:
    """Where, when, the load and the configuration, with any cut of the issue's budget said."""
    config, summary, load = report["config"], report["summary"], report["summary"]["load"]
    during = (f"; during the timings {load['during_1min_mean']:.1f} on average, at most {load['during_1min_max']:.1f}"
              if load.get("during_1min_mean") is not None else "")
    lines = [f"Run {report.get('started', '?')} on {report['machine']['cpu']} ({report['machine']['cores']} cores, "
             f"shared with other jobs: 1-minute load {_load(load['before'])} before, {_load(load['after'])} after"
             f"{during}). Every variant at {config['threads']} threads; sizes x{config['scale']} of the suite's "
             f"SIZES; {config['rounds']} interleaved rounds; {report.get('seconds', 0):.0f} s in all. "
             f"Reproduce: `perfembed bench python --scale {config['scale']} --threads {config['threads']}"
             + (f" --trials {summary['trials']}" if summary["trials"] != ISSUE_TRIALS else "")
             + " --report docs/benchmarks/python.md`."]
    if report.get("interrupted"):
        lines += ["", f"**Interrupted:** {report['interrupted']}; the figures are those of the kernels measured."]
    if summary["trials"] != ISSUE_TRIALS:
        lines += ["", f"**Budget cut:** autotuning ran {summary['trials']} trials per kernel, not the issue's "
                      f"{ISSUE_TRIALS} (`--trials {summary['trials']}`), so that the whole run fit its time on the "
                      "shared machine; the transfer share below is against this shorter search."]
    return lines


def _load(values: Sequence[float] | None) -> str:
    return f"{values[0]:.1f}" if values else "?"


def render_markdown(report: Report, figure: str | None = None) -> str:
    summary = report["summary"]
    lines = [f"# NumPy kernels against their peers ({summary['kernels']} kernels)", "", *_frame(report), "",
             f"## Targets (issue 61), on {USER} (what --write-best leaves the user)", ""]
    for target in summary["targets"].values():
        value = target["value"]
        shown = f"{value:.2f}" if isinstance(value, float) else str(value)
        lines.append(f"- {target['name']}: **{target['status']}** ({shown})")
    lines += ["", "## Speed", "", *_speed_table(report), "",
              "## Cross-language transfer: a seed of C nests only, to NumPy kernels", "",
              f"Transfer (k = 5) searched the shipped seed (C nests only, no Python kernel); autotuning ran "
              f"{summary['trials']} trials from nothing in a database of its own. Share: transfer's speedup over "
              f"NumPy as a share of autotuning's (both modules as measured here); geometric mean "
              f"{_pct(summary['transfer_share_of_autotune'])}.", "", *_transfer_table(report)]
    if figure:
        lines += ["", f"![speedups and transfer]({figure})"]
    if report.get("remarks"):  # what the person who ran it found, kept in the result JSON
        lines += ["", "## Remarks on this run", "", *[f"- {line}" for line in report["remarks"]]]
    return "\n".join(lines) + "\n"


def _pct(value: float | None) -> str:
    return f"{value:.0%}" if value else "not measured"


def render_text(report: Report) -> str:
    return render_markdown(report)


def write_report(report: Report, out: Path) -> tuple[Path, Path]:
    """The markdown at ``out``, its figure (``.png``) and the result (``.json``) beside it, as the committed
    results in ``docs/benchmarks/`` are laid out."""
    out.parent.mkdir(parents=True, exist_ok=True)
    figure = write_figure(report, out.with_suffix(".png"))
    out.write_text(render_markdown(report, figure.name))
    out.with_suffix(".json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    return out, figure


def write_figure(report: Report, path: Path) -> Path:
    """Left: speedup over NumPy per kernel (log) for Numba parallel and perfembed. Right: transfer's share of
    autotune-40 against the distance of the nearest C neighbour, one point per kernel."""
    import matplotlib  # noqa: PLC0415 - 320 ms to import, only for the figure; Agg before pyplot loads

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    kernels = report["kernels"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(13, 4.5), gridspec_kw={"width_ratios": [2, 1]})
    shown = ("numba-parallel", USER, "perfembed-autotune")
    width = 0.8 / len(shown)
    for i, label in enumerate(shown):
        xs = [j + (i - 1) * width for j in range(len(kernels))]
        left.bar(xs, [_speedup(k, label) or 0.0 for k in kernels], width, label=label)
    left.axhline(1.0, color="grey", linestyle=":")
    left.set_yscale("log")
    left.set_xticks(range(len(kernels)), [k["kernel"] for k in kernels], rotation=60, ha="right", fontsize=8)
    left.set_ylabel("speedup over NumPy (log)")
    left.legend(fontsize=8)
    for k in kernels:
        t, a = _speedup(k, HEADLINE), _speedup(k, "perfembed-autotune")
        if t and a and k["neighbours"] and k["neighbours"][0].get("distance") is not None:
            right.scatter(k["neighbours"][0]["distance"], t / a, color="tab:blue")
            right.annotate(k["kernel"], (k["neighbours"][0]["distance"], t / a), fontsize=7,
                           textcoords="offset points", xytext=(3, 3))
    trials = report["summary"]["trials"]
    right.axhline(TRANSFER_SHARE, color="tab:red", linestyle="--", label=f"85% of autotune-{trials}")
    right.set_xlabel("distance to the nearest C neighbour")
    right.set_ylabel(f"transfer / autotune-{trials} (log)")
    right.set_yscale("log")
    right.set_title("C seed to NumPy kernels", fontsize=10)
    right.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path
