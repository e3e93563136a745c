"""``perfembed suggest`` output: the suggestion tables, the --fallback autotuning run, --write-best."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rich.markup import escape
from rich.table import Table

from service.commands.options import console, err_console, fmt_value


def print_suggestions(result: dict[str, Any], settings: Any) -> None:
    """Per nest: a table of neighbours and adapted recipes, then measured results and the decision."""
    for n in result["nests"]:
        console.rule(f"{n['name']} (nest {n['index']})")
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
            tuned = n["autotuned"]
            console.print(f"autotuned (--fallback): {tuned['speedup']:.2f}x after {tuned['evaluated']} trials, "
                          f"{json.dumps(tuned['recipe']['steps'])}" if tuned else
                          "autotuned (--fallback): nothing verified and at least 1.1x faster"
                          + (f" ({n['autotune_error']})" if n.get("autotune_error") else ""))
    if result["nests"] and not any(n["neighbours"] for n in result["nests"]):
        from sqlalchemy.engine import make_url

        where = make_url(settings.resolved_database_url).render_as_string(hide_password=True)
        console.print(f"no tuned nest in the database at {where}: "
                      "load the shipped seed with `perfembed seed load` (`make serve` does) or tune some first")


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
                     "evaluated": outcome.evaluated}
        nest["autotuned"] = found
        if outcome.error:
            nest["autotune_error"] = outcome.error


def write_best_file(file: Path, extraction: Any, result: dict[str, Any], out: Path) -> None:
    """``file`` with each nest's best verified recipe applied (see :func:`best_recipe`), written to ``out``."""
    from loopnest.dropin import replace_regions
    from loopnest.transform.recipe import Recipe, apply_recipe

    best = {n["index"]: best_recipe(n) for n in result["nests"]}
    chosen = {i: Recipe.from_dict(steps) for i, steps in best.items() if steps is not None}
    transformed = {i: apply_recipe(extraction.scops[i], r) for i, r in chosen.items()}
    out.write_text(replace_regions(file, transformed, extraction.scops))
    err_console.print(f"wrote {escape(str(out))}: {len(transformed)} of {len(extraction.scops)} nest(s) tuned")


def best_recipe(nest: dict[str, Any]) -> dict[str, Any] | None:
    """The faster of the accepted transfer candidate and the fallback's autotuned recipe, if any."""
    options = [nest["best"]] if nest.get("accepted") and nest.get("best") else []
    options += [nest["autotuned"]] if nest.get("autotuned") else []
    return max(options, key=lambda o: o["speedup"] or 0.0)["recipe"] if options else None
