"""One router per resource; :data:`api_router` collects those under ``/v1``."""

from __future__ import annotations

from fastapi import APIRouter

from service.api.routes import jobs, matrices, nests, programs, search, suggestions, targets

api_router = APIRouter(prefix="/v1")
for _module in (programs, suggestions, jobs, nests, search, targets, matrices):
    api_router.include_router(_module.router)

__all__ = ["api_router"]
