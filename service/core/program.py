"""The whole program, original against tuned: which recipe each nest applies (:func:`applied_recipes`), the
comparison of the two programs (:func:`evaluate_program`, a typed :class:`ProgramEvaluation`), and the one
outcome every entry point reports (:func:`program_outcome`): tuned, not tuned (and why), checked per nest
only, or a program that does not build. The CLI, the API and the dashboard turn these values into their
JSON at the edge (:meth:`ProgramEvaluation.to_dict`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loopnest.config import Settings
from loopnest.harness.compare import AcceptancePolicy
from loopnest.harness.program import ProgramComparison, ProgramSpec, compare_programs
from loopnest.harness.progress import Progress, ProgressFn, step_reporter
from loopnest.harness.sandbox import SANDBOX_ERROR, Limits
from loopnest.ir import Scop
from loopnest.transform.recipe import Recipe
from service.core.dropin import applied_source, dropin_header

PROGRAM_MAX_PAIRS = 15  # a program run costs more than a nest's: fewer pairs before an undecided verdict
# Each tuned nest's share, when a program has several: measured only where one run is short enough.
PER_NEST_MAX_PAIRS = 6
PER_NEST_MAX_SECONDS = 5.0
BUILD_HELP = ("give the program's build and run commands: --build 'CMD' --run 'CMD' (run in a copy of the "
              "project), or -p BUILD_DIR with a compile_commands.json")
JsonDict = dict[str, Any]


@dataclass(frozen=True)
class AppliedRecipe:
    """The recipe the whole program applies at one nest: the faster of its accepted transfer candidate and
    its autotuned recipe (``--fallback``), with that one's figure (``text``) for the drop-in header."""

    index: int
    name: str
    steps: JsonDict  # the recipe as the answer has it: {"steps": [...]}
    figure: str
    nest_id: int | None = None
    params: Mapping[str, int] = dataclasses.field(default_factory=dict)

    @property
    def recipe(self) -> Recipe:
        return Recipe.from_dict(self.steps)


def applied_recipes(nests: Sequence[Mapping[str, Any]]) -> dict[int, AppliedRecipe]:
    """Each nest's :class:`AppliedRecipe`, by nest index, read from an answer's nests in their JSON form (the
    CLI's, with ``autotuned`` from ``--fallback``, or an evaluation job's result)."""
    out: dict[int, AppliedRecipe] = {}
    for nest in nests:
        options = [nest["best"]] if nest.get("accepted") and nest.get("best") else []
        options += [nest["autotuned"]] if nest.get("autotuned") else []
        if options:
            chosen = max(options, key=lambda o: o["speedup"] or 0.0)
            out[nest["index"]] = AppliedRecipe(index=nest["index"], name=nest.get("name") or f"nest {nest['index']}",
                                               steps=chosen["recipe"], figure=chosen.get("text") or "",
                                               nest_id=nest.get("nest_id"), params=dict(nest.get("params") or {}))
    return out


def tuned_source(path: Path, scops: Sequence[Scop], result: Mapping[str, Any]) -> tuple[str, int]:
    """The tuned text of an answer in its JSON form (an evaluation job's result), with the drop-in header
    (recipes, figures, the flags it needs), and its number of tuned nests, or ``("", 0)`` when nothing is
    tuned: no nest held up, or the whole program refused them (never the original as if it were tuned)."""
    program = result.get("program")
    if program and not program["accepted"]:
        return "", 0
    applied = applied_recipes(result["nests"])
    if not applied:
        return "", 0
    text = applied_source(path, scops, applied)
    checked = None if not program else f"same output, {(program.get('speedup') or {}).get('text') or 'faster'}"
    header = dropin_header(scops, applied, text, checked=checked, unchecked='evaluate: true, not "program"')
    return header + text, len(applied)


@dataclass(frozen=True)
class NestAlone:
    """The program with one nest alone tuned, against the original: that nest's share of the whole."""

    index: int
    name: str
    comparison: ProgramComparison

    def to_dict(self) -> JsonDict:
        return {"index": self.index, "name": self.name, **self.comparison.to_dict()}


@dataclass(frozen=True)
class ProgramEvaluation:
    """Original against tuned, as whole programs, with every applied recipe at once: the comparison, whether
    the tuned program is kept (same output, faster by the margin), how many nests it tunes, and each nest's
    share when several are tuned and a run is short enough (``per_nest``)."""

    comparison: ProgramComparison
    accepted: bool
    nests_tuned: int
    per_nest: tuple[NestAlone, ...] | None = None

    @property
    def status(self) -> str:
        return self.comparison.status

    @property
    def message(self) -> str:
        return self.comparison.message

    def verdict(self) -> str:
        """``held: FIGURE`` or ``refused: STATUS: WHY``, as stored beside each applied recipe's measurement."""
        speedup = self.comparison.speedup
        if self.accepted and speedup is not None:
            return f"held: whole program {speedup.describe()}"
        if self.status == "ok" and speedup is not None:
            return f"refused: not clearly faster as a whole program ({speedup.describe()})"
        return f"refused: {self.status}" + (f": {self.message}" if self.message else "")

    def to_dict(self) -> JsonDict:
        """The ``program`` object of ``perfembed suggest --json`` and of the API's evaluated answer."""
        out = {**self.comparison.to_dict(), "accepted": self.accepted, "nests_tuned": self.nests_tuned}
        if self.per_nest is not None:
            out["per_nest"] = [alone.to_dict() for alone in self.per_nest]
        return out


def evaluate_program(file: Path, scops: Sequence[Scop], applied: Mapping[int, AppliedRecipe], spec: ProgramSpec,
                     settings: Settings, progress: ProgressFn | None = None) -> ProgramEvaluation | None:
    """Original against tuned, as whole programs, with every recipe of ``applied`` at once (None when there is
    none, so nothing to compare). ``progress`` hears the ``whole program`` steps."""
    if not applied:
        return None
    text = applied_source(file, scops, applied)
    policy = dataclasses.replace(AcceptancePolicy.from_settings(settings), max_pairs=PROGRAM_MAX_PAIRS)
    outcome = compare_programs(file.read_text(), text, spec, name=file.name, policy=policy,
                               limits=Limits.from_settings(settings),
                               on_step=step_reporter(progress, Progress("whole program")))
    accepted = outcome.ok and outcome.speedup is not None and outcome.speedup.above(policy.margin)
    per_nest = None
    if accepted and len(applied) > 1 and (outcome.original_seconds or 0.0) <= PER_NEST_MAX_SECONDS:
        per_nest = _per_nest(file, scops, applied, spec, settings, progress)
    return ProgramEvaluation(outcome, accepted=accepted, nests_tuned=len(applied), per_nest=per_nest)


def _per_nest(file: Path, scops: Sequence[Scop], applied: Mapping[int, AppliedRecipe], spec: ProgramSpec,
              settings: Settings, progress: ProgressFn | None) -> tuple[NestAlone, ...]:
    """What each tuned nest contributes: the program with that nest alone tuned, against the original."""
    policy = dataclasses.replace(AcceptancePolicy.from_settings(settings), max_pairs=PER_NEST_MAX_PAIRS)
    out = []
    for index in sorted(applied):
        nest = applied[index]
        alone = compare_programs(file.read_text(), applied_source(file, scops, applied, only=index), spec,
                                 name=file.name, policy=policy, limits=Limits.from_settings(settings),
                                 on_step=step_reporter(progress, Progress(f"whole program, {nest.name} alone")))
        out.append(NestAlone(index, nest.name, alone))
    return tuple(out)


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

    def to_dict(self) -> JsonDict:
        return {"status": self.status, "reason": self.reason}


def program_outcome(tuned: int, program: ProgramEvaluation | None, *, unchecked_ok: bool) -> ProgramOutcome:
    """The outcome of a suggestion that tunes ``tuned`` nests, with its whole program's evaluation when one
    ran; ``unchecked_ok`` when the user chose the nest-verified file (``--no-program-check``)."""
    if not tuned:
        return ProgramOutcome("not-tuned", "no nest held up: no candidate re-measured clearly faster")
    if program is None:
        why = "--no-program-check" if unchecked_ok else "no main and no --build: " + BUILD_HELP
        return ProgramOutcome("nest-verified", f"{tuned} nest(s) verified and faster alone; not checked as a "
                                               f"whole program ({why})")
    speedup = program.comparison.speedup
    if program.accepted and speedup is not None:
        note = f"; {program.message}" if program.message else ""  # built without OpenMP, say
        return ProgramOutcome("tuned", f"{tuned} nest(s) tuned; whole program {speedup.describe()}, same output{note}")
    status, message = program.status, program.message
    if status in ("build-error", SANDBOX_ERROR) and message.startswith("original"):
        return ProgramOutcome("build-failed", f"the original program does not build: {message[len('original: '):]};"
                                              f" {BUILD_HELP}")
    if status == "ok" and speedup is not None:
        return ProgramOutcome("not-tuned", f"whole program {speedup.describe()}: not clearly faster as a "
                                           "whole; nothing written")
    return ProgramOutcome("not-tuned", f"whole program: {status}" + (f": {message}" if message else "")
                          + "; the tuned code is not kept")
