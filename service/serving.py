"""How ``perfembed serve`` serves: uvicorn with the h11 parser and the limits a production deployment has
(issue 59, items 1 and 3). uvicorn's default parser (httptools) has no header size limit: one 150 MB
header made /healthz take 37.6 s, and 20,000 idle connections exhausted the file descriptors.

- A request's head (request line and headers) must fit ``max_header_bytes`` (431, then the connection
  closes) and arrive within ``header_timeout_s`` of its first byte (or of the connection): a client that
  sends a byte every few seconds is closed. The number of headers is checked by
  :class:`service.load_guard.LoadGuardMiddleware`.
- An idle connection is closed after ``keep_alive_s``.
- At most ``max_connections`` are open (kept under the file-descriptor limit, which is raised to its hard
  limit). A connection beyond them takes the place of the one that has waited longest without a request
  in progress (an idle or slow-loris one); when every connection has a request in progress, the new one
  is closed at once.
- Behind a proxy, ``forwarded_allow_ips`` names the proxies whose ``X-Forwarded-For`` gives the client's
  address (the keyless limits count by it).
- Before its first request the app is warmed (database, core, embedding index) and everything then alive
  is frozen out of the garbage collector's sight (:func:`warm_up`): under a keyless flood, full
  collections of the 270,000 objects of the imports and the index stopped the interpreter for 170-720 ms
  every second or two, and ``/healthz`` waited behind them (p99 887 ms).
"""

from __future__ import annotations

import asyncio
import gc
import logging
import resource
from dataclasses import dataclass
from typing import Any

import h11
import uvicorn
from fastapi import FastAPI
from uvicorn.protocols.http.h11_impl import H11Protocol

from service.api.deps import AppState
from service.app import create_app
from service.config import ServiceSettings

_log = logging.getLogger("perfembed.serve")
FD_RESERVE = 256  # descriptors kept for the database, analysis workers, sandboxes and logs


@dataclass(frozen=True)
class ServeLimits:
    max_header_bytes: int
    header_timeout_s: float
    max_connections: int

    @classmethod
    def from_settings(cls, settings: ServiceSettings) -> ServeLimits:
        return cls(settings.max_header_bytes, settings.header_timeout_s, settings.max_connections)


class ConnectionGuard:
    """The connections of one server that have no request in progress, oldest first."""

    def __init__(self, limits: ServeLimits) -> None:
        self.limits = limits
        self.waiting: dict[GuardedH11Protocol, None] = {}
        self.evicted = 0

    def admit(self, new: GuardedH11Protocol, open_connections: int) -> bool:
        """Whether ``new`` may stay: at the limit, the longest-waiting connection is closed for it."""
        if open_connections <= self.limits.max_connections:
            return True
        oldest = next((c for c in self.waiting if c is not new), None)
        if oldest is None:
            return False
        self.evicted += 1
        oldest.close_idle()
        return True

    def wait(self, connection: GuardedH11Protocol) -> None:
        self.waiting.pop(connection, None)
        self.waiting[connection] = None

    def busy(self, connection: GuardedH11Protocol) -> None:
        self.waiting.pop(connection, None)


class GuardedH11Protocol(H11Protocol):
    """uvicorn's h11 protocol with the head's size and time limits and the connection limit."""

    guard: ConnectionGuard  # set on the subclass :func:`protocol_class` makes

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_bytes = 0
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.guard.wait(self)
        if not self.guard.admit(self, len(self.connections)):
            self.close_idle()
            return
        self._arm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self.guard.busy(self)
        self._cancel_head_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        waiting = self.conn.their_state is h11.IDLE
        if waiting:
            self._head_bytes += len(data)
            if self._head_bytes > self.guard.limits.max_header_bytes:
                self._refuse_head()
                return
            if self._head_timer is None:
                self._arm_head_timer()
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the head is in: a request is in progress
            self._cancel_head_timer()
            self._head_bytes = 0
            self.guard.busy(self)

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing() and self.conn.their_state is h11.IDLE:
            self.guard.wait(self)

    def close_idle(self) -> None:
        self._cancel_head_timer()
        self.guard.busy(self)
        if not self.transport.is_closing():
            self.transport.close()

    def _arm_head_timer(self) -> None:
        self._head_timer = self.loop.call_later(self.guard.limits.header_timeout_s, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and (self._head_bytes or self.cycle is None):
            self.close_idle()

    def _refuse_head(self) -> None:
        body = (f"request headers over {self.guard.limits.max_header_bytes} bytes "
                "(PERFEMBED_MAX_HEADER_BYTES)\n").encode()
        self.transport.write(b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-type: text/plain\r\n"
                             b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        self.close_idle()


def protocol_class(limits: ServeLimits) -> type[GuardedH11Protocol]:
    """A protocol class of its own for one server, with its guard."""
    return type("PerfembedH11Protocol", (GuardedH11Protocol,), {"guard": ConnectionGuard(limits)})


def raise_fd_limit(max_connections: int) -> int:
    """Raise the soft limit on open files to the hard one; the connections that fit under it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY or hard > soft:
        target = hard if hard != resource.RLIM_INFINITY else max(soft, max_connections + FD_RESERVE)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
        except (ValueError, OSError):
            pass
    fits = max(16, soft - FD_RESERVE)
    if max_connections > fits:
        _log.warning("perfembed serve: %d connections do not fit under the limit of %d open files; serving %d",
                     max_connections, soft, fits)
    return min(max_connections, fits)


def warm_up(state: AppState) -> None:
    """Open the database, make the core and load its embedding index (what requests use, and what the
    first would otherwise pay for), then freeze every object alive: the imports and the index are never
    garbage, and a full collection need not walk them again. The requests' own objects are collected as
    usual. A warm-up that fails leaves its error to the first request and to ``/readyz``."""
    try:
        state.core().index_status()
    except Exception as exc:  # noqa: BLE001 - whatever it is, the server starts and /readyz says why
        _log.warning("perfembed serve: warm-up failed (%s); /readyz says why", exc)
    gc.collect()
    gc.freeze()


def serving_app() -> FastAPI:
    """The app ``perfembed serve`` runs: :func:`service.app.create_app`, warmed before its first request."""
    return create_app(on_start=warm_up)


def server_config(settings: ServiceSettings, *, host: str, port: int) -> uvicorn.Config:
    """uvicorn's configuration for ``perfembed serve`` (the app is built by its factory in the server)."""
    connections = raise_fd_limit(settings.max_connections)
    limits = ServeLimits(settings.max_header_bytes, settings.header_timeout_s, connections)
    return uvicorn.Config("service.serving:serving_app", factory=True, host=host, port=port,
                          http=protocol_class(limits), ws="none", lifespan="on",
                          h11_max_incomplete_event_size=settings.max_header_bytes,
                          timeout_keep_alive=max(1, round(settings.keep_alive_s)), backlog=min(2048, connections),
                          proxy_headers=True, forwarded_allow_ips=settings.forwarded_allow_ips, server_header=False)
