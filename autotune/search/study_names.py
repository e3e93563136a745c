"""The Optuna study a nest is tuned in: one per (nest, target, parameter values, recipe space), shared by
every worker tuning them, and Optuna's storage errors as the database's."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING

from sqlalchemy.exc import SQLAlchemyError

from autotune.search.space.recipe_space import RecipeSpace
from database.domain import canonical_json, sha256_hex
from database.session import database_error

if TYPE_CHECKING:
    from loopnest.harness.index_data import SparseChoice
    from loopnest.ir import Scop

# Optuna limits study names to 512 characters; longer parameter lists are hashed.
_MAX_STUDY_NAME = 200


def study_name_for(nest_id: int, target_id: int, params: Mapping[str, int], space: str | None = None) -> str:
    """The study of one (nest, target, parameter values, recipe space): every worker tuning them shares it.

    ``space`` is :attr:`RecipeSpace.signature`. With it, a perfembed version whose recipe space
    differs starts a new study, instead of failing on the old one's incompatible trials (the
    measurements those recorded stay in the database)."""
    values = canonical_json({k: int(v) for k, v in params.items()})
    suffix = f":space={space[:16]}" if space else ""
    name = f"perfembed:nest={nest_id}:target={target_id}:params={values}{suffix}"
    if len(name) > _MAX_STUDY_NAME:
        name = f"perfembed:nest={nest_id}:target={target_id}:params-sha256={sha256_hex(values)[:32]}{suffix}"
    return name


def tuning_study(url: str, nest_id: int, target_id: int, scop: Scop, params: Mapping[str, int],
                 sparse: SparseChoice | None = None) -> tuple[str, RecipeSpace]:
    """The recipe space of (nest, params) and the study to tune it in (:func:`resolve_study_name`).
    A sparse nest measured on a chosen structure (``sparse``) gets a study of its own: timings on
    another matrix are not comparable trials."""
    space = RecipeSpace(scop, params=params)
    signature = space.signature if sparse is None else sha256_hex(f"{space.signature}|{sparse.key()}")
    return resolve_study_name(url, nest_id, target_id, params, signature), space


def resolve_study_name(url: str, nest_id: int, target_id: int, params: Mapping[str, int], space: str) -> str:
    """The study to tune (nest, target, params) in, over the recipe space with signature ``space``.

    Studies created before names carried the space signature are resumed when their space is the
    same, so an upgrade re-tunes nothing that was complete; otherwise the space's own study.
    """
    # Optuna (the tuner's storage, its errors) loads on use: this module is imported by every `perfembed`
    # start, which Optuna would slow by 52 ms (python -X importtime).
    from autotune.search.study_storage import open_storage

    legacy = study_name_for(nest_id, target_id, params)
    with optuna_storage_errors(url):
        storage = open_storage(url, heartbeat_interval=None)
        try:
            study_id = storage.get_study_id_from_name(legacy)
            same_space = storage.get_study_user_attrs(study_id).get("space") == space
        except KeyError:
            same_space = False
        finally:
            storage.engine.dispose()
    return legacy if same_space else study_name_for(nest_id, target_id, params, space=space)


@contextmanager
def optuna_storage_errors(url: str) -> Iterator[None]:
    """Optuna's storage failures (``StorageInternalError``, SQLAlchemy errors) as
    :class:`~database.errors.DatabaseError`: one line without SQL, exit 2 / 503, never a traceback."""
    from optuna.exceptions import StorageInternalError  # Optuna loads lazily in autotune (52 ms a start)

    try:
        yield
    except (StorageInternalError, SQLAlchemyError) as exc:
        cause = exc.__cause__ if isinstance(exc, StorageInternalError) and exc.__cause__ is not None else exc
        raise database_error(cause, url) from exc
