"""The core's answer cache: answers from the database alone, remembered until the database changes.

A *stamp* of the database (:mod:`database.stamp`) keys every cached answer. To check a cached answer it is
read at most once per :data:`STAMP_TTL_S`, and writes through the core drop it at once; a suggestion that
computes its answer reads it with the rest of what it reads
(:func:`database.neighbourhood.read_neighbourhoods`) and hands it back here (:meth:`AnswerCache.saw`).
One :class:`AnswerCache` belongs to one core (:class:`service.core.TransferCore`), which belongs to the app
or the command that made it.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from cachetools import LRUCache

from database.stamp import Stamp, read_stamp
from database.store import Store

# How long a database stamp is trusted before it is read again. Writes through the core drop it at
# once; a write by another process (a worker, `perfembed embeddings fit`) shows within it.
STAMP_TTL_S = 1.0
CACHE_SIZE = 256  # answers kept per kind

T = TypeVar("T")


class AnswerCache:
    """Small LRUs of answers (one per kind: ``suggestions``, ``features``) over one store, and the
    store's stamp. Thread-safe; values are copied in and out (pickled), so callers may not share them."""

    def __init__(self, store: Store, *, ttl_s: float = STAMP_TTL_S, size: int = CACHE_SIZE) -> None:
        self.store = store
        self.ttl_s = ttl_s
        self.size = size
        self._lock = threading.Lock()
        self._stamp: tuple[Stamp, float] | None = None
        self._generation = 0
        self._caches: dict[str, LRUCache[str, bytes]] = {}

    # -- the database's stamp --------------------------------------------------------------------
    def stamp(self) -> Stamp:
        """The database's stamp (:func:`~database.stamp.read_stamp`). Reading it costs four queries, most of
        a cached suggestion; so it is reused for ``ttl_s``."""
        fresh = self.fresh_stamp()
        if fresh is not None:
            return fresh
        generation, now = self.generation(), time.monotonic()
        with self.store.session() as session:
            stamp = read_stamp(session)
        self.saw(stamp, generation, now)
        return stamp

    def generation(self) -> int:
        """How many times the core wrote (:meth:`changed`): a stamp read before a write is not renewed after it."""
        with self._lock:
            return self._generation

    def saw(self, stamp: Stamp, generation: int, read_at: float) -> None:
        """``stamp`` was read at ``read_at`` (monotonic) in ``generation``: it is trusted for ``ttl_s`` from
        then, unless the core wrote since or a stamp read later is already kept (a slow request's older stamp
        must not replace it)."""
        with self._lock:
            if generation == self._generation and (self._stamp is None or self._stamp[1] <= read_at + self.ttl_s):
                self._stamp = (stamp, read_at + self.ttl_s)

    def fresh_stamp(self) -> Stamp | None:
        """The stamp if read within ``ttl_s`` (no I/O), else None."""
        with self._lock:
            cached = self._stamp
        return cached[0] if cached is not None and cached[1] > time.monotonic() else None

    def changed(self) -> int:
        """The core wrote to the database: the stamp is read again before the next answer (unless the writer
        hands it the stamp after its write, :meth:`saw` with the generation returned here)."""
        with self._lock:
            self._stamp = None
            self._generation += 1
            return self._generation

    # -- answers ---------------------------------------------------------------------------------
    def get(self, kind: str, key: Any) -> tuple[Any] | None:
        """``(value,)``, a copy of what was put under ``key`` (JSON), or None."""
        digest = _digest(key)
        with self._lock:
            frozen = self._cache(kind).get(digest)
        if frozen is None:
            return None
        return (pickle.loads(frozen),)  # noqa: S301  our own value; 5x faster than a deep copy

    def put(self, kind: str, key: Any, value: Any) -> None:
        digest, frozen = _digest(key), pickle.dumps(value)
        with self._lock:
            self._cache(kind)[digest] = frozen

    def _cache(self, kind: str) -> LRUCache[str, bytes]:
        """The LRU of ``kind`` (called under the lock)."""
        return self._caches.setdefault(kind, LRUCache(maxsize=self.size))

    def memoized(self, kind: str, key: Any, compute: Callable[[], T]) -> T:
        """``compute()``, remembered under ``key``; copies out."""
        found = self.get(kind, key)
        if found:
            value: T = found[0]
            return value
        result = compute()
        self.put(kind, key, result)
        return result


def _digest(key: Any) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()
