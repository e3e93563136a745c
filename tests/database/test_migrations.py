"""Schema management: migrations from empty to head, models matching migrations, version checks."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text
from typer.testing import CliRunner

from database import (
    Store,
    current_revision,
    downgrade,
    get_or_create_program,
    get_store,
    head_revision,
    list_programs,
    upgrade,
)
from database.config import DatabaseSettings
from database.errors import StorageError
from database.schema import VERSION_TABLE
from database.session import make_engine
from database.tables import Base
from service.commands.db import db_app
from tests.helpers.kernels import GEMM

FIRST = "v0.1.0.a"
TABLES = {
    "programs",
    "nests",
    "targets",
    "recipes",
    "measurements",
    "embedding_models",
    "nest_embeddings",
    "tuning_jobs",
    "api_keys",
    "workers",
    "program_owners",
}


def _tables(url: str) -> set[str]:
    engine = make_engine(url, pool=False)
    try:
        with engine.connect() as connection:
            return set(inspect(connection).get_table_names())
    finally:
        engine.dispose()


def test_upgrade_from_empty_to_head(empty_url: str) -> None:
    assert current_revision(empty_url) is None
    upgrade(empty_url)
    assert current_revision(empty_url) == head_revision()
    assert _tables(empty_url) == TABLES | {VERSION_TABLE}
    upgrade(empty_url)  # idempotent
    assert current_revision(empty_url) == head_revision()


def test_models_match_migrations(store: Store) -> None:
    """``alembic check``: autogenerate finds nothing to add after migrating to head."""
    with store.engine.connect() as connection:
        context = MigrationContext.configure(connection, opts={"compare_type": True, "version_table": VERSION_TABLE})
        assert compare_metadata(context, Base.metadata) == []


def test_downgrade_to_base_and_back(store: Store) -> None:
    store.dispose()
    downgrade(store.url, revision="base")
    assert _tables(store.url) == {VERSION_TABLE}
    assert current_revision(store.url) is None
    upgrade(store.url)
    assert _tables(store.url) == TABLES | {VERSION_TABLE}


@pytest.mark.parametrize("migrate", [upgrade, downgrade], ids=["upgrade", "downgrade"])
def test_an_unknown_revision_is_one_storage_error_naming_the_step(store: Store, migrate: Callable[..., None]) -> None:
    store.dispose()
    with pytest.raises(StorageError) as info:
        migrate(store.url, revision="v9.9.9.z")
    assert str(info.value).startswith(f"cannot {migrate.__name__} the schema of ")
    assert "v9.9.9.z" in str(info.value)
    assert current_revision(store.url) == head_revision()


def test_old_schema_is_refused_with_the_fix(empty_url: str) -> None:
    upgrade(empty_url, revision=FIRST)
    with pytest.raises(StorageError, match="perfembed db upgrade") as info:
        get_store(empty_url)
    assert FIRST in str(info.value) and head_revision() in str(info.value)
    with pytest.raises(StorageError, match="perfembed db upgrade"):
        get_store(empty_url, create=True)  # an outdated schema is never migrated implicitly
    engine = make_engine(empty_url, pool=False)
    with engine.begin() as connection:  # data written under the old schema survives
        connection.execute(
            text(
                "INSERT INTO programs (id, source_hash, language, name, source, created_at) "
                "VALUES (1, :hash, 'c', 'gemm', :src, CURRENT_TIMESTAMP)"
            ),
            {"hash": "0" * 64, "src": GEMM},
        )
    engine.dispose()
    upgrade(empty_url)
    store = get_store(empty_url)
    with store.session() as session:
        assert [p.name for p in list_programs(session)] == ["gemm"]
    store.dispose()


def test_missing_or_empty_database_needs_create(empty_url: str, backend: str, tmp_path: Path) -> None:
    with pytest.raises(StorageError, match="perfembed db upgrade"):
        get_store(empty_url)
    if backend == "sqlite":
        assert not (tmp_path / "perfembed.db").exists()  # refusing did not leave an empty file
    get_store(empty_url, create=True).dispose()
    get_store(empty_url).dispose()


def test_unknown_revision_is_refused(store: Store) -> None:
    with store.session() as session:
        session.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = 'v9.9.9.z'"))
    with pytest.raises(StorageError, match="newer perfembed"):
        get_store(store.url)


def test_unversioned_tables_are_refused(empty_url: str) -> None:
    engine = make_engine(empty_url, pool=False)
    Base.metadata.create_all(engine)
    engine.dispose()
    with pytest.raises(StorageError, match="no schema version"):
        get_store(empty_url, create=True)


def test_url_from_settings(tmp_path: Path) -> None:
    settings = DatabaseSettings(data_dir=tmp_path / "nested" / "data")
    store = get_store(settings=settings, create=True)
    assert (tmp_path / "nested" / "data" / "perfembed.db").exists()
    assert store.url == settings.resolved_database_url
    store.dispose()


def test_bad_url_is_a_storage_error() -> None:
    with pytest.raises(StorageError, match="database URL"):
        get_store("not a url")
    with pytest.raises(StorageError) as info:
        get_store("postgresql+psycopg://nobody:secret@127.0.0.1:1/none", create=True)
    assert "secret" not in str(info.value) and "***" in str(info.value)


def test_store_pickles_without_its_engine(store: Store) -> None:
    with store.session() as session:
        get_or_create_program(session, source=GEMM, name="gemm")
    copy = pickle.loads(pickle.dumps(store))
    assert copy.url == store.url and "secret" not in repr(Store("postgresql://u:secret@h/db"))
    with copy.session() as session:
        assert len(list_programs(session)) == 1
    copy.dispose()


def test_a_store_in_a_with_block_closes_its_connections_and_stays_usable(empty_url: str) -> None:
    with get_store(empty_url, create=True) as store:
        engine = store.engine
        with store.session() as session:
            get_or_create_program(session, source=GEMM, name="gemm")
    assert engine.pool.checkedin() == 0 and store.engine is not engine  # disposed; a new engine on use
    with store.session() as session:
        assert len(list_programs(session)) == 1
    store.dispose()


def test_cli_upgrade_and_current(empty_url: str) -> None:
    runner = CliRunner()
    result = runner.invoke(db_app, ["current", "--url", empty_url])
    assert result.exit_code == 0, result.output
    assert "no schema" in result.output and "perfembed db upgrade" in result.output
    result = runner.invoke(db_app, ["upgrade", "--url", empty_url, "--revision", FIRST])
    assert result.exit_code == 0, result.output
    result = runner.invoke(db_app, ["current", "--url", empty_url])
    assert f"{FIRST}, head is {head_revision()}" in result.output
    result = runner.invoke(db_app, ["upgrade", "--url", empty_url])
    assert result.exit_code == 0 and f"upgraded from {FIRST} to {head_revision()}" in result.output
    result = runner.invoke(db_app, ["current", "--url", empty_url])
    assert f"{head_revision()} (head)" in result.output

