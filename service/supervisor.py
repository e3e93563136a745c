"""Tuning workers beside the API: ``perfembed serve --workers N``.

:class:`WorkerPool` starts N ``perfembed worker --log`` processes, restarts one that exits, whatever
the reason, and stops them all with the server: SIGTERM (each finishes its trial and puts its job back
in the queue), then SIGKILL after ``grace_s``. A worker that exits soon after its start again and again
is restarted after longer and longer waits (``restart_delay_s`` doubled up to ``max_restart_delay_s``):
a user error (exit code 2: no sandbox, no free CPUs, a database that was locked for a while) may go
away, and a crash loop costs little. ``/readyz`` says "not ready" while none of the pool's workers is
alive (:func:`supervised`). Each worker also ends when the server process dies, even by SIGKILL
(:func:`exit_with_parent`), so no worker outlives its server.
"""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

USER_ERROR = 2  # the CLI's exit code for a user error
QUICK_S = 30.0  # a worker that exits within this long of its start counts as failing quickly
PR_SET_PDEATHSIG = 1
ORPHAN_GRACE_S = 30.0  # as WorkerPool's grace_s: time to finish the trial once the server is gone


def worker_command(parent_pid: int) -> list[str]:
    """``perfembed worker`` run by this interpreter, logging one line per job, bound to ``parent_pid``."""
    return [sys.executable, "-m", "service.cli", "worker", "--log", "--exit-with", str(parent_pid)]


def exit_with_parent(parent_pid: int, *, grace_s: float = ORPHAN_GRACE_S) -> None:
    """Have the kernel send this process SIGTERM when its parent dies (Linux); if the parent is
    already gone (it died before this call), stop now. Should the stop that SIGTERM starts not end the
    process within ``grace_s`` of the parent's death, a watcher thread ends it: no worker outlives its
    server, whatever its shutdown waits for."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent_pid:
        raise SystemExit(0)
    threading.Thread(target=_end_when_orphaned, args=(parent_pid, grace_s), name="exit-with-parent",
                     daemon=True).start()


def _end_when_orphaned(parent_pid: int, grace_s: float) -> None:
    while os.getppid() == parent_pid:  # a process whose parent dies is re-parented at once
        time.sleep(0.5)
    time.sleep(grace_s)
    sys.stderr.write(f"perfembed worker {os.getpid()}: its server ended {grace_s:g} s ago and it has not stopped; "
                     "ending it now (its job is taken over when the lease runs out)\n")
    sys.stderr.flush()
    os._exit(1)


def _write(line: str) -> None:
    sys.stderr.write(f"perfembed serve: {line}\n")
    sys.stderr.flush()


@dataclass
class _Slot:
    number: int
    process: subprocess.Popen[bytes] | None = None
    started: float = 0.0
    quick_failures: int = 0
    restart_at: float | None = None  # when the exited worker is started again


@dataclass
class WorkerPool:
    """``count`` worker processes, supervised from a background thread."""

    count: int
    command: Sequence[str] = field(default_factory=lambda: worker_command(os.getpid()))
    env: Mapping[str, str] | None = None
    grace_s: float = 30.0  # after SIGTERM: time to finish the current trial
    restart_delay_s: float = 2.0  # the first wait; doubled for each quick exit in a row
    max_restart_delay_s: float = 300.0
    log: Callable[[str], None] = _write
    _slots: list[_Slot] = field(default_factory=list, init=False)
    _stopping: threading.Event = field(default_factory=threading.Event, init=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False)
    _monitor: threading.Thread | None = field(default=None, init=False)

    def start(self) -> None:
        global _SUPERVISED
        if self.count <= 0:
            return
        self._slots = [_Slot(n + 1) for n in range(self.count)]
        for slot in self._slots:
            self._spawn(slot)
        self.log(f"started {self.count} tuning worker(s): pids {', '.join(map(str, self.pids()))}")
        self._monitor = threading.Thread(target=self._watch, name="worker-pool", daemon=True)
        self._monitor.start()
        _SUPERVISED = self

    def pids(self) -> list[int]:
        with self._lock:
            return [s.process.pid for s in self._slots if s.process is not None and s.process.poll() is None]

    def status(self) -> str | None:
        """None while a worker of the pool is alive, else one line: why none is and when one restarts."""
        if not self._slots or self.pids():
            return None
        waits = [s.restart_at - time.monotonic() for s in self._slots if s.restart_at is not None]
        when = f"; the next restarts in {max(0.0, min(waits)):.0f} s" if waits else ""
        return f"none of the {self.count} tuning worker(s) of this server is alive{when}"

    def stop(self) -> None:
        """SIGTERM every worker, wait up to ``grace_s``, SIGKILL the rest. A second Ctrl-C kills at once."""
        global _SUPERVISED
        if _SUPERVISED is self:
            _SUPERVISED = None
        self._stopping.set()
        if self._monitor is not None:
            self._monitor.join()
        with self._lock:
            running = [s.process for s in self._slots if s.process is not None and s.process.poll() is None]
        if not running:
            return
        self.log(f"stopping {len(running)} worker(s) (each finishes its trial and requeues its job; "
                 "Ctrl-C again to kill them)")
        for process in running:
            _signal(process, signal.SIGTERM)
        deadline = time.monotonic() + self.grace_s
        try:
            for process in running:
                try:
                    process.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    pass  # past the grace period: killed below
        except KeyboardInterrupt:
            self.log("killing the workers")
        for process in running:
            if process.poll() is None:
                _signal(process, signal.SIGKILL)
                process.wait()

    def _spawn(self, slot: _Slot) -> None:
        # A restart is spawned by the monitor thread; the worker's parent-death signal fires when that
        # thread ends, which is only in stop(), when the worker is being stopped anyway.
        env = None if self.env is None else {**os.environ, **self.env}
        with self._lock:
            slot.process = subprocess.Popen(list(self.command), env=env, stdin=subprocess.DEVNULL)
            slot.started = time.monotonic()
            slot.restart_at = None

    def _watch(self) -> None:
        """Every half second (or sooner when a restart is due): note exits, start what is due."""
        while not self._stopping.wait(self._next_wait()):
            now = time.monotonic()
            for slot in self._slots:
                process = slot.process
                if slot.restart_at is not None:
                    if now >= slot.restart_at:
                        self._spawn(slot)
                elif process is not None and process.poll() is not None:
                    self._exited(slot, process.returncode)

    def _next_wait(self) -> float:
        due = [s.restart_at - time.monotonic() for s in self._slots if s.restart_at is not None]
        return max(0.01, min([0.5, *due]))

    def _exited(self, slot: _Slot, code: int) -> None:
        """Schedule the restart: at once after a long run, else after a wait that doubles each time."""
        quick = time.monotonic() - slot.started < QUICK_S
        slot.quick_failures = slot.quick_failures + 1 if quick else 0
        delay = min(self.max_restart_delay_s, self.restart_delay_s * 2 ** max(0, slot.quick_failures - 1))
        why = "a user error (above)" if code == USER_ERROR else f"code {code}"
        self.log(f"worker {slot.number} exited with {why}; restarting it in {delay:g} s"
                 + (f" ({slot.quick_failures} quick exits in a row)" if slot.quick_failures > 1 else ""))
        slot.restart_at = time.monotonic() + delay


_SUPERVISED: WorkerPool | None = None


def supervised() -> WorkerPool | None:
    """The worker pool this process runs (``perfembed serve --workers N``), if any."""
    return _SUPERVISED


def _signal(process: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    try:
        process.send_signal(sig)
    except ProcessLookupError:
        pass  # it has already exited
