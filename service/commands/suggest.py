"""``perfembed suggest`` output: the suggestion tables, the fallback's autotuned recipes, the outcome."""

from __future__ import annotations

import json
from typing import Any

from rich.markup import escape
from rich.table import Table

from service.commands.options import console, err_console, fmt_value
from service.core.maintenance import safe_url
from service.core.types import NOTHING_NEW


def print_suggestions(result: dict[str, Any], settings: Any, *, database: str | None = None,
                      here: str = "this machine") -> None:
    """Per nest: what this nest got before (tuned before), a table of neighbours and adapted recipes, then
    measured results and the decision. ``database`` names where an empty answer came from (default: the
    settings' database), ``here`` the machine that answered (``--server``: the server's)."""
    others: dict[int, dict[str, Any]] = {}
    for n in result["nests"]:
        function = f"function {n['function']}, " if n.get("function") else ""
        console.rule(f"{n['name']} ({function}nest {n['index']})")
        if n.get("tuned_before"):
            _print_tuned_before(n["tuned_before"], here)
        console.print(neighbour_table(n["neighbours"], n["candidates"], here))
        others.update({t["id"]: t for nb in n["neighbours"] if (t := nb.get("target")) and not t["this_machine"]})
        if not n["confident"]:
            job = n.get("tuning_job")
            console.print("low confidence: no other stored nest is close to this one"
                          + (f" (tuning job {job} enqueued: `perfembed jobs wait {job}`)" if job
                             else "; use --fallback to autotune"))
        load = f", machine busy ({n['screening_pressure']:.0%} CPU pressure)" if n.get("busy") else ""
        for ev in n.get("evaluated", []):
            reason = f" ({ev['message']})" if ev.get("message") and ev["status"] != "ok" else ""
            console.print(f"  {ev['from']}: {ev['status']}{reason}, verified={ev['verified']}, "
                          f"screening speedup {_ratio(ev['speedup'])}{load if ev['speedup'] else ''}"
                          + (f"; re-measured {ev['confirmed']['text']}" if ev.get("confirmed") else ""))
        if "accepted" in n:
            best = n.get("best") or {}
            console.print("accepted: " + (f"{best['text']} from {best['from']}: {_text(best)}"
                                          if n["accepted"] else _none_held(n, getattr(settings, "min_speedup", 1.1))))
            if n["accepted"]:
                console.print(f"  as JSON: {json.dumps(best['recipe'])}", highlight=False)
        if "autotuned" in n:
            _print_autotuned(n)
    for target in others.values():
        console.print(f"* target {target['id']} ({target['name']}) is not {here}: its speedups were "
                      "measured elsewhere and may not hold here")
    if result.get("program"):
        _print_program(result["program"], settings)
    _print_busy(result["nests"])
    if result["nests"] and not any(n["neighbours"] or n.get("tuned_before") for n in result["nests"]):
        if database is None and settings is not None:
            database = safe_url(settings.resolved_database_url)
        console.print(f"no tuned nest in the database{f' at {database}' if database else ''}: "
                      "load the shipped seed with `perfembed seed load` (`make serve` does) or tune some first")


def _print_busy(nests: list[dict[str, Any]]) -> None:
    """One line at the end when the machine was busy while nests were screened, with what to do."""
    busy = [n for n in nests if n.get("busy")]
    if busy:
        worst = max(n["screening_pressure"] for n in busy)
        console.print(f"the machine was busy while {len(busy)} nest(s) were screened (up to {worst:.0%} CPU pressure):"
                      " their figures are low, parallel candidates' most; rerun on an idle machine, or with "
                      "--threads 1 to measure what one core gives")


def neighbour_table(neighbours: list[dict[str, Any]], candidates: list[dict[str, Any]],
                    here: str = "this machine") -> Table:
    """Neighbours (other nests) with their recorded speedup, where it was measured, and the recipes
    adapted from each to this nest (its best first, then its other families), in this nest's loop names."""
    table = Table("neighbour", "distance", "recorded speedup", "measured on", "adapted recipe")
    adapted: dict[Any, list[dict[str, Any]]] = {}
    for c in candidates:
        adapted.setdefault(c.get("from_nest_id", c.get("from")), []).append(c)
    for nb in neighbours:
        cands = adapted.get(nb["nest_id"], adapted.get(nb["name"], []))
        table.add_row(nb["name"], f"{nb['distance']:.3g}", fmt_value(nb["recorded_speedup"], "{:.2f}x"),
                      _where(nb.get("target"), here),
                      "\n".join(_adapted_text(c, nb) for c in cands) if cands else NOTHING_NEW)
    guesses = [c for c in candidates if c.get("from_nest_id", 0) is None]  # no neighbour within the gate
    if guesses:
        table.add_row(guesses[0]["from"], "-", "-", "-", "\n".join(_text(c) for c in guesses))
    return table


def _adapted_text(cand: dict[str, Any], neighbour: dict[str, Any]) -> str:
    """An adapted recipe; one from another of the neighbour's recipes than its best says that one's speedup
    (the JSON's ``from_recipe_text`` has the recipe)."""
    # A variant of the lent recipe (transfer's "taller block", "SIMD reduction") says so after it.
    variant = f" (variant: {cand['variant']})" if cand.get("variant") else ""
    speedup = cand.get("from_speedup")
    if speedup is None or speedup == neighbour["recorded_speedup"]:
        return f"{_text(cand)}{variant}"
    return f"{_text(cand)}{variant} (from its {fmt_value(speedup, '{:.2f}x')} recipe)"


def _where(target: dict[str, Any] | None, here: str) -> str:
    if target is None:
        return "-"
    return here if target["this_machine"] else f"target {target['id']} *"


def _text(item: dict[str, Any]) -> str:
    """A recipe in the nest's loop names (the core's ``recipe_text``), else its JSON."""
    return str(item.get("recipe_text") or json.dumps(item["recipe"]["steps"]))


def _print_tuned_before(before: dict[str, Any], here: str) -> None:
    params = ", ".join(f"{k}={v}" for k, v in before["params"].items())
    count = before["measurements"]
    console.print(f"tuned before on {here} at {params or 'these sizes'}: {before['text']} "
                  f"with {before['recipe_text']} ({count} measurement{'s' if count != 1 else ''}, "
                  f"stored nest {before['nest_id']})", highlight=False)
    console.print(f"  as JSON: {json.dumps(before['recipe'])}", highlight=False)


def _print_autotuned(nest: dict[str, Any]) -> None:
    tuned = nest["autotuned"]
    if not tuned:
        reason = f" ({nest['autotune_error']})" if nest.get("autotune_error") else ""
        console.print(f"autotuned (--fallback): nothing verified and clearly 1.1x faster{reason}")
        return
    figure = tuned.get("text") or f"{tuned['speedup']:.2f}x"
    trial = tuned.get("trial_speedup") or tuned["speedup"]
    text = tuned.get("recipe_text") or json.dumps(tuned["recipe"]["steps"])
    console.print(f"autotuned (--fallback): re-measured {figure} (best of {tuned['evaluated']} trials: {trial:.2f}x), "
                  f"{text}")
    console.print(f"  as JSON: {json.dumps(tuned['recipe']['steps'])}", highlight=False)


def _ratio(value: float | None) -> str:
    """A speedup to two decimals, or to two significant digits below 0.1 (a parallel loop of a thousand
    iterations reads 0.004x: '0.00x' looked like a bug)."""
    if value is None:
        return "-"
    return f"{value:.2f}x" if value >= 0.1 else f"{value:.2g}x"


def _none_held(nest: dict[str, Any], margin: float) -> str:
    """Why no candidate was accepted: none screened faster (so none was re-measured), or none held up."""
    if not any(ev.get("confirmed") for ev in nest.get("evaluated", [])):
        return "no candidate held up: none screened faster than the original, so none was re-measured"
    return f"no candidate held up: none re-measured clearly above {margin}x"


def _print_program(program: dict[str, Any], settings: Any) -> None:
    if program["status"] != "ok":
        console.print(f"whole program: {program['status']}: {program['message']}; "
                      "the tuned code is not kept")
        return
    ms = f"{program['original_seconds'] * 1e3:.0f} ms -> {program['tuned_seconds'] * 1e3:.0f} ms"
    verdict = ("accepted" if program["accepted"] else
               f"not kept: not clearly {getattr(settings, 'min_speedup', 1.1)}x faster as a whole")
    console.print(f"whole program ({ms}, same output): {program['speedup']['text']}: {verdict}")
    if program.get("message"):  # built without OpenMP, say: the figure is not what the threads promise
        console.print(f"  [yellow]{escape(program['message'])}[/]")
    for alone in program.get("per_nest") or []:
        figure = alone["speedup"]["text"] if alone.get("speedup") else f"{alone['status']} {alone['message']}"
        console.print(f"  with {alone['name']} alone tuned: {figure}")


def print_outcome(outcome: dict[str, Any]) -> None:
    """The one line that says what the user got."""
    colour = {"tuned": "green", "nest-verified": "yellow"}.get(outcome["status"], "red")
    err_console.print(f"[{colour}]{outcome['status']}[/]: {escape(outcome['reason'])}")
