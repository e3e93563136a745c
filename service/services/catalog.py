"""Reads of the catalogue behind the routes: nests (as a key may see them) and targets."""

from __future__ import annotations

import dataclasses
from typing import Any

from sqlalchemy.orm import Session

from database import Store, list_nest_listings
from database import list_targets as load_targets
from database.domain import ApiKey
from service.access import hide_statements, nest_source_readable
from service.config import ServiceSettings
from service.core import Core
from service.mappers import nest_detail_public


def list_nests(session: Session, *, limit: int, offset: int, program_id: int | None) -> dict[str, Any]:
    rows = list_nest_listings(session, program_id=program_id, limit=limit, offset=offset)
    data = [{"id": n.id, "program_id": n.program_id, "index": n.index, "name": n.name, "created_at": n.created_at}
            for n in rows]
    return {"data": data, "count": len(data), "limit": limit, "offset": offset}


def nest_detail(core: Core, nest_id: int) -> dict[str, Any]:
    """Name, features, embedding and best recipe per target (404 for an unknown id)."""
    return nest_detail_public(core.nest_detail(nest_id))


def nest_detail_for(core: Core, store: Store, nest_id: int, *, key: ApiKey | None,
                    settings: ServiceSettings) -> dict[str, Any]:
    """:func:`nest_detail` as ``key`` may see it: without the text of the statements when the nest's
    program is private to other keys (:mod:`service.access`)."""
    detail = nest_detail(core, nest_id)
    if not nest_source_readable(store, nest_id, key, settings):
        detail["normalized"] = hide_statements(detail["normalized"])
    return detail


def list_targets(session: Session) -> dict[str, Any]:
    data = [dataclasses.asdict(t) for t in load_targets(session)]
    return {"data": data, "count": len(data)}
