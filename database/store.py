"""The :class:`Store`: one database, its engine and its sessions.

The store opens transactions and nothing else: every operation on the data, the job and worker
calls included, is a repository function run in ``store.session()`` (:mod:`database.repositories`).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from database import schema
from database.config import DatabaseSettings, get_database_settings
from database.errors import StorageError, ensure_data_dir
from database.session import (
    make_engine,
    make_sessionmaker,
    parse_url,
    probe_writable,
    safe_url,
    session_scope,
    sqlite_path,
)

if TYPE_CHECKING:
    from sqlalchemy import Engine
    from sqlalchemy.orm import Session, sessionmaker


class Store:
    """Access to one perfembed database.

    Thread-safe: share one store per process; every :meth:`session` is its own transaction,
    committed when its block ends (a job claim must be visible to other workers at once, so
    each worker-side job call runs in a session of its own). The
    engine is created on first use. A pickled store carries only its URL, so it can be sent
    to worker processes, which open their own connections. ``with get_store(url) as store:``
    disposes of its connections when the block ends.
    """

    def __init__(self, url: str, *, echo: bool = False, pool_size: int | None = None) -> None:
        parse_url(url)
        self._url = url
        self._echo = echo
        self._pool_size = pool_size
        self._lock = threading.Lock()
        self._engine: Engine | None = None
        self._sessionmaker: sessionmaker[Session] | None = None

    def __repr__(self) -> str:
        return f"Store({safe_url(self._url)!r})"

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.dispose()

    def __getstate__(self) -> dict[str, Any]:
        return {"url": self._url, "echo": self._echo}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self._url = state["url"]
        self._echo = state["echo"]
        self._pool_size = None
        self._lock = threading.Lock()
        self._engine = None
        self._sessionmaker = None

    @property
    def url(self) -> str:
        return self._url

    @property
    def engine(self) -> Engine:
        return self._connect()[0]

    def _factory(self) -> sessionmaker[Session]:
        return self._connect()[1]

    def _connect(self) -> tuple[Engine, sessionmaker[Session]]:
        with self._lock:
            if self._engine is None or self._sessionmaker is None:
                self._engine = make_engine(self._url, echo=self._echo, pool_size=self._pool_size)
                self._sessionmaker = make_sessionmaker(self._engine)
            return self._engine, self._sessionmaker

    @contextmanager
    def session(self, *, integrity_as_duplicate: bool = False) -> Iterator[Session]:
        """A transaction; see :func:`database.session.session_scope` for the error rules."""
        with session_scope(self._factory(), integrity_as_duplicate=integrity_as_duplicate) as session:
            yield session

    def check_schema(self, *, create: bool = False) -> None:
        """Raise :class:`StorageError` unless the schema is at head (``create``: migrate if empty)."""
        schema.check_schema(self.engine, create=create)

    def check_writable(self) -> None:
        """Raise :class:`~database.errors.ReadOnlyDatabaseError` unless the database takes writes
        (a rolled-back write that inserts nothing; see :func:`database.session.probe_writable`)."""
        probe_writable(self.engine)

    def dispose(self) -> None:
        """Close every pooled connection; the store reconnects if used again."""
        with self._lock:
            if self._engine is not None:
                self._engine.dispose()
            self._engine = None
            self._sessionmaker = None


def get_store(url: str | None = None, *, settings: DatabaseSettings | None = None, create: bool = False,
              pool_size: int | None = None) -> Store:
    """Open the store at ``url`` (default: ``settings.resolved_database_url``); ``pool_size``: see
    :func:`database.session.make_engine`.

    The schema must be at head, else :class:`StorageError` names the fix
    (``perfembed db upgrade``). With ``create``, a database that does not exist yet or is
    empty is created and migrated; an outdated one is never migrated implicitly.
    """
    if url is None:
        url = (settings or get_database_settings()).resolved_database_url
    path = sqlite_path(parse_url(url))
    if path is not None and not path.exists():
        if not create:
            fix = f"`{schema.UPGRADE_COMMAND} --url {url}`"
            raise StorageError(f"database file {path} does not exist; run {fix} to create it")
        ensure_data_dir(path.parent, what="the database directory")
    store = Store(url, pool_size=pool_size)
    try:
        store.check_schema(create=create)
    except BaseException:
        store.dispose()
        raise
    return store
