"""One timed run at a time on a machine, and no other tuning trial's work beside it.

Two perfembed processes that time at once on the same cores (``seed build --jobs 2``, several workers
on one host) slow each other down, and a variant that runs a thread per core most of all: in the seed
build of the sparse family at ``--jobs 2`` (2 cores), every parallel SpMV variant measured 0.45-0.93x
of the original while the other job was timing its own variants, and the study kept a sequential tile
at 0.99x. So every timed run of the harness (a variant's repetitions, a pair of interleaved runs, a
program comparison's pair) holds an exclusive ``flock`` on one lock file per user.

Timing alone was not enough: the other job's compiles and isl work still ran beside a timed run, and a
variant that crosses a barrier at every time step then waits for a time slice at each one. In the
2026-11-25 rebuild of the stencils with a time loop at ``--jobs 2``, the median parallel trial measured
0.11x of the original (fdtd2d's ``tile; parallelize; unroll``: 0.02x in the build, 1.63x [1.55, 1.71]
measured alone). So a tuning trial holds the lock *shared* while it samples, checks legality,
generates and compiles (:func:`working_beside_timers`), and converts that hold to exclusive for its
timed runs: a timed run starts only when no other trial is working, and trials still overlap their
other work with each other. A second lock file (``<lock>.turn``) is a turnstile that gives waiting
timed runs priority: a trial starts its work, and a timed run takes the lock, only through it, so a
job that keeps starting trials cannot keep another's timed run waiting. Outside a trial, the harness
holds it shared over its own work between its timed runs (isl, code generation, verification), and
only then: a process that holds it while it waits for a child process that times would deadlock.

``PERFEMBED_TIMING_LOCK``: ``auto`` (``perfembed-timing-<uid>.lock`` in the temporary directory),
``none`` (no lock: the caller keeps the machine to itself), or a path, e.g. on a shared ``/dev/shm``
when several users' workers share a host.
"""

from __future__ import annotations

import fcntl
import os
import tempfile
import threading
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path


def timing_lock_path(setting: str) -> Path | None:
    """The lock file of a ``timing_lock`` setting; None for ``none``."""
    if setting == "none":
        return None
    if setting in ("", "auto"):
        return Path(tempfile.gettempdir()) / f"perfembed-timing-{os.getuid()}.lock"
    return Path(setting)


def _open(path: Path) -> int:
    # O_NOFOLLOW: in a shared temporary directory, a link planted under our name is refused, not followed.
    return os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)


def _through_turnstile(path: Path, fd: int, operation: int) -> None:
    """Take ``operation`` on ``fd`` while holding the turnstile: whoever waits for the lock there (a timed
    run) holds the turnstile meanwhile, so nobody takes a new hold before it."""
    turn = _open(path.with_name(path.name + ".turn"))
    try:
        fcntl.flock(turn, fcntl.LOCK_EX)
        fcntl.flock(fd, operation)
    finally:
        os.close(turn)  # closing releases the turnstile


@dataclass
class _Hold:
    fd: int
    mode: str  # "shared" or "exclusive"


class _ThreadHolds(threading.local):
    def __init__(self) -> None:
        self.by_path: dict[Path, _Hold] = {}  # this thread's holds, by lock file


_held = _ThreadHolds()


@contextmanager
def _hold(setting: str, mode: str) -> Iterator[None]:
    path = timing_lock_path(setting)
    if path is None:
        yield
        return
    holds = _held.by_path
    hold = holds.get(path)
    if hold is not None and (hold.mode == "exclusive" or mode == "shared"):
        yield  # nested: the outer block holds what this one needs
        return
    if hold is not None:  # a trial's timed run: its own hold, converted to exclusive and back
        fcntl.flock(hold.fd, fcntl.LOCK_UN)  # never wait at the turnstile holding the lock: its holder waits for us
        _through_turnstile(path, hold.fd, fcntl.LOCK_EX)
        hold.mode = "exclusive"
        try:
            yield
        finally:
            hold.mode = "shared"
            fcntl.flock(hold.fd, fcntl.LOCK_SH)  # a downgrade: granted at once, nobody else can hold it now
        return
    fd = _open(path)
    try:
        _through_turnstile(path, fd, fcntl.LOCK_EX if mode == "exclusive" else fcntl.LOCK_SH)
        holds[path] = _Hold(fd, mode)
        try:
            yield
        finally:
            del holds[path]
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


def timed_exclusively(setting: str = "auto") -> AbstractContextManager[None]:
    """Hold the machine's timing lock exclusively (waiting for it) for the duration of the block."""
    return _hold(setting, "exclusive")


def working_beside_timers(setting: str = "auto") -> AbstractContextManager[None]:
    """Hold the lock shared for the block (one tuning trial's sampling, legality check, code generation
    and compile): other processes' timed runs wait until it ends; its own timed runs inside convert it."""
    return _hold(setting, "shared")
