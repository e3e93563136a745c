"""One lock per study database, held while a worker checks the budget and asks for a trial.

Optuna assigns trial numbers atomically but has no atomic "ask unless the budget is spent", so
two workers that both see one trial left would both start one. Workers therefore take this lock
around "count the trials, ask, decide whether the sample is legal"; the lock is held for
milliseconds, never while a variant compiles or runs.

- SQLite file: an exclusive ``flock`` on ``<database>.autotune.lock`` (every process on the
  machine; SQLite is not shared across machines).
- PostgreSQL: a session-level advisory lock, on its own connection (every machine).
- anything else (and in-memory SQLite): a lock within this process only; workers on several
  machines may then overshoot the budget by one trial each.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, make_url, text
from sqlalchemy.pool import NullPool

_PROCESS_LOCKS: dict[str, threading.Lock] = {}
_PROCESS_LOCKS_GUARD = threading.Lock()
_ENGINES: dict[str, Any] = {}


def lock_path(url: str) -> Path | None:
    """The lock file of a SQLite database URL, or None for other databases."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    if parsed.database.startswith("file:"):
        return None
    path = Path(parsed.database)
    return path.with_name(path.name + ".autotune.lock")


@contextmanager
def study_lock(url: str, key: str = "") -> Iterator[None]:
    """Hold the budget lock of the study ``key`` in the database at ``url``."""
    backend = make_url(url).get_backend_name()
    path = lock_path(url)
    if path is not None:
        with _file_lock(path):
            yield
    elif backend == "postgresql":
        with _advisory_lock(url, key):
            yield
    else:
        with _process_lock(f"{url}#{key}"):
            yield


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


@contextmanager
def _advisory_lock(url: str, key: str) -> Iterator[None]:
    engine = _ENGINES.get(url)
    if engine is None:
        engine = _ENGINES.setdefault(url, create_engine(url, poolclass=NullPool))
    number = int.from_bytes(hashlib.sha256(f"perfembed-autotune:{key}".encode()).digest()[:8], "big", signed=True)
    with engine.connect() as connection:
        connection.execute(text("SELECT pg_advisory_lock(:k)"), {"k": number})
        connection.commit()
        try:
            yield
        finally:
            connection.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": number})
            connection.commit()


@contextmanager
def _process_lock(name: str) -> Iterator[None]:
    with _PROCESS_LOCKS_GUARD:
        lock = _PROCESS_LOCKS.setdefault(name, threading.Lock())
    with lock:
        yield
