"""Embedding models (versioned, with their fitted state) and one vector per nest and model."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session, defer

from database.domain import EmbeddingModel
from database.errors import InvalidRecordError, NotFoundError, StorageError
from database.repositories._common import chunks, insert_unique, json_object
from database.repositories.programs import require_nests
from database.tables import EmbeddingModelModel, NestEmbeddingModel

# A concurrent writer can insert the same (nest, model) between our read and our insert; we
# then re-read and update. More clashes than this in a row mean something else is wrong.
_UPSERT_ATTEMPTS = 5


def register_embedding_model(
    session: Session,
    *,
    version: str,
    hyper_parameters: Mapping[str, Any],
    fitted_state: bytes,
    quality_metrics: Mapping[str, Any] | None = None,
) -> EmbeddingModel:
    """Store a fitted model under a new ``version``; raises :class:`DuplicateError` if taken."""
    if not version:
        raise InvalidRecordError("an embedding model needs a version")
    row = EmbeddingModelModel(
        version=version,
        hyper_parameters=json_object(hyper_parameters, what="hyper-parameters"),
        fitted_state=bytes(fitted_state),
        quality_metrics=json_object(quality_metrics, what="quality metrics"),
    )
    return insert_unique(session, row, what=f"embedding model version {version!r}").to_domain()


def get_embedding_model(session: Session, *, version: str | None = None) -> EmbeddingModel:
    """The model with ``version``, or the newest one; raises :class:`NotFoundError` if none."""
    if version is not None:
        return EmbeddingModelModel.find_or_raise_by_version(session, version).to_domain()
    row = session.scalars(select(EmbeddingModelModel).order_by(EmbeddingModelModel.id.desc())).first()
    if row is None:
        raise NotFoundError("no embedding model has been stored yet; fit one first")
    return row.to_domain()


def list_embedding_models(session: Session) -> list[EmbeddingModel]:
    """All models, oldest first, without their fitted state (``fitted_state`` is None)."""
    stmt = select(EmbeddingModelModel).options(defer(EmbeddingModelModel.fitted_state)).order_by(EmbeddingModelModel.id)
    return [row.to_domain(with_state=False) for row in session.scalars(stmt)]


def set_model_metrics(session: Session, *, version: str, quality_metrics: Mapping[str, Any]) -> EmbeddingModel:
    """Merge ``quality_metrics`` into the model's metrics."""
    row = EmbeddingModelModel.find_or_raise_by_version(session, version)
    row.quality_metrics = {**row.quality_metrics, **json_object(quality_metrics, what="quality metrics")}
    session.flush()
    return row.to_domain()


def store_embeddings(session: Session, *, model_version: str, vectors: Mapping[int, Sequence[float]]) -> int:
    """Insert or replace the vectors of nests (``nest_id -> vector``) for one model version.

    All vectors of a model have one length. Raises :class:`NotFoundError` for an unknown
    model or nest and :class:`InvalidRecordError` for a ragged or non-finite vector. Returns the count stored.
    """
    model = EmbeddingModelModel.find_or_raise_by_version(session, model_version)
    if not vectors:
        return 0
    packed = {int(nest_id): _check_vector(nest_id, vector) for nest_id, vector in vectors.items()}
    dims = {len(v) for v in packed.values()}
    stored_dim = session.scalar(select(NestEmbeddingModel.dim).where(NestEmbeddingModel.model_id == model.id).limit(1))
    if len(dims) > 1 or (stored_dim is not None and dims != {stored_dim}):
        expected = stored_dim if stored_dim is not None else sorted(dims)
        raise InvalidRecordError(f"vectors of model {model_version!r} must all have length {expected}; "
                                 f"got {sorted(dims)}")
    require_nests(session, packed)
    for _ in range(_UPSERT_ATTEMPTS):
        try:
            with session.begin_nested():
                _upsert(session, model.id, packed)
            return len(packed)
        except IntegrityError:
            continue
    raise StorageError(f"could not store embeddings of model {model_version!r}: concurrent writers kept clashing")


def _check_vector(nest_id: int, vector: Sequence[float]) -> tuple[float, ...]:
    values = tuple(float(x) for x in vector)
    if not values or not all(math.isfinite(x) for x in values):
        raise InvalidRecordError(f"the vector of nest {nest_id} must be non-empty and finite")
    return values


def _upsert(session: Session, model_id: int, packed: Mapping[int, tuple[float, ...]]) -> None:
    existing: dict[int, NestEmbeddingModel] = {}
    for batch in chunks(sorted(packed)):
        stmt = select(NestEmbeddingModel).where(
            NestEmbeddingModel.model_id == model_id, NestEmbeddingModel.nest_id.in_(batch)
        )
        existing.update((row.nest_id, row) for row in session.scalars(stmt))
    for nest_id, values in packed.items():
        blob = NestEmbeddingModel.pack(values)
        row = existing.get(nest_id)
        if row is None:
            session.add(NestEmbeddingModel(nest_id=nest_id, model_id=model_id, dim=len(values), vector=blob))
        else:
            row.dim = len(values)
            row.vector = blob


def load_embeddings(
    session: Session, *, model_version: str, nest_ids: Iterable[int] | None = None
) -> dict[int, tuple[float, ...]]:
    """``nest_id -> vector`` for one model version (nests without a vector are left out)."""
    model = EmbeddingModelModel.find_or_raise_by_version(session, model_version)
    base = select(NestEmbeddingModel).where(NestEmbeddingModel.model_id == model.id)
    if nest_ids is None:
        rows = list(session.scalars(base.order_by(NestEmbeddingModel.nest_id)))
    else:
        rows = []
        for batch in chunks(sorted(set(nest_ids))):
            rows.extend(session.scalars(base.where(NestEmbeddingModel.nest_id.in_(batch))))
    return {row.nest_id: row.unpack() for row in sorted(rows, key=lambda r: r.nest_id)}
