"""POST /v1/programs:analyze: nests for good input, a 4xx naming the problem for bad input."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from tests.helpers.paths import CORPUS


@pytest.fixture(scope="module")
def client() -> TestClient:
    return TestClient(create_app())


def test_analyze_with_headers_and_params(client: TestClient) -> None:
    pb = CORPUS / "pbstyle"
    body = {"source": (pb / "mb_gemm.c").read_text(),
            "headers": {"minibench.h": (pb / "include/minibench.h").read_text()},
            "params": {"ni": 8, "nj": 8, "nk": 8}}
    r = client.post("/v1/programs:analyze", json=body)
    assert r.status_code == 200, r.text
    assert len(r.json()["nests"]) == 1


@pytest.mark.parametrize("body, status, needle", [
    ({"source": "void f( {"}, 422, "program.c:1"),
    ({"source": "int x;", "headers": {"../etc/passwd": "x"}}, 422, "plain relative path"),
    ({"source": "x" * (300 * 1024)}, 422, "source"),
])
def test_bad_input_is_a_4xx_with_a_reason(client: TestClient, body: dict, status: int, needle: str) -> None:
    r = client.post("/v1/programs:analyze", json=body)
    assert r.status_code == status
    assert needle in r.text
