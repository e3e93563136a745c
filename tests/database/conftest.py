"""Fixtures for the database tests: every test gets a fresh database on every backend.

SQLite always runs (a file under tmp_path). PostgreSQL runs when PERFEMBED_TEST_POSTGRES_URL is
set; each test then gets its own schema, selected through ``search_path`` in the URL, so tests
on parallel xdist workers never see each other's tables. The schema is dropped afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, make_url, text
from sqlalchemy.pool import NullPool

from database import (
    Store,
    get_store,
)
from tests.database.factories import Seed, add_seed

POSTGRES_URL = os.environ.get("PERFEMBED_TEST_POSTGRES_URL")
BACKENDS = ["sqlite", *(["postgresql"] if POSTGRES_URL else [])]


@pytest.fixture(scope="session")
def postgres_admin() -> Iterator[Engine | None]:
    """An autocommit engine on the PostgreSQL test database, or None without PostgreSQL."""
    if not POSTGRES_URL:
        yield None
        return
    engine = create_engine(POSTGRES_URL, poolclass=NullPool, isolation_level="AUTOCOMMIT")
    yield engine
    engine.dispose()


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def empty_url(backend: str, tmp_path: Path, postgres_admin: Engine | None) -> Iterator[str]:
    """The URL of a new, empty database on ``backend``."""
    if backend == "sqlite":
        yield f"sqlite:///{tmp_path / 'perfembed.db'}"
        return
    assert postgres_admin is not None and POSTGRES_URL is not None
    schema = f"pytest_{uuid.uuid4().hex[:16]}"
    with postgres_admin.connect() as connection:
        connection.execute(text(f'CREATE SCHEMA "{schema}"'))
    url = make_url(POSTGRES_URL).update_query_dict({"options": f"-csearch_path={schema}"})
    try:
        yield url.render_as_string(hide_password=False)
    finally:
        with postgres_admin.connect() as connection:
            connection.execute(text(f'DROP SCHEMA "{schema}" CASCADE'))


@pytest.fixture
def store(empty_url: str) -> Iterator[Store]:
    """A store on a fresh database migrated to head."""
    with get_store(empty_url, create=True) as opened:
        yield opened


@pytest.fixture
def seed(store: Store) -> Seed:
    """One program with one nest, one target and one recipe."""
    with store.session() as session:
        return add_seed(session)
