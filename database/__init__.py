"""Storage of perfembed: programs, nests, targets, recipes, measurements, jobs and models.

Open a store with :func:`get_store`, run repository functions in ``store.session()`` (every one that
``database.repositories.__all__`` lists is re-exported here, so the list is written once)::

    store = get_store(url, create=True)
    with store.session() as session:
        program = get_or_create_program(session, source=text, name="gemm")

Also here: the storage errors (:class:`NotFoundError`, :class:`DuplicateError`,
:class:`InvalidRecordError`, :class:`StorageError`), the settings with the database URL
(:class:`DatabaseSettings`, :func:`get_database_settings`), and the :class:`EmbeddingStore` that
keeps embeddings and their index in step with the database (notebooks start from
``service.notebook.Notebook``, whose ``embeddings`` it is).

Everything is imported eagerly: SQLAlchemy and Alembic once loaded lazily here, but every
``perfembed`` start loads them anyway (the CLI's commands open the store), so the laziness saved
nothing and hid what depends on what.
"""

from __future__ import annotations

from database.config import DatabaseSettings, get_database_settings
from database.domain import (
    ApiKey,
    EmbeddingModel,
    JobStatus,
    Measurement,
    MeasurementIn,
    MeasurementOrigin,
    Nest,
    Program,
    RankedRecipe,
    Recipe,
    Target,
    TargetIdentity,
    TuningJob,
    Worker,
    canonical_json,
    recipe_hash,
    source_hash,
    target_signature,
)
from database.embedding_store import EmbeddingStore
from database.errors import DuplicateError, InvalidRecordError, NotFoundError, StorageError
from database.repositories import *  # noqa: F403  every repository function, as listed in repositories.__all__
from database.repositories import __all__ as _repository_names
from database.schema import current_revision, downgrade, head_revision, upgrade
from database.session import make_engine, session_scope
from database.store import Store, get_store

__all__ = [
    "ApiKey",
    "DatabaseSettings",
    "DuplicateError",
    "EmbeddingModel",
    "EmbeddingStore",
    "InvalidRecordError",
    "JobStatus",
    "Measurement",
    "MeasurementIn",
    "MeasurementOrigin",
    "Nest",
    "NotFoundError",
    "Program",
    "RankedRecipe",
    "Recipe",
    "StorageError",
    "Store",
    "Target",
    "TargetIdentity",
    "TuningJob",
    "Worker",
    "canonical_json",
    "current_revision",
    "downgrade",
    "get_database_settings",
    "get_store",
    "head_revision",
    "make_engine",
    "recipe_hash",
    "session_scope",
    "source_hash",
    "target_signature",
    "upgrade",
    *_repository_names,
]
