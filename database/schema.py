"""Schema versions: Alembic migrations shipped in ``database/migrations``.

The version lives in its own table, ``perfembed_alembic_version``, so that Optuna's storage
(which keeps its own ``alembic_version``) can share the database. A store refuses a database
whose schema is not at this code's head; the error names the fix, ``perfembed db upgrade``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from enum import Enum
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util.exc import CommandError
from sqlalchemy import Connection, Engine, inspect
from sqlalchemy.exc import SQLAlchemyError

from database.errors import StorageError, ensure_data_dir
from database.session import database_error, make_engine, parse_url, safe_url, sqlite_path
from database.tables import Base

VERSION_TABLE = "perfembed_alembic_version"
MIGRATIONS_DIR = Path(__file__).resolve().parent / "migrations"
UPGRADE_COMMAND = "perfembed db upgrade"

# Alembic keeps the running environment in module globals (``alembic.context``), so two
# commands in one process must not overlap. Across processes the database serialises them.
_ALEMBIC_LOCK = threading.Lock()


class SchemaState(Enum):
    EMPTY = "empty"  # no perfembed table and no version: safe to create
    CURRENT = "current"
    OUTDATED = "outdated"  # a known revision older than head
    UNKNOWN = "unknown"  # a revision this code does not know: written by a newer perfembed
    UNVERSIONED = "unversioned"  # perfembed tables without a version row


def alembic_config(url: str | None = None) -> Config:
    """An Alembic config for the shipped migrations; ``url`` reaches env.py via attributes."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if url is not None:
        config.attributes["url"] = url
    return config


def _script() -> ScriptDirectory:
    return ScriptDirectory.from_config(alembic_config())


def head_revision() -> str:
    """The revision this code expects."""
    head = _script().get_current_head()
    assert head is not None, "the shipped migrations have no head"
    return head


def current_revision(url: str) -> str | None:
    """The revision of the database at ``url`` (None if it has never been migrated)."""
    path = sqlite_path(parse_url(url))
    if path is not None and not path.exists():
        return None  # connecting would create an empty file
    engine = make_engine(url, pool=False)
    try:
        with engine.connect() as connection:
            return _current(connection)
    except SQLAlchemyError as e:
        raise database_error(e, url, doing="cannot read the schema version of") from e
    finally:
        engine.dispose()


def upgrade(url: str, *, revision: str = "head") -> None:
    """Migrate the database at ``url`` to ``revision`` (creating a SQLite file and its folder)."""
    path = sqlite_path(parse_url(url))
    if path is not None:
        ensure_data_dir(path.parent, what="the database directory")
    _migrate(url, "upgrade", lambda config: command.upgrade(config, revision))


def downgrade(url: str, *, revision: str) -> None:
    """Migrate the database at ``url`` back to ``revision`` (``"base"`` drops every table)."""
    _migrate(url, "downgrade", lambda config: command.downgrade(config, revision))


def _migrate(url: str, verb: str, step: Callable[[Config], None]) -> None:
    """Run one Alembic command on the database at ``url``, one at a time in this process; its failures
    are :class:`StorageError` ("cannot VERB the schema of URL: ...")."""
    try:
        with _ALEMBIC_LOCK:
            step(alembic_config(url))
    except CommandError as e:
        raise StorageError(f"cannot {verb} the schema of {safe_url(url)}: {e}") from e
    except SQLAlchemyError as e:
        raise database_error(e, url, doing=f"cannot {verb} the schema of") from e


def _current(connection: Connection) -> str | None:
    context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
    heads = context.get_current_heads()
    if len(heads) > 1:
        raise StorageError(f"the database has several schema heads {heads}; it was migrated by hand")
    return heads[0] if heads else None


def schema_state(connection: Connection) -> tuple[SchemaState, str | None]:
    """Classify the schema behind ``connection``; returns the state and the current revision."""
    current = _current(connection)
    if current is None:
        ours = set(Base.metadata.tables) & set(inspect(connection).get_table_names())
        return (SchemaState.UNVERSIONED if ours else SchemaState.EMPTY), None
    script = _script()
    if current == script.get_current_head():
        return SchemaState.CURRENT, current
    try:
        script.get_revision(current)
    except CommandError:
        return SchemaState.UNKNOWN, current
    return SchemaState.OUTDATED, current


def check_schema(engine: Engine, *, create: bool = False) -> None:
    """Make sure the schema behind ``engine`` is at head, or raise :class:`StorageError`.

    With ``create``, an empty database is migrated to head; an outdated one never is, since
    migrating is a deliberate step (``perfembed db upgrade``).
    """
    url = engine.url.render_as_string(hide_password=False)
    shown = safe_url(engine.url)
    try:
        with engine.connect() as connection:
            if connection.dialect.name == "postgresql":
                # One snapshot for the version and the table list: another process's first upgrade
                # commits both at once, and READ COMMITTED could see its tables without its version.
                connection.execution_options(isolation_level="REPEATABLE READ")
            state, current = schema_state(connection)
    except SQLAlchemyError as e:
        raise database_error(e, engine.url, doing="cannot open database") from e
    fix = f"run `{UPGRADE_COMMAND} --url {shown}`"
    if state is SchemaState.CURRENT:
        return
    if state is SchemaState.EMPTY:
        if create:
            upgrade(url)
            return
        raise StorageError(f"database {shown} has no perfembed schema yet; {fix} to create it")
    if state is SchemaState.OUTDATED:
        raise StorageError(
            f"the schema of database {shown} is at revision {current}, older than {head_revision()} "
            f"which this perfembed needs; {fix} to migrate it"
        )
    if state is SchemaState.UNKNOWN:
        raise StorageError(
            f"the schema of database {shown} is at revision {current}, unknown to this perfembed "
            f"(head {head_revision()}); it was migrated by a newer perfembed, so upgrade perfembed"
        )
    raise StorageError(
        f"database {shown} has perfembed tables but no schema version (table {VERSION_TABLE}); "
        f"it was not created by `{UPGRADE_COMMAND}`, so point perfembed at a fresh database"
    )
