"""Evaluation jobs: an evaluating suggestions request runs in the background and is polled.

A request that compiles and times code takes seconds to minutes, so the API answers it with 202 and a
job to poll (``/v1/evaluation-jobs/{id}``), like a tuning job. Unlike tuning jobs, which live in the
database and are run by workers, an evaluation job runs in the API process, on its
:class:`~service.services.evaluation_pool.EvaluationPool`, under the per-request limits, and lives in memory: its
answer is kept ``keep_s`` seconds after it ends (the client polls it within that), and a restart
forgets it. Job ids are random, so one client cannot read another's answer by counting.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from cachetools import LRUCache, TTLCache

from database.domain import ApiKey
from database.errors import NotFoundError, StorageError, public_dict
from loopnest.errors import PerfembedError
from loopnest.harness.progress import Progress, ProgressFn
from service.access import check_owner
from service.core import ProgramSource
from service.errors import status_of
from service.services.evaluation_pool import EvaluationPool

_logger = logging.getLogger("perfembed.service")

Work = Callable[[ProgressFn], dict[str, Any]]
_KEPT = 10_000  # ended jobs kept at most (the oldest go first): a bound on memory, far above a normal hour
PROGRAMS_KEPT_BYTES = 64 * 1024 * 1024  # the programs kept for the jobs' tuned files, all together


def program_bytes(program: ProgramSource) -> int:
    """About what a kept program holds: its text and its other files."""
    return len(program.source) + sum(map(len, program.headers.values())) + sum(map(len, program.files.values()))


def _now() -> datetime:
    return datetime.now(UTC)


@dataclass
class EvaluationJob:
    """One evaluation: queued, running (with its latest progress), then done (``result``) or failed
    (``error``: the error body the request would have got, with its HTTP ``status``)."""

    id: str
    owner_key_id: int | None = None  # the API key that started it: only it, or an admin key, reads it
    status: str = "queued"
    progress: Progress | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    created_at: datetime = field(default_factory=_now)
    started_at: datetime | None = None
    finished_at: datetime | None = None


class EvaluationJobs:
    """The API process's evaluation jobs, run on ``pool``; thread-safe."""

    def __init__(self, pool: EvaluationPool, *, keep_s: float) -> None:
        self.pool = pool
        self.keep_s = keep_s
        self._lock = threading.Lock()
        self._open: dict[str, EvaluationJob] = {}  # queued or running: kept until they end
        # Ended jobs, each kept keep_s from its end (at most the newest _KEPT).
        self._ended: TTLCache[str, EvaluationJob] = TTLCache(maxsize=_KEPT, ttl=keep_s, timer=time.monotonic)
        # The programs the jobs evaluate, for their tuned files: the most recently used, PROGRAMS_KEPT_BYTES of
        # them at most (10,000 jobs of 2 MB programs would be 20 GB).
        self._programs: LRUCache[str, ProgramSource] = LRUCache(maxsize=PROGRAMS_KEPT_BYTES, getsizeof=program_bytes)

    def submit(self, work: Work, *, owner_key_id: int | None = None,
               program: ProgramSource | None = None) -> EvaluationJob:
        """Queue ``work(progress)`` (it returns the answer) on ``program`` for the key ``owner_key_id``; raises
        :class:`BusyError` when the pool is full."""
        job = EvaluationJob(id=secrets.token_hex(16), owner_key_id=owner_key_id)
        with self._lock:
            self._open[job.id] = job
            if program is not None and program_bytes(program) <= PROGRAMS_KEPT_BYTES:
                self._programs[job.id] = program
        try:
            self.pool.submit(lambda: self._run(job, work))
        except PerfembedError:
            with self._lock:
                del self._open[job.id]
            raise
        return job

    def get(self, job_id: str) -> EvaluationJob:
        """The job; :class:`NotFoundError` (404) for an unknown or expired id."""
        with self._lock:
            job = self._open.get(job_id) or self._ended.get(job_id)
        if job is None:
            raise NotFoundError(f"no evaluation job {job_id!r} on this server: it never existed, or it ended "
                                f"over {self.keep_s:g} s ago, or the server restarted since")
        return job

    def program(self, job: EvaluationJob) -> ProgramSource | None:
        """The program ``job`` evaluates, while the server keeps it (None after :data:`PROGRAMS_KEPT_BYTES` of
        newer ones pushed it out)."""
        with self._lock:
            return self._programs.get(job.id)

    def owned(self, job_id: str, key: ApiKey) -> EvaluationJob:
        """The job, if ``key`` started it or is an admin key (:class:`ForbiddenError` otherwise)."""
        job = self.get(job_id)
        check_owner(job.owner_key_id, key, what=f"evaluation job {job_id}")
        return job

    def public(self, job: EvaluationJob) -> dict[str, Any]:
        """The job as :class:`~service.schemas.EvaluationJobPublic`."""
        with self._lock:
            ahead = sum(1 for j in self._open.values() if j.status == "queued" and j.created_at < job.created_at)
            return {"id": job.id, "status": job.status,
                    "progress": None if job.progress is None else job.progress.to_dict(),
                    "queue_position": ahead + 1 if job.status == "queued" else None,
                    "result": job.result, "error": job.error, "created_at": job.created_at,
                    "started_at": job.started_at, "finished_at": job.finished_at}

    def _run(self, job: EvaluationJob, work: Work) -> None:
        def report(progress: Progress) -> None:
            with self._lock:
                job.progress = progress

        with self._lock:
            job.status, job.started_at = "running", _now()
        try:
            result, error = work(report), None
        except PerfembedError as exc:
            result, error = None, _error_body(exc)
        except Exception as exc:
            _logger.exception("internal error in evaluation job %s", job.id, exc_info=exc)
            result, error = None, {"error": "InternalError", "status": 500,
                                   "message": f"internal error ({type(exc).__name__}); this is a bug in "
                                              "perfembed, see the server log"}
        with self._lock:
            job.result, job.error = result, error
            job.status = "done" if error is None else "failed"
            job.finished_at = _now()
            self._ended[job.id] = self._open.pop(job.id)


def _error_body(exc: PerfembedError) -> dict[str, Any]:
    """The body the request would have been answered with, and its status (as the app's handler does:
    a storage error shows its public part only, the whole goes to the log)."""
    if isinstance(exc, StorageError):
        _logger.warning("database error in an evaluation job: %s", exc, exc_info=exc)
        return {**public_dict(exc), "status": status_of(exc)}
    return {**exc.to_dict(), "status": status_of(exc)}
