"""This machine's database, kept by the CLI: opened (created on first use), its schema migrated, its
embedding model fitted, its API keys created and revoked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from autotune.config import AutotuneSettings, get_autotune_settings
from database import create_api_key, delete_api_key, get_store, list_api_keys
from database.config import get_database_settings
from database.embedding_store import EmbeddingStore
from database.errors import ensure_data_dir
from database.schema import UPGRADE_COMMAND, current_revision, head_revision
from database.schema import upgrade as upgrade_schema
from database.session import safe_url
from database.store import Store
from loopnest.errors import ParameterError

__all__ = ["UPGRADE_COMMAND", "SchemaChange", "create_key", "current_revision", "database_url", "delete_key",
           "fit_embeddings", "head_revision", "list_keys", "open_local_store", "safe_url", "upgrade_database"]


def open_local_store() -> tuple[Store, AutotuneSettings]:
    """The database of this machine's settings (created on first use) and the settings."""
    settings = get_autotune_settings()
    ensure_data_dir(settings.data_dir)  # one line naming the directory (exit 2), not an OSError traceback
    return get_store(settings.resolved_database_url, create=True), settings


def database_url(url: str | None = None) -> str:
    """``url``, else the settings' database (``PERFEMBED_DATABASE_URL``, else SQLite in the data directory)."""
    return url or get_database_settings().resolved_database_url


def fit_embeddings(design: str, components: int) -> dict[str, Any]:
    """Fit the embedding model on every stored nest, re-embed them all and rebuild the index: the model's
    version, how many nests it embeds, and its confidence gate."""
    store, settings = open_local_store()
    es = EmbeddingStore(store, data_dir=settings.data_dir)
    version = es.fit(design=design, n_components=components)
    return {"version": version, "nests": len(es.index()), "gate_distance": es.gate_distance()}


@dataclass(frozen=True)
class SchemaChange:
    """What ``db upgrade`` did: the revision before (None: an empty database) and after."""

    url: str
    before: str | None
    after: str | None


def upgrade_database(url: str, revision: str = "head") -> SchemaChange:
    """Create the schema, or migrate it to ``revision``; Optuna's tables are created beside perfembed's now
    (workers would on their first job), so that ``optuna-dashboard URL``, which never creates them, opens a
    fresh database too."""
    before = current_revision(url)
    upgrade_schema(url, revision=revision)
    after = current_revision(url)
    # lazy: Optuna adds 52 ms to every `perfembed` start (-X importtime)
    from autotune.search.study_storage import open_storage

    open_storage(url).remove_session()
    return SchemaChange(safe_url(url), before, after)


def create_key(url: str | None, name: str, *, admin: bool) -> tuple[Any, str]:
    """A new API key named ``name``: its record and the key itself (shown once; only a hash is stored)."""
    if not name.strip():
        raise ParameterError("an API key needs a non-empty name")
    with get_store(database_url(url), create=True) as store, store.session(integrity_as_duplicate=True) as session:
        return create_api_key(session, name=name, admin=admin)


def list_keys(url: str | None) -> list[Any]:
    """Every key's record (names and creation times; never the keys)."""
    with get_store(database_url(url), create=True) as store, store.session() as session:
        return list(list_api_keys(session))


def delete_key(url: str | None, name: str) -> None:
    with get_store(database_url(url), create=True) as store, store.session() as session:
        delete_api_key(session, name=name)
