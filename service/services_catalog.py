"""Reads of the catalogue behind the routes (nests, targets) and the readiness checks."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from sqlalchemy.orm import Session

from database import Store, nest_name, nest_summaries
from database import list_nests as load_nests
from database import list_targets as load_targets
from database.domain import ApiKey
from database.errors import StorageError, public_dict
from loopnest.errors import PerfembedError
from loopnest.harness.sandbox import sandbox_status
from service.access import hide_statements, nest_source_readable
from service.config import ServiceSettings
from service.core import Core
from service.mappers import nest_detail_public
from service.services_workers import live_workers, workers_check, workers_public


def list_nests(session: Session, *, limit: int, offset: int, program_id: int | None) -> dict[str, Any]:
    rows = load_nests(session, program_id=program_id, limit=limit, offset=offset)
    names = nest_names(session, [n.id for n in rows])
    data = [{"id": n.id, "program_id": n.program_id, "index": n.index, "name": names[n.id],
             "created_at": n.created_at} for n in rows]
    return {"data": data, "count": len(data), "limit": limit, "offset": offset}


def nest_names(session: Session, nest_ids: list[int]) -> dict[int, str]:
    """The name of each stored nest (``PROGRAM#INDEX``, :func:`database.nest_name`), in one query."""
    return {i: nest_name(program, index) for i, (program, index, *_) in
            nest_summaries(session, nest_ids=nest_ids).items()} if nest_ids else {}


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


def readiness(settings: ServiceSettings, open_store: Callable[[], Store],
              open_core: Callable[[], Core]) -> tuple[bool, dict[str, str], dict[str, Any] | None]:
    """Whether the database answers at the current schema and takes writes, whether the core's index
    can serve, and the live tuning workers (None while the database is not ready).

    ``open_store()`` and ``open_core()`` give the app's store and core. The write check is a
    rolled-back write that inserts nothing (:meth:`Store.check_writable`): it fails on a read-only
    SQLite file, directory or mount and on a read-only PostgreSQL role. Workers are counted from their
    heartbeats; fewer than ``settings.ready_min_workers`` make the service not ready.
    """
    checks: dict[str, str] = {}
    store: Store | None = None
    try:
        store = open_store()
        store.check_schema()
        store.check_writable()
        checks["database"] = "ok"
    except StorageError as exc:
        checks["database"] = str(public_dict(exc)["message"])
    except PerfembedError as exc:
        checks["database"] = str(exc)
    ready = checks["database"] == "ok"
    if store is None or not ready:
        checks["index"] = "not checked: the database is not ready"
    else:
        ready = _index_check(open_core(), checks)
    workers = None
    if store is not None and checks["database"] == "ok":
        workers, enough = _workers_check(store, settings, checks)
        ready = ready and enough
    return ready, checks, workers


def _index_check(core: Core, checks: dict[str, str]) -> bool:
    try:
        status = core.index_status()
    except PerfembedError as exc:
        checks["index"] = str(exc)
        return False
    checks["index"] = ("ok" if status.ready else "not ready") + (f": {status.detail}" if status.detail else "")
    return status.ready


def _workers_check(store: Store, settings: ServiceSettings, checks: dict[str, str]) -> tuple[dict[str, Any] | None,
                                                                                             bool]:
    try:
        with store.session() as session:
            alive = live_workers(session, settings)
    except StorageError as exc:
        checks["workers"] = f"not checked: {exc}"
        return None, settings.ready_min_workers == 0
    checks["workers"] = workers_check(alive)
    enough = len(alive) >= settings.ready_min_workers
    if not enough:
        checks["workers"] += f"; this server needs {settings.ready_min_workers} (PERFEMBED_READY_MIN_WORKERS)"
    return workers_public(alive), enough


def isolation(settings: ServiceSettings) -> str:
    """The sandbox that compiles and runs code from requests, in a few words."""
    status = sandbox_status(settings.sandbox)
    if status["isolated"]:
        return str(status["kind"])
    refused = "; evaluation allowed without it" if settings.allow_unsandboxed else "; evaluation refused"
    if status["kind"] == "none":
        return "none (rlimits only)" + refused
    return f"unavailable: {status['description']}" + refused
