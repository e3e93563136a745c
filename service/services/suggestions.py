"""Suggestions behind ``/v1/suggestions``: answered from the core's cache, or after the request's one
analysis (:func:`~service.services.programs.admit_program`); an evaluating request is queued as an
evaluation job (:mod:`service.services.evaluation_jobs`) whose answer has measured results."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from database.domain import ApiKey
from loopnest.errors import ParameterError
from loopnest.frontend.compile_flags import CompileFlags
from loopnest.frontend.preprocess import PreprocessOptions
from loopnest.frontend.program import materialized, project_root
from loopnest.harness.program import ProgramSpec
from loopnest.harness.progress import Progress, ProgressFn
from loopnest.harness.sandbox import ensure_isolated
from service.config import ServiceSettings
from service.core import Core, ProgramSource, SuggestOptions
from service.core.analysis import ProgramAnalysis, analyse_program
from service.core.program import AppliedRecipe, ProgramEvaluation, applied_recipes, evaluate_program
from service.core.program_spec import WholeProgram, program_spec, require_program
from service.core.stored import tuned_program
from service.downloads import tuned_name
from service.errors import ConflictError
from service.mappers import program_source, suggestions_public
from service.schemas import SuggestionsIn
from service.services.evaluation_jobs import PROGRAMS_KEPT_BYTES, EvaluationJob, EvaluationJobs
from service.services.programs import admit_program
from service.services.search import check_k


def _options(body: SuggestionsIn, *, evaluate: bool, key: ApiKey | None) -> SuggestOptions:
    return SuggestOptions(k=body.k, evaluate=evaluate, fallback=body.fallback,
                          owner_key_id=None if key is None else key.id)


def suggest(body: SuggestionsIn, *, settings: ServiceSettings, core: Core, key: ApiKey | None = None,
            program: ProgramSource | None = None) -> dict[str, Any]:
    """Neighbours, adapted recipes and the database's answers per nest (no evaluation: see
    :func:`start_evaluation`); what a fallback stores is ``key``'s. ``program``: the body's
    :func:`~service.mappers.program_source`, when the caller made it already."""
    program = program_source(body, settings=settings) if program is None else program
    # An answer cached under the database's current stamp (read now if it is stale) needs no analysis:
    # the same program passed admission when it was computed.
    cached = cached_suggestions(body, program, settings=settings, core=core, read_stamp=True, key=key)
    if cached is not None:
        return cached
    analysis = admit_program(program, settings)
    answer = core.suggest(program, _options(body, evaluate=False, key=key), analysis=analysis)
    return suggestions_public(answer, evaluated=False)


def start_evaluation(body: SuggestionsIn, *, settings: ServiceSettings, core: Core, jobs: EvaluationJobs,
                     check_writable: Any, key: ApiKey | None = None,
                     program: ProgramSource | None = None) -> EvaluationJob:
    """Check now what the request can get wrong, then queue its evaluation as a job (BusyError when
    the pool is full). The job's answer is what :func:`suggest` answers, with measured results; the job,
    and the program it stores, are ``key``'s. ``check_writable()`` raises when the database refuses writes."""
    check_k(body.k, settings)
    program = program_source(body, settings=settings) if program is None else program
    analysis = admit_program(program, settings)
    # Measuring costs seconds of compiling and running, and every result is stored: a database that
    # refuses writes (read-only file or role) is reported now, before anything is compiled.
    check_writable()
    ensure_isolated(settings.sandbox, settings.allow_unsandboxed, "evaluation")
    limited = settings.for_evaluation()

    def evaluate(progress: ProgressFn) -> dict[str, Any]:
        if body.evaluate == "program":
            progress(Progress(stage="whole program", step="building and running the original"))
            require_whole_program(body, limited, program)
        answer = core.suggest(program, _options(body, evaluate=True, key=key), settings=limited, progress=progress,
                              analysis=analysis)
        applied = applied_recipes(answer.to_dict()["nests"])
        whole = evaluate_whole_program(body, applied, limited, progress, program, analysis) \
            if body.evaluate == "program" else None
        if whole is not None:
            core.record_program_checks(whole, applied)
        return suggestions_public(answer, evaluated=True, program=None if whole is None else whole.to_dict())

    return jobs.submit(evaluate, owner_key_id=None if key is None else key.id, program=program)


def evaluate_whole_program(body: SuggestionsIn, applied: Mapping[int, AppliedRecipe], settings: ServiceSettings,
                           progress: ProgressFn | None = None, program: ProgramSource | None = None,
                           analysis: ProgramAnalysis | None = None) -> ProgramEvaluation | None:
    """``evaluate: "program"``: the request's program built and timed as a whole, original against tuned
    with the nests' ``applied`` recipes (:func:`service.core.program.applied_recipes`), which stand only if it
    is faster with the same output. None when no nest was accepted. ``program``: the request's body as
    mapped once (:func:`service.mappers.program_source`), else mapped here; ``analysis``: its analysis
    (:func:`~service.services.programs.admit_program`), else analysed here."""
    program = program_source(body, settings=settings) if program is None else program
    analysis = analyse_program(program) if analysis is None else analysis.check_for(program)
    with materialized(program) as (source, options):
        spec = _whole_program_spec(body, program, source, options, settings)
        return evaluate_program(source, analysis.scops_in(source), applied, spec, settings, progress)


def require_whole_program(body: SuggestionsIn, settings: ServiceSettings,
                          program: ProgramSource | None = None) -> None:
    """The request's program built and run once, before any candidate is measured: a build or run that
    fails ends the job in seconds, with the first error (HTTP 422), not after every candidate. ``program``:
    as for :func:`evaluate_whole_program`."""
    program = program_source(body, settings=settings) if program is None else program
    with materialized(program) as (source, options):
        require_program(source, _whole_program_spec(body, program, source, options, settings), settings,
                        names=("'build'", "'run'"))


def _whole_program_spec(body: SuggestionsIn, program: ProgramSource, source: Path, options: PreprocessOptions,
                        settings: ServiceSettings) -> ProgramSpec:
    # The request's project is built its way in a copy of its root; a file alone with its headers and macros.
    whole = WholeProgram(build=body.build, run=body.run, check=body.check,
                         project=project_root(source, program) if body.build is not None else None)
    flags = CompileFlags(include_dirs=options.include_dirs, defines=options.defines)
    return program_spec(source, flags, settings, whole)


def cached_suggestions(body: SuggestionsIn, program: ProgramSource | None = None, *, settings: ServiceSettings,
                       core: Core, read_stamp: bool = False, key: ApiKey | None = None) -> dict[str, Any] | None:
    """The answer to a database-only request (with or without ``fallback``) when the core has it
    cached, else None: without I/O, or with ``read_stamp`` after reading a stale database stamp.
    ``program``: the body's :func:`~service.mappers.program_source`, when the caller made it already."""
    check_k(body.k, settings)
    if body.evaluate:
        return None
    program = program_source(body, settings=settings) if program is None else program
    answer = core.cached_suggestion(program, _options(body, evaluate=False, key=key), read_stamp=read_stamp)
    return None if answer is None else suggestions_public(answer, evaluated=False)


def ended(job: EvaluationJob) -> dict[str, Any]:
    """The job's answer; a one-line ConflictError (409: the job's state, not the request, is why) while it
    has none (queued, running, or failed)."""
    if job.result is None and job.status == "failed":
        why = (job.error or {}).get("message", "see the job's error")
        raise ConflictError(f"evaluation job {job.id} failed, so it has no result ({why}); evaluate again")
    if job.result is None:
        raise ConflictError(f"evaluation job {job.id} has no result ({job.status}); "
                            "ask again when its status is done")
    return job.result


def tuned_file(jobs: EvaluationJobs, job: EvaluationJob, program: ProgramSource | None = None) -> tuple[str, str]:
    """The program evaluation job ``job`` evaluated (``program``: the same, sent again; else the one ``jobs``
    keeps) with the recipes it accepted applied (:func:`service.core.stored.tuned_program`), and its file name
    (``NAME.tuned.c``, from its name, else its path): the dashboard's download and ``GET
    /v1/evaluation-jobs/{id}/tuned-file``. A job that tuned nothing is a ParameterError saying why: never the
    original as if it were tuned."""
    result = ended(job)
    program = program or jobs.program(job)
    if program is None:
        raise ParameterError(f"evaluation job {job.id}: its program is no longer kept on this server (it keeps the "
                             f"newest {PROGRAMS_KEPT_BYTES >> 20} MB of them); evaluate it again")
    text, tuned = tuned_program(program, result)
    if not tuned:
        program_check = result.get("program") or {}
        why = f"the whole program refused it ({program_check.get('status')})" if program_check else \
            "no nest held up"
        raise ParameterError(f"evaluation job {job.id} tuned nothing: {why}")
    return tuned_name(program.name or program.path), text
