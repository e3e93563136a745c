"""Storage of perfembed: programs, nests, targets, recipes, measurements, jobs and models.

Open a store with :func:`get_store`, run repository functions in ``store.session()``::

    store = get_store(url, create=True)
    with store.session() as session:
        program = get_or_create_program(session, source=text, name="gemm")

Also here: the storage errors (:class:`NotFoundError`, :class:`DuplicateError`,
:class:`InvalidRecordError`, :class:`StorageError`), the settings with the database URL
(:class:`DatabaseSettings`, :func:`get_database_settings`), and the :class:`EmbeddingStore` that
keeps embeddings and their index in step with the database (for notebooks:
``EmbeddingStore.open().search(...)``).

SQLAlchemy and Alembic load on first use of anything but the domain objects and errors, so
importing this package stays cheap for the CLI.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from database.domain import (
    ApiKey,
    EmbeddingModel,
    JobStatus,
    Measurement,
    MeasurementOrigin,
    Nest,
    Program,
    RankedRecipe,
    Recipe,
    Target,
    TuningJob,
    Worker,
    canonical_json,
    nest_name,
    recipe_hash,
    source_hash,
    target_signature,
)
from database.errors import DuplicateError, InvalidRecordError, NotFoundError, StorageError

if TYPE_CHECKING:
    from database.config import DatabaseSettings, get_database_settings
    from database.embedding_store import EmbeddingStore
    from database.repositories import (
        LeaseLostError,
        NestBest,
        RecentMeasurement,
        add_api_key,
        add_measurement,
        best_per_nest,
        best_recipe_for,
        cancel_job,
        claim_next_job,
        create_api_key,
        delete_api_key,
        enqueue_job,
        fail_job,
        find_api_key,
        find_program,
        find_recipe,
        find_target,
        finish_job,
        get_embedding_model,
        get_job,
        get_nest,
        get_or_create_nest,
        get_or_create_program,
        get_or_create_recipe,
        get_or_create_target,
        get_program,
        get_recipe,
        get_target,
        heartbeat_job,
        jobs_by_status,
        list_api_keys,
        list_embedding_models,
        list_jobs,
        list_measurements,
        list_nests,
        list_programs,
        list_targets,
        list_workers,
        live_workers,
        load_embeddings,
        measured_nest_ids,
        nest_loop_names,
        nest_summaries,
        note_job,
        queued_before,
        ranked_recipes_for,
        recent_jobs,
        recent_measurements,
        recipe_steps,
        record_heartbeat,
        register_embedding_model,
        remove_worker,
        set_model_metrics,
        set_nest_features,
        store_embeddings,
        table_counts,
        update_job_progress,
    )
    from database.schema import current_revision, downgrade, head_revision, upgrade
    from database.session import make_engine, session_scope
    from database.store import Store, get_store

# Where the names that need SQLAlchemy live; any other lazy name is a repository function.
_LAZY_MODULES = {
    "DatabaseSettings": "database.config",
    "get_database_settings": "database.config",
    "EmbeddingStore": "database.embedding_store",
    "Store": "database.store",
    "get_store": "database.store",
    "current_revision": "database.schema",
    "downgrade": "database.schema",
    "head_revision": "database.schema",
    "upgrade": "database.schema",
    "make_engine": "database.session",
    "session_scope": "database.session",
}

__all__ = [
    "ApiKey",
    "DatabaseSettings",
    "DuplicateError",
    "EmbeddingModel",
    "EmbeddingStore",
    "InvalidRecordError",
    "JobStatus",
    "LeaseLostError",
    "Measurement",
    "MeasurementOrigin",
    "Nest",
    "NestBest",
    "NotFoundError",
    "Program",
    "RankedRecipe",
    "RecentMeasurement",
    "Recipe",
    "StorageError",
    "Store",
    "Target",
    "TuningJob",
    "Worker",
    "add_api_key",
    "add_measurement",
    "best_per_nest",
    "best_recipe_for",
    "cancel_job",
    "canonical_json",
    "claim_next_job",
    "create_api_key",
    "current_revision",
    "delete_api_key",
    "downgrade",
    "enqueue_job",
    "fail_job",
    "find_api_key",
    "find_program",
    "find_recipe",
    "find_target",
    "finish_job",
    "get_embedding_model",
    "get_job",
    "get_nest",
    "get_or_create_nest",
    "get_or_create_program",
    "get_or_create_recipe",
    "get_or_create_target",
    "get_program",
    "get_recipe",
    "get_database_settings",
    "get_store",
    "get_target",
    "head_revision",
    "heartbeat_job",
    "jobs_by_status",
    "list_api_keys",
    "list_embedding_models",
    "list_jobs",
    "list_measurements",
    "measured_nest_ids",
    "nest_name",
    "nest_loop_names",
    "nest_summaries",
    "note_job",
    "queued_before",
    "recent_jobs",
    "recent_measurements",
    "recipe_steps",
    "list_nests",
    "list_programs",
    "list_targets",
    "list_workers",
    "live_workers",
    "load_embeddings",
    "make_engine",
    "ranked_recipes_for",
    "recipe_hash",
    "record_heartbeat",
    "register_embedding_model",
    "remove_worker",
    "session_scope",
    "set_model_metrics",
    "set_nest_features",
    "source_hash",
    "store_embeddings",
    "table_counts",
    "target_signature",
    "update_job_progress",
    "upgrade",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module 'database' has no attribute {name!r}")
    module = importlib.import_module(_LAZY_MODULES.get(name, "database.repositories"))
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
