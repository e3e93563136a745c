"""A server without a sandbox does not run code from the network unless told to (item 2)."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient

from database import create_api_key
from service.app import create_app
from tests.service.factories import gemm_program, service_settings


def test_the_server_refuses_to_evaluate_without_a_sandbox(tmp_path: Path) -> None:
    """With no sandbox and no explicit permission, evaluate is a 503 naming the setting: nothing compiles."""
    settings = service_settings(tmp_path, sandbox="none", allow_unsandboxed=False)
    with TestClient(create_app(settings)) as api:
        with api.app.state.perfembed.store().session() as session:  # type: ignore[attr-defined]
            _, key = create_api_key(session, name="tests")
        r = api.post("/v1/suggestions", json={**gemm_program(), "evaluate": True},
                     headers={"Authorization": f"Bearer {key}"})
        assert r.status_code == 503 and "PERFEMBED_ALLOW_UNSANDBOXED" in r.json()["message"], r.text
        assert "none (rlimits only); evaluation refused" in api.get("/readyz").json()["isolation"]
