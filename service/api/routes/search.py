"""``/v1/search``: the nearest stored nests to a vector or to a program's nests."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from service.api.deps import PipelineDep, ReadKeyDep, SettingsDep, StoreDep
from service.api.responses import READ_AUTH, errors
from service.schemas import SearchIn, SearchPublic
from service.services import search

router = APIRouter(tags=["search"])


@router.post("/search", response_model=SearchPublic, responses=errors(*READ_AUTH, 404, 413), operation_id="search")
def run(body: SearchIn, db: StoreDep, settings: SettingsDep, pipeline: PipelineDep, _: ReadKeyDep) -> dict[str, Any]:
    """Give ``vector`` (an embedding) or ``program`` (its nests are embedded, not stored)."""
    return search(body, store=db, settings=settings, pipeline=pipeline)
