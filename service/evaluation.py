"""The bounded pool that evaluating requests go through.

At most ``size`` requests compile and run at once; up to ``queue`` more wait (each at most
``timeout`` seconds) for a slot. Anything beyond gets :class:`~service.errors.BusyError`, which
the app answers with 429 and a ``Retry-After`` header, so a burst of evaluate requests never
starts more sandboxed runs than the machine was sized for.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from service.errors import BusyError


class EvaluationPool:
    """Thread-safe counting gate with a bounded, time-limited queue."""

    def __init__(self, *, size: int, queue: int, timeout: float, retry_after: int,
                 on_change: Callable[[int, int], None] | None = None,
                 on_reject: Callable[[], None] | None = None) -> None:
        if size < 1 or queue < 0 or timeout < 0:
            raise ValueError("an evaluation pool needs size >= 1, queue >= 0 and timeout >= 0")
        self.size = size
        self.queue = queue
        self.timeout = timeout
        self.retry_after = retry_after
        self._on_change = on_change
        self._on_reject = on_reject
        self._cond = threading.Condition()
        self._running = 0
        self._waiting = 0

    @property
    def running(self) -> int:
        return self._running

    @property
    def waiting(self) -> int:
        return self._waiting

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one evaluation slot for the ``with`` block; raises :class:`BusyError` if none comes."""
        self._acquire()
        try:
            yield
        finally:
            with self._cond:
                self._running -= 1
                self._changed()
                self._cond.notify()

    def _acquire(self) -> None:
        with self._cond:
            if self._running < self.size and self._waiting == 0:
                self._running += 1
                self._changed()
                return
            if self._waiting >= self.queue:
                self._reject(f"all {self.size} evaluation slot(s) are busy and {self._waiting} request(s) "
                             "are waiting")
            self._waiting += 1
            self._changed()
            deadline = time.monotonic() + self.timeout
            try:
                while self._running >= self.size:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        self._reject(f"no evaluation slot became free within {self.timeout:g} s")
                    self._cond.wait(left)
            finally:
                self._waiting -= 1
                self._changed()
            self._running += 1
            self._changed()

    def _changed(self) -> None:
        if self._on_change is not None:
            self._on_change(self._running, self._waiting)

    def _reject(self, why: str) -> None:
        if self._on_reject is not None:
            self._on_reject()
        raise BusyError(f"the server is busy evaluating: {why}; retry after {self.retry_after} s, "
                        "or ask without evaluate", retry_after=self.retry_after)
