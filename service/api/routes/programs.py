"""``/v1/programs``: analyse a program (read), store it with its nests (write)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body

from service.api.deps import CoreDep, ReadKeyDep, SettingsDep, WriteKeyDep
from service.api.examples import PROGRAM_EXAMPLES
from service.api.responses import ANALYSES, READ_AUTH, WRITE, errors
from service.schemas import AnalysisPublic, ProgramIn, ProgramStoredPublic
from service.services.programs import analyze_program_budgeted, store_program

router = APIRouter(tags=["programs"])

ProgramBody = Annotated[ProgramIn, Body(openapi_examples=PROGRAM_EXAMPLES)]


@router.post("/programs:analyze", response_model=AnalysisPublic, responses=errors(*READ_AUTH, *ANALYSES),
             operation_id="programs-analyze", summary="Analyse a program without storing it")
def analyze(program: ProgramBody, _: ReadKeyDep, settings: SettingsDep) -> dict[str, Any]:
    """Extract the program's loop nests with their loops, accesses, exact dependences and parallel
    loops, and list the regions outside the supported subset with the construct and line. Nothing is
    stored. The analysis runs in a worker process within ``PERFEMBED_ANALYSIS_TIME_LIMIT_S`` (422 past it)."""
    return analyze_program_budgeted(program, settings, workers=settings.analysis_workers)


@router.post("/programs", status_code=201, response_model=ProgramStoredPublic, responses=errors(*WRITE, *ANALYSES, 404),
             operation_id="programs-store", summary="Store a program and its nests")
def store(program: ProgramBody, key: WriteKeyDep, settings: SettingsDep, core: CoreDep) -> dict[str, Any]:
    """Store the program and its nests with their static features (one transaction), embedded when
    a model is fitted. Storing the same source again returns the same nest ids. Every parameter of a
    nest needs a value in ``params``. The source is the key's: served to the keys that sent it and to
    admin keys only (unless the server sets ``PERFEMBED_PUBLIC_SOURCES``)."""
    return {"nest_ids": store_program(program, settings=settings, core=core, key=key)}
