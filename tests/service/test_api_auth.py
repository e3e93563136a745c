"""API keys: writes need one, reads are open unless configured, keys are stored hashed."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient
from sqlalchemy import text
from typer.testing import CliRunner

from service.app import create_app
from service.commands.keys import keys_app
from tests.service.factories import gemm_program, service_settings


def test_writes_without_a_key_are_401_and_write_nothing(api: TestClient, app) -> None:
    with app.state.perfembed.store().session() as session:
        before = session.execute(text("SELECT count(*) FROM programs")).scalar_one()
    for method, path, body in (("POST", "/v1/programs", gemm_program()),
                               ("POST", "/v1/suggestions", gemm_program()),
                               ("POST", "/v1/tuning-jobs", {"nest_id": 1, "params": {"ni": 4}}),
                               ("DELETE", "/v1/tuning-jobs/1", None)):
        r = api.request(method, path, json=body)
        assert r.status_code == 401, (path, r.text)
        assert r.headers["WWW-Authenticate"] == "Bearer"
        assert r.json()["error"] == "AuthenticationError" and "perfembed keys create" in r.json()["message"]
    with app.state.perfembed.store().session() as session:
        assert session.execute(text("SELECT count(*) FROM programs")).scalar_one() == before


def test_an_unknown_key_is_401(api: TestClient) -> None:
    r = api.post("/v1/programs", json=gemm_program(), headers={"Authorization": "Bearer not-a-key-at-all"})
    assert r.status_code == 401 and "not valid" in r.json()["message"]
    assert api.get("/v1/nests", headers={"Authorization": "Bearer not-a-key-at-all"}).status_code == 401


def test_reads_are_open_and_writes_pass_with_a_key(api: TestClient, auth: dict[str, str]) -> None:
    assert api.get("/v1/nests").status_code == 200
    assert api.get("/v1/targets").status_code == 200
    assert api.post("/v1/programs:analyze", json=gemm_program()).status_code == 200
    r = api.post("/v1/programs", json=gemm_program(), headers=auth)
    assert r.status_code == 201 and len(r.json()["nest_ids"]) == 1


def test_keys_are_stored_hashed(app, api_key: str) -> None:
    with app.state.perfembed.store().session() as session:
        rows = session.execute(text("SELECT key_hash FROM api_keys")).scalars().all()
    assert rows and api_key not in rows and all(len(h) == 64 for h in rows)


def test_reads_need_a_key_when_configured(tmp_path: Path) -> None:
    settings = service_settings(tmp_path, api_keys_for_reads=True)
    with TestClient(create_app(settings)) as api:
        r = api.get("/v1/nests")
        assert r.status_code == 401 and "reads too" in r.json()["message"]
        assert api.get("/healthz").status_code == 200  # probes stay open
        result = CliRunner().invoke(keys_app, ["create", "reader", "--url", settings.resolved_database_url])
        assert result.exit_code == 0, result.output
        key = result.stdout.strip().splitlines()[0]
        assert api.get("/v1/nests", headers={"Authorization": f"Bearer {key}"}).status_code == 200


def test_keys_cli_lists_and_deletes_without_showing_keys(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'k.db'}"
    runner = CliRunner()
    created = runner.invoke(keys_app, ["create", "ci", "--url", url, "--json"])
    assert created.exit_code == 0, created.output


    key = json.loads(created.stdout)["key"]
    listed = runner.invoke(keys_app, ["list", "--url", url])
    assert "ci" in listed.stdout and key not in listed.stdout
    assert runner.invoke(keys_app, ["delete", "ci", "--url", url]).exit_code == 0
    assert "ci" not in runner.invoke(keys_app, ["list", "--url", url]).stdout
