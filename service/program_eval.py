"""Whole-program evaluation shared by the CLI and the API: the user's file with each nest's accepted
recipe applied, and the decision whether the program as a whole got faster with the same output."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from loopnest.dropin import replace_regions
from loopnest.harness.compare import AcceptancePolicy
from loopnest.harness.program import ProgramSpec, compare_programs
from loopnest.harness.progress import Progress, ProgressFn, step_reporter
from loopnest.harness.sandbox import Limits
from loopnest.transform.recipe import Recipe, apply_recipe

PROGRAM_MAX_PAIRS = 15  # a program run costs more than a nest's: fewer pairs before an undecided verdict


def best_recipe(nest: dict[str, Any]) -> dict[str, Any] | None:
    """The faster of the accepted transfer candidate and the fallback's autotuned recipe, if any."""
    options = [nest["best"]] if nest.get("accepted") and nest.get("best") else []
    options += [nest["autotuned"]] if nest.get("autotuned") else []
    return max(options, key=lambda o: o["speedup"] or 0.0)["recipe"] if options else None


def tuned_source(file: Path, extraction: Any, result: dict[str, Any]) -> tuple[str, int]:
    """``file``'s text with each nest's best verified recipe applied, and how many nests that tunes;
    when the whole program did not get faster, the original text."""
    if result.get("program") and not result["program"]["accepted"]:
        return file.read_text(), 0
    best = {n["index"]: best_recipe(n) for n in result["nests"]}
    chosen = {i: Recipe.from_dict(steps) for i, steps in best.items() if steps is not None}
    transformed = {i: apply_recipe(extraction.scops[i], r) for i, r in chosen.items()}
    return replace_regions(file, transformed, extraction.scops), len(transformed)


def evaluate_program(file: Path, extraction: Any, result: dict[str, Any], spec: ProgramSpec,
                     settings: Any, progress: ProgressFn | None = None) -> dict[str, Any] | None:
    """Original against tuned, as whole programs; sets and returns ``result["program"]`` (None when no
    nest was accepted, so there is nothing to compare). ``progress`` hears the ``whole program`` steps."""
    text, tuned = tuned_source(file, extraction, result)
    if not tuned:
        return None
    policy = dataclasses.replace(AcceptancePolicy.from_settings(settings), max_pairs=PROGRAM_MAX_PAIRS)
    outcome = compare_programs(file.read_text(), text, spec, name=file.name, policy=policy,
                               limits=Limits.from_settings(settings),
                               on_step=step_reporter(progress, Progress("whole program")))
    accepted = outcome.ok and outcome.speedup is not None and outcome.speedup.above(policy.margin)
    result["program"] = {**outcome.to_dict(), "accepted": accepted, "nests_tuned": tuned}
    return result["program"]
