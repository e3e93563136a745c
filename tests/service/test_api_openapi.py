"""The API's description (issue 13, item 8): summaries, descriptions and working request examples on
every route, keys marked as the server needs them, one name per nest, and docs pages that work offline."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

import database
from service.app import create_app
from tests.service.factories import CORPUS, make_app, service_settings, wait_for_evaluation

FUNCTION_NAMES = {"Create", "Index", "Read", "Run", "Store", "Analyze", "Cancel", "Healthz", "Readyz", "Metrics"}


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[TestClient, dict[str, str]]]:
    with TestClient(make_app(service_settings(tmp_path), populated=True)) as api:
        with api.app.state.perfembed.store().session() as session:  # type: ignore[attr-defined]
            _, key = database.create_api_key(session, name="docs")
        yield api, {"Authorization": f"Bearer {key}"}


def _operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, operations in spec["paths"].items():
        for method, operation in operations.items():
            yield path, method, operation


def test_every_operation_has_a_summary_a_description_and_examples_for_its_body(served) -> None:
    api, _ = served
    spec = api.get("/openapi.json").json()
    for path, method, operation in _operations(spec):
        where = f"{method.upper()} {path}"
        assert operation.get("summary") and operation["summary"] not in FUNCTION_NAMES, where
        assert len(operation.get("description", "")) > 30, where
        body = operation.get("requestBody", {}).get("content", {}).get("application/json")
        if body is not None:
            assert len(body.get("examples", {})) >= 2, where


def test_every_request_example_is_accepted_by_its_route(served) -> None:
    api, auth = served
    spec = api.get("/openapi.json").json()
    # The stored-nest example of a tuning job names nest 1 (here a tuned kernel, with its parameter values).
    matmul = spec["paths"]["/v1/programs"]["post"]["requestBody"]["content"]["application/json"]["examples"]
    (stored,) = api.post("/v1/programs", json=matmul["matmul"]["value"], headers=auth).json()["nest_ids"]
    vector = api.get(f"/v1/nests/{stored}").json()["embedding"]["vector"]
    sent = 0
    for path, method, operation in _operations(spec):
        content = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
        for name, example in content.get("examples", {}).items():
            body = dict(example["value"])
            if "vector" in body:  # the example has the shape of the default model; this test's has 4 dimensions
                body["vector"] = vector
            r = api.request(method.upper(), path, json=body, headers=auth)
            assert r.status_code in (200, 201, 202), (path, name, r.text)
            if r.status_code == 202 and path == "/v1/suggestions":
                done = wait_for_evaluation(api, r.headers["Location"], headers=auth)
                assert done["status"] == "done", (path, name)
            sent += 1
    assert sent >= 10


@pytest.mark.parametrize("keys_for_reads, read_security", [
    (False, [{}, {"ApiKey": []}]),  # a key is optional: none, or a valid one
    (True, [{"ApiKey": []}]),
])
def test_reads_are_marked_as_the_server_treats_them(tmp_path: Path, keys_for_reads: bool,
                                                    read_security: list[dict[str, list[str]]]) -> None:
    with TestClient(create_app(service_settings(tmp_path, api_keys_for_reads=keys_for_reads))) as api:
        spec = api.get("/openapi.json").json()
        reads = {("get", "/v1/nests"), ("get", "/v1/nests/{nest_id}"), ("get", "/v1/targets"),
                 ("post", "/v1/search"), ("post", "/v1/programs:analyze"), ("get", "/v1/tuning-jobs"),
                 ("get", "/v1/tuning-jobs/{job_id}"), ("get", "/v1/matrices/{matrix_id}")}
        # An evaluation job is read with the key that started it (issue 59, item 11): a key is required.
        writes = {("post", "/v1/programs"), ("post", "/v1/suggestions"), ("post", "/v1/tuning-jobs"),
                  ("delete", "/v1/tuning-jobs/{job_id}"), ("post", "/v1/matrices"),
                  ("get", "/v1/evaluation-jobs/{job_id}"), ("get", "/v1/evaluation-jobs/{job_id}/tuned-file")}
        for path, method, operation in _operations(spec):
            if (method, path) in reads:
                assert operation["security"] == read_security, (method, path)
            elif (method, path) in writes:
                assert operation["security"] == [{"ApiKey": []}], (method, path)
            else:
                assert "security" not in operation, (method, path)
        assert list(spec["components"]["securitySchemes"]) == ["ApiKey"]
        # What the description says is what the server does.
        assert (api.get("/v1/nests").status_code == 401) is keys_for_reads


def test_a_nest_has_one_name_in_every_answer(served) -> None:
    api, auth = served
    jki = CORPUS / "kernels" / "blas3" / "gemm_jki.c"
    params = json.loads((CORPUS / "expected.json").read_text())["corpus/kernels/blas3/gemm_jki.c"]["params"]
    program = {"source": jki.read_text(), "params": params, "name": jki.name}
    (nest_id,) = api.post("/v1/programs", json=program, headers=auth).json()["nest_ids"]  # stored by populate()
    name = "gemm_jki.c#0"
    assert [n["name"] for n in api.get("/v1/nests").json()["data"] if n["id"] == nest_id] == [name]
    assert api.get(f"/v1/nests/{nest_id}").json()["name"] == name
    (hit,) = api.post("/v1/search", json={"program": program, "k": 1}).json()["neighbours"]
    assert (hit["nest_id"], hit["name"], hit["distance"]) == (nest_id, name, 0.0)
    other = {**program, "source": "/* another program, the same nest */\n" + program["source"], "name": "copy.c"}
    answer = api.post("/v1/suggestions", json={**other, "k": 1, "fallback": False}, headers=auth).json()
    (nest,) = answer["nests"]
    assert nest["name"] == "copy.c#0" and nest["neighbours"][0]["name"] == name


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_the_docs_pages_load_every_asset_from_this_server(served, page: str) -> None:
    api, _ = served
    html = api.get(page)
    assert html.status_code == 200
    assert not re.findall(r"(?:https?:)?//[\w.-]+\.\w+", html.text), "the page names another host"
    assets = re.findall(r"""(?:src|href)=["']([^"']+)["']""", html.text)
    assert any(a.endswith(".js") for a in assets), assets
    for asset in assets:
        r = api.get(asset)
        assert r.status_code == 200 and len(r.content) > 1000, asset
    assert api.get("/openapi.json").status_code == 200
