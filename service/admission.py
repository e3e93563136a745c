"""Admission of a request's analysis (issue 59, item 4): who asks, how often, and in which share of the
analysis workers.

Every route that analyses a program goes through :func:`analyse` (``POST /v1/programs:analyze``, storing,
suggesting, searching with a program, tuning jobs with a program, the dashboard's suggest and tuned-file
forms): the analysis runs in a killable worker within its time and memory budget
(:mod:`service.analysis_budget`), after the caller's rate limit:

- the caller is the API key it sent, when the server knows the key, else its address (behind the proxy,
  the address the proxy names): :class:`service.load_guard.LoadGuardMiddleware` records it per request;
- each caller has a token bucket: ``keyless_analyses_per_minute`` per address, ``keyed_analyses_per_minute``
  per key, bursts of a sixth of a minute's worth; past it, 429 with Retry-After;
- keyless analyses share the workers key holders do not keep (``analysis_slots_for_keys``), with a short
  queue (``analysis_queue_keyless``).

The same analysis asked for again within a minute (a tuning job's program: its nest checked, then
stored) is answered from a small cache, without a token.

Work outside a request (the CLI, tests calling the services) has no caller: it is not rate-limited.
"""

from __future__ import annotations

import copy
import hashlib
import math
import pickle
import threading
import time
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, TypeVar

from service.analysis_budget import runner
from service.config import ServiceSettings
from service.errors import BusyError

T = TypeVar("T")
_MAX_BUCKETS = 10_000
_CACHE_S = 60.0
_CACHE_SIZE = 64


class TokenBuckets:
    """One token bucket per caller: ``rate`` tokens a minute, at most ``burst`` saved up."""

    def __init__(self) -> None:
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, who: str, per_minute: float) -> float:
        """Take a token for ``who``: 0.0, or the seconds until one is there (nothing taken)."""
        rate = per_minute / 60.0
        burst = max(1.0, per_minute / 6.0)
        now = time.monotonic()
        with self._lock:
            tokens, since = self._buckets.get(who, (burst, now))
            tokens = min(burst, tokens + (now - since) * rate)
            if tokens < 1.0:
                self._buckets[who] = (tokens, now)
                return (1.0 - tokens) / rate
            if len(self._buckets) >= _MAX_BUCKETS:
                self._buckets = {k: v for k, v in self._buckets.items() if v[0] < burst}
            self._buckets[who] = (tokens - 1.0, now)
            return 0.0


@dataclass(frozen=True)
class Caller:
    """Who sent the request being answered: its address, the key it presented, and how the server
    checks that key, plus the app's settings and its callers' token buckets."""

    address: str
    key: str | None
    known_key: Callable[[str], bool]
    settings: ServiceSettings
    buckets: TokenBuckets

    def identity(self) -> tuple[str, bool]:
        """``("key:…", True)`` for a key the server knows, else ``("address:…", False)``."""
        if self.key is not None and self.known_key(self.key):
            return "key:" + hashlib.sha256(self.key.encode()).hexdigest()[:16], True
        return f"address:{self.address}", False


_CALLER: ContextVar[Caller | None] = ContextVar("perfembed_caller", default=None)


def set_caller(caller: Caller | None) -> None:
    """Record the caller of the request this context answers (the load guard does, per request)."""
    _CALLER.set(caller)


def current_settings(default: ServiceSettings | None = None) -> ServiceSettings | None:
    caller = _CALLER.get()
    return caller.settings if caller is not None else default


def request_settings() -> ServiceSettings:
    """The settings of the app answering this request (a route without them at hand: the dashboard's)."""
    settings = current_settings()
    if settings is None:
        raise RuntimeError("request_settings() outside a request")
    return settings


_RECENT: dict[str, tuple[float, Any]] = {}
_RECENT_LOCK = threading.Lock()


def _recent(digest: str) -> tuple[bool, Any]:
    with _RECENT_LOCK:
        hit = _RECENT.get(digest)
        if hit is not None and time.monotonic() - hit[0] < _CACHE_S:
            return True, hit[1]
    return False, None


def _remember(digest: str, value: Any) -> None:
    with _RECENT_LOCK:
        if len(_RECENT) >= _CACHE_SIZE:
            _RECENT.pop(next(iter(_RECENT)))
        _RECENT[digest] = (time.monotonic(), value)


def analyse(settings: ServiceSettings | None, fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in an analysis worker within ``settings.analysis_time_limit_s``, admitted for the
    request's caller (rate limit, share of the workers). ``settings``: None for the caller's app's."""
    caller = _CALLER.get()
    settings = settings or current_settings()
    if settings is None:
        raise RuntimeError("analyse() outside a request needs the settings")
    digest = hashlib.sha256(pickle.dumps((fn, args, settings.analysis_time_limit_s))).hexdigest()
    seen, value = _recent(digest)
    if seen:
        return copy.deepcopy(value)
    keyless = False
    if caller is not None:
        who, keyed = caller.identity()
        keyless = not keyed
        per_minute = settings.keyed_analyses_per_minute if keyed else settings.keyless_analyses_per_minute
        wait = caller.buckets.take(who, per_minute)
        if wait > 0:
            setting = "PERFEMBED_KEYED_ANALYSES_PER_MINUTE" if keyed else "PERFEMBED_KEYLESS_ANALYSES_PER_MINUTE"
            raise BusyError(f"this client asked for more analyses than {per_minute:g} a minute ({setting}); "
                            f"try again in {math.ceil(wait)} s" + (", or send an API key" if keyless else ""),
                            retry_after=math.ceil(wait))
    work = runner(settings.analysis_workers, reserved_for_keys=settings.analysis_slots_for_keys,
                  keyless_queue=settings.analysis_queue_keyless, memory_mb=settings.analysis_memory_limit_mb)
    result = work.run(fn, *args, limit_s=settings.analysis_time_limit_s, keyless=keyless)
    _remember(digest, result)
    return result
