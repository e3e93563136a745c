"""Alembic environment of perfembed.

The database URL comes from ``config.attributes["url"]`` (set by :func:`database.upgrade`), or a
connection from ``config.attributes["connection"]``; from the command line, ``-x url=...`` or
the settings. SQLite uses batch mode (it cannot alter tables in place) with foreign keys off
while tables are rebuilt. Each run is one transaction; on PostgreSQL an advisory lock makes
concurrent upgrades of one database wait for each other (SQLite gets that from BEGIN IMMEDIATE).
"""

from __future__ import annotations

from contextlib import nullcontext

from alembic import context
from sqlalchemy import Connection, text

from database.config import get_database_settings
from database.schema import VERSION_TABLE
from database.session import make_engine
from database.tables import Base

# Arbitrary, fixed key of the PostgreSQL advisory lock held while migrating ("perf").
PG_MIGRATION_LOCK_KEY = 0x70657266

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = config.attributes.get("url") or context.get_x_argument(as_dictionary=True).get("url")
    if not url:
        url = get_database_settings().resolved_database_url
    return str(url)


def run_migrations_offline() -> None:
    url = _url()
    context.configure(
        url=url,
        target_metadata=target_metadata,
        version_table=VERSION_TABLE,
        literal_binds=True,
        render_as_batch=url.startswith("sqlite"),
        dialect_opts={"paramstyle": "named"},
    )
    with context.begin_transaction():
        context.run_migrations()


def _run(connection: Connection) -> None:
    with nullcontext() if connection.in_transaction() else connection.begin():
        if connection.dialect.name == "postgresql":
            connection.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": PG_MIGRATION_LOCK_KEY})
        context.configure(
            connection=connection,
            target_metadata=target_metadata,
            version_table=VERSION_TABLE,
            render_as_batch=connection.dialect.name == "sqlite",
            compare_type=True,
        )
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(_url(), foreign_keys=False, pool=False)
    try:
        with engine.connect() as connection:
            _run(connection)
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
