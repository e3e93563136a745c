"""Issue 10, item 12: database errors never echo SQL or parameters to clients; ``/readyz`` checks
that the database takes writes; an evaluating request against a read-only database is refused
before anything is compiled. Item 10 (API part): an unusable data directory is a 503, never a 500.

Reproduction (before the fix): with the database file read-only, ``POST /v1/programs`` answered
503 with ``[SQL: INSERT INTO programs ...]`` and ``[parameters: (..., '<the whole source>', ...)]``
in the message, and ``/readyz`` said ``ready``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from service.core import TransferCore
from tests.security.readonly_db import BACKENDS, database_pair
from tests.service.factories import service_settings

MARKER = "SECRET_SOURCE_MARKER_7f3a"
SOURCE = ("void scale(int n, double A[n]) {\n  for (int i = 0; i < n; i++)\n    A[i] = A[i] * 2.0;\n}\n"
          f"/* {MARKER} */\n")
PROGRAM = {"source": SOURCE, "params": {"n": 64}}
REFUSED = "the database refused the write"


@pytest.fixture(params=BACKENDS)
def readonly(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str]]]:
    """A client of an app on a read-only database, and the auth header of a valid key."""
    with database_pair(str(request.param), tmp_path) as (_, readonly_url, key):
        settings = service_settings(tmp_path, database_url=readonly_url)
        with TestClient(create_app(settings)) as api:
            yield api, {"Authorization": f"Bearer {key}"}


def _leaks(body: str) -> list[str]:
    return [s for s in (MARKER, "INSERT INTO", "[SQL", "[parameters", "sqlalche.me", "sqlite:///", "postgresql")
            if s in body]


def test_a_refused_write_is_a_short_503_without_sql_or_parameters(
        readonly: tuple[TestClient, dict[str, str]], caplog: pytest.LogCaptureFixture) -> None:
    api, auth = readonly
    with caplog.at_level(logging.WARNING, logger="perfembed.service"):
        r = api.post("/v1/programs", json=PROGRAM, headers=auth)
    assert r.status_code == 503, r.text
    assert _leaks(r.text) == []
    assert r.json()["message"].startswith(REFUSED)
    assert r.json()["error"] == "ReadOnlyDatabaseError"
    # The operator still gets the whole error, with the statement, in the server's log.
    assert any("INSERT INTO" in (record.exc_text or "") + record.getMessage() for record in caplog.records)


def test_readyz_reports_a_database_that_refuses_writes(readonly: tuple[TestClient, dict[str, str]]) -> None:
    api, _ = readonly
    r = api.get("/readyz")
    assert r.status_code == 503, r.text
    body = r.json()
    assert body["status"] == "not ready" and REFUSED in body["checks"]["database"]
    assert _leaks(r.text) == []
    assert isinstance(body.get("isolation"), str) and body["isolation"]


def test_readyz_on_a_writable_database_says_ok_and_names_the_isolation(tmp_path: Path) -> None:
    with TestClient(create_app(service_settings(tmp_path))) as api:
        r = api.get("/readyz")
    assert r.status_code == 200 and r.json()["checks"]["database"] == "ok"
    assert isinstance(r.json().get("isolation"), str) and r.json()["isolation"]


def test_evaluate_against_a_read_only_database_is_refused_before_anything_runs(
        readonly: tuple[TestClient, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    api, auth = readonly
    calls: list[Any] = []
    monkeypatch.setattr(TransferCore, "suggest", lambda *a, **kw: calls.append((a, kw)))
    r = api.post("/v1/suggestions", json={**PROGRAM, "evaluate": True}, headers=auth)
    assert r.status_code == 503, r.text
    assert r.json()["message"].startswith(REFUSED) and _leaks(r.text) == []
    assert calls == []  # the core (which compiles and runs) was never entered


def test_reads_still_work_on_a_read_only_database(readonly: tuple[TestClient, dict[str, str]]) -> None:
    api, _ = readonly
    r = api.get("/v1/nests")
    assert r.status_code == 200, r.text


@pytest.mark.parametrize("under", ["a-file", "a-file/deeper"])
def test_a_data_directory_under_a_file_is_a_503_naming_no_server_path(tmp_path: Path, under: str) -> None:
    (tmp_path / "a-file").write_text("not a directory\n")
    data = tmp_path / under / "data"
    settings = service_settings(data, database_url=None)
    with TestClient(create_app(settings)) as api:
        r = api.get("/v1/nests")
        assert r.status_code == 503, r.text
        assert r.json()["error"] == "DataDirError" and str(tmp_path) not in r.text
        ready = api.get("/readyz")
        assert ready.status_code == 503 and "directory" in ready.json()["checks"]["database"]
