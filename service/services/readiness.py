"""What ``/readyz`` and ``/healthz`` report: whether the database answers and takes writes, whether the
index can serve, the live tuning workers, and the sandbox that runs code from requests, in words."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from database import Store
from database.errors import StorageError, public_dict
from loopnest.errors import PerfembedError
from loopnest.harness.sandbox import sandbox_status
from service.config import ServiceSettings
from service.core import Core
from service.services.workers import live_workers, workers_check, workers_public


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
