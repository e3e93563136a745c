"""The paper benchmark's summary rules and its report: geomeans, the two targets, markdown and plot.

Kept apart from the runner (``experiments/paper.py``) so that the rules can be read, tested and
re-rendered from a saved JSON report without databases, compilers or harnesses. ``summarize`` works on
the per-nest rows that :func:`experiments.paper.run_paper_benchmark` produces (plain dicts).
"""

from __future__ import annotations

import json
import math
import statistics
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from autotune.transfer import CONFIRM_TOP
from experiments.paper_measure import REMEASURE_TOP

NEAR_FRACTION = 0.9  # "transfer reaches 90% of autotuning"
EVAL_FRACTION = 0.1  # "... with at most 10% of its evaluations"
MAX_TARGET_K = 5  # the targets speak of transfer with few neighbours only


def geomean(values: Sequence[float]) -> float | None:
    """The geometric mean of the positive, finite values (a failed or missing ratio has no logarithm)."""
    vals = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


# -- summary ------------------------------------------------------------------------------------


def _method(rows: Sequence[Mapping[str, Any]], kind: str, budget_key: str, budget: int, name: str) -> dict[str, Any]:
    """One transfer (budget = k) or autotuning (budget = trials) method over every row."""
    cells = [r[kind][str(budget)] for r in rows]
    sp = [c["speedup"] for c in cells]
    ev = [c["evaluations"] for c in cells]
    return {"method": name, "kind": kind, budget_key: budget, "geomean_speedup": geomean(sp),
            "mean_evaluations": statistics.fmean(ev) if ev else None, "nests": len(rows),
            "accepted": sum(c["accepted"] for c in cells), "min_speedup": min(sp) if sp else None}


def summarize(rows: Sequence[Mapping[str, Any]], k_values: Sequence[int], tune_trials: Sequence[int], *,
              polly_requested: bool = True, polly_available: bool = True) -> dict[str, Any]:
    """Geomeans, mean evaluations, the 90%-of-autotuning fraction and the two targets."""
    n = len(rows)
    methods: list[dict[str, Any]] = [{"method": "baseline", "kind": "baseline", "geomean_speedup": 1.0 if n else None,
                                      "mean_evaluations": 0.0, "nests": n}]
    methods += [_method(rows, "transfer", "k", k, f"transfer k={k}") for k in k_values]
    methods += [_method(rows, "autotune", "trials", t, f"autotune {t}") for t in tune_trials]
    polly: dict[str, Any] | None = None
    if polly_requested:
        verified = [r["polly"]["speedup"] for r in rows if r["polly"].get("status") == "verified"]
        polly = {"method": "polly", "kind": "polly", "available": polly_available,
                 "geomean_speedup": geomean(verified) if polly_available else None,
                 "mean_evaluations": 0.0, "nests": len(verified),
                 "unverified": sum(r["polly"].get("status") == "unverified" for r in rows),
                 "failed": sum(r["polly"].get("status") == "failed" for r in rows),
                 "slower_than_baseline": sum(1 for v in verified if v < 1.0)}
        methods.append(polly)

    ref_t = tune_trials[-1]
    by = {m["method"]: m for m in methods}
    ref = by[f"autotune {ref_t}"]
    near: dict[str, Any] = {"reference": f"autotune {ref_t}", "threshold": NEAR_FRACTION}
    for k in k_values:
        hits = [r["transfer"][str(k)]["speedup"] >= NEAR_FRACTION * r["autotune"][str(ref_t)]["speedup"] for r in rows]
        near[f"k={k}"] = sum(hits) / n if n else None
    best_k_hits = [max(r["transfer"][str(k)]["speedup"] for k in k_values)
                   >= NEAR_FRACTION * r["autotune"][str(ref_t)]["speedup"] for r in rows]
    near["best k"] = sum(best_k_hits) / n if n else None

    small_k = [k for k in k_values if k <= MAX_TARGET_K]
    checks_a = []
    for k in small_k:
        m = by[f"transfer k={k}"]
        ok = bool(n and m["geomean_speedup"] and ref["geomean_speedup"]
                  and m["geomean_speedup"] >= NEAR_FRACTION * ref["geomean_speedup"]
                  and m["mean_evaluations"] <= EVAL_FRACTION * ref["mean_evaluations"])
        checks_a.append({"k": k, "geomean_ratio": (m["geomean_speedup"] / ref["geomean_speedup"])
                         if n and ref["geomean_speedup"] else None,
                         "evaluation_ratio": (m["mean_evaluations"] / ref["mean_evaluations"])
                         if n and ref["mean_evaluations"] else None, "pass": ok})
    passing_a = [c["k"] for c in checks_a if c["pass"]]
    target_a = {"name": f"transfer (k<={MAX_TARGET_K}) reaches >= {NEAR_FRACTION:.0%} of autotune-{ref_t}'s geomean "
                        f"with <= {EVAL_FRACTION:.0%} of its evaluations",
                "status": "PASS" if passing_a else "FAIL", "passing_k": passing_a, "checks": checks_a}
    checks_b = []
    if polly is not None and polly["available"] and polly["geomean_speedup"] is not None:
        for k in small_k:
            m = by[f"transfer k={k}"]
            ok = bool(n and m["geomean_speedup"] and m["geomean_speedup"] > polly["geomean_speedup"]
                      and m["min_speedup"] is not None and m["min_speedup"] >= 1.0)
            checks_b.append({"k": k, "geomean_speedup": m["geomean_speedup"], "polly_geomean": polly["geomean_speedup"],
                             "min_speedup": m["min_speedup"], "pass": ok})
        passing_b = [c["k"] for c in checks_b if c["pass"]]
        status_b = "PASS" if passing_b else "FAIL"
    else:
        passing_b, status_b = [], "NOT EVALUATED" if polly is None else "NOT AVAILABLE"
    target_b = {"name": f"transfer (k<={MAX_TARGET_K}) beats Polly's geomean and is never slower than the baseline "
                        "(accepted-only rule)", "status": status_b, "passing_k": passing_b, "checks": checks_b}
    return {"nests": n, "methods": methods, "near_autotune": near, "targets": {"a": target_a, "b": target_b}}


# -- report -------------------------------------------------------------------------------------


def _fmt(value: float | None, suffix: str = "x", digits: int = 2) -> str:
    """A ratio for the tables; "-" where there is none."""
    return "-" if value is None else f"{value:.{digits}f}{suffix}"


def _outside_note(cfg: Mapping[str, Any]) -> str:
    outside = cfg.get("nests_outside_families") or 0
    return (f" ({outside} nest{'s' if outside != 1 else ''} of programs not named family/file.c, e.g. stored by "
            "`suggest --evaluate` here, left out of every neighbour search)") if outside else ""


def _load_note(cfg: Mapping[str, Any]) -> list[str]:
    """A line on the machine's load during the run (a busy machine makes every ratio noisier)."""
    load, cpus = cfg.get("load_average") or {}, cfg.get("cpus") or 1
    start, end = load.get("start"), load.get("end")
    if not start or not end:
        return []
    text = f"Load average (1 min) at start {start[0]:.1f}, at end {end[0]:.1f}, on {cpus} CPUs."
    if max(start[0], end[0]) > 0.75 * cpus:
        text += " **The machine was busy with other work during this run: ratios are noisier than usual.**"
    return [text, ""]


def _reuse_note(report: Mapping[str, Any]) -> list[str]:
    """A line on the autotuning searches read back from earlier runs (reports before the cache: nothing)."""
    nests = report.get("nests", [])
    stamps = [str(r["autotune_searched_at"]) for r in nests if r.get("autotune_searched_at")]
    if not stamps:
        return []
    first, last = min(stamps), max(stamps)
    return [f"Autotuning searches of {len(stamps)} of the {len(nests)} nests were read back from earlier "
            f"runs with the same nest, settings, machine and tuner code (run {first}"
            + (f" to {last}" if last != first else "") + "); their winners were re-measured in this run, "
            "beside the baseline and the transfer candidates.", ""]


def _time(seconds: float) -> str:
    """A baseline time in ms, or in us for the nests too small to read in ms."""
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-4 else f"{seconds * 1e6:.1f} us"


def _pct(ratio: float | None, digits: int) -> str:
    """A fraction as a percentage; "-" where there is none."""
    return "-" if ratio is None else f"{ratio * 100:.{digits}f}%"


def markdown_report(report: Mapping[str, Any], plot_name: str | None = None) -> str:
    """The report as markdown: summary, targets, per-nest table and method; ``plot_name`` is linked."""
    cfg, summary = report["config"], report["summary"]
    lines = [
        "# Transfer tuning vs autotuning vs Polly (leave one family out)",
        "",
        f"Generated by `perfembed bench paper` (`experiments/paper.py`) in {report.get('seconds', 0):.0f} s: "
        f"{summary['nests']} held-out nests from {len(cfg['families'])} families "
        f"(up to {cfg['per_family']} per family), of {cfg['tuned_nests']} tuned nests in the database"
        f"{_outside_note(cfg)}. "
        f"Baseline `{cfg['cc']} {cfg['cflags']}`, {cfg['reps']} timed repetition(s) (median), "
        f"threads: {cfg['threads'] or 'all cores'}; embedding model `{cfg['model_version']}`.",
        "",
        *_interrupted_note(report),
        *_load_note(cfg),
        *_reuse_note(report),
        *_summary_lines(cfg, summary),
        *_target_lines(summary),
    ]
    if plot_name:
        lines += ["", f"![geomean speedup vs mean evaluations]({plot_name})"]
    return "\n".join([*lines, *_confirmed_lines(report), *_nest_lines(report), *_method_lines(cfg)])


def _interrupted_note(report: Mapping[str, Any]) -> list[str]:
    stop = report.get("interrupted")
    if not stop:
        return []
    return [f"**Interrupted (Ctrl-C) after {stop['measured']} of {stop['held_out']} held-out nests: every figure "
            f"below is of those {stop['measured']} alone, not of the run asked for.**", ""]


def _confirmed_lines(report: Mapping[str, Any]) -> list[str]:
    """The summary again over the confirmed figures, and each nest's confirmed winners (reports before the
    confirmation: nothing)."""
    conf = report.get("confirmed")
    if not conf:
        return []
    cfg, policy = report["config"], conf["policy"]
    k, n = str(cfg["k_values"][-1]), str(cfg["tune_trials"][-1])
    lines = ["", "## Confirmed: each method's winner re-measured interleaved with the baseline", "",
             f"Every distinct accepted recipe compared with the baseline in one driver (AB BA ...), "
             f"{policy['pairs_per_run']} pairs per fresh process, at least {policy['min_runs']} processes, until the "
             f"{policy['confidence']:.0%} interval of the ratio clears {policy['margin']}x (at most "
             f"{policy['max_pairs']} pairs). A method keeps its figure only when the interval's low end clears the "
             f"margin, else 1.0x. {conf['held']} of {conf['confirmed_cells']} accepted results held up; "
             f"{conf['recipes_compared']} recipes compared, {conf['loaded']} of them under CPU pressure.", "",
             *_summary_lines(cfg, conf["summary"])[2:], *_target_lines(conf["summary"]), "",  # [2:]: no heading
             "| nest | " + f"T k={k} | confirmed | AT {n} | confirmed |", "| --- | --- | --- | --- | --- |"]
    for r in report["nests"]:
        c = r.get("confirmed")
        if not c:
            continue
        cells = [_cell(r["transfer"][k]), _confirmed_cell(c["transfer"][k]), _cell(r["autotune"][n]),
                 _confirmed_cell(c["autotune"][n])]
        lines.append(f"| {r['name']} | " + " | ".join(cells) + " |")
    return lines


def _confirmed_cell(cell: Mapping[str, Any]) -> str:
    """A confirmed result: the ratio and its interval, and whether it held up."""
    if cell.get("held") is None:
        return "1.00x (original kept)"
    if "ratio" not in cell:
        return f"1.00x ({cell.get('status', 'not compared')})"
    mark = "*" if cell["held"] else " (did not hold: 1.00x)"
    return f"{cell['ratio']:.2f}x [{cell['low']:.2f}, {cell['high']:.2f}]{mark}"


def _summary_lines(cfg: Mapping[str, Any], summary: Mapping[str, Any]) -> list[str]:
    """The table of methods, and the share of nests where transfer comes near autotuning."""
    lines = ["## Summary", "",
             "| method | geomean speedup | mean evaluations | nests | accepted / notes |",
             "| --- | --- | --- | --- | --- |"]
    for m in summary["methods"]:
        if m["kind"] == "polly":
            if not m["available"]:
                lines.append("| Polly | not available | - | - | " + (cfg["polly"].get("note") or "") + " |")
                continue
            note = f"{m['unverified']} unverified, {m['failed']} failed (left out); " \
                   f"{m['slower_than_baseline']} slower than baseline"
            lines.append(f"| Polly (`{cfg['polly']['cc']}`) | {_fmt(m['geomean_speedup'])} | 0 (one compile) | "
                         f"{m['nests']} | {note} |")
            continue
        note = "" if m["kind"] == "baseline" else f"{m['accepted']} of {m['nests']} accepted (>= " \
                                                  f"{cfg['min_speedup']}x), else 1.0"
        lines.append(f"| {m['method']} | {_fmt(m['geomean_speedup'])} | {_fmt(m['mean_evaluations'], '', 1)} | "
                     f"{m['nests']} | {note} |")
    near = summary["near_autotune"]
    reference = cfg["tune_trials"][-1]
    return [*lines, "", f"Nests where transfer reaches >= {near['threshold']:.0%} of autotune {reference}: "
            + ", ".join(f"{key} {_pct(val, 0)}"
                        for key, val in near.items() if key not in ("reference", "threshold")) + ".", ""]


def _target_lines(summary: Mapping[str, Any]) -> list[str]:
    """One line per target: its status and the checks behind it."""
    lines = []
    for key in ("a", "b"):
        t = summary["targets"][key]
        detail = ""
        if t["checks"] and key == "a":
            detail = "; ".join(f"k={c['k']}: {_pct(c['geomean_ratio'], 0)} of the geomean with "
                               f"{_pct(c['evaluation_ratio'], 1)} of the evaluations" for c in t["checks"])
        elif t["checks"]:
            detail = "; ".join(f"k={c['k']}: {_fmt(c['geomean_speedup'])} vs Polly {_fmt(c['polly_geomean'])}, "
                               f"slowest {_fmt(c['min_speedup'])}" for c in t["checks"])
        lines.append(f"- **Target ({key})** {t['name']}: **{t['status']}**" + (f" ({detail})" if detail else ""))
    return lines


def _nest_lines(report: Mapping[str, Any]) -> list[str]:
    """The per-nest table, and the skipped nests."""
    k_values, tune_trials = report["config"]["k_values"], report["config"]["tune_trials"]
    head = ["nest", "family", "baseline"] + [f"T k={k}" for k in k_values] + [f"AT {t}" for t in tune_trials] \
        + ["Polly", "nearest neighbours (other families)"]
    lines = ["", "## Per nest", "",
             "Speedups over the gcc baseline, measured in one harness per nest; `(n)` = evaluations; "
             "`*` = accepted; Polly `?` = outputs differ from gcc's.", "",
             "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in report["nests"]:
        cells = [r["name"] + ("" if r["index"] == 0 else f"#{r['index']}"), r["family"], _time(r["baseline_s"])]
        cells += [_cell(r["transfer"][str(k)]) for k in k_values]
        cells += [_cell(r["autotune"][str(n)]) for n in tune_trials]
        cells.append(_polly_cell(r["polly"]))
        near = ", ".join(f"{nb['name']} ({nb['distance']:.2g})" for nb in r["neighbours"][:3]) or "none"
        cells.append(near + (" - beyond the gate" if r.get("within_gate") is False else ""))
        lines.append("| " + " | ".join(cells) + " |")
    if report["skipped"]:
        lines += ["", "Skipped: " + "; ".join(f"{s['name']} ({s['reason']})" for s in report["skipped"]) + "."]
    return lines


def _cell(result: Mapping[str, Any]) -> str:
    """A transfer or autotuning result: speedup, ``*`` when accepted, evaluations."""
    return f"{result['speedup']:.2f}x{'*' if result['accepted'] else ''} ({result['evaluations']})"


def _polly_cell(polly: Mapping[str, Any]) -> str:
    if polly.get("status") == "verified":
        return _fmt(polly["speedup"])
    if polly.get("status") == "unverified":
        return _fmt(polly["speedup"]) + " ?"
    return str(polly.get("status", "-"))


def _gate_line(cfg: Mapping[str, Any]) -> str:
    """How transfer treated nests with no neighbour within the confidence gate (reports before the gate: nothing),
    and which first guesses it tried beside near neighbours (``--priors``)."""
    if "gate_distance" not in cfg:
        return ""
    near = {"schedule": " Beside neighbours within the gate, isl's schedule is screened too (`--priors schedule`).",
            "always": " Beside neighbours within the gate, both first guesses are screened too (`--priors always`)."
            }.get(cfg.get("transfer_priors") or "gate", "")
    if cfg["gate_distance"] is None:
        return "No gate (`--no-gate`): the neighbours' recipes alone, however far." + near
    return (f"As in the service, a nest whose nearest neighbour lies beyond the confidence gate (squared distance "
            f"{cfg['gate_distance']:.3g}; marked in the table) also screens the recipe space's first guesses "
            "(isl's schedule, the outermost parallel loop with the innermost vectorized), counted as evaluations."
            + near)


def _lending(cfg: Mapping[str, Any]) -> str:
    """What each neighbour lends, as the run's settings had it (older reports, without those settings, say less)."""
    families, near, far = cfg.get("transfer_families"), cfg.get("transfer_near"), cfg.get("far_families")
    if families is None:
        return "each its best"
    if near is None or far is None or far >= families:
        return f"each its best of up to {families} recipe families"
    return f"the nearest {near} each their best of up to {families} recipe families, the others their best of {far}"


def _method_lines(cfg: Mapping[str, Any]) -> list[str]:
    return [
        "", "## Method", "",
        "- Families are program-name prefixes (`family/file.c`). While a family is held out, the neighbour search "
        "excludes every nest of that family, so no recipe reaches a nest from its own family.",
        "- Transfer k: the k nearest neighbours' verified recipes (" + _lending(cfg) + "), adapted to the nest; "
        "each candidate "
        "whose generated code differs from the original's and from every earlier candidate's evaluated once "
        "(as in the service: the others are never run, and not counted). "
        f"As the service does before it accepts one, the {CONFIRM_TOP} fastest verified candidates are measured "
        f"again in the same harness and the fastest of those second measurements counts if >= {cfg['min_speedup']}x, "
        "else the original is kept (1.0x). " + _gate_line(cfg),
        f"- Autotune n: one fresh Optuna study per nest (TPE, seed {cfg['seed']}) in a scratch SQLite storage "
        f"for {cfg['tune_trials'][-1]} evaluated trials; autotune n re-evaluates the {REMEASURE_TOP} best of the "
        "first n evaluated trials (distinct recipes) in the same harness as the transfer candidates and keeps "
        "the fastest; same acceptance rule.",
        "- Polly: the original nest built by `" + cfg["polly"]["cc"] + " " + cfg["polly"]["flags"]
        + "`, outputs checked against gcc's baseline outputs.",
        "- Caveat: both results are the maximum over single measurements in that harness (transfer: the second "
        f"measurements of its {CONFIRM_TOP} fastest candidates; autotuning: its {REMEASURE_TOP} best trials), "
        "given run-to-run noise of about 15%; the confirmed summary (where the report has one) re-measures each "
        "winner interleaved with the baseline.",
        "",
    ]


def write_plot(report: Mapping[str, Any], path: Path) -> Path:
    """Geomean speedup vs mean evaluations (log x) per method; baseline and Polly as horizontal lines."""
    # Lazy: matplotlib (320 ms to import) only for the plot, and its Agg backend must be chosen
    # before pyplot loads.
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    methods = report["summary"]["methods"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for kind, colour, marker in (("transfer", "tab:blue", "o"), ("autotune", "tab:orange", "s")):
        pts = [m for m in methods if m["kind"] == kind and m["geomean_speedup"] is not None]
        if not pts:
            continue
        xs = [max(m["mean_evaluations"] or 0.0, 0.8) for m in pts]
        ys = [m["geomean_speedup"] for m in pts]
        ax.plot(xs, ys, marker=marker, color=colour, label=kind)
        for m, x, y in zip(pts, xs, ys, strict=True):
            ax.annotate(f"k={m['k']}" if kind == "transfer" else f"n={m['trials']}", (x, y),
                        textcoords="offset points", xytext=(5, 5), fontsize=8)
    ax.axhline(1.0, color="grey", linestyle=":", label="baseline (gcc -O3)")
    polly = next((m for m in methods if m["kind"] == "polly"), None)
    if polly and polly.get("geomean_speedup"):
        ax.axhline(polly["geomean_speedup"], color="tab:green", linestyle="--",
                   label=f"Polly ({polly['nests']} verified nests)")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("mean evaluations per nest (log)")
    ax.set_ylabel("geomean speedup over gcc -O3")
    ax.set_title(f"leave one family out, {report['summary']['nests']} nests")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def write_report(report: Mapping[str, Any], out: Path) -> tuple[Path, Path]:
    """The markdown report at ``out``, its plot beside it (``.png``) and the report itself (``.json``: the
    result file ``docs/benchmarks/paper.md`` is rendered from, :mod:`experiments.paper_page`)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    plot = write_plot(report, out.with_suffix(".png"))
    out.write_text(markdown_report(report, plot.name))
    out.with_suffix(".json").write_text(json.dumps(report, indent=1, default=str) + "\n")
    return out, plot


def summary_table(report: Mapping[str, Any]) -> str:
    """A plain-text summary for terminals."""
    lines = [f"{'method':<16} {'geomean':>9} {'mean evals':>11} {'nests':>6}"]
    for m in report["summary"]["methods"]:
        if m["kind"] == "polly" and not m["available"]:
            lines.append(f"{'polly':<16} {'n/a':>9}")
            continue
        lines.append(f"{m['method']:<16} {_fmt(m['geomean_speedup']):>9} {_fmt(m['mean_evaluations'], '', 1):>11} "
                     f"{m['nests']:>6}")
    summaries = [("", report["summary"])]
    if report.get("confirmed"):
        summaries.append((", winners confirmed", report["confirmed"]["summary"]))
    for label, summary in summaries:
        for key, t in summary["targets"].items():
            lines.append(f"target ({key}){label}: {t['status']}" + (f" (k={t['passing_k']})" if t["passing_k"] else ""))
    return "\n".join(lines)
