"""How much one client can ask of the server at once (issue 59, items 1 to 3), as plain ASGI middleware.

- A request with more than ``max_header_count`` headers gets 431 (their size is bounded by the HTTP
  parser: :mod:`service.serving`).
- At most ``max_requests_in_flight`` requests are answered at once (503 with Retry-After beyond); a
  keyless client (by address) has at most ``keyless_requests_in_flight`` of them, and keyless clients
  together ``keyless_requests_in_flight_total`` (429 beyond): a flood of keyless reads cannot take the
  threads, nor the interpreter's lock, from a key holder and the probes. A client counts as a key holder when the
  key it sends was checked recently (the server's key cache); an unchecked key counts by address.
- ``/healthz``, ``/readyz`` and ``/metrics`` are never refused.
- Each request's caller (its address and the key it sent) is recorded for the admission of its
  analyses (:mod:`service.admission`).
- GET and HEAD requests run their database work as reads (:func:`database.session.reading_only`): no
  write lock, so concurrent reads never wait for each other.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from database.session import reading_only
from service.admission import Caller, TokenBuckets, set_caller
from service.config import ServiceSettings

EXEMPT = frozenset({"/healthz", "/readyz", "/metrics"})
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


class LoadGuardMiddleware:
    """The limits above. ``keyed(key)``: whether a presented key is one the server checked recently (no
    I/O); ``valid(key)``: whether it is valid, checking it if need be (for the admission of analyses,
    which runs in a thread)."""

    def __init__(self, app: ASGIApp, *, settings: ServiceSettings, keyed: Callable[[str], bool],
                 valid: Callable[[str], bool]) -> None:
        self.app = app
        self.settings = settings
        self.max_header_count = settings.max_header_count
        self.max_in_flight = settings.max_requests_in_flight
        self.keyless_in_flight = settings.keyless_requests_in_flight
        self.keyless_total = settings.keyless_requests_in_flight_total
        self.keyed = keyed
        self.valid = valid
        self.buckets = TokenBuckets()
        self.in_flight = 0
        self.by_client: Counter[str] = Counter()

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
        if client is not None and self.by_client.total() >= self.keyless_total:
            await _refuse(send, 429, f"{self.keyless_total} requests without an API key are in progress "
                                     "(PERFEMBED_KEYLESS_REQUESTS_IN_FLIGHT_TOTAL); try again, or send a key",
                          retry_after=1)
            return
        if client is not None and self.by_client[client] >= self.keyless_in_flight:
            await _refuse(send, 429, f"this client has {self.keyless_in_flight} requests in progress without an "
                                     "API key (PERFEMBED_KEYLESS_REQUESTS_IN_FLIGHT); wait for them or send a key",
                          retry_after=1)
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
