"""``/v1/suggestions``: neighbours, adapted recipes and results for each nest of a program."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from fastapi.concurrency import run_in_threadpool

from service.api.deps import PipelineDep, PoolDep, SettingsDep, StoreDep, WriteKeyDep
from service.api.responses import WRITE, errors
from service.schemas import SuggestionsIn, SuggestionsPublic
from service.services import cached_suggestions, suggest

router = APIRouter(tags=["suggestions"])


@router.post("/suggestions", response_model=SuggestionsPublic, responses=errors(*WRITE, 404, 429),
             operation_id="suggestions-create")
async def create(body: SuggestionsIn, _: WriteKeyDep, db: StoreDep, settings: SettingsDep, pipeline: PipelineDep,
                 pool: PoolDep) -> dict[str, Any]:
    """For each nest: its nearest stored neighbours, their recipes adapted to it, and either measured
    results (``evaluate``, through a bounded pool: 429 with Retry-After when it is full) or the
    database's answers. When the confidence gate finds no neighbour good enough and ``fallback``
    is set, a tuning job is enqueued and its id returned."""
    # A cached database-only answer is a dictionary lookup: answered here, on the event loop. Anything
    # else (analysis, queries, evaluation) blocks, so it runs in the thread pool.
    cached = cached_suggestions(body, store=db, settings=settings, pipeline=pipeline)
    if cached is not None:
        return cached
    return await run_in_threadpool(suggest, body, store=db, settings=settings, pipeline=pipeline, pool=pool)
