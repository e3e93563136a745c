"""``/v1/targets``: the machines measurements were taken on."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from service.api.deps import ReadKeyDep, SessionDep
from service.api.responses import READ_AUTH, errors
from service.schemas import TargetsPublic
from service.services.catalog import list_targets

router = APIRouter(prefix="/targets", tags=["targets"])


@router.get("", response_model=TargetsPublic, responses=errors(*READ_AUTH), operation_id="targets-list",
            summary="List the machines measurements were taken on")
def index(session: SessionDep, _: ReadKeyDep) -> dict[str, Any]:
    """Each target: CPU model, cores, ISA level, caches, compiler and measured peaks. Every
    measurement names the target it was taken on."""
    return list_targets(session)
