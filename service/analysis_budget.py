"""Analysis of a request under a wall-time budget, in worker processes that can be killed.

isl runs in C and cannot be interrupted from a Python thread, so a deadline checked between steps
does not bound one long isl call. Each analysis therefore runs in a pebble :class:`~pebble.ProcessPool`
of fresh interpreters (spawned: no state shared with the server's threads), reused from request to
request; a request over its budget gets :class:`~loopnest.errors.AnalysisTimeoutError` (422) and its
worker is killed, which is what frees the CPU (pebble starts another). At most ``workers`` analyses
run at once; a request that finds them all busy waits within its own budget. ``reserved_for_keys`` of
the workers are key holders' alone: keyless requests share the others, at most ``keyless_queue`` of
them waiting (429 beyond), so that slow keyless analyses cannot make a key holder's search wait (six
of them made a normal /v1/search wait 10-14 s, then 422). A worker's address space is limited
(``memory_mb``): a program that needs more gets a 422 naming it.

Each worker has a temporary directory of its own (its ``TMPDIR``), named after the server and the
worker: a worker killed at its budget cannot clean up after itself, so the server removes the
directories of its workers that are gone, and at start those of servers that are gone.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import re
import resource
import shutil
import signal
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import TimeoutError as FutureTimeout
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, TypeVar

from pebble import ProcessExpired, ProcessPool

from loopnest.errors import AnalysisTimeoutError, LimitExceededError, PerfembedError
from service.errors import BusyError, UnavailableError

T = TypeVar("T")
_SETTING = "PERFEMBED_ANALYSIS_TIME_LIMIT_S"
_STARTUP_S = 60.0  # longest a worker may take to start (imports), outside any budget
_TMP_PREFIX = "perfembed-analysis-"


def _start_worker(memory_mb: int | None) -> None:
    """A worker's start (pebble's initializer), before it takes any request: its own temporary
    directory, its memory limit, and the imports every analysis needs (outside any budget)."""
    # Killed at once by pebble's SIGTERM, even inside a long isl call (pebble's own handler runs only
    # between Python bytecodes, and the pool would wait 3 s before SIGKILL).
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    tmp = tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}{os.getppid()}-{os.getpid()}-")
    os.chmod(tmp, 0o711)  # the sandbox's user (nobody) passes through to the directories made inside
    os.environ["TMPDIR"] = tempfile.tempdir = tmp
    if memory_mb is not None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))
    import service.core.analysis  # noqa: F401


def _guarded(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, Any]:
    """In the worker: ("ok", result), ("error", PerfembedError) or ("crash", text), always picklable."""
    try:
        reply: tuple[str, Any] = ("ok", fn(*args, **kwargs))
    except PerfembedError as exc:
        reply = ("error", exc)
    except MemoryError:
        reply = ("error", LimitExceededError(
            "program", "analysing the program needs more memory than an analysis may take "
            "(PERFEMBED_ANALYSIS_MEMORY_LIMIT_MB); make the program smaller", setting="analysis_memory_limit_mb"))
    except BaseException as exc:  # a bug: reported to the server, which logs it
        reply = ("crash", f"{type(exc).__name__}: {exc}")
    try:
        pickle.dumps(reply)
    except Exception as exc:  # an error or result that does not pickle
        reply = ("error", PerfembedError(str(reply[1]))) if reply[0] == "error" else ("crash", repr(exc))
    return reply


def _sweep(server: int | None = None) -> None:
    """Remove the temporary directories of analysis workers that are gone: of servers that have ended
    (killed, say), and with ``server`` (this process) of its own workers that ended."""
    for path in Path(tempfile.gettempdir()).glob(f"{_TMP_PREFIX}*"):
        match = re.match(rf"{_TMP_PREFIX}(\d+)-(?:(\d+)-)?", path.name)
        if match is None or not path.is_dir() or path.is_symlink() or path.stat().st_uid != os.geteuid():
            continue
        owner, worker = int(match.group(1)), match.group(2)
        if _gone(owner) or (owner == server and worker is not None and _gone(int(worker))):
            shutil.rmtree(path, ignore_errors=True)


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False


class BudgetedRunner:
    """Runs functions in up to ``workers`` reusable processes, each call within ``limit_s`` seconds; see
    the module's description for the share of key holders and the keyless queue."""

    def __init__(self, workers: int = 2, *, reserved_for_keys: int = 0, keyless_queue: int | None = None,
                 memory_mb: int | None = None) -> None:
        _sweep()
        self._workers = workers
        self._slots = threading.BoundedSemaphore(workers)
        self._keyless_slots = max(0, workers - reserved_for_keys)
        self._keyless = threading.BoundedSemaphore(max(1, self._keyless_slots))
        self._keyless_queue = keyless_queue
        self._keyless_waiting = 0
        self._memory_mb = memory_mb
        self._pool: ProcessPool | None = None
        self._lock = threading.Lock()

    def run(self, fn: Callable[..., T], *args: Any, limit_s: float, keyless: bool = False, **kwargs: Any) -> T:
        """``fn(*args, **kwargs)`` in a worker; ``keyless``: for a request without an API key."""
        deadline = time.monotonic() + limit_s
        if keyless:
            self._enter_keyless(deadline)
        try:
            if not self._slots.acquire(timeout=max(0.0, deadline - time.monotonic())):
                raise AnalysisTimeoutError(f"the analysis waited longer than its budget of {limit_s:g} s for a "
                                           f"free worker ({_SETTING}); try again later")
            try:
                return self._call(fn, args, kwargs, limit_s)
            finally:
                self._slots.release()
        finally:
            if keyless:
                self._keyless.release()

    def _enter_keyless(self, deadline: float) -> None:
        """Take one of the keyless slots, waiting in a short queue; BusyError (429) when it is full."""
        if self._keyless_slots == 0:
            raise BusyError("this server analyses programs only for requests with an API key", retry_after=60)
        with self._lock:
            if self._keyless.acquire(blocking=False):
                return
            if self._keyless_queue is not None and self._keyless_waiting >= self._keyless_queue:
                raise BusyError("too many analyses without an API key are waiting "
                                "(PERFEMBED_ANALYSIS_QUEUE_KEYLESS); try again soon, or send a key", retry_after=5)
            self._keyless_waiting += 1
        try:
            if not self._keyless.acquire(timeout=max(0.0, deadline - time.monotonic())):
                raise AnalysisTimeoutError("the analysis waited longer than its budget for a worker free for "
                                           f"requests without an API key ({_SETTING}); try again later")
        finally:
            with self._lock:
                self._keyless_waiting -= 1

    def _call(self, fn: Callable[..., T], args: tuple, kwargs: dict, limit_s: float) -> T:
        # The budget starts when a worker takes the call (pebble's timeout): a worker's start is not the
        # request's analysis. One that does not start at all is bounded by _STARTUP_S.
        pool = self._pool_now()
        try:
            future = pool.schedule(_guarded, args=(fn, args, kwargs), timeout=limit_s)
            kind, value = future.result(timeout=_STARTUP_S + limit_s)
        except FutureTimeout:
            if not future.done():
                future.cancel()
                raise UnavailableError("an analysis worker did not start; try again") from None
            _sweep(os.getpid())  # the killed worker's temporary files
            raise AnalysisTimeoutError(f"the analysis took longer than its budget of {limit_s:g} s "
                                       f"({_SETTING}); make the program smaller or split its loop nests") from None
        except ProcessExpired:
            _sweep(os.getpid())
            raise UnavailableError("the analysis worker ended unexpectedly; try again") from None
        except (BrokenProcessPool, RuntimeError):  # its workers fail to start, or it was stopped
            self._drop(pool)
            raise UnavailableError("the analysis workers could not start; try again") from None
        if kind == "error":
            raise value
        if kind == "crash":
            raise RuntimeError(f"analysis failed in its worker: {value}")
        result: T = value
        return result

    def _pool_now(self) -> ProcessPool:
        """The pool, started on first use (its workers start with it, then replace those killed)."""
        with self._lock:
            if self._pool is None:
                self._pool = ProcessPool(max_workers=self._workers, initializer=_start_worker,
                                         initargs=(self._memory_mb,), context=multiprocessing.get_context("spawn"))
            return self._pool

    def _drop(self, pool: ProcessPool) -> None:
        """Stop a broken pool; the next call starts another."""
        with self._lock:
            if self._pool is pool:
                self._pool = None
        pool.stop()

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.stop()
            pool.join(timeout=10)
        _sweep(os.getpid())


_RUNNERS: dict[tuple[Any, ...], BudgetedRunner] = {}
_RUNNER_LOCK = threading.Lock()


def runner(workers: int = 2, **options: Any) -> BudgetedRunner:
    """The process's runner for ``workers`` and :class:`BudgetedRunner`'s options (created on first use;
    a server has one, tests with other settings get their own)."""
    config = (workers, *sorted(options.items()))
    with _RUNNER_LOCK:
        if config not in _RUNNERS:
            _RUNNERS[config] = BudgetedRunner(workers, **options)
        return _RUNNERS[config]
