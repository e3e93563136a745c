"""ASGI middleware of the app: request-size limit and Prometheus metrics.

Both are plain ASGI (no ``BaseHTTPMiddleware``), so they add no task per request. The metrics
see the route the router stores in the shared ``scope`` and label requests by its operation id
(``nests-get``), so there is one series per route, not one per nest id.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping

from prometheus_client import CONTENT_TYPE_LATEST, CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from starlette.types import ASGIApp, Message, Receive, Scope, Send

# Latency buckets (seconds): the API's targets are p50 <= 50 ms and p99 <= 200 ms.
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.2, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


class Metrics:
    """The app's metrics, in a registry of its own (several apps in one process never clash)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter("perfembed_http_requests", "HTTP requests by operation and status",
                                ("method", "operation", "status"), registry=self.registry)
        self.latency = Histogram("perfembed_http_request_duration_seconds", "Time to answer a request",
                                 ("method", "operation"), buckets=_BUCKETS, registry=self.registry)
        self.in_progress = Gauge("perfembed_http_requests_in_progress", "Requests being answered",
                                 registry=self.registry)
        self.evaluations_running = Gauge("perfembed_evaluations_running", "Requests holding an evaluation slot",
                                         registry=self.registry)
        self.evaluations_waiting = Gauge("perfembed_evaluations_waiting", "Requests waiting for a slot",
                                         registry=self.registry)
        self.evaluations_rejected = Counter("perfembed_evaluations_rejected",
                                            "Evaluating requests answered 429", registry=self.registry)
        self.jobs_enqueued = Counter("perfembed_tuning_jobs_enqueued", "Tuning jobs enqueued by this process",
                                     ("origin",), registry=self.registry)

    def pool_changed(self, running: int, waiting: int) -> None:
        self.evaluations_running.set(running)
        self.evaluations_waiting.set(waiting)


def _operation_label(scope: Scope) -> str:
    """The route's operation id (``nests-get``), else its path; one label per route, not per id."""
    route = scope.get("route")
    label = getattr(route, "operation_id", None) or getattr(route, "path", None)
    return str(label) if label else "unmatched"


class MetricsMiddleware:
    def __init__(self, app: ASGIApp, *, metrics: Metrics) -> None:
        self.app = app
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        start = time.perf_counter()

        async def send_wrapper(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        self.metrics.in_progress.inc()
        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            self.metrics.in_progress.dec()
            operation = _operation_label(scope)
            method = str(scope.get("method", ""))
            self.metrics.latency.labels(method, operation).observe(time.perf_counter() - start)
            self.metrics.requests.labels(method, operation, str(status)).inc()


class BodyLimitMiddleware:
    """Answer 413 to a body larger than ``max_bytes``, before the app reads it; the paths in ``larger``
    (a file upload: ``/v1/matrices``) have their own limit, with the setting that raises it.

    A declared ``Content-Length`` over the limit is refused at once. A body without one
    (chunked) is read up to the limit, then either refused or handed on.
    """

    def __init__(self, app: ASGIApp, *, max_bytes: int, larger: Mapping[str, tuple[int, str]] | None = None) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.larger = dict(larger or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope.get("method") in ("GET", "HEAD", "OPTIONS", "DELETE"):
            await self.app(scope, receive, send)
            return
        limit = self.larger.get(scope.get("path", ""), (self.max_bytes, "PERFEMBED_MAX_REQUEST_BYTES"))
        declared = _content_length(scope)
        if declared is not None:
            if declared > limit[0]:
                await _refuse(send, f"the request body of {declared} bytes is over the limit", limit)
                return
            await self.app(scope, receive, send)
            return
        chunks: list[Message] = []
        size = 0
        while True:
            message = await receive()
            chunks.append(message)
            if message["type"] != "http.request":
                break
            size += len(message.get("body", b""))
            if size > limit[0]:
                await _refuse(send, "the request body is over the limit", limit)
                return
            if not message.get("more_body", False):
                break

        async def replay() -> Message:
            return chunks.pop(0) if chunks else await receive()

        await self.app(scope, replay, send)



async def _refuse(send: Send, what: str, limit: tuple[int, str]) -> None:
    body = json.dumps({
        "error": "PayloadTooLargeError",
        "message": f"{what} of {limit[0]} bytes; send less (or raise {limit[1]} on the server)",
    }).encode()
    await send({"type": "http.response.start", "status": 413,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                            (b"connection", b"close")]})
    await send({"type": "http.response.body", "body": body})


def _content_length(scope: Scope) -> int | None:
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                return int(value)
            except ValueError:
                return None
    return None


def metrics_text(metrics: Metrics) -> tuple[bytes, str]:
    return generate_latest(metrics.registry), CONTENT_TYPE_LATEST


__all__ = ["BodyLimitMiddleware", "Metrics", "MetricsMiddleware", "metrics_text"]
