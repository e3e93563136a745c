"""``/v1/search``: the stored nests nearest to a program's nests or to an embedding vector."""

from __future__ import annotations

from typing import Any

from loopnest.errors import ParameterError
from service.config import ServiceSettings
from service.core import Core
from service.mappers import program_source, search_hit_public
from service.schemas import SearchIn
from service.services.programs import admit_program


def search(body: SearchIn, *, settings: ServiceSettings, core: Core) -> dict[str, Any]:
    check_k(body.k, settings)
    program = None if body.program is None else program_source(body.program, settings=settings)
    analysis = None if program is None else admit_program(program, settings)
    hits = core.search(vector=body.vector, program=program, k=body.k, analysis=analysis)
    neighbours = [search_hit_public(h) for h in hits]
    return {"neighbours": neighbours, "count": len(neighbours)}


def check_k(k: int, settings: ServiceSettings) -> None:
    """A request's ``k`` (neighbours asked for) within the server's ``max_k``."""
    if k > settings.max_k:
        raise ParameterError(f"k={k} is over this server's limit of {settings.max_k} neighbours")
