"""A background action repeated at an interval: the worker's heartbeat, and a trial's outside a worker."""

from __future__ import annotations

import threading
from collections.abc import Callable


class Repeating:
    """Calls ``action`` every ``interval`` seconds on a daemon thread called ``name``, from :meth:`start`
    until :meth:`stop` (which waits for the thread to end) or until ``action`` returns False.

    ``action`` handles its own errors: an exception ends the thread. :attr:`interval` may change while it
    runs: the next call comes ``interval`` seconds after the change at the latest.
    """

    def __init__(self, name: str, interval: float, action: Callable[[], bool | None]) -> None:
        self._name = name
        self._interval = interval
        self._action = action
        self._changed = threading.Condition()
        self._halted = False
        self._rescheduled = False
        self._thread: threading.Thread | None = None

    @property
    def interval(self) -> float:
        return self._interval

    @interval.setter
    def interval(self, seconds: float) -> None:
        with self._changed:
            if seconds != self._interval:
                self._interval, self._rescheduled = seconds, True
                self._changed.notify_all()

    def start(self) -> None:
        self._halted = False
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        with self._changed:
            self._halted = True
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._halted or self._rescheduled, self._interval)
                if self._halted:
                    return
                if self._rescheduled:  # wait the new interval from now
                    self._rescheduled = False
                    continue
            if self._action() is False:
                return
