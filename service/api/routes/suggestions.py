"""``/v1/suggestions``: neighbours, adapted recipes and results for each nest of a program;
``/v1/evaluation-jobs/{id}``: an evaluating request, polled until it ends, and its tuned file."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path
from fastapi.concurrency import run_in_threadpool
from fastapi.encoders import jsonable_encoder
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from service.api.deps import CoreDep, EvaluationsDep, OwnerKeyDep, SettingsDep, StoreDep, WriteKeyDep
from service.api.examples import SUGGESTIONS_EXAMPLES
from service.api.responses import ANALYSES, READ_AUTH, WRITE, errors
from service.downloads import c_file
from service.mappers import program_source
from service.schemas import EvaluationJobPublic, SuggestionsIn, SuggestionsPublic
from service.services.suggestions import cached_suggestions, start_evaluation, suggest
from service.services.suggestions import tuned_file as tuned_file_of

router = APIRouter(tags=["suggestions"])

_ACCEPTED: dict[int | str, dict[str, Any]] = {202: {
    "model": EvaluationJobPublic,
    "description": "With `evaluate`: the evaluation is queued as a job; poll the `Location` until its status is "
                   "done or failed",
    "headers": {"Location": {"description": "The job to poll", "schema": {"type": "string"}}}}}


@router.post("/suggestions", response_model=SuggestionsPublic,
             responses={**_ACCEPTED, **errors(*WRITE, *ANALYSES, 404)},
             operation_id="suggestions-create", summary="Suggest recipes for each nest of a program",
             response_model_exclude_unset=True)
async def create(body: Annotated[SuggestionsIn, Body(openapi_examples=SUGGESTIONS_EXAMPLES)], key: WriteKeyDep,
                 db: StoreDep, settings: SettingsDep, core: CoreDep, evaluations: EvaluationsDep) -> Any:
    """For each nest of the program: its nearest stored neighbours, their recipes adapted to it, and the
    database's results for them. When the confidence gate finds no neighbour close enough and
    ``fallback`` is set (the default), a tuning job is enqueued (one per nest) and its id returned.

    With ``evaluate``, the adapted recipes are compiled, verified and timed here: that takes seconds to
    minutes, so the answer is **202** with an evaluation job (``Location: /v1/evaluation-jobs/{id}``)
    to poll; its ``progress`` says which candidate is being compiled, verified or timed, and its
    ``result`` is this route's answer once it is done. At most ``PERFEMBED_EVALUATION_POOL_SIZE`` run at
    once and ``PERFEMBED_EVALUATION_QUEUE_SIZE`` wait; beyond that, 429 with Retry-After.
    """
    # A cached database-only answer is a dictionary lookup: answered here, on the event loop. Anything
    # else (analysis, queries, evaluation) blocks, so it runs in the thread pool. The request is mapped
    # to the core's program once, here.
    program = program_source(body, settings=settings)
    cached = cached_suggestions(body, program, settings=settings, core=core, key=key)
    if cached is not None:
        return cached
    if not body.evaluate:
        return await run_in_threadpool(suggest, body, settings=settings, core=core, key=key, program=program)
    job = await run_in_threadpool(start_evaluation, body, settings=settings, core=core, jobs=evaluations,
                                  check_writable=db.check_writable, key=key, program=program)
    public = EvaluationJobPublic.model_validate(evaluations.public(job))
    return JSONResponse(jsonable_encoder(public), status_code=202,
                        headers={"Location": f"/v1/evaluation-jobs/{job.id}"})


JobId = Annotated[str, Path(pattern=r"^[0-9a-f]{32}$", description="Evaluation job id, from the 202's Location",
                            examples=["3f0c6f7e9b2a4d1c8e5f6a7b8c9d0e1f"])]


@router.get("/evaluation-jobs/{job_id}", response_model=EvaluationJobPublic, responses=errors(*READ_AUTH, 403, 404),
            operation_id="evaluation-jobs-get", summary="Follow an evaluation job", tags=["evaluation-jobs"],
            response_model_exclude_unset=True)
async def read(job_id: JobId, key: OwnerKeyDep, evaluations: EvaluationsDep) -> dict[str, Any]:
    """Status (queued, running, done, failed), the step being run, and once it ended the answer
    (``result``, as ``POST /v1/suggestions`` answers) or the error (``error``, with its HTTP status).
    Read with the key that started the job (or an admin key): 403 with another."""
    return evaluations.public(evaluations.owned(job_id, key))


@router.get("/evaluation-jobs/{job_id}/tuned-file", response_class=Response,
            responses={200: {"content": {"text/x-c": {"schema": {"type": "string"}}},
                             "description": "The tuned program, as a download"},
                       **errors(*READ_AUTH, 403, 404, 409, 422)},
            operation_id="evaluation-jobs-tuned-file", summary="Download an evaluation job's tuned program",
            tags=["evaluation-jobs"])
def tuned_file(job_id: JobId, key: OwnerKeyDep, evaluations: EvaluationsDep) -> PlainTextResponse:
    """The program the job evaluated with the recipes it accepted applied, as ``NAME.tuned.c`` (its ``name``,
    else its ``path``'s file name): with ``evaluate: "program"`` those the whole program kept, else each
    nest's verified recipe. 409 while the job has no result, 422 when it tuned nothing (never the original as
    if it were tuned). Read with the key that started the job (or an admin key)."""
    name, text = tuned_file_of(evaluations, evaluations.owned(job_id, key))
    return c_file(name, text, download=True)
