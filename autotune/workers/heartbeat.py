"""The worker's heartbeat: its row in the database, kept fresh from a background thread.

:class:`Heartbeat` keeps the worker's row (:mod:`database.repositories.workers`) fresh, idle or busy,
and removes it when the worker stops; the service counts the live rows (``/readyz``) and tells a
queued job's owner when no worker is alive.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
from typing import TYPE_CHECKING

from autotune.repeating import Repeating
from database.repositories.workers import record_heartbeat, remove_worker

if TYPE_CHECKING:
    from types import TracebackType

    from database import Store

_logger = logging.getLogger(__name__)


class Heartbeat:
    """The worker's row, refreshed every ``interval_s`` seconds while the context is open.

    Entering records the first heartbeat (a database that cannot be written fails the worker's
    start); a missed beat later is logged and retried. :meth:`set_job` records at once which job
    the worker runs (None: idle).
    """

    def __init__(self, store: Store, name: str, *, interval_s: float, cpus: str | None = None) -> None:
        self._store = store
        self.name = name
        self._cpus = cpus
        self._job_id: int | None = None
        self._lock = threading.Lock()
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

    def set_job(self, job_id: int | None) -> None:
        self._job_id = job_id
        try:
            self.beat()
        except Exception:
            _logger.warning("could not record worker %s's job", self.name, exc_info=True)

    def beat(self) -> None:
        with self._lock:  # the thread and set_job never write the row at the same time
            with self._store.session() as session:
                record_heartbeat(session, name=self.name, host=socket.gethostname(), pid=os.getpid(),
                                 cpus=self._cpus, job_id=self._job_id)

    def _beat_or_log(self) -> None:
        try:
            self.beat()
        except Exception:  # retried at the next beat; the row stays alive for a few of them
            _logger.warning("worker %s missed a heartbeat", self.name, exc_info=True)
