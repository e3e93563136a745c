"""``/v1/matrices``: Matrix Market files sparse nests run on, sent once and named by id in requests."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request, Response
from fastapi.concurrency import run_in_threadpool

from service.api.deps import ReadKeyDep, SettingsDep, WriteKeyDep
from service.api.responses import READ_AUTH, WRITE, errors
from service.schemas import MatrixPublic
from service.services.matrices import matrix_info, store_matrix

router = APIRouter(prefix="/matrices", tags=["matrices"])

_BODY = {"requestBody": {"required": True, "description": "The Matrix Market file (coordinate or array; real, "
                                                          "integer or pattern), plain or gzip-compressed",
                         "content": {"text/plain": {"schema": {"type": "string"}},
                                     "application/gzip": {"schema": {"type": "string", "format": "binary"}}}}}
MatrixIdPath = Annotated[str, Path(description="Matrix id, from POST /v1/matrices", examples=["3f0c6f7e9b2a4d1c"])]


@router.post("", status_code=201, response_model=MatrixPublic, responses={200: {"model": MatrixPublic,
             "description": "The server already holds this file"}, **errors(*WRITE)}, openapi_extra=_BODY,
             operation_id="matrices-create", summary="Send a Matrix Market file")
async def create(request: Request, response: Response, _: WriteKeyDep, settings: SettingsDep) -> dict[str, Any]:
    """Check a Matrix Market file (the raw request body, up to ``PERFEMBED_MAX_MATRIX_BYTES`` once
    decompressed; gzip is recognised by its magic bytes) and store it; the answer's ``id`` is then the
    ``matrix`` of a suggestion or tuning job, whose sparse nests run on it. The id is a hash of the
    file's contents: sending the same file again answers 200 with the same id. A file that is not a real,
    integer or pattern Matrix Market matrix is a 422 naming the fault."""
    info, new = await run_in_threadpool(store_matrix, await request.body(), settings=settings)
    response.status_code = 201 if new else 200
    return info


@router.get("/{matrix_id}", response_model=MatrixPublic, responses=errors(*READ_AUTH, 404),
            operation_id="matrices-get", summary="Describe a matrix the server holds")
def read(matrix_id: MatrixIdPath, _: ReadKeyDep, settings: SettingsDep) -> dict[str, Any]:
    """Its rows, columns, entries, whether it has values, and its size."""
    return matrix_info(matrix_id, settings=settings)
