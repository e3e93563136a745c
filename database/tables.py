"""ORM tables of perfembed (SQLAlchemy 2 typed mappings).

Tables only describe storage: the repositories copy rows into :mod:`database.domain` objects
through ``to_domain()``. Finders are classmethods that raise :class:`NotFoundError`.
Any change here needs a new revision under ``database/migrations/versions`` (the test suite
compares these tables with the migrations).
"""

from __future__ import annotations

import struct
from datetime import UTC, datetime
from typing import Any, Self

from sqlalchemy import (
    JSON,
    Boolean,
    CheckConstraint,
    DateTime,
    Dialect,
    Double,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    String,
    Text,
    TypeDecorator,
    UniqueConstraint,
    false,
    select,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column

from database import domain
from database.errors import NotFoundError

# Constraint names are spelled out so that Alembic batch mode (SQLite) can drop and recreate them.
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

HASH_LENGTH = 64  # hex SHA-256
JOB_STATUSES = tuple(s.value for s in domain.JobStatus)
ORIGINS = tuple(o.value for o in domain.MeasurementOrigin)


def utcnow() -> datetime:
    return datetime.now(UTC)


PROGRAM_CHECK_LENGTH = 400  # a whole-program verdict: its figure, or its status and the first error


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on every backend (SQLite stores naive text, read back as UTC)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def _in(column: str, values: tuple[str, ...]) -> str:
    return f"{column} IN ({', '.join(repr(v) for v in values)})"


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)

    @classmethod
    def find_or_raise_by_id(cls, session: Session, record_id: int) -> Self:
        row = session.get(cls, record_id)
        if row is None:
            raise NotFoundError(f"{cls._label()} {record_id} does not exist")
        return row

    @classmethod
    def _label(cls) -> str:
        table_name: str = cls.__tablename__
        return table_name.removesuffix("s").replace("_", " ")


class ProgramModel(Base):
    __tablename__ = "programs"

    source_hash: Mapped[str] = mapped_column(String(HASH_LENGTH), unique=True)
    language: Mapped[str] = mapped_column(String(32))
    name: Mapped[str] = mapped_column(String(255))
    source: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # Sent through the API with a key: the source belongs to its owners (ProgramOwnerModel).
    private: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    @classmethod
    def find_by_hash(cls, session: Session, source_hash: str) -> ProgramModel | None:
        return session.scalar(select(cls).where(cls.source_hash == source_hash))

    def to_domain(self) -> domain.Program:
        return domain.Program(
            id=self.id,
            source_hash=self.source_hash,
            language=self.language,
            name=self.name,
            source=self.source,
            created_at=self.created_at,
            private=self.private,
        )


class ProgramOwnerModel(Base):
    """A key that sent a private program (the same source sent by two keys belongs to both)."""

    __tablename__ = "program_owners"
    __table_args__ = (UniqueConstraint("program_id", "api_key_id"), Index(None, "api_key_id"))

    program_id: Mapped[int] = mapped_column(ForeignKey("programs.id", ondelete="CASCADE"))
    api_key_id: Mapped[int] = mapped_column(ForeignKey("api_keys.id", ondelete="CASCADE"))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class NestModel(Base):
    __tablename__ = "nests"
    __table_args__ = (UniqueConstraint("program_id", "nest_index"),)

    program_id: Mapped[int] = mapped_column(ForeignKey("programs.id", ondelete="CASCADE"))
    index: Mapped[int] = mapped_column("nest_index", Integer)
    normalized: Mapped[Any] = mapped_column(JSON)
    static_features: Mapped[dict[str, float]] = mapped_column(JSON)
    dynamic_features: Mapped[dict[str, float]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    @classmethod
    def find_by_position(cls, session: Session, program_id: int, index: int) -> NestModel | None:
        return session.scalar(select(cls).where(cls.program_id == program_id, cls.index == index))

    def to_domain(self) -> domain.Nest:
        return domain.Nest(
            id=self.id,
            program_id=self.program_id,
            index=self.index,
            normalized=self.normalized,
            static_features=dict(self.static_features),
            dynamic_features=dict(self.dynamic_features),
            created_at=self.created_at,
        )


class EmbeddingModelModel(Base):
    __tablename__ = "embedding_models"

    version: Mapped[str] = mapped_column(String(64), unique=True)
    hyper_parameters: Mapped[dict[str, Any]] = mapped_column(JSON)
    fitted_state: Mapped[bytes] = mapped_column(LargeBinary)
    quality_metrics: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    @classmethod
    def find_or_raise_by_version(cls, session: Session, version: str) -> EmbeddingModelModel:
        row = session.scalar(select(cls).where(cls.version == version))
        if row is None:
            raise NotFoundError(f"embedding model version {version!r} does not exist")
        return row

    def to_domain(self, *, with_state: bool = True) -> domain.EmbeddingModel:
        return domain.EmbeddingModel(
            id=self.id,
            version=self.version,
            hyper_parameters=dict(self.hyper_parameters),
            quality_metrics=dict(self.quality_metrics),
            fitted_state=self.fitted_state if with_state else None,
            created_at=self.created_at,
        )


class NestEmbeddingModel(Base):
    """One vector per (nest, embedding model), stored as little-endian float64."""

    __tablename__ = "nest_embeddings"
    __table_args__ = (UniqueConstraint("nest_id", "model_id"), Index(None, "model_id"))

    nest_id: Mapped[int] = mapped_column(ForeignKey("nests.id", ondelete="CASCADE"))
    model_id: Mapped[int] = mapped_column(ForeignKey("embedding_models.id", ondelete="CASCADE"))
    dim: Mapped[int] = mapped_column(Integer)
    vector: Mapped[bytes] = mapped_column(LargeBinary)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    @staticmethod
    def pack(values: tuple[float, ...]) -> bytes:
        return struct.pack(f"<{len(values)}d", *values)

    def unpack(self) -> tuple[float, ...]:
        return struct.unpack(f"<{self.dim}d", self.vector)


class TargetModel(Base):
    __tablename__ = "targets"

    signature_hash: Mapped[str] = mapped_column(String(HASH_LENGTH), unique=True)
    cpu_model: Mapped[str] = mapped_column(String(255))
    cores: Mapped[int] = mapped_column(Integer)
    isa_level: Mapped[str] = mapped_column(String(32))
    cache_sizes: Mapped[dict[str, int]] = mapped_column(JSON)
    compiler: Mapped[str] = mapped_column(String(64))
    compiler_version: Mapped[str] = mapped_column(String(64))
    peak_gflops: Mapped[float | None] = mapped_column(Double)
    memory_bandwidth_gbs: Mapped[float | None] = mapped_column(Double)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    @classmethod
    def find_by_hash(cls, session: Session, signature_hash: str) -> TargetModel | None:
        return session.scalar(select(cls).where(cls.signature_hash == signature_hash))

    def to_domain(self) -> domain.Target:
        return domain.Target(
            id=self.id,
            signature_hash=self.signature_hash,
            cpu_model=self.cpu_model,
            cores=self.cores,
            isa_level=self.isa_level,
            cache_sizes=dict(self.cache_sizes),
            compiler=self.compiler,
            compiler_version=self.compiler_version,
            peak_gflops=self.peak_gflops,
            memory_bandwidth_gbs=self.memory_bandwidth_gbs,
            created_at=self.created_at,
        )


class RecipeModel(Base):
    __tablename__ = "recipes"

    recipe_hash: Mapped[str] = mapped_column(String(HASH_LENGTH), unique=True)
    canonical_json: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    @classmethod
    def find_by_hash(cls, session: Session, recipe_hash: str) -> RecipeModel | None:
        return session.scalar(select(cls).where(cls.recipe_hash == recipe_hash))

    def to_domain(self) -> domain.Recipe:
        return domain.Recipe(
            id=self.id,
            recipe_hash=self.recipe_hash,
            canonical_json=self.canonical_json,
            created_at=self.created_at,
        )


class MeasurementModel(Base):
    __tablename__ = "measurements"
    __table_args__ = (
        Index(None, "nest_id", "target_id"),
        Index(None, "recipe_id"),
        CheckConstraint(_in("origin", ORIGINS), name="origin"),
        CheckConstraint("repetitions >= 1", name="repetitions"),
        CheckConstraint("median_time_s >= 0 AND spread_s >= 0", name="times"),
    )

    nest_id: Mapped[int] = mapped_column(ForeignKey("nests.id", ondelete="CASCADE"))
    recipe_id: Mapped[int] = mapped_column(ForeignKey("recipes.id", ondelete="CASCADE"))
    target_id: Mapped[int] = mapped_column(ForeignKey("targets.id", ondelete="CASCADE"))
    params: Mapped[dict[str, Any]] = mapped_column(JSON)
    median_time_s: Mapped[float] = mapped_column(Double)
    spread_s: Mapped[float] = mapped_column(Double)
    repetitions: Mapped[int] = mapped_column(Integer)
    speedup: Mapped[float | None] = mapped_column(Double)
    verified: Mapped[bool] = mapped_column(Boolean)
    origin: Mapped[str] = mapped_column(String(16))
    measured_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    # How far the speedup can be trusted (None for measurements from before intervals were kept).
    speedup_low: Mapped[float | None] = mapped_column(Double)
    speedup_high: Mapped[float | None] = mapped_column(Double)
    confidence: Mapped[float | None] = mapped_column(Double)
    threads: Mapped[int | None] = mapped_column(Integer)
    cpu_pressure: Mapped[float | None] = mapped_column(Double)
    loaded: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())
    # The index structure a sparse nest ran on (SparseChoice.key()); None: the harness's default one.
    structure: Mapped[str | None] = mapped_column(String(200))
    # What the recipe did in the user's whole program: "held: FIGURE" or "refused: WHY"; None: measured alone.
    program_check: Mapped[str | None] = mapped_column(String(PROGRAM_CHECK_LENGTH))

    def to_domain(self) -> domain.Measurement:
        return domain.Measurement(
            id=self.id,
            nest_id=self.nest_id,
            recipe_id=self.recipe_id,
            target_id=self.target_id,
            params=dict(self.params),
            median_time_s=self.median_time_s,
            spread_s=self.spread_s,
            repetitions=self.repetitions,
            speedup=self.speedup,
            verified=self.verified,
            origin=domain.MeasurementOrigin(self.origin),
            measured_at=self.measured_at,
            speedup_low=self.speedup_low,
            speedup_high=self.speedup_high,
            confidence=self.confidence,
            threads=self.threads,
            cpu_pressure=self.cpu_pressure,
            loaded=self.loaded,
            structure=self.structure,
            program_check=self.program_check,
        )


class TuningJobModel(Base):
    __tablename__ = "tuning_jobs"
    __table_args__ = (
        Index(None, "status", "lease_expires_at"),
        CheckConstraint(_in("status", JOB_STATUSES), name="status"),
        CheckConstraint("budget >= 0 AND progress >= 0", name="counts"),
    )

    nest_id: Mapped[int] = mapped_column(ForeignKey("nests.id", ondelete="CASCADE"))
    target_id: Mapped[int | None] = mapped_column(ForeignKey("targets.id", ondelete="SET NULL"))
    status: Mapped[str] = mapped_column(String(16))
    budget: Mapped[int] = mapped_column(Integer)
    progress: Mapped[int] = mapped_column(Integer)
    options: Mapped[dict[str, Any]] = mapped_column(JSON)
    best_recipe_id: Mapped[int | None] = mapped_column(ForeignKey("recipes.id", ondelete="SET NULL"))
    best_speedup: Mapped[float | None] = mapped_column(Double)
    error: Mapped[str | None] = mapped_column(Text)
    lease_owner: Mapped[str | None] = mapped_column(String(255))
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    attempts: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # The API key that enqueued it (a fallback job: the request's that first needed it); None: the CLI, or
    # a key since deleted. Only its key and admin keys may cancel it.
    owner_key_id: Mapped[int | None] = mapped_column(ForeignKey("api_keys.id", ondelete="SET NULL"))

    def to_domain(self) -> domain.TuningJob:
        return domain.TuningJob(
            id=self.id,
            nest_id=self.nest_id,
            target_id=self.target_id,
            status=domain.JobStatus(self.status),
            budget=self.budget,
            progress=self.progress,
            options=dict(self.options),
            best_recipe_id=self.best_recipe_id,
            best_speedup=self.best_speedup,
            error=self.error,
            lease_owner=self.lease_owner,
            lease_expires_at=self.lease_expires_at,
            attempts=self.attempts,
            created_at=self.created_at,
            updated_at=self.updated_at,
            started_at=self.started_at,
            finished_at=self.finished_at,
            owner_key_id=self.owner_key_id,
        )


class WorkerModel(Base):
    """One row per running tuning worker, refreshed by its heartbeats and removed when it stops."""

    __tablename__ = "workers"

    name: Mapped[str] = mapped_column(String(255), unique=True)
    host: Mapped[str] = mapped_column(String(255))
    pid: Mapped[int] = mapped_column(Integer)
    cpus: Mapped[str | None] = mapped_column(String(255))
    job_id: Mapped[int | None] = mapped_column(ForeignKey("tuning_jobs.id", ondelete="SET NULL"))
    started_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    last_seen_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, index=True)

    def to_domain(self) -> domain.Worker:
        return domain.Worker(name=self.name, host=self.host, pid=self.pid, cpus=self.cpus, job_id=self.job_id,
                             started_at=self.started_at, last_seen_at=self.last_seen_at)


class ApiKeyModel(Base):
    __tablename__ = "api_keys"

    name: Mapped[str] = mapped_column(String(255), unique=True)
    key_hash: Mapped[str] = mapped_column(String(HASH_LENGTH), unique=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    admin: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    @classmethod
    def find_or_raise_by_name(cls, session: Session, name: str) -> ApiKeyModel:
        row = session.scalar(select(cls).where(cls.name == name))
        if row is None:
            raise NotFoundError(f"API key {name!r} does not exist")
        return row

    def to_domain(self) -> domain.ApiKey:
        return domain.ApiKey(id=self.id, name=self.name, key_hash=self.key_hash, created_at=self.created_at,
                             admin=self.admin)
