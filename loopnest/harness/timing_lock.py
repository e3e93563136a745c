"""One timed run at a time on a machine.

Two perfembed processes that time at once on the same cores (``seed build --jobs 2``, several workers
on one host) slow each other down, and a variant that runs a thread per core most of all: in the seed
build of the sparse family at ``--jobs 2`` (2 cores), every parallel SpMV variant measured 0.45-0.93x
of the original while the other job was timing its own variants, and the study kept a sequential tile
at 0.99x. So every timed run of the harness (a variant's repetitions, a pair of interleaved runs, a
program comparison's pair) holds an exclusive ``flock`` on one lock file per user; compiling, legality
checks and code generation are not serialized, so several jobs still overlap their other work.

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
from contextlib import contextmanager
from pathlib import Path

_held = threading.local()  # how deep this thread is inside timed_exclusively: a nested call does not lock again


def timing_lock_path(setting: str) -> Path | None:
    """The lock file of a ``timing_lock`` setting; None for ``none``."""
    if setting == "none":
        return None
    if setting in ("", "auto"):
        return Path(tempfile.gettempdir()) / f"perfembed-timing-{os.getuid()}.lock"
    return Path(setting)


@contextmanager
def timed_exclusively(setting: str = "auto") -> Iterator[None]:
    """Hold the machine's timing lock (waiting for it) for the duration of the block."""
    path = timing_lock_path(setting)
    depth = getattr(_held, "depth", 0)
    if path is None or depth:
        _held.depth = depth + 1
        try:
            yield
        finally:
            _held.depth = depth
        return
    # O_NOFOLLOW: in a shared temporary directory, a link planted under our name is refused, not followed.
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        _held.depth = 1
        try:
            yield
        finally:
            _held.depth = 0
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
