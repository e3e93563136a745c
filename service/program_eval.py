"""Whole-program evaluation shared by the CLI and the API: the user's file with each nest's accepted
recipe applied, the decision whether the program as a whole got faster with the same output, and the
one outcome every entry point reports (:func:`program_outcome`): tuned, not tuned (and why), checked
per nest only, or a program that does not build."""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loopnest.dropin import replace_regions
from loopnest.harness.compare import AcceptancePolicy
from loopnest.harness.program import ProgramSpec, compare_programs
from loopnest.harness.progress import Progress, ProgressFn, step_reporter
from loopnest.harness.sandbox import SANDBOX_ERROR, Limits
from loopnest.transform.recipe import Recipe, apply_recipe
from loopnest.transform.recipe_text import loop_names, recipe_text

PROGRAM_MAX_PAIRS = 15  # a program run costs more than a nest's: fewer pairs before an undecided verdict
# Each tuned nest's share, when a program has several: measured only where one run is short enough.
PER_NEST_MAX_PAIRS = 6
PER_NEST_MAX_SECONDS = 5.0
BUILD_HELP = ("give the program's build and run commands: --build 'CMD' --run 'CMD' (run in a copy of the "
              "project), or -p BUILD_DIR with a compile_commands.json")


def best_recipe(nest: dict[str, Any]) -> dict[str, Any] | None:
    """The faster of the accepted transfer candidate and the fallback's autotuned recipe, if any."""
    options = [nest["best"]] if nest.get("accepted") and nest.get("best") else []
    options += [nest["autotuned"]] if nest.get("autotuned") else []
    return max(options, key=lambda o: o["speedup"] or 0.0)["recipe"] if options else None


def applied_recipes(result: dict[str, Any]) -> dict[int, dict[str, Any]]:
    """Each nest's recipe that the whole program applies (:func:`best_recipe`), by nest index."""
    return {n["index"]: recipe for n in result["nests"] if (recipe := best_recipe(n)) is not None}


def nest_verified_source(file: Path, extraction: Any, result: dict[str, Any],
                         only: int | None = None) -> tuple[str, int]:
    """``file``'s text with each nest's best verified recipe applied (verified nest by nest, whatever the
    whole program said; nest ``only`` alone when given), and how many nests that tunes."""
    chosen = {i: Recipe.from_dict(steps) for i, steps in applied_recipes(result).items() if only in (None, i)}
    transformed = {i: apply_recipe(extraction.scops[i], r) for i, r in chosen.items()}
    return replace_regions(file, transformed, extraction.scops), len(transformed)


def tuned_source(file: Path, extraction: Any, result: dict[str, Any]) -> tuple[str, int]:
    """The tuned text and its number of tuned nests, or ``("", 0)`` when nothing is tuned: no nest held up,
    or the whole program refused them (never the original as if it were tuned)."""
    if result.get("program") and not result["program"]["accepted"]:
        return "", 0
    text, tuned = nest_verified_source(file, extraction, result)
    return (text, tuned) if tuned else ("", 0)


def evaluate_program(file: Path, extraction: Any, result: dict[str, Any], spec: ProgramSpec,
                     settings: Any, progress: ProgressFn | None = None) -> dict[str, Any] | None:
    """Original against tuned, as whole programs, with every accepted nest applied together; sets and
    returns ``result["program"]`` (None when no nest was accepted, so there is nothing to compare).
    ``progress`` hears the ``whole program`` steps."""
    text, tuned = nest_verified_source(file, extraction, result)
    if not tuned:
        return None
    policy = dataclasses.replace(AcceptancePolicy.from_settings(settings), max_pairs=PROGRAM_MAX_PAIRS)
    outcome = compare_programs(file.read_text(), text, spec, name=file.name, policy=policy,
                               limits=Limits.from_settings(settings),
                               on_step=step_reporter(progress, Progress("whole program")))
    accepted = outcome.ok and outcome.speedup is not None and outcome.speedup.above(policy.margin)
    result["program"] = {**outcome.to_dict(), "accepted": accepted, "nests_tuned": tuned}
    if accepted and tuned > 1 and (outcome.original_seconds or 0.0) <= PER_NEST_MAX_SECONDS:
        result["program"]["per_nest"] = _per_nest(file, extraction, result, spec, settings, progress)
    return result["program"]


def _per_nest(file: Path, extraction: Any, result: dict[str, Any], spec: ProgramSpec, settings: Any,
              progress: ProgressFn | None) -> list[dict[str, Any]]:
    """What each tuned nest contributes: the program with that nest alone tuned, against the original."""
    policy = dataclasses.replace(AcceptancePolicy.from_settings(settings), max_pairs=PER_NEST_MAX_PAIRS)
    out = []
    applied = applied_recipes(result)
    for nest in result["nests"]:
        if nest["index"] not in applied:
            continue
        text, _ = nest_verified_source(file, extraction, result, only=nest["index"])
        alone = compare_programs(file.read_text(), text, spec, name=file.name, policy=policy,
                                 limits=Limits.from_settings(settings),
                                 on_step=step_reporter(progress, Progress(f"whole program, {nest['name']} alone")))
        out.append({"index": nest["index"], "name": nest["name"], **alone.to_dict()})
    return out


@dataclass(frozen=True)
class ProgramOutcome:
    """What the user gets, in one line: ``tuned`` (checked as a whole program), ``nest-verified`` (each nest
    verified alone; the program was not checked), ``not-tuned`` (with why) or ``build-failed`` (the user's
    program did not build or run as given: a user error, exit 2)."""

    status: str
    reason: str

    @property
    def exit_code(self) -> int:
        return 2 if self.status == "build-failed" else 0

    @property
    def writes(self) -> bool:
        return self.status in ("tuned", "nest-verified")

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason}


def program_outcome(result: dict[str, Any], *, unchecked_ok: bool) -> ProgramOutcome:
    """The outcome of a suggestion whose whole program was evaluated when ``result["program"]`` is set;
    ``unchecked_ok`` when the user chose the nest-verified file (``--no-program-check``)."""
    tuned = len(applied_recipes(result))
    if not tuned:
        return ProgramOutcome("not-tuned", "no nest held up: no candidate re-measured clearly faster")
    program = result.get("program")
    if program is None:
        why = "--no-program-check" if unchecked_ok else "no main and no --build: " + BUILD_HELP
        return ProgramOutcome("nest-verified", f"{tuned} nest(s) verified and faster alone; not checked as a "
                                               f"whole program ({why})")
    if program["accepted"]:
        return ProgramOutcome("tuned", f"{tuned} nest(s) tuned; whole program {program['speedup']['text']}, "
                                       "same output")
    status, message = program["status"], program.get("message") or ""
    if status in ("build-error", SANDBOX_ERROR) and message.startswith("original"):
        return ProgramOutcome("build-failed", f"the original program does not build: {message[len('original: '):]};"
                                              f" {BUILD_HELP}")
    if status == "ok":
        return ProgramOutcome("not-tuned", f"whole program {program['speedup']['text']}: not clearly faster as a "
                                           "whole; nothing written")
    return ProgramOutcome("not-tuned", f"whole program: {status}" + (f": {message}" if message else "")
                          + "; the tuned code is not kept")


def dropin_header(scops: list[Any], result: dict[str, Any], text: str, outcome: ProgramOutcome,
                  check: str | None = None) -> str:
    """A C comment for the top of a drop-in file: the recipe applied to each region with its figure, what
    the whole program showed (or that it was not checked), and the compiler flags the code needs."""
    lines = ["Tuned by perfembed."]
    for nest in result["nests"]:
        recipe = best_recipe(nest)
        if recipe is None:
            continue
        scop = scops[nest["index"]]
        figure = (nest.get("best") or nest.get("autotuned") or {}).get("text") or ""
        lines.append(f"  lines {scop.region.first_line}-{scop.region.last_line} ({scop.region.function}): "
                     f"{recipe_text(recipe, loop_names(scop))}" + (f", nest alone {figure}" if figure else ""))
    if outcome.status == "tuned":
        lines.append(f"Whole program: {outcome.reason}" + (f" (built with: {check})" if check else "") + ".")
    else:
        lines.append("NOT checked as a whole program (--no-program-check): each nest was verified alone.")
    lines.append(f"Build with: {needed_flags(text)}.")
    body = "\n".join(f" * {line}".rstrip() for line in lines)
    return f"/*\n{body.replace('*/', '* /')}\n */\n"


def needed_flags(text: str) -> str:
    """The compiler flags the generated code needs to run as measured: OpenMP for parallel loops, OpenMP's
    SIMD for simd pragmas alone (without them gcc drops the pragmas silently)."""
    pragmas = re.findall(r"#\s*pragma\s+omp\s+(\w+)", text)
    if any(p != "simd" for p in pragmas):
        return "-O3 -fopenmp (OpenMP parallel loops)"
    if pragmas:
        return "-O3 -fopenmp-simd or -fopenmp (OpenMP simd loops)"
    return "-O3"
