"""``perfembed suggest`` output: the suggestion tables, the --fallback autotuning run, --write-best."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from service import program_eval
from service.commands.options import console, err_console, fmt_value
from service.program_eval import tuned_source


def print_suggestions(result: dict[str, Any], settings: Any) -> None:
    """Per nest: a table of neighbours and adapted recipes, then measured results and the decision."""
    for n in result["nests"]:
        console.rule(f"{n['name']} (function {n['function']}, nest {n['index']})")
        table = Table("neighbour", "distance", "recorded speedup", "adapted recipe")
        for nb, cand in zip(n["neighbours"], n["candidates"] + [None] * len(n["neighbours"]), strict=False):
            table.add_row(nb["name"], f"{nb['distance']:.3g}", fmt_value(nb["recorded_speedup"], "{:.2f}x"),
                          json.dumps(cand["recipe"]["steps"]) if cand else "-")
        console.print(table)
        if not n["confident"]:
            console.print("low confidence: no stored nest is close to this one"
                          + (" (tuning job enqueued)" if n.get("tuning_job") else "; use --fallback to autotune"))
        for ev in n.get("evaluated", []):
            reason = f" ({ev['message']})" if ev.get("message") and ev["status"] != "ok" else ""
            console.print(f"  {escape(ev['from'])}: {escape(ev['status'])}{escape(reason)}, verified={ev['verified']}, "
                          f"screening speedup {fmt_value(ev['speedup'], '{:.2f}x')}"
                          + (f"; re-measured {ev['confirmed']['text']}" if ev.get("confirmed") else ""))
        if "accepted" in n:
            console.print("accepted: " + (f"{n['best']['text']} from {escape(n['best']['from'])}" if n["accepted"]
                                          else "no candidate held up: none re-measured clearly above "
                                               f"{getattr(settings, 'min_speedup', 1.1)}x"))
        if "autotuned" in n:
            _print_autotuned(n)
    if result.get("program"):
        _print_program(result["program"], settings)
    if result["nests"] and not any(n["neighbours"] for n in result["nests"]):
        from sqlalchemy.engine import make_url

        where = make_url(settings.resolved_database_url).render_as_string(hide_password=True)
        console.print(f"no tuned nest in the database at {where}: "
                      "load the shipped seed with `perfembed seed load` (`make serve` does) or tune some first")


def _print_autotuned(nest: dict[str, Any]) -> None:
    tuned = nest["autotuned"]
    if not tuned:
        reason = f" ({nest['autotune_error']})" if nest.get("autotune_error") else ""
        console.print(f"autotuned (--fallback): nothing verified and clearly 1.1x faster{escape(reason)}")
        return
    figure = tuned.get("text") or f"{tuned['speedup']:.2f}x"
    trial = tuned.get("trial_speedup") or tuned["speedup"]
    console.print(f"autotuned (--fallback): re-measured {figure} (best of {tuned['evaluated']} trials: {trial:.2f}x), "
                  f"{json.dumps(tuned['recipe']['steps'])}")


def _print_program(program: dict[str, Any], settings: Any) -> None:
    if program["status"] != "ok":
        console.print(f"whole program: {escape(program['status'])}: {escape(program['message'])}; "
                      "the tuned code is not kept")
        return
    ms = f"{program['original_seconds'] * 1e3:.0f} ms -> {program['tuned_seconds'] * 1e3:.0f} ms"
    verdict = ("accepted" if program["accepted"] else
               f"not kept: not clearly {getattr(settings, 'min_speedup', 1.1)}x faster as a whole")
    console.print(f"whole program ({ms}, same output): {program['speedup']['text']}: {verdict}")


def run_fallback_jobs(store: Any, settings: Any, result: dict[str, Any], trials: int) -> None:
    """Run the enqueued jobs here; each nest gets ``autotuned`` (its best verified recipe, >= 1.1x, or None)."""
    jobs = {n["tuning_job"]: n for n in result["nests"] if n.get("tuning_job")}
    if not jobs:
        return
    import optuna

    from autotune.transfer import MIN_SPEEDUP
    from autotune.worker import default_worker_id, run_worker
    from database import get_recipe

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with console.status(f"autotuning {len(jobs)} nest(s) no neighbour helped ({trials} trials each)"):
        report = run_worker(store, worker_id=default_worker_id(), once=True, max_jobs=len(jobs), settings=settings)
    for outcome in report.jobs:
        nest = jobs.get(outcome.job_id)
        if nest is None:
            continue
        found = None
        worth_it = (outcome.best_speedup or 0.0) >= MIN_SPEEDUP
        if outcome.status == "done" and outcome.best_recipe_id is not None and worth_it:
            with store.session() as session:
                recipe = get_recipe(session, recipe_id=outcome.best_recipe_id)
            found = {"recipe": {"steps": list(recipe.steps)}, "speedup": outcome.best_speedup,
                     "evaluated": outcome.evaluated,
                     "trial_speedup": outcome.result.best_speedup if outcome.result else None,
                     "text": outcome.confirmed.describe() if outcome.confirmed else None}
        nest["autotuned"] = found
        if outcome.error:
            nest["autotune_error"] = outcome.error


def evaluate_program(file: Path, extraction: Any, result: dict[str, Any], spec: Any, settings: Any) -> None:
    """:func:`service.program_eval.evaluate_program`, with a status line naming each step while it runs."""
    with console.status(f"whole program: building and timing {file.name}, original against tuned") as status:
        program_eval.evaluate_program(file, extraction, result, spec, settings,
                                      progress=lambda p: status.update(escape(f"{file.name}: {p.describe()}")))


def write_best_file(file: Path, extraction: Any, result: dict[str, Any], out: Path) -> None:
    """The tuned file (:func:`tuned_source`), written to ``out``."""
    text, tuned = tuned_source(file, extraction, result)
    out.write_text(text)
    err_console.print(f"wrote {escape(str(out))}: {tuned} of {len(extraction.scops)} nest(s) tuned")
