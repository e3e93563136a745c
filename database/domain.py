"""Frozen domain objects returned by the repositories, and the hashing rules behind them.

Repositories never hand out live ORM rows: a row is copied into one of these dataclasses while
its session is open, so callers can keep, compare and pickle the result after the session ends.
This module imports no SQLAlchemy, so the service layer can use it without loading the ORM.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, TypedDict, Unpack

JsonValue = Any
"""A value made of dicts, lists, strings, numbers, booleans and None."""


def utcnow() -> datetime:
    """The time as the database records it (timezone-aware UTC): leases and heartbeats are compared to it."""
    return datetime.now(UTC)


class JobStatus(StrEnum):
    """Life cycle of a tuning job: queued -> running -> done | failed | cancelled."""

    QUEUED = "queued"
    RUNNING = "running"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"

    @property
    def is_terminal(self) -> bool:
        return self in (JobStatus.DONE, JobStatus.FAILED, JobStatus.CANCELLED)


class MeasurementOrigin(StrEnum):
    """Who produced a measurement."""

    AUTOTUNE = "autotune"
    TRANSFER = "transfer"
    MANUAL = "manual"


# --- hashing rules (they define identity, so changing them needs a data migration) -------------


def canonical_json(value: JsonValue) -> str:
    """Serialise ``value`` so that equal JSON values give equal strings (sorted keys, no spaces)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def source_hash(source: str) -> str:
    """Identity of a program: the SHA-256 of its text with line endings normalised to ``\\n``."""
    return sha256_hex(source.replace("\r\n", "\n").replace("\r", "\n"))


def recipe_hash(steps: JsonValue) -> str:
    """Identity of a recipe: the SHA-256 of its canonical JSON."""
    return sha256_hex(canonical_json(steps))


class TargetIdentity(TypedDict):
    """What identifies a machine (:func:`target_signature`, ``get_or_create_target``). The measured
    peaks are left out: they vary from run to run."""

    cpu_model: str
    cores: int
    isa_level: str
    cache_sizes: Mapping[str, int]
    compiler: str
    compiler_version: str


def target_signature(**identity: Unpack[TargetIdentity]) -> str:
    """Identity of a machine: the SHA-256 of its :class:`TargetIdentity` (those fields only) as canonical JSON."""
    given: Mapping[str, JsonValue] = identity
    fields = {name: given[name] for name in TargetIdentity.__annotations__}
    return sha256_hex(canonical_json({**fields, "cache_sizes": dict(identity["cache_sizes"])}))


def api_key_hash(key: str) -> str:
    """Only this hash of an API key is stored; the key itself is shown once, at creation."""
    return sha256_hex(key)


# --- records ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Program:
    """A stored C source, by its hash, with the name it was given."""

    id: int
    source_hash: str
    language: str
    name: str
    source: str = field(repr=False)
    created_at: datetime
    # Sent through the API with a key: its source belongs to the keys that sent it (program_owners).
    private: bool = False


@dataclass(frozen=True, slots=True)
class Nest:
    """A stored loop nest of a program: its index, normalized description and static features."""

    id: int
    program_id: int
    index: int
    normalized: JsonValue = field(repr=False)
    static_features: Mapping[str, float] = field(repr=False)
    dynamic_features: Mapping[str, float] = field(repr=False)
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Target:
    """A machine and compiler that measurements were taken on, by signature."""

    id: int
    signature_hash: str
    cpu_model: str
    cores: int
    isa_level: str
    cache_sizes: Mapping[str, int]
    compiler: str
    compiler_version: str
    peak_gflops: float | None
    memory_bandwidth_gbs: float | None
    created_at: datetime


@dataclass(frozen=True, slots=True)
class Recipe:
    """A stored recipe (its steps, canonical JSON and hash), shared by every nest it was measured on."""

    id: int
    recipe_hash: str
    canonical_json: str
    created_at: datetime

    @property
    def steps(self) -> JsonValue:
        return json.loads(self.canonical_json)


@dataclass(frozen=True, slots=True)
class Measurement:
    """One timed, possibly verified run of a recipe on a nest, a target and parameter values."""

    id: int
    nest_id: int
    recipe_id: int
    target_id: int
    params: Mapping[str, JsonValue]
    median_time_s: float
    spread_s: float
    repetitions: int
    speedup: float | None
    verified: bool
    origin: MeasurementOrigin
    measured_at: datetime
    speedup_low: float | None = None  # the speedup's interval at ``confidence``
    speedup_high: float | None = None
    confidence: float | None = None
    threads: int | None = None
    cpu_pressure: float | None = None  # share of the time some task waited for a CPU
    loaded: bool = False  # taken under load: not a clean result
    structure: str | None = None  # a sparse nest's index structure (SparseChoice.key()); None: the default
    # The recipe in the user's whole program: "held: FIGURE" or "refused: WHY"; None: measured alone.
    program_check: str | None = None

    @property
    def refused_in_program(self) -> bool:
        return bool(self.program_check and self.program_check.startswith("refused"))


@dataclass(frozen=True, slots=True)
class MeasurementIn:
    """A measurement to record (:func:`database.repositories.add_measurement`), as its writer built it.

    ``params`` are the nest's parameter values (``{"N": 1024}``), ``speedup`` is over the
    untransformed baseline, ``interval`` its confidence interval at ``confidence`` where it was
    re-measured in paired runs; ``loaded`` flags a measurement taken on a busy machine;
    ``structure`` names the index structure a sparse nest ran on (None: the harness's default one);
    ``measured_at`` defaults to the time it is stored.
    """

    nest_id: int
    recipe_id: int
    target_id: int
    median_time_s: float
    spread_s: float
    repetitions: int
    verified: bool
    origin: MeasurementOrigin | str
    params: Mapping[str, Any] | None = None
    speedup: float | None = None
    measured_at: datetime | None = None
    interval: tuple[float, float] | None = None
    confidence: float | None = None
    threads: int | None = None
    cpu_pressure: float | None = None
    loaded: bool = False
    structure: str | None = None


@dataclass(frozen=True, slots=True)
class RankedRecipe:
    """A recipe together with its best measurement for one nest on one target."""

    recipe: Recipe
    measurement: Measurement


@dataclass(frozen=True, slots=True)
class TuningJob:
    """A queued or running tuning job: its nest, budget, options, lease and progress."""

    id: int
    nest_id: int
    target_id: int | None
    status: JobStatus
    budget: int
    progress: int
    options: Mapping[str, JsonValue]
    best_recipe_id: int | None
    best_speedup: float | None
    error: str | None
    lease_owner: str | None
    lease_expires_at: datetime | None
    attempts: int
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    owner_key_id: int | None = None  # the API key that enqueued it (None: the CLI, or a key since deleted)


@dataclass(frozen=True, slots=True)
class Worker:
    """A tuning worker as its last heartbeat left it; alive while ``last_seen_at`` is recent."""

    name: str
    host: str
    pid: int
    cpus: str | None  # the CPUs it is pinned to ("0-1"), None when unpinned
    job_id: int | None  # the job it is running
    started_at: datetime
    last_seen_at: datetime


@dataclass(frozen=True, slots=True)
class EmbeddingModel:
    """A fitted embedding model; ``fitted_state`` is None when it was listed without its blob."""

    id: int
    version: str
    hyper_parameters: Mapping[str, JsonValue]
    quality_metrics: Mapping[str, JsonValue]
    fitted_state: bytes | None = field(repr=False)
    created_at: datetime


@dataclass(frozen=True, slots=True)
class ApiKey:
    """A stored API key: its name and hash (the key itself is shown once, when created)."""

    id: int
    name: str
    key_hash: str = field(repr=False)
    created_at: datetime
    admin: bool = False  # acts on every key's jobs and reads every source
