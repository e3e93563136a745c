"""``perfembed worker`` on this machine: a tuning worker on the settings' database, pinned to CPUs of its
own when ``PERFEMBED_WORKER_THREADS`` asks for it, that claims queued jobs until it is told to stop."""

from __future__ import annotations

import threading
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol

from autotune.config import get_autotune_settings
from autotune.workers.cpu_slots import claim_cpus, pin_to
from database import get_store


class WorkerDisplay(Protocol):
    """What the worker shows: a job starts, a trial ends, a job ends."""

    def on_job(self, job: Any) -> None: ...

    def on_trial(self, job: Any, update: Any) -> None: ...

    def on_outcome(self, outcome: Any) -> None: ...


@dataclass(frozen=True)
class LocalWorker:
    """``perfembed worker``'s options: its name (None: host:pid), whether it stops when the queue is empty,
    after how many jobs, its lease on a job and how often it looks at an empty queue (seconds)."""

    worker_id: str | None = None
    once: bool = False
    max_jobs: int | None = None
    lease_seconds: float = 120.0
    poll_seconds: float = 5.0


def run_local_worker(worker: LocalWorker, *, stop: threading.Event,
                     display: Callable[[], AbstractContextManager[WorkerDisplay]],
                     on_pinned: Callable[[str], object]) -> Any:
    """Run jobs until the queue is empty (``once``), ``max_jobs`` are done, or ``stop`` is set; its report.
    A worker pinned to CPUs says so (``on_pinned``) and measures with that many threads. ``display`` is
    entered once the worker is pinned (a progress display starts a thread, which must inherit the pinning)."""
    import optuna  # lazy: Optuna adds 52 ms (python -X importtime) to every `perfembed` start

    from autotune.workers.worker import WorkerOptions, run_worker

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    settings = get_autotune_settings()
    store = get_store(settings.resolved_database_url, create=True)
    slot = claim_cpus(settings)
    try:
        if slot is not None:
            pin_to(slot)  # before any thread starts: every thread and child inherits it
            settings = settings.model_copy(update={"threads": len(slot.cpus)})
            on_pinned(f"worker pinned to CPUs {slot.describe()}, {len(slot.cpus)} thread(s) per measurement")
        options = WorkerOptions(worker_id=worker.worker_id, once=worker.once, max_jobs=worker.max_jobs,
                                lease_seconds=worker.lease_seconds, poll_seconds=worker.poll_seconds,
                                cpus=slot.describe() if slot else None)
        with display() as shown:
            return run_worker(store, options, settings=settings, stop=stop, on_job=shown.on_job,
                              on_trial=shown.on_trial, on_outcome=shown.on_outcome)
    finally:
        if slot is not None:
            slot.release()
