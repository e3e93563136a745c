"""User errors are 4xx with a JSON body naming the problem (and line); never a 500."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from service.app import create_app
from tests.service.factories import CORPUS, gemm_program, service_settings


@pytest.mark.parametrize("body, needle", [
    ({"source": "void f(int n, double a[n]) {\n  for (int i = 0; i < n; i++)\n    a[i] = ;\n}"}, "program.c:3"),
    ({"source": "int x;", "headers": {"../etc/passwd": "x"}}, "plain relative path"),
    ({"source": "int x = \ud800;"}, "body.source"),
    ({"source": "int x;\x00"}, "NUL"),
    ({"source": "int x;", "defines": {"1BAD": "1"}}, "defines"),
    ({"source": "int x;", "params": {"n": 2**40}}, "params"),
    ({"source": 3}, "source"),
    ({}, "source"),
])
def test_invalid_programs_are_422_with_the_problem(api: TestClient, body, needle: str) -> None:
    r = api.post("/v1/programs:analyze", content=json.dumps(body), headers={"Content-Type": "application/json"})
    assert r.status_code == 422, r.text
    assert r.json()["error"] and needle in r.json()["message"]


def test_an_unsupported_construct_is_named_with_its_line(api: TestClient) -> None:
    source = (CORPUS / "kernels/reject/indirect_subscript.c").read_text()
    (rejected,) = api.post("/v1/programs:analyze", json={"source": source}).json()["rejected"]
    assert rejected["construct"] == "indirect subscript" and rejected["location"]["line"] > 0


def test_malformed_json_is_422_naming_the_position(api: TestClient) -> None:
    r = api.post("/v1/programs:analyze", content=b'{"source": ', headers={"Content-Type": "application/json"})
    assert r.status_code == 422 and r.json()["error"] == "ValidationError" and "JSON" in r.json()["message"]


def test_oversized_bodies_are_413_before_they_are_read(tmp_path: Path) -> None:
    with TestClient(create_app(service_settings(tmp_path, max_request_bytes=4096))) as api:
        big = {"source": "int x;\n" * 1000}
        r = api.post("/v1/programs:analyze", json=big)
        assert r.status_code == 413 and "over the limit of 4096 bytes" in r.json()["message"]

        def chunks():  # no Content-Length: the body is counted as it arrives
            for _ in range(10):
                yield b" " * 1000

        r = api.post("/v1/programs:analyze", content=chunks(), headers={"Content-Type": "application/json"})
        assert r.status_code == 413
        small = api.post("/v1/programs:analyze", content=iter([json.dumps(gemm_program()).encode()]),
                         headers={"Content-Type": "application/json"})
        assert small.status_code == 200, small.text


def test_unknown_routes_and_methods_answer_json(api: TestClient) -> None:
    r = api.get("/v1/nope")
    assert r.status_code == 404 and r.json()["error"] == "HTTPError"
    r = api.put("/v1/nests")
    assert r.status_code == 405 and r.json()["message"] == "Method Not Allowed"
