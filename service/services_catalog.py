"""Reads of the catalogue behind the routes (nests, targets) and the readiness checks."""

from __future__ import annotations

import dataclasses
from types import ModuleType
from typing import TYPE_CHECKING, Any

from database.errors import StorageError
from loopnest.errors import PerfembedError

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from service.api.deps import AppState
    from service.config import ServiceSettings


def list_nests(session: Session, *, limit: int, offset: int, program_id: int | None) -> dict[str, Any]:
    from database import list_nests as load

    rows = load(session, program_id=program_id, limit=limit, offset=offset)
    names = nest_names(session, [n.id for n in rows])
    data = [{"id": n.id, "program_id": n.program_id, "index": n.index, "name": names[n.id],
             "created_at": n.created_at} for n in rows]
    return {"data": data, "count": len(data), "limit": limit, "offset": offset}


def nest_names(session: Session, nest_ids: list[int]) -> dict[int, str]:
    """The name of each stored nest (``PROGRAM#INDEX``, :func:`database.nest_name`), in one query."""
    from database import nest_name, nest_summaries

    return {i: nest_name(program, index) for i, (program, index, *_) in
            nest_summaries(session, nest_ids=nest_ids).items()} if nest_ids else {}


def nest_detail(store: Any, nest_id: int, *, settings: ServiceSettings, pipeline: ModuleType) -> dict[str, Any]:
    """Name, features, embedding and best recipe per target, from the pipeline (404 for an unknown id)."""
    detail = dict(pipeline.nest_detail(store, nest_id, settings=settings))
    detail.setdefault("id", nest_id)
    with store.session() as session:
        detail["name"] = nest_names(session, [nest_id]).get(nest_id)
    if "features" not in detail:
        detail["features"] = {"static": detail.pop("static_features", {}) or {},
                              "dynamic": detail.pop("dynamic_features", {}) or {}}
    embedding = detail.get("embedding")
    if isinstance(embedding, list | tuple):
        detail["embedding"] = {"model_version": detail.pop("model_version", None), "vector": list(embedding)}
    best = detail.get("best_recipes")
    if isinstance(best, dict):  # {target id: {...}} -> [{"target_id": id, ...}]
        detail["best_recipes"] = [{"target_id": int(k), **v} for k, v in best.items()]
    return detail


def list_targets(session: Session) -> dict[str, Any]:
    from database import list_targets as load

    data = [dataclasses.asdict(t) for t in load(session)]
    return {"data": data, "count": len(data)}


def readiness(state: AppState, pipeline: ModuleType | None) -> tuple[bool, dict[str, str], dict[str, Any] | None]:
    """Whether the database answers at the current schema and takes writes, whether the
    pipeline's index can serve, and the live tuning workers (None while the database is not ready).

    The write check is a rolled-back write that inserts nothing (:meth:`Store.check_writable`):
    it fails on a read-only SQLite file, directory or mount and on a read-only PostgreSQL role.
    The index check calls ``pipeline.index_status(store, settings=...)`` when the pipeline has
    it; that returns ``{"ready": bool, "detail": str}``. Workers are counted from their
    heartbeats; fewer than ``settings.ready_min_workers`` make the service not ready.
    """
    from database.errors import public_dict

    checks: dict[str, str] = {}
    ready = True
    store = None
    try:
        store = state.store()
        store.check_schema()
        store.check_writable()
        checks["database"] = "ok"
    except StorageError as exc:
        ready = False
        checks["database"] = str(public_dict(exc)["message"])
    except PerfembedError as exc:
        ready = False
        checks["database"] = str(exc)
    if pipeline is None:
        ready = False
        checks["index"] = f"the core pipeline {state.settings.pipeline_module!r} is not installed"
    elif store is None or not ready:
        checks["index"] = "not checked: the database is not ready"
    else:
        ready = _index_check(store, state.settings, pipeline, checks) and ready
    workers = None
    if store is not None and checks["database"] == "ok":
        workers, enough = _workers_check(store, state.settings, checks)
        ready = ready and enough
    return ready, checks, workers


def _index_check(store: Any, settings: ServiceSettings, pipeline: ModuleType, checks: dict[str, str]) -> bool:
    if not hasattr(pipeline, "index_status"):
        checks["index"] = "ok (the pipeline reports no index status)"
        return True
    try:
        status = pipeline.index_status(store, settings=settings)
    except PerfembedError as exc:
        checks["index"] = str(exc)
        return False
    ok = bool(status.get("ready", False))
    checks["index"] = ("ok" if ok else "not ready") + (f": {status['detail']}" if status.get("detail") else "")
    return ok


def _workers_check(store: Any, settings: ServiceSettings, checks: dict[str, str]) -> tuple[dict[str, Any] | None, bool]:
    from service.services_workers import live_workers, workers_check, workers_public

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
    from loopnest.harness.sandbox import sandbox_status

    status = sandbox_status(settings.sandbox)
    if status["isolated"]:
        return str(status["kind"])
    refused = "; evaluation allowed without it" if settings.allow_unsandboxed else "; evaluation refused"
    if status["kind"] == "none":
        return "none (rlimits only)" + refused
    return f"unavailable: {status['description']}" + refused
