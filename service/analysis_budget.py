"""Analysis of a request under a wall-time budget, in worker processes that can be killed.

isl runs in C and cannot be interrupted from a Python thread, so a deadline checked between steps
does not bound one long isl call. Each analysis therefore runs in a separate process (a fresh
interpreter: no state shared with the server's threads), kept for the next request; a request over
its budget gets :class:`~loopnest.errors.AnalysisTimeoutError` (422) and its worker is killed, which is what
frees the CPU. At most ``workers`` analyses run at once; a request that finds them all busy waits
within its own budget. ``reserved_for_keys`` of the workers are key holders' alone: keyless requests
share the others, at most ``keyless_queue`` of them waiting (429 beyond), so that slow keyless analyses
cannot make a key holder's search wait (six of them made a normal /v1/search wait 10-14 s, then 422).
A worker's address space is limited (``memory_mb``): a program that needs more gets a 422 naming it.

Each worker has a temporary directory of its own (its ``TMPDIR``), made and removed by the server: a
worker killed at its budget cannot clean up after itself, so the server does, and at start it removes
those of servers that are gone.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import re
import resource
import select
import shutil
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, TypeVar

from loopnest.errors import AnalysisTimeoutError, LimitExceededError, PerfembedError
from service.errors import BusyError, UnavailableError

T = TypeVar("T")
_SETTING = "PERFEMBED_ANALYSIS_TIME_LIMIT_S"


def _send(stream: IO[bytes], value: object) -> None:
    data = pickle.dumps(value)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def _recv(stream: IO[bytes]) -> Any:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError("the other end closed the pipe")
    (size,) = struct.unpack("<Q", head)
    return pickle.loads(stream.read(size))  # noqa: S301  our own worker's reply


def _serve(requests: IO[bytes], replies: IO[bytes]) -> None:
    """A worker: call what it is sent and send back ("ok", result) or ("error", PerfembedError)."""
    while True:
        try:
            fn, args, kwargs = _recv(requests)
        except EOFError:
            return
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
        _send(replies, reply)


_STARTUP_S = 60.0  # longest a worker may take to start (imports), outside any budget
_TMP_PREFIX = "perfembed-analysis-"


def _sweep_orphans() -> None:
    """Remove the temporary directories of analysis workers whose server has ended (killed, say)."""
    for path in Path(tempfile.gettempdir()).glob(f"{_TMP_PREFIX}*"):
        match = re.match(rf"{_TMP_PREFIX}(\d+)-", path.name)
        if match is None or not path.is_dir() or path.is_symlink() or path.stat().st_uid != os.geteuid():
            continue
        try:
            os.kill(int(match.group(1)), 0)
        except ProcessLookupError:
            shutil.rmtree(path, ignore_errors=True)
        except PermissionError:
            continue


class _Worker:
    """``python -m service.analysis_budget``: a fresh interpreter (no fork of the server's threads, no
    re-import of the server's main module), talking length-prefixed pickles over its stdin and stdout."""

    def __init__(self, memory_mb: int | None = None) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix=f"{_TMP_PREFIX}{os.getpid()}-"))
        self.tmp.chmod(0o711)  # the sandbox's user (nobody) passes through to the directories made inside
        self.process = subprocess.Popen([sys.executable, "-m", "service.analysis_budget"],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        cwd=str(Path(__file__).resolve().parents[1]),
                                        env={**os.environ, "TMPDIR": str(self.tmp)},
                                        preexec_fn=None if memory_mb is None else lambda: _limit_memory(memory_mb))
        assert self.process.stdin is not None and self.process.stdout is not None
        self.requests: IO[bytes] = self.process.stdin
        self.replies: IO[bytes] = self.process.stdout
        # Start-up (an interpreter, islpy, the frontend) is not the request's analysis: wait for the
        # worker to say it is ready before any budget starts.
        ready = self.wait_reply(_STARTUP_S) and _recv(self.replies) == ("ready", None)
        if not ready:
            self.kill()
            raise UnavailableError("an analysis worker did not start; try again")

    def alive(self) -> bool:
        return self.process.poll() is None

    def wait_reply(self, timeout: float) -> bool:
        return bool(select.select([self.replies], [], [], max(timeout, 0.0))[0])

    def kill(self) -> None:
        """End the worker and remove what it left in its temporary directory."""
        self.process.kill()
        self.process.wait(timeout=5)
        for stream in (self.requests, self.replies):
            with contextlib.suppress(OSError):
                stream.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def _limit_memory(memory_mb: int) -> None:
    limit = memory_mb << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


class BudgetedRunner:
    """Runs functions in up to ``workers`` reusable processes, each call within ``limit_s`` seconds; see
    the module's description for the share of key holders and the keyless queue."""

    def __init__(self, workers: int = 2, *, reserved_for_keys: int = 0, keyless_queue: int | None = None,
                 memory_mb: int | None = None) -> None:
        _sweep_orphans()
        self._slots = threading.BoundedSemaphore(workers)
        self._keyless_slots = max(0, workers - reserved_for_keys)
        self._keyless = threading.BoundedSemaphore(max(1, self._keyless_slots))
        self._keyless_queue = keyless_queue
        self._keyless_waiting = 0
        self._memory_mb = memory_mb
        self._idle: list[_Worker] = []
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
        with self._lock:
            worker = self._idle.pop() if self._idle else None
        if worker is not None and not worker.alive():
            worker.kill()
            worker = None
        if worker is None:
            worker = _Worker(self._memory_mb)
        deadline = time.monotonic() + limit_s
        try:
            _send(worker.requests, (fn, args, kwargs))
            ready = worker.wait_reply(deadline - time.monotonic())
            reply: tuple[str, Any] = _recv(worker.replies) if ready else ("timeout", None)
            kind, value = reply
        except (EOFError, OSError, pickle.UnpicklingError):
            kind, value = "died", None
        if kind in ("timeout", "died"):
            worker.kill()
            self._replace()
            if kind == "timeout":
                raise AnalysisTimeoutError(f"the analysis took longer than its budget of {limit_s:g} s "
                                           f"({_SETTING}); make the program smaller or split its loop nests")
            raise UnavailableError("the analysis worker ended unexpectedly; try again")
        with self._lock:
            self._idle.append(worker)
        if kind == "error":
            raise value
        if kind == "crash":
            raise RuntimeError(f"analysis failed in its worker: {value}")
        return value

    def _replace(self) -> None:
        """Start a worker in the background for the one killed, so that the next request does not wait
        seconds for an interpreter to start (a key holder's search behind a keyless bomb did)."""
        def start() -> None:
            try:
                worker = _Worker(self._memory_mb)
            except UnavailableError:
                return
            with self._lock:
                self._idle.append(worker)

        threading.Thread(target=start, name="analysis-worker-start", daemon=True).start()

    def close(self) -> None:
        with self._lock:
            workers, self._idle = self._idle, []
        for worker in workers:
            worker.kill()


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


def _main() -> None:
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything the analysis prints goes to stderr, never into the reply pipe
    # Here, not at the top: what every analysis needs, loaded in the worker process after its stdout
    # is redirected and before it says "ready"; service.services imports this module (a cycle at the top).
    import embeddings.features  # noqa: F401
    import service.services  # noqa: F401

    _send(replies, ("ready", None))
    _serve(sys.stdin.buffer, replies)


if __name__ == "__main__":
    _main()
