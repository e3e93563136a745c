"""Read-only databases for the storage tests (issue 10, items 10 and 12), on every backend.

A faithful read-only SQLite database is a file the process may read but not write. ``chmod 444``
does that for an ordinary user; root ignores file modes, so as root the database is opened the
way SQLite opens an unwritable file anyway: ``SQLITE_OPEN_READONLY`` (a ``mode=ro`` URI), which
fails every write with ``SQLITE_READONLY``, "attempt to write a readonly database".

A read-only PostgreSQL role is one whose transactions are read-only
(``ALTER ROLE ... SET default_transaction_read_only = on``); the URL sets the same for its
connections. It runs when PERFEMBED_TEST_POSTGRES_URL is set (see ``tests/database/conftest.py``).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import create_engine, make_url, text
from sqlalchemy.pool import NullPool

from database import create_api_key, get_store

POSTGRES_URL = os.environ.get("PERFEMBED_TEST_POSTGRES_URL")
BACKENDS = ["sqlite", *(["postgresql"] if POSTGRES_URL else [])]


def readonly_sqlite_url(path: Path) -> str:
    """A URL on which the existing SQLite database ``path`` is read-only for this process."""
    if os.geteuid() != 0:
        path.chmod(0o444)  # the directory stays writable, as in the reported case (WAL files beside it)
        return f"sqlite:///{path}"
    return f"sqlite:///file:{path}?mode=ro&uri=true"


@contextmanager
def database_pair(backend: str, tmp: Path) -> Iterator[tuple[str, str, str]]:
    """A migrated database with an API key: ``(writable URL, read-only URL, API key)``."""
    if backend == "sqlite":
        url = f"sqlite:///{tmp / 'perfembed.db'}"
        key = _migrate_with_key(url)
        yield url, readonly_sqlite_url(tmp / "perfembed.db"), key
        return
    assert POSTGRES_URL is not None
    admin = create_engine(POSTGRES_URL, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    schema = f"pytest_{uuid.uuid4().hex[:16]}"
    with admin.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    try:
        base = make_url(POSTGRES_URL)
        url = base.update_query_dict({"options": f"-csearch_path={schema}"}).render_as_string(hide_password=False)
        readonly = base.update_query_dict(
            {"options": f"-csearch_path={schema} -cdefault_transaction_read_only=on"}
        ).render_as_string(hide_password=False)
        yield url, readonly, _migrate_with_key(url)
    finally:
        with admin.connect() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))
        admin.dispose()


def _migrate_with_key(url: str) -> str:
    store = get_store(url, create=True)
    try:
        with store.session() as session:
            _, key = create_api_key(session, name="storage-tests")
    finally:
        store.dispose()
    return key
