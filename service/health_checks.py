"""``/readyz`` without waiting behind work: its checks run in a thread of their own, never in the request
thread pool, one run at a time (concurrent probes share it, and a result is reused for a second), within
a few seconds (past them, "not ready" says the checks did not finish).

Besides the database, the index and the live workers (:func:`service.services.readiness.readiness`), the
service is not ready while none of the tuning workers it supervises is alive (``perfembed serve
--workers N``, :func:`service.supervisor.supervised`) or while a program cannot be preprocessed here
(:func:`loopnest.frontend.cpp_check.preprocessor_problem`); ``resources`` says which limits bound a
sandboxed run (a cgroup v2 per run, or rlimits).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from database.session import reading_only
from loopnest.frontend.cpp_check import preprocessor_problem
from loopnest.harness.sandbox import Limits, resource_limits
from service.config import ServiceSettings
from service.supervisor import supervised

Report = dict[str, Any]


def extra_checks(settings: ServiceSettings, checks: dict[str, str]) -> bool:
    """Add the supervised workers' and the preprocessor's checks; whether both pass."""
    ready = True
    pool = supervised()
    if pool is not None:
        problem = pool.status()
        checks["supervised workers"] = problem or f"ok: {len(pool.pids())} of {pool.count} alive"
        ready = problem is None
    problem = preprocessor_problem(settings.sandbox)
    checks["preprocessor"] = problem or "ok"
    return ready and problem is None


def resources(settings: ServiceSettings) -> str:
    return resource_limits(Limits.from_settings(settings.for_evaluation()))


class ReadinessProbe:
    """Runs ``check`` (blocking: database queries) in its own thread: one run at a time, shared by the
    probes that come meanwhile, reused for ``max_age_s``; None past ``timeout_s``."""

    def __init__(self, check: Callable[[], Report], *, max_age_s: float = 1.0, timeout_s: float = 5.0) -> None:
        self._check = check
        self._max_age_s = max_age_s
        self._timeout_s = timeout_s
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="perfembed-readyz")
        self._running: asyncio.Future[Report] | None = None
        self._last: tuple[float, Report] | None = None

    async def report(self) -> Report | None:
        if self._last is not None and time.monotonic() - self._last[0] < self._max_age_s:
            return self._last[1]
        if self._running is None or self._running.done():
            self._running = asyncio.get_running_loop().run_in_executor(self._executor, self._run)
        try:
            result = await asyncio.wait_for(asyncio.shield(self._running), self._timeout_s)
        except TimeoutError:
            return None
        self._last = (time.monotonic(), result)
        return result

    def _run(self) -> Report:
        with reading_only():
            return self._check()

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
