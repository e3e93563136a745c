"""How much one client can ask of the server at once (issue 59, items 1 to 3), as plain ASGI middleware.

- A request with more than ``max_header_count`` headers gets 431 (their size is bounded by the HTTP
  parser: :mod:`service.serving`).
- At most ``max_requests_in_flight`` requests are answered at once (503 with Retry-After beyond); keyless
  clients together at most ``keyless_requests_in_flight_total`` of them (fewer than all: key holders keep
  a share), and one keyless client (by address) at most ``keyless_requests_in_flight`` and never more
  than half that total (429 beyond): a
  flood of keyless reads cannot take the threads, nor the interpreter's lock, from a key holder and the
  probes, and one keyless address cannot take every keyless slot from the others (a per-client limit of
  16 under a total of 8 let it). A key holder is bound by ``max_requests_in_flight`` only. A client
  counts as a key holder when the key it sends was checked recently (the server's key cache). A key
  the cache does not hold (its check expired) counts by address unless that would refuse it: then it
  is checked, one check at a time, in a thread (a key holder that shared its address with a keyless
  flood got a 429 every time its cached check expired).
- ``/healthz``, ``/readyz`` and ``/metrics`` are never refused.
- Each request's caller (its address and the key it sent) is recorded for the admission of its
  analyses (:mod:`service.admission`).
- GET and HEAD requests run their database work as reads (:func:`database.session.reading_only`): no
  write lock, so concurrent reads never wait for each other.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Callable

import anyio.to_thread
from starlette.types import ASGIApp, Receive, Scope, Send

from database.session import reading_only
from loopnest.errors import PerfembedError
from service.admission import Caller, TokenBuckets, set_caller
from service.config import ServiceSettings

EXEMPT = frozenset({"/healthz", "/readyz", "/metrics"})
# A refused keyless request is answered after this pause, with nothing held meanwhile but its connection:
# a client that ignores Retry-After and asks again at once (200 of them did) makes the event loop, which
# also answers the probes, spend itself on refusals.
REFUSAL_PAUSE_S = 0.5
KEY_COOKIE = "perfembed_key"


def presented_key(scope: Scope) -> str | None:
    """The API key a request sends: ``Authorization: Bearer KEY``, else the dashboard's cookie."""
    for name, value in scope.get("headers", ()):
        if name == b"authorization" and value[:7].lower() == b"bearer ":
            return value[7:].decode("latin-1").strip() or None
        if name == b"cookie":
            for part in value.decode("latin-1").split(";"):
                key, _, cookie = part.strip().partition("=")
                if key == KEY_COOKIE and cookie:
                    return cookie
    return None


def client_address(scope: Scope) -> str:
    client = scope.get("client")
    return str(client[0]) if client else "unknown"


def keyless_limits(settings: ServiceSettings) -> tuple[int, int]:
    """Requests in progress without a key: all keyless clients together (their setting, below
    ``max_requests_in_flight`` so that key holders always find a slot) and one keyless client (its setting,
    at most half that total so that at least two are answered at once); each at least one."""
    total = max(1, min(settings.keyless_requests_in_flight_total, settings.max_requests_in_flight - 1))
    return total, max(1, min(settings.keyless_requests_in_flight, total // 2))


class LoadGuardMiddleware:
    """The limits above. ``keyed(key)``: whether a presented key is one the server checked recently (no
    I/O); ``valid(key)``: whether it is valid, checking it if need be (for the admission of analyses,
    which runs in a thread)."""

    def __init__(self, app: ASGIApp, *, settings: ServiceSettings, keyed: Callable[[str], bool],
                 valid: Callable[[str], bool], refusal_pause_s: float = REFUSAL_PAUSE_S) -> None:
        self.app = app
        self.refusal_pause_s = refusal_pause_s
        self.settings = settings
        self.max_header_count = settings.max_header_count
        self.max_in_flight = settings.max_requests_in_flight
        self.keyless_total, self.keyless_in_flight = keyless_limits(settings)
        self.keyed = keyed
        self.valid = valid
        self.buckets = TokenBuckets()
        self.in_flight = 0
        self.by_client: Counter[str] = Counter()
        self._key_check = asyncio.Lock()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if len(scope.get("headers", ())) > self.max_header_count:
            await _refuse(send, 431, f"more than {self.max_header_count} request headers "
                                     "(PERFEMBED_MAX_HEADER_COUNT)")
            return
        reads = scope.get("method") in ("GET", "HEAD")
        if scope.get("path") in EXEMPT:
            await self._run(scope, receive, send, reads)
            return
        key = presented_key(scope)
        set_caller(Caller(client_address(scope), key, self.valid, self.settings, self.buckets))
        client = None if key is not None and self.keyed(key) else client_address(scope)
        if self.in_flight >= self.max_in_flight:
            await _refuse(send, 503, "the server is answering as many requests as it can; try again",
                          retry_after=1)
            return
        refusal = self._keyless_refusal(client) if client is not None else None
        if refusal is not None and key is not None and await self._checked(key):
            client, refusal = None, None
        if refusal is not None:
            await asyncio.sleep(self.refusal_pause_s)
            await _refuse(send, 429, refusal, retry_after=1)
            return
        self.in_flight += 1
        if client is not None:
            self.by_client[client] += 1
        try:
            await self._run(scope, receive, send, reads)
        finally:
            self.in_flight -= 1
            if client is not None:
                self.by_client[client] -= 1
                if self.by_client[client] <= 0:
                    del self.by_client[client]

    async def _checked(self, key: str) -> bool:
        """Whether a key the cache no longer holds is valid. One check at a time: a flood of made-up keys
        costs one database lookup at a time, and waits for it like the pause of a refusal."""
        async with self._key_check:
            try:
                return await anyio.to_thread.run_sync(self.valid, key)
            except PerfembedError:  # the database cannot say: the key counts as none
                return False

    def _keyless_refusal(self, client: str) -> str | None:
        """Why a keyless client's request is refused now (None: it is not)."""
        if self.by_client.total() >= self.keyless_total:
            return (f"{self.keyless_total} requests without an API key are in progress "
                    "(PERFEMBED_KEYLESS_REQUESTS_IN_FLIGHT_TOTAL); try again, or send a key")
        if self.by_client[client] >= self.keyless_in_flight:
            return (f"this client has {self.keyless_in_flight} requests in progress without an API key "
                    "(PERFEMBED_KEYLESS_REQUESTS_IN_FLIGHT, at most half of "
                    "PERFEMBED_KEYLESS_REQUESTS_IN_FLIGHT_TOTAL); wait for them or send a key")
        return None

    async def _run(self, scope: Scope, receive: Receive, send: Send, reads: bool) -> None:
        if not reads:
            await self.app(scope, receive, send)
            return
        with reading_only():
            await self.app(scope, receive, send)


async def _refuse(send: Send, status: int, message: str, *, retry_after: int | None = None) -> None:
    error = {431: "HeadersTooLargeError", 429: "BusyError", 503: "UnavailableError"}[status]
    body = json.dumps({"error": error, "message": message}).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    if retry_after is not None:
        headers.append((b"retry-after", str(retry_after).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
