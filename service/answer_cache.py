"""The pipeline's answer cache: answers from the database alone, remembered per store until the
database changes.

A *stamp* of the database (nest and measurement counts, the newest embedding model, the open tuning
jobs and the newest job id) keys every cached answer; it is read at most once per
:data:`STAMP_TTL_S`, and writes through the pipeline drop it at once. Caches are small LRUs kept on
the store object, so every store (a test's, the server's) has its own.
"""

from __future__ import annotations

import hashlib
import json
import pickle
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from database import list_embedding_models
from database.store import Store

# How long a database stamp is trusted before it is read again. Writes through the pipeline drop
# it at once; a write by another process (a worker, `perfembed embeddings fit`) shows within it.
STAMP_TTL_S = 1.0

Stamp = tuple[int, int, str | None, int, int | None]


def database_stamp(store: Store, *, reread: bool = False) -> Stamp:
    """Changes whenever an answer from the database alone could change: nests, measurements, model,
    and the tuning jobs (how many are open, the newest id: a job that ends, or a new one, changes it;
    an answer names the open job of each nest that needs one).

    Reading it costs four queries, most of a cached suggestion; so it is reused for STAMP_TTL_S
    (``reread``: read it now).
    """
    fresh = None if reread else fresh_stamp(store)
    if fresh is not None:
        return fresh
    now = time.monotonic()
    from sqlalchemy import func, select

    from database.domain import JobStatus
    from database.models import MeasurementModel, NestModel, TuningJobModel

    open_states = [JobStatus.QUEUED.value, JobStatus.RUNNING.value]
    with store.session() as session:
        nests = session.scalar(select(func.count()).select_from(NestModel)) or 0
        measurements = session.scalar(select(func.count()).select_from(MeasurementModel)) or 0
        models = list_embedding_models(session)
        jobs = session.execute(select(func.count(TuningJobModel.id).filter(TuningJobModel.status.in_(open_states)),
                                      func.max(TuningJobModel.id))).one()
    stamp = (nests, measurements, models[-1].version if models else None, int(jobs[0] or 0), jobs[1])
    store.__dict__["_database_stamp"] = (stamp, now + STAMP_TTL_S)
    return stamp


def fresh_stamp(store: Store) -> Stamp | None:
    """The stamp if read within STAMP_TTL_S (no I/O), else None."""
    cached = store.__dict__.get("_database_stamp")
    return cached[0] if cached is not None and cached[1] > time.monotonic() else None


def database_changed(store: Store) -> None:
    store.__dict__.pop("_database_stamp", None)


def memoized(store: Store, kind: str, key: Any, compute: Callable[[], Any]) -> Any:
    """``compute()``, remembered per store under ``key`` (JSON) in a small LRU; copies out."""
    found = cache_get(store, kind, key)
    if found:
        return found[0]
    result = compute()
    cache_put(store, kind, key, result)
    return result


_CACHE_SIZE = 256


def _cache(store: Store, kind: str) -> tuple[OrderedDict[str, Any], threading.Lock]:
    return (store.__dict__.setdefault(f"_{kind}_cache", OrderedDict()),
            store.__dict__.setdefault(f"_{kind}_lock", threading.Lock()))


def _digest(key: Any) -> str:
    return hashlib.sha256(json.dumps(key, sort_keys=True, default=str).encode()).hexdigest()


def cache_get(store: Store, kind: str, key: Any) -> tuple[Any] | None:
    """``(value,)``, a copy of what was put under ``key``, or None."""
    cache, lock = _cache(store, kind)
    digest = _digest(key)
    with lock:
        if digest not in cache:
            return None
        cache.move_to_end(digest)
        frozen = cache[digest]
    return (pickle.loads(frozen),)  # noqa: S301  our own value; 5x faster than a deep copy


def cache_put(store: Store, kind: str, key: Any, value: Any) -> None:
    cache, lock = _cache(store, kind)
    digest, frozen = _digest(key), pickle.dumps(value)
    with lock:
        cache[digest] = frozen
        while len(cache) > _CACHE_SIZE:
            cache.popitem(last=False)
