"""``/v1/programs``: analyse a program (read), store it with its nests (write)."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from service.api.deps import PipelineDep, ReadKeyDep, SettingsDep, StoreDep, WriteKeyDep
from service.api.responses import READ_AUTH, WRITE, errors
from service.schemas import AnalysisPublic, ProgramIn, ProgramStoredPublic
from service.services import analyze_program_budgeted, store_program

router = APIRouter(tags=["programs"])


@router.post("/programs:analyze", response_model=AnalysisPublic, responses=errors(*READ_AUTH, 413),
             operation_id="programs-analyze")
def analyze(program: ProgramIn, _: ReadKeyDep, settings: SettingsDep) -> dict[str, Any]:
    """Extract the program's loop nests with loops, accesses, dependences and parallel loops.

    The analysis runs in a worker process within ``PERFEMBED_ANALYSIS_TIME_LIMIT_S`` (422 past it)."""
    return analyze_program_budgeted(program, settings, workers=settings.analysis_workers)


@router.post("/programs", status_code=201, response_model=ProgramStoredPublic, responses=errors(*WRITE, 404),
             operation_id="programs-store")
def store(program: ProgramIn, _: WriteKeyDep, db: StoreDep, settings: SettingsDep,
          pipeline: PipelineDep) -> dict[str, Any]:
    """Store the program and its nests with their static features (one transaction)."""
    return {"nest_ids": store_program(program, store=db, settings=settings, pipeline=pipeline)}
