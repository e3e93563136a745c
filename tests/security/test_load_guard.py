"""What one client may ask at once (issue 59, items 1 and 2): the load guard in front of the routes.
Reproduction: 200 concurrent keyless reads took every thread of the request pool; nothing limited a
keyless client, nor the number of headers of a request (h11 bounds only their total size)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from service.config import ServiceSettings
from service.load_guard import LoadGuardMiddleware

KNOWN = "known-key"


class Blocking:
    """An app whose requests stay in progress until released."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.release.wait()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})


def guard(app: Any, **settings: Any) -> LoadGuardMiddleware:
    values = {"keyless_requests_in_flight": 2, "keyless_requests_in_flight_total": 3, "max_requests_in_flight": 5,
              "max_header_count": 8, **settings}
    return LoadGuardMiddleware(app, settings=ServiceSettings(**values), keyed=lambda key: key == KNOWN,
                               valid=lambda key: key == KNOWN)


def scope(path: str = "/v1/nests", address: str = "10.0.0.1", key: str | None = None,
          headers: int = 2) -> dict[str, Any]:
    head = [(f"x-{i}".encode(), b"1") for i in range(headers - (key is not None))]
    if key is not None:
        head.append((b"authorization", f"Bearer {key}".encode()))
    return {"type": "http", "method": "GET", "path": path, "headers": head, "client": (address, 1234)}


async def call(app: LoadGuardMiddleware, request: dict[str, Any]) -> int:
    statuses: list[int] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    await app(request, receive, send)
    return statuses[0]


async def in_flight(app: LoadGuardMiddleware, requests: list[dict[str, Any]]) -> list[asyncio.Task[int]]:
    tasks = [asyncio.create_task(call(app, r)) for r in requests]
    await asyncio.sleep(0.05)
    return tasks


@pytest.mark.parametrize("held, extra, status", [
    ([scope(), scope()], scope(), 429),                                          # one keyless client: 2
    ([scope(address="a"), scope(address="b"), scope(address="c")], scope(address="d"), 429),  # keyless: 3
    ([scope(address="a"), scope(address="b"), scope(address="c")], scope(key=KNOWN), 200),  # a key holder
    ([scope(key=KNOWN)] * 5, scope(key=KNOWN), 503),                              # everyone: 5
    ([scope(key=KNOWN)] * 5, scope(path="/healthz"), 200),                        # the probes: never refused
])
def test_requests_in_progress_are_limited(held: list[dict[str, Any]], extra: dict[str, Any], status: int) -> None:
    async def run() -> int:
        app = Blocking()
        guarded = guard(app)
        tasks = await in_flight(guarded, held)
        waiting = asyncio.create_task(call(guarded, extra))
        await asyncio.sleep(0.05)
        app.release.set()
        statuses = await asyncio.gather(*tasks, waiting)
        assert statuses[:-1] == [200] * len(held)
        return statuses[-1]

    assert asyncio.run(run()) == status


def test_too_many_headers_are_a_431() -> None:
    app = Blocking()
    app.release.set()
    assert asyncio.run(call(guard(app), scope(headers=9))) == 431
    assert asyncio.run(call(guard(app), scope(headers=8))) == 200
