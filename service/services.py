"""Service logic behind the routes: no HTTP here. Requests are mapped to the core's types
(:mod:`service.mappers`), the core (:class:`~service.core.Core`) answers, and its answers are mapped
back to the API's JSON."""

from __future__ import annotations

import os
from typing import Any

from database.domain import ApiKey
from embeddings.features import static_features
from loopnest.analysis import describe_scop
from loopnest.errors import ParameterError
from loopnest.frontend.extract import extract_scops
from loopnest.frontend.limits import AnalysisLimits
from loopnest.frontend.program import PROGRAM_FILE, extract_program, materialized, project_root
from loopnest.harness.program import ProgramSpec
from loopnest.harness.progress import ProgressFn
from loopnest.harness.project import Project
from loopnest.harness.sandbox import ensure_isolated
from loopnest.parameters import missing_params
from loopnest.polyhedral import compute_dependences
from service.admission import analyse
from service.config import ServiceSettings
from service.core import Core, ProgramSource, SuggestOptions
from service.evaluation_jobs import EvaluationJob, EvaluationJobs
from service.mappers import program_source, search_hit_public, suggestions_public
from service.program_eval import applied_recipes, evaluate_program
from service.schemas import ProgramIn, SearchIn, SuggestionsIn


def analyze_program_budgeted(program: ProgramIn, settings: ServiceSettings, *, workers: int = 2) -> dict[str, object]:
    """:func:`analyze_program` in a worker process, within ``settings.analysis_time_limit_s``, admitted for
    the request's caller (:func:`service.admission.analyse`; ``workers``: ``settings.analysis_workers``)."""
    limits = AnalysisLimits.from_settings(settings)
    return analyse(settings, analyze_program, program_source(program), limits)


def analyze_program(program: ProgramSource, limits: AnalysisLimits | None = None) -> dict[str, object]:
    extraction = extract_program(program, limits)
    nests = [describe_scop(s, program.params) for s in extraction.scops]
    for n in nests:
        n["region"]["file"] = PROGRAM_FILE
    return {"nests": nests, "rejected": [r.to_dict() for r in extraction.rejected]}


def analysis_probe(program: ProgramSource, limits: AnalysisLimits) -> int:
    """The analysis every route that stores, suggests or searches does (nests, dependences, static
    features where the parameters have values), for :func:`admit_program` to time in a worker."""
    extraction = extract_program(program, limits)
    for scop in extraction.scops:
        compute_dependences(scop)
        if not missing_params(scop.params, program.params):
            static_features(scop, {p: int(program.params[p]) for p in scop.params})
    return len(extraction.scops)


def admit_program(program: ProgramSource, settings: ServiceSettings) -> None:
    """Run the request's analysis once in a killable worker within ``analysis_time_limit_s`` before the
    core repeats it in this thread: a program whose analysis would hold a thread for minutes gets a
    422 naming the budget instead (the structural limits alone do not bound depth x statements)."""
    limits = AnalysisLimits.from_settings(settings)
    analyse(settings, analysis_probe, program, limits)


def store_program(program: ProgramIn, *, settings: ServiceSettings, core: Core, key: ApiKey | None = None) -> list[int]:
    """Store the program and its nests (one transaction each, in the core); returns the nest ids. The
    program is ``key``'s (:mod:`service.access`)."""
    source = program_source(program, settings=settings)
    admit_program(source, settings)
    return core.ingest(source, owner_key_id=None if key is None else key.id)


def _options(body: SuggestionsIn, *, evaluate: bool, key: ApiKey | None) -> SuggestOptions:
    return SuggestOptions(k=body.k, evaluate=evaluate, fallback=body.fallback,
                          owner_key_id=None if key is None else key.id)


def suggest(body: SuggestionsIn, *, settings: ServiceSettings, core: Core, key: ApiKey | None = None) -> dict[str, Any]:
    """Neighbours, adapted recipes and the database's answers per nest (no evaluation: see
    :func:`start_evaluation`); what a fallback stores is ``key``'s."""
    # An answer cached under the database's current stamp (read now if it is stale) needs no analysis:
    # the same program passed admission when it was computed.
    cached = cached_suggestions(body, settings=settings, core=core, read_stamp=True, key=key)
    if cached is not None:
        return cached
    program = program_source(body, settings=settings)
    admit_program(program, settings)
    return suggestions_public(core.suggest(program, _options(body, evaluate=False, key=key)), evaluated=False)


def start_evaluation(body: SuggestionsIn, *, settings: ServiceSettings, core: Core, jobs: EvaluationJobs,
                     check_writable: Any, key: ApiKey | None = None) -> EvaluationJob:
    """Check now what the request can get wrong, then queue its evaluation as a job (BusyError when
    the pool is full). The job's answer is what :func:`suggest` answers, with measured results; the job,
    and the program it stores, are ``key``'s. ``check_writable()`` raises when the database refuses writes."""
    _check_k(body.k, settings)
    program = program_source(body, settings=settings)
    admit_program(program, settings)
    # Measuring costs seconds of compiling and running, and every result is stored: a database that
    # refuses writes (read-only file or role) is reported now, before anything is compiled.
    check_writable()
    ensure_isolated(settings.sandbox, settings.allow_unsandboxed, "evaluation")
    limited = settings.for_evaluation()

    def evaluate(progress: ProgressFn) -> dict[str, Any]:
        answer = core.suggest(program, _options(body, evaluate=True, key=key), settings=limited, progress=progress)
        raw = answer.to_dict()
        whole = evaluate_whole_program(body, raw, limited, progress) if body.evaluate == "program" else None
        if whole is not None:
            core.record_program_checks(raw, applied_recipes(raw))
        return suggestions_public(answer, evaluated=True, program=whole)

    return jobs.submit(evaluate, owner_key_id=None if key is None else key.id)


def evaluate_whole_program(body: SuggestionsIn, result: dict[str, Any], settings: ServiceSettings,
                           progress: ProgressFn | None = None) -> dict[str, Any] | None:
    """``evaluate: "program"``: the request's program built and timed as a whole, original against tuned
    (``result``: the core's answer in its dict form, :meth:`Suggestions.to_dict`); the nests' accepted
    recipes stand only if it is faster with the same output. None when no nest was accepted."""
    program = program_source(body, settings=settings)
    with materialized(program) as (source, options):
        extraction = extract_scops(source, options, function=body.function)
        threads = settings.threads or os.cpu_count() or 1
        if body.build is not None:  # the request's project, built its way in a copy
            project = Project(project_root(source, program), source.relative_to(project_root(source, program)))
            spec = ProgramSpec(run=body.run or "{program}", check=body.check, threads=threads, project=project,
                               build=body.build)
        else:
            spec = ProgramSpec(cc=settings.cc, cflags=settings.cflags, include_dirs=options.include_dirs,
                               defines=options.defines, run=body.run or "{program}", check=body.check,
                               threads=threads)
        return evaluate_program(source, extraction, result, spec, settings, progress)


def cached_suggestions(body: SuggestionsIn, *, settings: ServiceSettings, core: Core,
                       read_stamp: bool = False, key: ApiKey | None = None) -> dict[str, Any] | None:
    """The answer to a database-only request (with or without ``fallback``) when the core has it
    cached, else None: without I/O, or with ``read_stamp`` after reading a stale database stamp."""
    _check_k(body.k, settings)
    if body.evaluate:
        return None
    answer = core.cached_suggestion(program_source(body, settings=settings), _options(body, evaluate=False, key=key),
                                    read_stamp=read_stamp)
    return None if answer is None else suggestions_public(answer, evaluated=False)


def search(body: SearchIn, *, settings: ServiceSettings, core: Core) -> dict[str, Any]:
    _check_k(body.k, settings)
    program = None if body.program is None else program_source(body.program, settings=settings)
    if program is not None:
        admit_program(program, settings)
    neighbours = [search_hit_public(h) for h in core.search(vector=body.vector, program=program, k=body.k)]
    return {"neighbours": neighbours, "count": len(neighbours)}


def _check_k(k: int, settings: ServiceSettings) -> None:
    if k > settings.max_k:
        raise ParameterError(f"k={k} is over this server's limit of {settings.max_k} neighbours")
