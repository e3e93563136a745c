"""The tuning workers as a client sees them: /readyz counts the live ones from their heartbeats (a
silent one drops out), and a job's status_text says "waiting for a worker" while none can run it."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import delete

from database import Store, claim_next_job, record_heartbeat
from database.tables import WorkerModel
from service.app import create_app
from tests.database.factories import committed
from tests.service.factories import GEMM_PARAMS, gemm_program, service_settings


@pytest.fixture
def store(app: FastAPI) -> Iterator[Store]:
    """The app's store with no worker rows, before and after the test."""
    opened: Store = app.state.perfembed.store()
    with opened.session() as session:
        session.execute(delete(WorkerModel))
    yield opened
    with opened.session() as session:
        session.execute(delete(WorkerModel))


def beat(store: Store, name: str, *, ago_s: float = 0.0, job_id: int | None = None) -> None:
    committed(store, record_heartbeat, name=name, host="h", pid=1, cpus="0-1", job_id=job_id,
                           now=datetime.now(UTC) - timedelta(seconds=ago_s))


def enqueue(api: TestClient, auth: dict[str, str]) -> int:
    nest_id = api.post("/v1/programs", json=gemm_program(), headers=auth).json()["nest_ids"][0]
    r = api.post("/v1/tuning-jobs", json={"nest_id": nest_id, "params": GEMM_PARAMS, "budget": 5}, headers=auth)
    assert r.status_code == 202, r.text
    return int(r.json()["id"])


def test_ready_reports_no_worker_and_a_job_waits_for_one(api: TestClient, auth, store: Store) -> None:
    ready = api.get("/readyz")
    assert ready.status_code == 200  # the API itself serves; tuning waits
    assert ready.json()["workers"] == {"alive": 0, "busy": 0, "data": []}
    assert ready.json()["checks"]["workers"].startswith("none alive: tuning jobs stay queued")
    job_id = enqueue(api, auth)
    text = api.get(f"/v1/tuning-jobs/{job_id}").json()["status_text"]
    assert text.startswith("waiting for a worker: none is alive") and "perfembed serve --workers 1" in text
    listed = {j["id"]: j for j in api.get("/v1/tuning-jobs").json()["data"]}
    assert listed[job_id]["status_text"] == text


def test_live_workers_are_counted_and_silent_ones_dropped(api: TestClient, auth, store: Store) -> None:
    beat(store, "h:1:live")
    beat(store, "h:2:silent", ago_s=120)  # killed two minutes ago: its row is still there
    body = api.get("/readyz").json()
    assert body["workers"]["alive"] == 1 and body["checks"]["workers"] == "1 alive, 0 busy"
    (worker,) = body["workers"]["data"]
    assert (worker["name"], worker["cpus"], worker["job_id"]) == ("h:1:live", "0-1", None)
    assert 0 <= worker["last_seen_s"] < 30
    job_id = enqueue(api, auth)
    text = api.get(f"/v1/tuning-jobs/{job_id}").json()["status_text"]
    assert text.startswith("queued: ") and "1 worker(s) alive, 1 idle" in text


def test_a_running_job_whose_worker_went_silent_waits_for_another(api: TestClient, auth, store: Store) -> None:
    job_id = enqueue(api, auth)
    claimed = None
    while claimed is None or claimed.id != job_id:  # earlier tests left queued jobs: take them all
        claimed = committed(store, claim_next_job, worker_id="h:3:busy", lease_seconds=60)
        assert claimed is not None
    beat(store, "h:3:busy", job_id=job_id)
    assert api.get(f"/v1/tuning-jobs/{job_id}").json()["status_text"] == "running on worker h:3:busy: 0 of 5 trials"
    assert api.get("/readyz").json()["workers"]["busy"] == 1
    beat(store, "h:3:busy", ago_s=60, job_id=job_id)
    text = api.get(f"/v1/tuning-jobs/{job_id}").json()["status_text"]
    assert text.startswith("waiting for a worker: its worker h:3:busy stopped sending heartbeats and no other")
    beat(store, "h:4:other")
    text = api.get(f"/v1/tuning-jobs/{job_id}").json()["status_text"]
    assert text.endswith("another one resumes it when its lease expires")


def test_a_server_that_needs_workers_is_not_ready_without_them(tmp_path: Path) -> None:
    with TestClient(create_app(service_settings(tmp_path, ready_min_workers=1))) as client:
        r = client.get("/readyz")
        assert r.status_code == 503 and "PERFEMBED_READY_MIN_WORKERS" in r.json()["checks"]["workers"]
        beat(client.app.state.perfembed.store(), "h:1:a")  # type: ignore[attr-defined]
        assert client.get("/readyz").status_code == 200
