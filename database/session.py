"""Engines and the one transaction scope every database call runs in.

SQLite connections get WAL, a busy timeout and foreign keys, and every transaction starts with
``BEGIN IMMEDIATE``: it takes the write lock up front (waiting up to the busy timeout) instead of
failing with "database is locked" when a read transaction later tries to write. Readers are not
blocked in WAL mode. PostgreSQL connections are checked before use.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.engine import URL
from sqlalchemy.exc import ArgumentError, IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool

from loopnest.errors import DuplicateError, PerfembedError, StorageError

# How long a SQLite writer waits for the lock before giving up; long enough for a busy worker
# pool on one machine, short enough that a stuck writer is reported.
SQLITE_BUSY_TIMEOUT_MS = 30_000


def safe_url(url: str | URL) -> str:
    """The URL as text with its password masked, for messages and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<invalid database URL>"


def parse_url(url: str) -> URL:
    try:
        return make_url(url)
    except ArgumentError as e:
        raise StorageError(f"invalid database URL {url!r}: {e}") from e


def sqlite_path(url: URL) -> Path | None:
    """The file behind a SQLite URL, or None for other backends and in-memory databases."""
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return None
    if url.database.startswith("file:"):
        return None
    return Path(url.database)


def make_engine(url: str, *, foreign_keys: bool = True, pool: bool = True, echo: bool = False) -> Engine:
    """Create an engine for ``url`` with perfembed's connection settings.

    ``foreign_keys=False`` is for migrations only (SQLite batch mode recreates tables);
    ``pool=False`` gives a :class:`NullPool` engine for one-off work such as migrations.
    Raises :class:`StorageError` for a URL SQLAlchemy cannot use.
    """
    parsed = parse_url(url)
    options: dict[str, Any] = {"echo": echo}
    if not pool:
        options["poolclass"] = NullPool
    is_sqlite = parsed.get_backend_name() == "sqlite"
    if is_sqlite:
        options["connect_args"] = {"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}
    else:
        options["pool_pre_ping"] = True
    try:
        engine = create_engine(parsed, **options)
    except (ArgumentError, ImportError) as e:
        raise StorageError(f"cannot use database URL {safe_url(parsed)}: {e}") from e
    if is_sqlite:
        _configure_sqlite(engine, foreign_keys=foreign_keys)
    return engine


def _configure_sqlite(engine: Engine, *, foreign_keys: bool) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control away from the sqlite3 module so that BEGIN is ours.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
            cursor.execute("PRAGMA journal_mode = WAL")
            cursor.execute("PRAGMA synchronous = NORMAL")
            cursor.execute(f"PRAGMA foreign_keys = {'ON' if foreign_keys else 'OFF'}")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def make_sessionmaker(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(bind=engine, expire_on_commit=False, autoflush=True)


@contextmanager
def session_scope(factory: sessionmaker[Session], *, integrity_as_duplicate: bool = False) -> Iterator[Session]:
    """One transaction: commit on success, roll back on error, always close.

    Errors leave as perfembed errors: :class:`PerfembedError` raised inside passes through,
    an :class:`IntegrityError` becomes :class:`DuplicateError` if ``integrity_as_duplicate``
    (otherwise :class:`StorageError`), and any other SQLAlchemy error becomes
    :class:`StorageError`, chained to the original.
    """
    session = factory()
    try:
        yield session
        session.commit()
    except PerfembedError:
        _rollback_quietly(session)
        raise
    except IntegrityError as e:
        _rollback_quietly(session)
        if integrity_as_duplicate:
            raise DuplicateError(f"record already exists: {e.orig}") from e
        raise StorageError(f"database integrity error: {e.orig}") from e
    except SQLAlchemyError as e:
        _rollback_quietly(session)
        bind = session.get_bind()
        url = bind.url if isinstance(bind, Engine) else bind.engine.url
        raise StorageError(f"database error on {safe_url(url)}: {e}") from e
    except BaseException:
        _rollback_quietly(session)
        raise
    finally:
        session.close()


def _rollback_quietly(session: Session) -> None:
    """Roll back without masking the error being handled (the connection may already be gone)."""
    try:
        session.rollback()
    except SQLAlchemyError:
        pass
