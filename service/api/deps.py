"""Dependencies of the routes: settings, store, session, the application core, evaluation pool, API keys.

Everything a route needs comes through an ``Annotated`` alias declared here; nothing is global.
The dependencies are ``async``: a sync one costs a thread-pool hop per request, which under load
(32 clients on 2 cores) was most of a cached suggestion's latency. The two that may block (opening
the store, checking an uncached key) hand that part to the thread pool.
The per-app objects live in one :class:`AppState` on ``app.state.perfembed``, built by
:func:`service.app.create_app`; tests pass their own settings, store or core factory there.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Annotated

from fastapi import Depends, Request, Security
from fastapi.concurrency import run_in_threadpool
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from database import find_api_key
from database import get_store as open_store
from database.domain import ApiKey, api_key_hash
from database.errors import DatabaseError
from database.session import safe_url
from database.store import Store
from service.config import ServiceSettings
from service.core import Core, TransferCore
from service.errors import AuthenticationError
from service.middleware import Metrics
from service.services.evaluation_jobs import EvaluationJobs
from service.services.evaluation_pool import EvaluationPool

READ_SCHEME = "ApiKeyForReads"

CoreFactory = Callable[[Store, ServiceSettings], Core]


class AppState:
    """What one app shares between requests: settings, the store and the core on it (both made on
    first use; the core owns the answer cache), the evaluation pool and its jobs, the metrics and a
    short-lived cache of checked API keys. ``core_factory`` makes the core (default:
    :class:`~service.core.TransferCore`)."""

    def __init__(self, settings: ServiceSettings, *, store: Store | None = None,
                 core_factory: CoreFactory = TransferCore) -> None:
        self.settings = settings
        self.metrics = Metrics()
        self.pool = EvaluationPool(size=settings.evaluation_pool_size, queue=settings.evaluation_queue_size,
                                   retry_after=settings.evaluation_retry_after_s,
                                   on_change=self.metrics.pool_changed,
                                   on_reject=self.metrics.evaluations_rejected.inc)
        self.evaluations = EvaluationJobs(self.pool, keep_s=settings.evaluation_job_keep_s)
        self._store = store
        self._own_store = store is None
        self._core_factory = core_factory
        self._core: Core | None = None
        self._lock = threading.Lock()
        self._keys: dict[str, tuple[ApiKey, float]] = {}

    def store(self) -> Store:
        """The store, opened (and created if the database is empty) on first use.

        A database that cannot be opened raises :class:`StorageError` (503); the next request
        tries again, so the API comes up before its database does.
        """
        with self._lock:
            if self._store is None:
                url = self.settings.resolved_database_url
                try:
                    self._store = open_store(url, create=True, pool_size=self.settings.database_pool_size)
                except OSError as exc:  # the file system failed under SQLite in a way get_store does not name
                    raise DatabaseError(f"cannot open the database {safe_url(url)}: {exc}",
                                        public=f"the database cannot be opened: {exc.strerror or exc}") from exc
            return self._store

    def core(self) -> Core:
        """The application core on :meth:`store` (made once, on first use)."""
        store = self.store()
        with self._lock:
            if self._core is None:
                self._core = self._core_factory(store, self.settings)
            return self._core

    def close(self) -> None:
        self.pool.shutdown()
        with self._lock:
            if self._store is not None and self._own_store:
                self._store.dispose()
                self._store = None
            self._core = None

    @property
    def opened(self) -> Store | None:
        """The store if it is already open (no I/O), else None."""
        return self._store

    @property
    def opened_core(self) -> Core | None:
        """The core if it is already made (no I/O), else None."""
        return self._core

    def cached_key(self, key: str) -> ApiKey | None:
        """A key checked within ``api_key_cache_s``, without touching the database."""
        cached = self._keys.get(api_key_hash(key))
        return cached[0] if cached is not None and cached[1] > time.monotonic() else None

    def check_key(self, key: str) -> ApiKey:
        """The record of a presented key; raises :class:`AuthenticationError` for an unknown one."""
        digest = api_key_hash(key)
        now = time.monotonic()
        cached = self._keys.get(digest)
        if cached is not None and cached[1] > now:
            return cached[0]
        with self.store().session() as session:
            record = find_api_key(session, key=key)
        if record is None:
            self._keys.pop(digest, None)
            raise AuthenticationError("the API key is not valid (create one with `perfembed keys create NAME`)")
        if self.settings.api_key_cache_s > 0:
            if len(self._keys) > 1024:
                self._keys.clear()
            self._keys[digest] = (record, now + self.settings.api_key_cache_s)
        return record


async def get_state(request: Request) -> AppState:
    state: AppState = request.app.state.perfembed
    return state


StateDep = Annotated[AppState, Depends(get_state)]


async def get_settings(state: StateDep) -> ServiceSettings:
    return state.settings


SettingsDep = Annotated[ServiceSettings, Depends(get_settings)]


async def get_store(state: StateDep) -> Store:
    if state.opened is not None:
        return state.opened
    return await run_in_threadpool(state.store)  # opening may create the schema: off the event loop


StoreDep = Annotated[Store, Depends(get_store)]


def get_session(store: StoreDep) -> Iterator[Session]:
    """One read transaction per request (writes go through the services, one transaction each)."""
    with store.session() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session)]


async def get_core(state: StateDep) -> Core:
    core = state.opened_core
    if core is not None:
        return core
    return await run_in_threadpool(state.core)  # opening the store may create the schema: off the event loop


CoreDep = Annotated[Core, Depends(get_core)]


async def get_evaluations(state: StateDep) -> EvaluationJobs:
    return state.evaluations


EvaluationsDep = Annotated[EvaluationJobs, Depends(get_evaluations)]


async def get_metrics(state: StateDep) -> Metrics:
    return state.metrics


MetricsDep = Annotated[Metrics, Depends(get_metrics)]

_bearer = HTTPBearer(auto_error=False, scheme_name="ApiKey",
                     description="An API key from `perfembed keys create NAME`, as `Authorization: Bearer KEY`")
CredentialsDep = Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)]
# The same header for reads, under a scheme name of its own so that the OpenAPI description can mark
# the key of a read as optional (service.api.openapi); the description shows only ``ApiKey``.
_read_bearer = HTTPBearer(auto_error=False, scheme_name=READ_SCHEME)
ReadCredentialsDep = Annotated[HTTPAuthorizationCredentials | None, Security(_read_bearer)]


async def _checked_key(state: AppState, key: str) -> ApiKey:
    cached = state.cached_key(key)
    return cached if cached is not None else await run_in_threadpool(state.check_key, key)


async def require_write_key(state: StateDep, credentials: CredentialsDep) -> ApiKey:
    """Writes need a valid API key: 401 without one."""
    if credentials is None or not credentials.credentials:
        raise AuthenticationError("this request writes to the database and needs an API key: "
                                  "send `Authorization: Bearer KEY` (create one with `perfembed keys create NAME`)")
    return await _checked_key(state, credentials.credentials)


async def require_read_key(state: StateDep, credentials: ReadCredentialsDep) -> ApiKey | None:
    """Reads are open unless ``api_keys_for_reads`` is set; a key that is sent must be valid."""
    if credentials is None or not credentials.credentials:
        if state.settings.api_keys_for_reads:
            raise AuthenticationError("this server needs an API key for reads too: send `Authorization: Bearer KEY`")
        return None
    return await _checked_key(state, credentials.credentials)


async def require_owner_key(state: StateDep, credentials: CredentialsDep) -> ApiKey:
    """A record that belongs to a key (an evaluation job) is read with that key (or an admin key): 401
    without one."""
    if credentials is None or not credentials.credentials:
        raise AuthenticationError("this record belongs to the API key that started it: send that key as "
                                  "`Authorization: Bearer KEY`")
    return await _checked_key(state, credentials.credentials)


WriteKeyDep = Annotated[ApiKey, Depends(require_write_key)]
OwnerKeyDep = Annotated[ApiKey, Depends(require_owner_key)]
ReadKeyDep = Annotated[ApiKey | None, Depends(require_read_key)]
