"""The program benchmark's summary, targets and tables (plain text for the terminal, markdown for the file)."""

from __future__ import annotations

import json
import math
import statistics
from typing import Any

from benchmarks.peak_report import geomean

MEASURED = ("tuned", "not-tuned")
MIN_RATIO = 0.95  # issue 58: no program slower than its original beyond this
TARGET_GCC, TARGET_POLLY = 4.0, 2.0
HEADER = ["program", "outcome", "nests acc/total (refused)", "nest speedup", "whole program vs gcc",
          "vs Polly", "Polly vs gcc", "gcc s", "tuned s", "Polly s", "suggest s", "load"]


def ratio_of(row: dict[str, Any], key: str) -> float | None:
    figure = (row.get("speedup") or {}).get(key)
    return None if not figure else float(figure["ratio"])


def summarize(report: dict[str, Any]) -> dict[str, Any]:
    """Counts, geomeans (the user's program: an unchanged one counts 1.00x), the slowest, the targets, the load."""
    rows = report.get("programs", [])
    vs_gcc = {r["program"]: v for r in rows if (v := ratio_of(r, "vs_gcc")) is not None}
    vs_polly = [v for r in rows if (v := ratio_of(r, "vs_polly")) is not None]
    polly = [v for r in rows if (v := ratio_of(r, "polly_vs_gcc")) is not None]
    tuned_only = [vs_gcc[r["program"]] for r in rows if r.get("status") == "tuned" and r["program"] in vs_gcc]
    slow = sorted(p for p, v in vs_gcc.items() if v < MIN_RATIO)
    counts = {s: sum(r.get("status") == s for r in rows) for s in ("tuned", "not-tuned", "build-failed",
                                                                   "wrong-output", "failed")}
    nests = {k: sum((r.get("nests") or {}).get(k, 0) for r in rows) for k in ("accepted", "total", "refused")}
    summary = {"programs": len(rows), **counts, "nests": nests,
               "geomean_vs_gcc": geomean(list(vs_gcc.values())), "geomean_vs_polly": geomean(vs_polly),
               "geomean_polly_vs_gcc": geomean(polly), "geomean_tuned_rows_vs_gcc": geomean(tuned_only),
               "measured_vs_gcc": len(vs_gcc), "measured_vs_polly": len(vs_polly),
               "slowest": min(vs_gcc.items(), key=lambda kv: kv[1]) if vs_gcc else None, "below_min": slow,
               "load": load_summary(report)}
    summary["targets"] = targets(rows, summary)
    return summary


def targets(rows: list[dict[str, Any]], summary: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Issue 58's targets, each MET or NOT MET (NOT EVALUATED where its figures are missing)."""
    def status(ok: bool | None) -> str:
        return "NOT EVALUATED" if ok is None else "MET" if ok else "NOT MET"

    gcc, polly = summary["geomean_vs_gcc"], summary["geomean_vs_polly"]
    every = all(r.get("status") in MEASURED and (r.get("status") == "tuned" or r.get("reason")) for r in rows)
    return {"outcome": {"name": "every program tuned or with a one-line reason", "status": status(every)},
            "never_slower": {"name": f"no program below {MIN_RATIO:.2f}x of its original",
                             "status": status(None if not summary["measured_vs_gcc"] else not summary["below_min"])},
            "gcc": {"name": f"whole-program geomean >= {TARGET_GCC:.0f}x over gcc -O3",
                    "status": status(None if gcc is None else gcc >= TARGET_GCC)},
            "polly": {"name": f"whole-program geomean >= {TARGET_POLLY:.0f}x over Polly",
                      "status": status(None if polly is None else polly >= TARGET_POLLY)}}


def load_summary(report: dict[str, Any]) -> dict[str, Any]:
    """Load averages before, during (sampled around each program's timing) and after the run."""
    samples = [r[k]["loadavg"][0] for r in report.get("programs", []) for k in ("load_before_timing",
               "load_after_timing") if r.get(k)]
    pressure = [r[k].get("cpu_pressure_avg10") for r in report.get("programs", [])
                for k in ("load_before_timing", "load_after_timing") if r.get(k)]
    pressure = [p for p in pressure if p is not None]
    return {"before": (report.get("load_before") or {}).get("loadavg"),
            "after": (report.get("load_after") or {}).get("loadavg"),
            "during_1min_mean": statistics.mean(samples) if samples else None,
            "during_1min_max": max(samples) if samples else None,
            "cpu_pressure_mean": statistics.mean(pressure) if pressure else None,
            "cpus": (report.get("machine") or {}).get("cores")}


def missing_figures(report: dict[str, Any]) -> list[str]:
    """``program: status (reason)`` for every program not measured (tuned or not), and a Polly that failed."""
    missing = [f"{r['program']}: {r.get('status')} ({r.get('reason')})" for r in report.get("programs", [])
               if r.get("status") not in MEASURED]
    for r in report.get("programs", []):
        polly = (r.get("variants") or {}).get("polly") or {}
        if polly.get("status") not in (None, "ok", "skipped"):
            missing.append(f"{r['program']}/polly: {polly['status']} ({polly.get('reason')})")
    return missing


def fig(figure: dict[str, Any] | None) -> str:
    if not figure:
        return "-"
    if figure.get("unchanged"):
        return "1.00x (unchanged)"
    high = figure.get("high")
    return f"{figure['ratio']:.2f}x" + (f" [{figure['low']:.2f}, {high:.2f}]" if high is not None else "")


def nest_text(row: dict[str, Any]) -> str:
    """Each accepted nest's figure alone, ``#i 7.0x [6.7, 7.4]``."""
    parts = []
    for n in row.get("nest_speedups") or []:
        if n.get("accepted") and n.get("speedup"):
            span = n.get("interval") or []
            interval = f" [{span[0]:.1f}, {span[1]:.1f}]" if len(span) == 2 else ""
            parts.append(f"#{str(n['nest']).rsplit('#', 1)[-1]} {n['speedup']:.1f}x{interval}")
    return ", ".join(parts) or "-"


def seconds(row: dict[str, Any], name: str) -> str:
    variant = (row.get("variants") or {}).get(name) or {}
    value = variant.get("median_seconds")
    return f"{value:.3f}" if value is not None else (variant.get("status") or "-")


def timing_load(row: dict[str, Any]) -> str:
    """The 1-minute load average when the program's timing began (the machine has ``cpus`` cores)."""
    load = (row.get("load_before_timing") or {}).get("loadavg")
    return f"{load[0]:.1f}" if load else "-"


def table_rows(report: dict[str, Any]) -> list[list[str]]:
    rows = []
    for r in report.get("programs", []):
        n = r.get("nests") or {}
        nests = f"{n.get('accepted', 0)}/{n.get('total', 0)} ({n.get('refused', 0)})" if n else "-"
        speed = r.get("speedup") or {}
        rows.append([r["program"], r.get("status", "-"), nests, nest_text(r), fig(speed.get("vs_gcc")),
                     fig(speed.get("vs_polly")), fig(speed.get("polly_vs_gcc")), seconds(r, "original"),
                     seconds(r, "tuned"), seconds(r, "polly"), f"{(r.get('suggest') or {}).get('seconds', 0):.0f}",
                     timing_load(r)])
    s = report.get("summary") or summarize(report)
    nests = "{accepted}/{total} ({refused})".format(**s["nests"])
    total = ["geomean", f"{s['tuned']}/{s['programs']} tuned", nests, "", gm(s["geomean_vs_gcc"]),
             gm(s["geomean_vs_polly"]), gm(s["geomean_polly_vs_gcc"])]
    rows.append(total + [""] * (len(HEADER) - len(total)))
    return rows


def gm(value: float | None) -> str:
    return "-" if value is None or not math.isfinite(value) else f"{value:.2f}x"


def notes(report: dict[str, Any]) -> list[str]:
    """The lines under the table: each program's reason, the -p check, the targets, the load, Polly's skip."""
    s = report.get("summary") or summarize(report)
    lines = [f"{r['program']}: {r.get('status')}: {r.get('reason') or ''}".rstrip(": ") for r in report["programs"]]
    p = report.get("with_p")
    if p:
        lines.append(f"-p BUILD_DIR form ({p['program']}): {p['status']}, {'tuned' if p['tuned'] else 'not tuned'}: "
                     f"{p.get('reason')}")
    skip = report["config"].get("polly_skipped")
    if skip:
        lines.append(f"Polly skipped: {skip}")
    lines += [f"target ({key}): {t['status']}: {t['name']}" for key, t in s["targets"].items()]
    load = s["load"]
    lines.append(f"load average (1 min) on {load['cpus']} cores: before {fmt_load(load['before'])}, during "
                 f"{load['during_1min_mean'] or 0:.2f} mean / {load['during_1min_max'] or 0:.2f} max, after "
                 f"{fmt_load(load['after'])}" + (f"; CPU pressure {load['cpu_pressure_mean']:.0%} mean"
                                                 if load["cpu_pressure_mean"] is not None else ""))
    return lines


def fmt_load(loadavg: list[float] | None) -> str:
    return "-" if not loadavg else " ".join(f"{x:.2f}" for x in loadavg)


def render_text(report: dict[str, Any]) -> str:
    rows = [HEADER, *table_rows(report)]
    widths = [max(len(r[i]) for r in rows) for i in range(len(HEADER))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    cfg = report["config"]
    head = (f"perfembed on the program suite: {cfg['dataset']} dataset, {cfg['threads']} threads, "
            f"{cfg['rounds']} interleaved rounds, whole-process wall time (inside the sandbox)")
    return "\n".join([head, *lines, "", *notes(report)]) + "\n"


def render_markdown(report: dict[str, Any]) -> str:
    cfg, machine = report["config"], report.get("machine") or {}
    out = ["# perfembed on the program suite (`perfembed bench programs`)", "",
           f"Run {report.get('started')} on {machine.get('cpu')} ({machine.get('cores')} cores), "
           f"{cfg['dataset']} dataset, {cfg['threads']} threads, k={cfg['k']}, {cfg['rounds']} interleaved rounds "
           f"of original / tuned / Polly in rotating order; {report.get('seconds', 0):.0f} s in all; perfembed at "
           f"{cfg.get('commit') or 'an unknown commit'}.", "",
           f"gcc: `{cfg['gcc']}`; Polly: `{cfg['polly']}`. Speedups are whole-process wall times (taken inside "
           "the sandbox, as suggest does), the geometric mean of the rounds' ratios with a 95% bootstrap "
           "interval. *vs gcc* is the program the user has after "
           "`perfembed suggest --write-best` (1.00x when nothing was written) against the original; *vs Polly* "
           "the same program against the original built by Polly. Nest speedups are suggest's own figures "
           "(each nest alone, in its measurement driver). *load*: the 1-minute load average when the program's "
           "timing began.", "",
           "| " + " | ".join(HEADER) + " |", "|" + " --- |" * len(HEADER)]
    out += ["| " + " | ".join(cell.replace("|", "/") for cell in r) + " |" for r in table_rows(report)]
    out += ["", *[f"- {line}" for line in notes(report)], ""]
    if report.get("remarks"):  # what the person who ran it found, kept in the result JSON
        out += ["## Remarks on this run", "", *[f"- {line}" for line in report["remarks"]], ""]
    out += [
            "<details><summary>summary (JSON)</summary>", "", "```json",
            json.dumps(report.get("summary"), indent=1, default=str), "```", "</details>", ""]
    return "\n".join(out)
