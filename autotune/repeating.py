"""A background action repeated at an interval: the trial heartbeat, the job lease, the worker's row."""

from __future__ import annotations

import threading
from collections.abc import Callable


class Repeating:
    """Calls ``action`` every ``interval`` seconds on a daemon thread called ``name``, from :meth:`start`
    until :meth:`stop` (which waits for the thread to end) or until ``action`` returns False.

    ``action`` handles its own errors: an exception ends the thread.
    """

    def __init__(self, name: str, interval: float, action: Callable[[], bool | None]) -> None:
        self._name = name
        self._interval = interval
        self._action = action
        self._halt = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._halt.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self) -> None:
        while not self._halt.wait(self._interval):
            if self._action() is False:
                return
