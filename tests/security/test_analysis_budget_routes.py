"""Every route that analyses a posted program does so within the time budget first (issue 10, item 4):
depth x statements inside the structural limits still cost minutes (8 loops x 128 statements: 198 s of
dependences and features here), so the limits alone do not bound a request."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from database import create_api_key
from service.app import create_app
from tests.security.programs import deep_and_long
from tests.service.factories import service_settings


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> tuple[TestClient, dict[str, str]]:
    settings = service_settings(Path(tmp_path_factory.mktemp("budget")), analysis_time_limit_s=1.0)
    client = TestClient(create_app(settings))
    with client.app.state.perfembed.store().session() as session:  # type: ignore[attr-defined]
        _, key = create_api_key(session, name="budget")
    return client, {"Authorization": f"Bearer {key}"}


@pytest.mark.parametrize("route, body", [
    ("/v1/suggestions", {}),
    ("/v1/programs", {}),
    ("/v1/search", "program"),
])
def test_a_program_over_the_budget_is_a_422_on_every_route(api: tuple[TestClient, dict[str, str]], route: str,
                                                           body: object) -> None:
    client, auth = api
    program = {"source": deep_and_long(8, 128), "params": {"n": 100}}
    r = client.post(route, json={"program": program} if body == "program" else program, headers=auth)
    assert r.status_code == 422, r.text
    assert r.json()["error"] == "AnalysisTimeoutError" and "PERFEMBED_ANALYSIS_TIME_LIMIT_S" in r.json()["message"]


def test_a_small_program_passes_the_budget(api: tuple[TestClient, dict[str, str]]) -> None:
    client, auth = api
    r = client.post("/v1/suggestions", json={"source": deep_and_long(2, 2), "params": {"n": 100}}, headers=auth)
    assert r.status_code == 200, r.text
