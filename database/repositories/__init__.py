"""Repositories: keyword-only functions over a session, one module per concept.

Each takes an open :class:`~sqlalchemy.orm.Session` first (usually from ``Store.session()``),
never commits itself, and returns frozen :mod:`database.domain` objects. Unknown ids raise
:class:`~database.errors.NotFoundError`, clashes with unique names
:class:`~database.errors.DuplicateError`, and bad argument values
:class:`~database.errors.InvalidRecordError` (a ValueError).
"""

from database.repositories.api_keys import (
    add_api_key,
    create_api_key,
    delete_api_key,
    find_api_key,
    list_api_keys,
)
from database.repositories.embeddings import (
    get_embedding_model,
    list_embedding_models,
    load_embeddings,
    register_embedding_model,
    set_model_metrics,
    store_embeddings,
)
from database.repositories.jobs import (
    LeaseLostError,
    cancel_job,
    claim_next_job,
    enqueue_job,
    fail_job,
    finish_job,
    get_job,
    heartbeat_job,
    list_jobs,
    note_job,
    queued_before,
    update_job_progress,
)
from database.repositories.measurements import (
    add_measurement,
    best_recipe_for,
    delete_measurements,
    list_measurements,
    measured_nest_ids,
    nest_summaries,
    ranked_recipes_for,
)
from database.repositories.overview import (
    NestBest,
    RecentMeasurement,
    best_per_nest,
    jobs_by_status,
    nest_loop_names,
    recent_jobs,
    recent_measurements,
    recipe_steps,
    table_counts,
)
from database.repositories.programs import (
    find_program,
    get_nest,
    get_or_create_nest,
    get_or_create_program,
    get_program,
    list_nests,
    list_programs,
    program_owned_by,
    set_nest_features,
)
from database.repositories.recipes import find_recipe, get_or_create_recipe, get_recipe
from database.repositories.targets import find_target, get_or_create_target, get_target, list_targets
from database.repositories.workers import list_workers, live_workers, record_heartbeat, remove_worker

__all__ = [
    "LeaseLostError",
    "NestBest",
    "RecentMeasurement",
    "add_api_key",
    "add_measurement",
    "delete_measurements",
    "best_per_nest",
    "best_recipe_for",
    "cancel_job",
    "claim_next_job",
    "create_api_key",
    "delete_api_key",
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
    "get_target",
    "heartbeat_job",
    "jobs_by_status",
    "list_api_keys",
    "list_embedding_models",
    "list_jobs",
    "list_measurements",
    "measured_nest_ids",
    "note_job",
    "program_owned_by",
    "nest_loop_names",
    "nest_summaries",
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
    "ranked_recipes_for",
    "record_heartbeat",
    "register_embedding_model",
    "remove_worker",
    "set_model_metrics",
    "set_nest_features",
    "store_embeddings",
    "table_counts",
    "update_job_progress",
]
