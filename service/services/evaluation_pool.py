"""The bounded pool that evaluation jobs run in.

At most ``size`` evaluations compile and run at once, each on a thread of the pool; up to ``queue``
more wait their turn, first come first served. A submission beyond that gets
:class:`~service.errors.BusyError`, which the app answers with 429 and a ``Retry-After`` header, so
a burst of evaluate requests never starts more sandboxed runs than the machine was sized for, and
never queues more work than it can finish.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from service.errors import BusyError


class EvaluationPool:
    """Thread-safe: :meth:`submit` admits work or refuses it at once; the pool runs what it admitted."""

    def __init__(self, *, size: int, queue: int, retry_after: int,
                 on_change: Callable[[int, int], None] | None = None,
                 on_reject: Callable[[], None] | None = None) -> None:
        if size < 1 or queue < 0:
            raise ValueError("an evaluation pool needs size >= 1 and queue >= 0")
        self.size = size
        self.queue = queue
        self.retry_after = retry_after
        self._on_change = on_change
        self._on_reject = on_reject
        self._lock = threading.Lock()
        self._running = 0
        self._waiting = 0
        self._executor = ThreadPoolExecutor(max_workers=size, thread_name_prefix="perfembed-evaluation")

    @property
    def running(self) -> int:
        return self._running

    @property
    def waiting(self) -> int:
        return self._waiting

    def submit(self, work: Callable[[], None]) -> None:
        """Run ``work`` on the pool when a slot is free; raises :class:`BusyError` when ``size``
        evaluations run and ``queue`` more wait. ``work`` must handle its own errors."""
        with self._lock:
            if self._running + self._waiting >= self.size + self.queue:
                self._reject()
            self._waiting += 1
            self._changed()
        try:
            self._executor.submit(self._run, work)
        except RuntimeError:  # shut down: the app is stopping
            with self._lock:
                self._waiting -= 1
                self._changed()
            raise BusyError("the server is shutting down; retry later", retry_after=self.retry_after) from None

    def shutdown(self) -> None:
        """Drop the waiting work and stop taking more; running work finishes on its own."""
        self._executor.shutdown(wait=False, cancel_futures=True)

    def _run(self, work: Callable[[], None]) -> None:
        with self._lock:
            self._waiting -= 1
            self._running += 1
            self._changed()
        try:
            work()
        finally:
            with self._lock:
                self._running -= 1
                self._changed()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self._running, self._waiting)

    def _reject(self) -> None:
        if self._on_reject is not None:
            self._on_reject()
        raise BusyError(f"the server is busy evaluating: all {self.size} evaluation slot(s) are busy and "
                        f"{self._waiting} evaluation(s) are waiting; retry after {self.retry_after} s, "
                        "or ask without evaluate", retry_after=self.retry_after)
