"""The worker's one heartbeat: a background thread whose every beat refreshes the worker's row, renews
the lease of the job it runs and records the Optuna heartbeat of the trial it evaluates.

The three tell different readers that the worker is alive: the service counts the live rows (``/readyz``)
and tells a queued job's owner when no worker is alive; a job whose lease expires is claimed again
(:mod:`database.repositories.jobs`); a running trial whose heartbeat goes stale is failed by the study's
next worker (:func:`~autotune.search.study_storage.fail_stale`). One thread writes all three, so a worker
that stalls goes silent for all of them at once.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from autotune.repeating import Repeating
from autotune.search.study_storage import record_trial_heartbeat
from database.repositories.jobs import LeaseLostError, heartbeat_job
from database.repositories.workers import record_heartbeat, remove_worker

if TYPE_CHECKING:
    from types import TracebackType

    from optuna.storages import RDBStorage

    from database import Store

_logger = logging.getLogger(__name__)

MIN_INTERVAL_S = 0.05  # a test's lease of a fraction of a second still gets a few beats, not a busy loop


@dataclass
class JobLease:
    """The claim on the job a :class:`Heartbeat` renews: ``lost`` is set once it is gone (the job was
    cancelled, or this worker stalled and another took it over), with ``error`` saying why."""

    job_id: int
    seconds: float
    lost: threading.Event = field(default_factory=threading.Event)
    error: str | None = None


@dataclass(frozen=True)
class _Trial:
    storage: RDBStorage
    trial_id: int
    interval_s: float


class Heartbeat:
    """The worker's row, its job's lease and its trial's heartbeat, written while the context is open.

    A beat comes every ``interval_s`` seconds, more often while a job or a trial needs it (a third of the
    lease, the trial's heartbeat interval). Entering records the first beat (a database that cannot be
    written fails the worker's start); a missed beat later is logged and retried. :meth:`running` holds
    a job's lease; :meth:`trial_started` and :meth:`trial_ended` make it the tuner's
    :class:`~autotune.search.study_storage.TrialHeartbeat`.
    """

    def __init__(self, store: Store, name: str, *, interval_s: float, cpus: str | None = None) -> None:
        self._store = store
        self.name = name
        self._cpus = cpus
        self._interval_s = interval_s
        self._lease: JobLease | None = None
        self._trial: _Trial | None = None
        self._lock = threading.RLock()  # one beat at a time; a new job or trial waits for the beat in progress
        self._repeat = Repeating(f"heartbeat-{name}", interval_s, self._beat_or_log)

    def __enter__(self) -> Heartbeat:
        self.beat()
        self._repeat.start()
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self._repeat.stop()
        try:
            with self._store.session() as session:
                remove_worker(session, name=self.name)
        except Exception:  # the row goes stale on its own; the worker's real outcome matters more
            _logger.warning("could not remove worker %s from the workers table", self.name, exc_info=True)

    @contextlib.contextmanager
    def running(self, job_id: int, lease_seconds: float) -> Iterator[JobLease]:
        """Renew the lease of ``job_id`` (claimed for ``lease_seconds``) and show the job on the worker's
        row until the block ends; then the row says idle again."""
        lease = JobLease(job_id, lease_seconds)
        with self._lock:
            self._lease = lease
            self._reschedule()
            self._beat_or_log()
        try:
            yield lease
        finally:
            with self._lock:
                self._lease = self._trial = None
                self._reschedule()
                self._beat_or_log()

    def trial_started(self, storage: RDBStorage, trial_id: int, interval_s: float) -> None:
        """Record the trial's heartbeat now and at every beat until :meth:`trial_ended`."""
        with self._lock:
            self._trial = _Trial(storage, trial_id, interval_s)
            self._reschedule()
        record_trial_heartbeat(storage, trial_id)

    def trial_ended(self) -> None:
        with self._lock:
            self._trial = None
            self._reschedule()

    def beat(self) -> None:
        """One beat: the row (raises when the database refuses it), then the lease and the trial."""
        with self._lock:
            lease, trial = self._lease, self._trial
            with self._store.session() as session:
                record_heartbeat(session, name=self.name, host=socket.gethostname(), pid=os.getpid(),
                                 cpus=self._cpus, job_id=None if lease is None else lease.job_id)
            if lease is not None and not lease.lost.is_set():
                self._renew(lease)
            if trial is not None:
                record_trial_heartbeat(trial.storage, trial.trial_id)

    def _renew(self, lease: JobLease) -> None:
        try:
            with self._store.session() as session:
                heartbeat_job(session, job_id=lease.job_id, worker_id=self.name, lease_seconds=lease.seconds)
        except LeaseLostError as exc:
            lease.error = str(exc)
            lease.lost.set()
        except Exception:  # a missed renewal is retried at the next beat; the lease has two more to go
            _logger.warning("could not renew the lease of job %d", lease.job_id, exc_info=True)

    def _reschedule(self) -> None:
        needs = [self._interval_s]
        if self._lease is not None:
            needs.append(self._lease.seconds / 3)
        if self._trial is not None:
            needs.append(self._trial.interval_s)
        self._repeat.interval = max(min(needs), MIN_INTERVAL_S)

    def _beat_or_log(self) -> None:
        try:
            self.beat()
        except Exception:  # retried at the next beat; the row stays alive for a few of them
            _logger.warning("worker %s missed a heartbeat", self.name, exc_info=True)
