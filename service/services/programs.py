"""Programs behind ``/v1/programs``: analysed (in a killable worker, within the request's analysis
budget) and stored with their nests. :func:`admit_program` is the one analysis of a request: every
later stage takes its :class:`~service.core.analysis.ProgramAnalysis` and recomputes none of it."""

from __future__ import annotations

from database.domain import ApiKey
from loopnest.analysis import describe_scop
from loopnest.frontend.limits import AnalysisLimits
from loopnest.frontend.program import PROGRAM_FILE, extract_program
from service.admission import analyse
from service.config import ServiceSettings
from service.core import Core, ProgramSource
from service.core.analysis import ProgramAnalysis, analyse_program
from service.mappers import program_source
from service.schemas import ProgramIn


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


def admit_program(program: ProgramSource, settings: ServiceSettings) -> ProgramAnalysis:
    """The program's analysis (:func:`~service.core.analysis.analyse_program`: nests, dependences, static
    features where the parameters have values), computed once per request in a killable worker within
    ``analysis_time_limit_s`` and handed to the core, which recomputes none of it: a program whose
    analysis would hold a thread for minutes gets a 422 naming the budget instead (the structural limits
    alone do not bound depth x statements)."""
    limits = AnalysisLimits.from_settings(settings)
    return analyse(settings, analyse_program, program, limits)


def store_program(program: ProgramIn, *, settings: ServiceSettings, core: Core, key: ApiKey | None = None) -> list[int]:
    """Store the program and its nests (one transaction each, in the core); returns the nest ids. The
    program is ``key``'s (:mod:`service.access`)."""
    source = program_source(program, settings=settings)
    return core.ingest(source, owner_key_id=None if key is None else key.id, analysis=admit_program(source, settings))
