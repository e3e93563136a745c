"""``perfembed serve`` warms its app and freezes what then lives before its first request (issue 59, item 2).

Reproduction: with 200 keyless clients reading at full rate, ``/healthz`` answered in 887 ms at p99 (target
100 ms; ``benchmarks/hostile_clients.py``). The interpreter stopped for full garbage collections of 170 to
720 ms every second or two: each walked the 270,000 objects of the imports and the embedding index, which
are never garbage. The app served by ``perfembed serve`` now opens its database, makes its core and loads
the index before the first request, then freezes every object alive; a full collection walks only what
requests made since (20 to 60 ms in the same flood, /healthz p99 133 ms on a machine loaded by others).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.serving import warm_up
from tests.service.factories import service_settings


@pytest.fixture
def unfrozen() -> Iterator[None]:
    yield
    gc.unfreeze()  # the rest of the test session collects as usual


def test_the_served_app_is_warm_and_frozen_before_its_first_request(tmp_path: Path, unfrozen: None) -> None:
    app = create_app(service_settings(tmp_path), on_start=warm_up)
    state = app.state.perfembed
    assert state.opened_core is None
    with TestClient(app):  # its lifespan started: no request sent yet
        assert state.opened_core is not None
        assert gc.get_freeze_count() > 50_000  # the imports alone


def test_a_warm_up_that_fails_leaves_the_server_serving(tmp_path: Path, unfrozen: None) -> None:
    """A database that cannot be opened is the first request's error and /readyz's, never a server that
    does not start."""
    blocked = tmp_path / "file"
    blocked.write_text("")
    app = create_app(service_settings(tmp_path, database_url=f"sqlite:///{blocked}/sub/perfembed.db"),
                     on_start=warm_up)
    with TestClient(app) as client:
        assert client.get("/healthz").status_code == 200
        assert client.get("/readyz").status_code == 503
    assert gc.get_freeze_count() > 0
