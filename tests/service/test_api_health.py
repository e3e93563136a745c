"""/healthz, /readyz (database and index), /metrics (Prometheus), and the OpenAPI document."""

from __future__ import annotations

from pathlib import Path

from fastapi.testclient import TestClient
from prometheus_client.parser import text_string_to_metric_families

from service.app import create_app
from tests.service.factories import gemm_program, service_settings

ENDPOINTS = {
    ("post", "/v1/programs:analyze"), ("post", "/v1/programs"), ("post", "/v1/suggestions"),
    ("post", "/v1/tuning-jobs"), ("get", "/v1/tuning-jobs"), ("get", "/v1/tuning-jobs/{job_id}"),
    ("delete", "/v1/tuning-jobs/{job_id}"), ("get", "/v1/nests"), ("get", "/v1/nests/{nest_id}"),
    ("post", "/v1/search"), ("get", "/v1/targets"), ("get", "/healthz"), ("get", "/readyz"), ("get", "/metrics"),
}


def test_live_and_ready(api: TestClient) -> None:
    assert api.get("/healthz").json() == {"status": "ok"}
    ready = api.get("/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    assert ready.json()["checks"]["database"] == "ok" and ready.json()["checks"]["index"].startswith("ok")


def test_not_ready_while_the_database_is_unreachable(tmp_path: Path) -> None:
    # Nothing listens on port 1: the connection is refused at once.
    settings = service_settings(tmp_path, database_url="postgresql+psycopg://u:p@127.0.0.1:1/perfembed")
    with TestClient(create_app(settings)) as api:
        assert api.get("/healthz").status_code == 200
        r = api.get("/readyz")
        assert r.status_code == 503 and r.json()["status"] == "not ready"
        assert r.json()["checks"]["database"] != "ok" and "not checked" in r.json()["checks"]["index"]
        r = api.get("/v1/nests")
        assert r.status_code == 503 and r.json()["error"] == "DatabaseError"  # a StorageError, said without the URL
        assert "u:p@" not in r.text and "SELECT" not in r.text


def test_metrics_count_requests_by_operation(api: TestClient) -> None:
    api.get("/v1/nests/424242")
    api.post("/v1/programs:analyze", json=gemm_program())
    text = api.get("/metrics").text
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for family in text_string_to_metric_families(text) for s in family.samples}
    assert samples[("perfembed_http_requests_total",
                    (("method", "GET"), ("operation", "nests-get"), ("status", "404")))] >= 1
    assert samples[("perfembed_http_requests_total",
                    (("method", "POST"), ("operation", "programs-analyze"), ("status", "200")))] >= 1
    assert ("perfembed_evaluations_running", ()) in samples
    assert any(name == "perfembed_http_request_duration_seconds_bucket" for name, _ in samples)


def test_openapi_lists_every_endpoint_with_its_errors(api: TestClient) -> None:
    schema = api.get("/openapi.json").json()
    found = {(method, path) for path, item in schema["paths"].items() for method in item}
    assert ENDPOINTS <= found
    create = schema["paths"]["/v1/tuning-jobs"]["post"]
    assert {"202", "401", "404", "413", "422", "503"} <= set(create["responses"])
    assert create["security"] == [{"ApiKey": []}]
    assert "429" in schema["paths"]["/v1/suggestions"]["post"]["responses"]
    assert api.get("/docs").status_code == 200
