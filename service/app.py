"""The FastAPI application: routes stay thin, errors map to 4xx by class."""

from __future__ import annotations

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import JSONResponse

from loopnest.errors import (
    DuplicateError,
    NotFoundError,
    PerfembedError,
    StorageError,
)
from service.schemas import AnalysisPublic, ErrorPublic, ProgramIn
from service.services import analyze_program

_STATUS = {NotFoundError: 404, DuplicateError: 409, StorageError: 503}

router = APIRouter(prefix="/v1")


@router.post("/programs:analyze", response_model=AnalysisPublic, responses={422: {"model": ErrorPublic}},
             operation_id="programs-analyze", tags=["programs"])
def analyze(program: ProgramIn) -> dict[str, object]:
    """Extract the program's loop nests with loops, accesses, dependences and parallel loops."""
    return analyze_program(program)


def _error_handler(_: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, PerfembedError)
    status = next((code for cls, code in _STATUS.items() if isinstance(exc, cls)), 422)
    return JSONResponse(status_code=status, content=exc.to_dict())


def create_app() -> FastAPI:
    app = FastAPI(title="perfembed", version="0.1.0",
                  description="Transfer tuning of C loop nests with performance embeddings.")
    app.include_router(router)
    app.add_exception_handler(PerfembedError, _error_handler)

    @app.get("/healthz", tags=["health"], operation_id="health-live")
    def healthz() -> dict[str, str]:
        return {"status": "ok"}

    return app
