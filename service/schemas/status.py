"""Health, readiness, workers and the error body."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from service.schemas._common import Forbid


class HealthPublic(BaseModel):
    model_config = Forbid

    status: Literal["ok"]


class WorkerPublic(BaseModel):
    model_config = Forbid

    name: str = Field(description="host:pid:random, as in a running job's `worker`")
    host: str
    pid: int
    cpus: str | None = Field(description="The CPUs it is pinned to (PERFEMBED_WORKER_THREADS), null if unpinned")
    job_id: int | None = Field(description="The tuning job it runs, null when idle")
    last_seen_s: float = Field(description="Seconds since its last heartbeat")


class WorkersPublic(BaseModel):
    model_config = Forbid

    alive: int = Field(description="Workers whose last heartbeat is recent (PERFEMBED_WORKER_STALE_AFTER_S)")
    busy: int = Field(description="Live workers running a job")
    data: list[WorkerPublic]


class ReadyPublic(BaseModel):
    model_config = Forbid

    status: Literal["ready", "not ready"]
    checks: dict[str, str]
    isolation: str = Field(description="The sandbox that compiles and runs code from requests, "
                                       "e.g. \"bubblewrap\" or \"none (rlimits only)\"")
    workers: WorkersPublic | None = Field(default=None, description="The live tuning workers, from their "
                                          "heartbeats (null while the database is not ready)")
    resources: str | None = Field(default=None, description="The limits that bound a sandboxed run of a "
                                  "request, and what enforces them: a cgroup v2 per run, or rlimits per process")


class ErrorPublic(BaseModel):
    """Every 4xx and 5xx body: the error class, a message naming the problem (and line), details."""

    model_config = ConfigDict(extra="allow")

    error: str
    message: str
    detail: Any = None
    location: dict[str, Any] | None = None
