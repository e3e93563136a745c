"""``perfembed suggest FILE`` on this machine: the core's suggestions for a file read in place, the fallback's
autotuning run, the whole program built and timed (original against tuned), the one outcome, and the
drop-in file ``--write-best`` writes. The CLI makes one :class:`LocalSuggestRequest`, calls
:func:`suggest_file` and prints the :class:`LocalSuggestion` it answers."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autotune.config import AutotuneSettings
from autotune.transfer import MIN_SPEEDUP
from autotune.transfer.priors import PRIOR_MODES
from database import get_recipe
from database.store import Store
from loopnest.errors import ParameterError
from loopnest.frontend.program import extract_program
from loopnest.harness.index_data import SparseChoice
from loopnest.harness.program import ProgramSpec
from loopnest.ir import Scop
from loopnest.transform.recipe_text import recipe_text
from service.core.core import TransferCore
from service.core.dropin import applied_source, dropin_header, needed_flags
from service.core.local import CheckNests, SourceFile, StatusFn, no_status, resolve_threads
from service.core.maintenance import open_local_store
from service.core.program import (
    BUILD_HELP,
    AppliedRecipe,
    ProgramEvaluation,
    ProgramOutcome,
    applied_recipes,
    evaluate_program,
    program_outcome,
)
from service.core.program_spec import WholeProgram, require_program, runnable_spec
from service.core.python_dropin import WrittenFile, write_python_best
from service.core.types import SuggestOptions

JsonDict = dict[str, Any]
TRANSFER_PRIORS = tuple(PRIOR_MODES)  # the first guesses transfer may try beside near neighbours


@dataclass(frozen=True)
class Machine:
    """How this machine builds and runs what is measured, over the settings: ``--threads`` (0: every core),
    ``--cc``/``--cflags`` of a one-file program."""

    threads: int | None = None
    cc: str | None = None
    cflags: str | None = None

    def over(self, settings: AutotuneSettings) -> AutotuneSettings:
        return settings.model_copy(update={"threads": resolve_threads(self.threads, settings.threads),
                                           "cc": self.cc or settings.cc, "cflags": self.cflags or settings.cflags})


@dataclass(frozen=True)
class LocalSuggestRequest:
    """``perfembed suggest FILE``: ``options`` (k, evaluate, fallback and its budget), the whole program
    (``whole``; None with ``--no-program-check``), where ``--write-best`` writes, the machine's overrides and
    the sparse structure of the measurements."""

    src: SourceFile
    options: SuggestOptions
    whole: WholeProgram | None = WholeProgram()
    write_best: Path | None = None
    machine: Machine = Machine()
    sparse: SparseChoice | None = None


@dataclass(frozen=True)
class LocalSuggestion:
    """The answer: ``result`` in the JSON form ``--json`` prints (with ``program`` when the whole program was
    evaluated, and ``outcome``), the outcome, what ``--write-best`` wrote, and the settings it ran under."""

    result: JsonDict
    outcome: ProgramOutcome
    written: WrittenFile | None
    settings: AutotuneSettings


def suggest_file(request: LocalSuggestRequest, *, status: StatusFn, check_nests: CheckNests,
                 store: Store | None = None, settings: AutotuneSettings | None = None) -> LocalSuggestion:
    """The core's suggestions for the file; with ``options.evaluate`` the accepted recipes applied together in
    the whole program, built and timed against the original (kept only when it is faster with the same
    output); with ``write_best`` that file written, never the original. ``status`` shows each phase. The
    database and settings are this machine's (the CLI's), unless ``store`` and ``settings`` are given (a
    notebook's)."""
    if (store is None) != (settings is None):
        raise ValueError("suggest_file takes a store and its settings together")
    if store is None or settings is None:
        store, settings = open_local_store()
    settings = request.machine.over(settings)
    src, options = request.src, request.options
    spec = _checked_spec(request, settings, status)
    program = src.program(settings, request.sparse)
    with status("finding neighbours" + (" and measuring candidates" if options.evaluate else "")) as shown:
        core = TransferCore(store, settings)
        answer = core.suggest(program, options, progress=lambda p: shown.update(p.describe()))
    result = answer.to_dict()
    result["rejected"] = check_nests(len(result["nests"]), result["rejected"])
    if options.fallback:
        run_fallback_jobs(store, settings, result, options.budget, status)
    applied = applied_recipes(result["nests"])
    # The core extracted the nests too; they are needed again only to apply recipes to the file.
    needs_scops = spec is not None or (request.write_best is not None and not src.is_python)
    scops = extract_program(program).scops if needs_scops else []
    evaluation = None
    if spec is not None:
        evaluation = _evaluate(src.path, scops, applied, spec, settings, status)
        if evaluation is not None:
            result["program"] = evaluation.to_dict()
            core.record_program_checks(evaluation, applied)
    outcome = program_outcome(len(applied), evaluation, unchecked_ok=request.whole is None)
    written = None
    if request.write_best is not None and src.is_python:
        outcome, written = write_python_best(src, result["nests"], request.write_best, settings)
    elif request.write_best is not None:
        built_with = None if request.whole is None else \
            request.whole.build or (f"-p {request.whole.build_path}" if request.whole.build_path else None)
        written = write_dropin(src.path, scops, applied, request.write_best, outcome, built_with)
    result["outcome"] = {**outcome.to_dict(), "written": None if written is None else written.path}
    return LocalSuggestion(result, outcome, written, settings)


def _checked_spec(request: LocalSuggestRequest, settings: AutotuneSettings, status: StatusFn) -> ProgramSpec | None:
    """The whole program's spec when it is to be evaluated, its original built once before any nest is
    measured; a ``--write-best`` that could only write an unchecked file is refused up front."""
    src, whole = request.src, request.whole
    spec = None if whole is None or not request.options.evaluate or src.is_python else \
        runnable_spec(src.path, src.flags, settings, whole)
    if spec is not None:
        with status(f"whole program: building {src.path.name}'s program as given"):
            require_program(src.path, spec, settings)
    elif request.options.evaluate and request.write_best is not None and whole is not None and not src.is_python:
        raise ParameterError(f"{src.path}: --write-best writes only a file checked as a whole program, and "
                             f"{src.path.name} has no main: {BUILD_HELP}; or --no-program-check to write it "
                             "verified nest by nest")
    return spec


def _evaluate(file: Path, scops: list[Scop], applied: dict[int, AppliedRecipe], spec: ProgramSpec,
              settings: AutotuneSettings, status: StatusFn) -> ProgramEvaluation | None:
    with status(f"whole program: building and timing {file.name}, original against tuned") as shown:
        return evaluate_program(file, scops, applied, spec, settings,
                                progress=lambda p: shown.update(f"{file.name}: {p.describe()}"))


def write_dropin(file: Path, scops: list[Scop], applied: dict[int, AppliedRecipe], out: Path, outcome: ProgramOutcome,
                 built_with: str | None = None) -> WrittenFile:
    """The tuned file, written to ``out`` with a header comment (recipes, figures, flags it needs), when the
    outcome allows: tuned in the whole program, or verified nest by nest with --no-program-check. Never
    the original as if it were tuned: otherwise nothing is written."""
    if not outcome.writes:
        return WrittenFile(None, f"{out}: {outcome.reason}")
    text = applied_source(file, scops, applied)
    checked = outcome.reason if outcome.status == "tuned" else None
    out.write_text(dropin_header(scops, applied, text, checked=checked, built_with=built_with) + text)
    how = "checked as a whole program" if checked is not None else \
        "verified nest by nest only, NOT checked as a whole program"
    return WrittenFile(str(out), f"wrote {out}: {len(applied)} of {len(scops)} nest(s) tuned, {how}; "
                                 f"build it with {needed_flags(text)}")


def run_fallback_jobs(store: Store, settings: AutotuneSettings, result: JsonDict, trials: int,
                      status: StatusFn = no_status) -> None:
    """Run the enqueued jobs here; each nest gets ``autotuned`` (its best verified recipe, >= 1.1x, with its
    text in the nest's loop names; or None)."""
    jobs = {n["tuning_job"]: n for n in result["nests"] if n.get("tuning_job")}
    if not jobs:
        return
    # Lazy: Optuna and the worker add 52 ms (python -X importtime) to every `perfembed` start, and
    # only --fallback needs them.
    import optuna

    from autotune.workers.worker import WorkerOptions, run_worker

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    with status(f"autotuning {len(jobs)} nest(s) no neighbour helped ({trials} trials each)"):
        # Only the jobs this run enqueued: older queued jobs are someone else's (their workers run them).
        report = run_worker(store, WorkerOptions(once=True, max_jobs=len(jobs), job_ids=frozenset(jobs)),
                            settings=settings)
    for outcome in report.jobs:
        nest = jobs.get(outcome.job_id)
        if nest is None:
            continue
        found = None
        worth_it = (outcome.best_speedup or 0.0) >= MIN_SPEEDUP
        if outcome.status == "done" and outcome.best_recipe_id is not None and worth_it:
            with store.session() as session:
                recipe = get_recipe(session, recipe_id=outcome.best_recipe_id)
            steps = {"steps": list(recipe.steps)}
            found = {"recipe": steps, "recipe_text": recipe_text(steps, nest.get("loop_names")),
                     "speedup": outcome.best_speedup,
                     "evaluated": outcome.evaluated,
                     "trial_speedup": outcome.result.best_speedup if outcome.result else None,
                     "text": outcome.confirmed.describe() if outcome.confirmed else None}
        nest["autotuned"] = found
        if outcome.error:
            nest["autotune_error"] = outcome.error
