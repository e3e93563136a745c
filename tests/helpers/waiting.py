"""Waiting on other threads and processes: a condition, a lock another holder has, the CLI in a subprocess."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path


def wait_for(predicate: Callable[[], bool], *, timeout: float = 120.0, interval: float = 0.05) -> None:
    """Poll until ``predicate`` holds; fail the test if it never does (a hang, not a timing check)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "gave up waiting"
        time.sleep(interval)


def held_elsewhere(path: Path) -> bool:
    """Whether some other holder has the lock (probed on a descriptor of our own, without waiting)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def perfembed(*args: str) -> subprocess.CompletedProcess[str]:
    """The ``perfembed`` CLI run with ``args`` in a subprocess (its output captured)."""
    return subprocess.run([sys.executable, "-m", "service.cli", *args], capture_output=True, text=True,
                          timeout=300, check=False)
