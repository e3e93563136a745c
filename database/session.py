"""Engines and the one transaction scope every database call runs in.

SQLite connections get WAL, a busy timeout and foreign keys, and every transaction that may write
starts with ``BEGIN IMMEDIATE``: it takes the write lock up front (waiting up to the busy timeout)
instead of failing with "database is locked" when a read transaction later tries to write. A request
that only reads runs in :func:`reading_only`: its transactions start with a plain ``BEGIN`` and take no
lock, so in WAL mode no reader waits for a writer or for another reader (200 concurrent reads, each
holding the write lock in turn, gave 41 answers of 503). PostgreSQL connections are checked before use.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event, make_url
from sqlalchemy.engine import URL
from sqlalchemy.exc import ArgumentError, IntegrityError, SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker
from sqlalchemy.pool import NullPool

from database.errors import DatabaseError, DuplicateError, ReadOnlyDatabaseError, StorageError
from loopnest.errors import PerfembedError

# Driver errors that mean "this connection may not write": SQLite's SQLITE_READONLY family, and
# PostgreSQL's read_only_sql_transaction (a read-only role or standby) and insufficient_privilege.
_READ_ONLY_SQLSTATES = frozenset({"25006", "42501"})
_MAX_REASON = 200

# How long a SQLite writer waits for the lock before giving up; long enough for a busy worker
# pool on one machine, short enough that a stuck writer is reported.
SQLITE_BUSY_TIMEOUT_MS = 30_000
_READING_ONLY: ContextVar[bool] = ContextVar("perfembed_reading_only", default=False)


@contextmanager
def reading_only() -> Iterator[None]:
    """Within the block (and the threads it hands work to, which copy the context), SQLite transactions
    are deferred: they read a snapshot without taking the write lock. For work that does not write."""
    token = _READING_ONLY.set(True)
    try:
        yield
    finally:
        _READING_ONLY.reset(token)


def set_reading_only(value: bool) -> None:
    """Mark the current context (a request's task) as reading only, or not; see :func:`reading_only`."""
    _READING_ONLY.set(value)


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


def make_engine(url: str, *, foreign_keys: bool = True, pool: bool = True, echo: bool = False,
                pool_size: int | None = None) -> Engine:
    """Create an engine for ``url`` with perfembed's connection settings.

    ``foreign_keys=False`` is for migrations only (SQLite batch mode recreates tables);
    ``pool=False`` gives a :class:`NullPool` engine for one-off work such as migrations;
    ``pool_size``: connections kept for the threads that use them at once (a server's thread pool),
    with as many again allowed beyond (a request that holds one and opens another never waits on
    itself). Raises :class:`StorageError` for a URL SQLAlchemy cannot use.
    """
    parsed = parse_url(url)
    options: dict[str, Any] = {"echo": echo}
    if not pool:
        options["poolclass"] = NullPool
    elif pool_size is not None:
        options.update(pool_size=pool_size, max_overflow=pool_size, pool_timeout=SQLITE_BUSY_TIMEOUT_MS / 1000)
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
        connection.exec_driver_sql("BEGIN" if _READING_ONLY.get() else "BEGIN IMMEDIATE")


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
            raise DuplicateError(f"record already exists: {driver_reason(e)}") from e
        raise database_error(e, _url_of(session), doing="integrity error on") from e
    except SQLAlchemyError as e:
        _rollback_quietly(session)
        raise database_error(e, _url_of(session)) from e
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


def _url_of(session: Session) -> URL:
    bind = session.get_bind()
    return bind.url if isinstance(bind, Engine) else bind.engine.url


def driver_reason(exc: BaseException) -> str:
    """What the database said, without the statement or its parameters: the first line of the
    driver's message (PostgreSQL's DETAIL lines, which quote values, are dropped)."""
    orig = getattr(exc, "orig", None) or exc
    lines = str(orig).strip().splitlines()
    reason = lines[0].strip() if lines else type(orig).__name__
    return reason if len(reason) <= _MAX_REASON else reason[:_MAX_REASON] + "..."


def is_read_only(exc: BaseException) -> bool:
    """Whether a driver error (wrapped by SQLAlchemy or not) says the connection may not write."""
    orig = getattr(exc, "orig", None) or exc
    if str(getattr(orig, "sqlite_errorname", "")).startswith("SQLITE_READONLY"):
        return True
    code = getattr(orig, "sqlstate", None) or getattr(orig, "pgcode", None)
    return code in _READ_ONLY_SQLSTATES or "readonly database" in str(orig)


def database_error(exc: BaseException, url: str | URL, *, doing: str = "") -> DatabaseError:
    """A driver or SQLAlchemy error as a :class:`DatabaseError` with no SQL and no parameters.

    ``str()`` names the database (password masked) and, for a refused write, what to check;
    :attr:`DatabaseError.public` is the short form clients get. ``doing``: "reading the schema
    version of" and the like, for the operator's message.
    """
    reason = driver_reason(exc)
    shown = safe_url(url)
    if is_read_only(exc):
        backend = parse_url(str(url)).get_backend_name() if isinstance(url, str) else url.get_backend_name()
        check = "the permissions of the file and its directory" if backend == "sqlite" else "the role's privileges"
        return ReadOnlyDatabaseError(f"the database {shown} refused the write: {reason} (check {check})",
                                     public=f"the database refused the write: {reason}")
    where = f"{doing} {shown}" if doing else f"database error on {shown}"
    return DatabaseError(f"{where}: {reason}", public=f"database error: {reason}")


# A write that changes nothing: it needs what storing a program needs (INSERT and SELECT on
# ``programs``, a writable file or a read-write transaction), and takes no row lock.
_WRITE_PROBE = ("INSERT INTO programs (source_hash, language, name, source, created_at) "
                "SELECT source_hash, language, name, source, created_at FROM programs WHERE 1 = 0")


def probe_writable(engine: Engine) -> None:
    """Raise :class:`ReadOnlyDatabaseError` unless the database takes writes (other failures:
    :class:`DatabaseError`). The probe inserts no row and is rolled back.

    SQLite runs it in a deferred transaction without waiting for the write lock: a read-only
    file fails before any lock is taken, and "database is locked" means another process is
    writing, so the database is writable.
    """
    try:
        if engine.url.get_backend_name() == "sqlite":
            _probe_sqlite(engine)
        else:
            with engine.connect() as connection:
                try:
                    connection.exec_driver_sql(_WRITE_PROBE)
                finally:
                    connection.rollback()
    except (SQLAlchemyError, engine.dialect.loaded_dbapi.Error) as e:
        raise database_error(e, engine.url, doing="cannot write to") from e


def _probe_sqlite(engine: Engine) -> None:
    raw = engine.raw_connection()
    try:
        cursor = raw.cursor()
        try:
            cursor.execute("PRAGMA busy_timeout = 0")
            cursor.execute("BEGIN")
            try:
                cursor.execute(_WRITE_PROBE)
            except engine.dialect.loaded_dbapi.OperationalError as e:
                if "locked" not in str(e) and "busy" not in str(e):
                    raise
            finally:
                cursor.execute("ROLLBACK")
                cursor.execute(f"PRAGMA busy_timeout = {SQLITE_BUSY_TIMEOUT_MS}")
        finally:
            cursor.close()
    finally:
        raw.close()
