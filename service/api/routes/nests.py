"""``/v1/nests``: the stored loop nests, and one nest's features, embedding and best recipes."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from service.api.deps import CoreDep, ReadKeyDep, SessionDep, SettingsDep, StoreDep
from service.api.responses import READ_AUTH, errors
from service.schemas import MAX_ID, NestDetailPublic, NestsPublic
from service.services.catalog import list_nests, nest_detail_for

router = APIRouter(prefix="/nests", tags=["nests"])


@router.get("", response_model=NestsPublic, responses=errors(*READ_AUTH), operation_id="nests-list",
            summary="List stored nests")
def index(session: SessionDep, _: ReadKeyDep,
          limit: Annotated[int, Query(ge=1, le=1000, description="Nests per page")] = 100,
          offset: Annotated[int, Query(ge=0, le=MAX_ID, description="Nests to skip", examples=[100])] = 0,
          program_id: Annotated[int | None, Query(ge=1, le=MAX_ID, description="Only this program's nests",
                                                  examples=[1])] = None) -> dict[str, Any]:
    """Stored nests by id, a page at a time, each with its name (``PROGRAM#INDEX``)."""
    return list_nests(session, limit=limit, offset=offset, program_id=program_id)


@router.get("/{nest_id}", response_model=NestDetailPublic, responses=errors(*READ_AUTH, 404),
            operation_id="nests-get", summary="Read a nest: features, embedding, best recipes")
def read(nest_id: Annotated[int, Path(ge=1, le=MAX_ID, description="Nest id", examples=[1])], core: CoreDep,
         db: StoreDep, settings: SettingsDep, key: ReadKeyDep) -> dict[str, Any]:
    """The nest's name, normalized form, static and dynamic features, its embedding under the newest
    model, and the best verified recipe on each target with its speedup. The text of its statements is
    the user's code: shown to the keys that sent its program (and admin keys) only, unless the program is
    public (the seed's) or the server sets ``PERFEMBED_PUBLIC_SOURCES``."""
    return nest_detail_for(core, db, nest_id, key=key, settings=settings)
