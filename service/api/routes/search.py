"""``/v1/search``: the nearest stored nests to a vector or to a program's nests."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body

from service.api.deps import CoreDep, ReadKeyDep, SettingsDep
from service.api.examples import SEARCH_EXAMPLES
from service.api.responses import ANALYSES, READ_AUTH, errors
from service.schemas import SearchIn, SearchPublic
from service.services.search import search

router = APIRouter(tags=["search"])


@router.post("/search", response_model=SearchPublic, responses=errors(*READ_AUTH, *ANALYSES, 404),
             operation_id="search",
             summary="Find the stored nests nearest to a program or an embedding")
def run(body: Annotated[SearchIn, Body(openapi_examples=SEARCH_EXAMPLES)], settings: SettingsDep, core: CoreDep,
        _: ReadKeyDep) -> dict[str, Any]:
    """Give ``vector`` (an embedding of the current model) or ``program`` (its first nest is embedded,
    not stored). The ``k`` nearest stored nests come back nearest first, each with its id, name
    (``PROGRAM#INDEX``), distance and best verified speedup. 404 before an embedding model is fitted."""
    return search(body, settings=settings, core=core)
