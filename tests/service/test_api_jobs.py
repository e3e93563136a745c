"""/v1/tuning-jobs: 202 with an id, status and progress, cancel; user errors are 4xx and write nothing."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import text

import database
from database import claim_next_job, fail_job, update_job_progress
from service.app import create_app
from service.services import tuning_jobs
from tests.database.factories import committed
from tests.service.factories import GEMM_PARAMS, gemm_program, gemv_program


def count(app, table: str) -> int:
    with app.state.perfembed.store().session() as session:
        return int(session.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())


@pytest.fixture(scope="module")
def nest_id(api: TestClient, auth: dict[str, str]) -> int:
    return int(api.post("/v1/programs", json=gemm_program(), headers=auth).json()["nest_ids"][0])


def test_submit_is_202_with_a_location_and_the_job_can_be_followed(api: TestClient, auth, nest_id: int) -> None:
    r = api.post("/v1/tuning-jobs", json={"nest_id": nest_id, "params": GEMM_PARAMS, "budget": 7, "seed": 3,
                                          "warm_start": [{"steps": [{"op": "interchange", "order": [0, 2, 1]}]}]},
                 headers=auth)
    assert r.status_code == 202, r.text
    job = r.json()
    assert r.headers["Location"] == f"/v1/tuning-jobs/{job['id']}"
    assert job["status"] == "queued" and job["budget"] == 7 and job["trials_done"] == 0
    got = api.get(f"/v1/tuning-jobs/{job['id']}").json()
    assert got["id"] == job["id"] and got["best_speedup"] is None and got["error"] is None
    assert job["id"] in [j["id"] for j in api.get("/v1/tuning-jobs", params={"status": "queued"}).json()["data"]]


def test_progress_best_so_far_and_error_are_reported(api: TestClient, app, auth, nest_id: int) -> None:
    job_id = api.post("/v1/tuning-jobs", json={"nest_id": nest_id, "params": GEMM_PARAMS, "budget": 5},
                      headers=auth).json()["id"]
    store = app.state.perfembed.store()
    with store.session() as session:
        recipe = database.get_or_create_recipe(session, steps=[{"op": "parallelize", "loop": 0}])
    claimed = None
    while claimed is None or claimed.id != job_id:  # earlier tests left queued jobs: take them all
        claimed = committed(store, claim_next_job, worker_id="w", lease_seconds=60)
        assert claimed is not None
    committed(store, update_job_progress, job_id=job_id, worker_id="w", progress=3, best_recipe_id=recipe.id,
              best_speedup=2.5)
    job = api.get(f"/v1/tuning-jobs/{job_id}").json()
    assert (job["status"], job["trials_done"], job["budget"], job["best_speedup"]) == ("running", 3, 5, 2.5)
    assert job["best_recipe"] == {"steps": [{"op": "parallelize", "loop": 0}]} and job["worker"] == "w"
    committed(store, fail_job, job_id=job_id, worker_id="w", error="program.c:3: no value for n")
    job = api.get(f"/v1/tuning-jobs/{job_id}").json()
    assert job["status"] == "failed" and "program.c:3" in job["error"]
    r = api.delete(f"/v1/tuning-jobs/{job_id}", headers=auth)
    assert r.status_code == 409 and "already failed" in r.json()["message"]


def test_cancel_is_idempotent(api: TestClient, auth, nest_id: int) -> None:
    job_id = api.post("/v1/tuning-jobs", json={"nest_id": nest_id, "params": GEMM_PARAMS}, headers=auth).json()["id"]
    first = api.delete(f"/v1/tuning-jobs/{job_id}", headers=auth)
    assert first.status_code == 200 and first.json()["status"] == "cancelled"
    assert api.delete(f"/v1/tuning-jobs/{job_id}", headers=auth).json()["status"] == "cancelled"


def test_a_job_for_a_program_stores_it_and_records_how_to_rebuild_the_nest(api: TestClient, app, auth) -> None:
    program = gemv_program(defines={"ALPHA": "2", "UNUSED": None})
    r = api.post("/v1/tuning-jobs", json={"program": program, "budget": 2, "reps": 1, "threads": 1}, headers=auth)
    assert r.status_code == 202, r.text
    with app.state.perfembed.store().session() as session:
        job = database.get_job(session, job_id=r.json()["id"])
    assert job.options["params"] == {"m": 16, "n": 16} and job.options["nest_index"] == 0
    assert sorted(job.options["defines"]) == ["ALPHA=2", "UNUSED"] and job.options["reps"] == 1


def test_a_job_for_a_stored_nest_defaults_to_its_stored_parameter_values(api: TestClient, app, auth) -> None:
    """Seed nests carry the values they were tuned at: a job for one needs no 'params' (it was a 422)."""
    with app.state.perfembed.store().session() as session:
        program = database.get_or_create_program(session, source=gemm_program()["source"] + "\n// seed",
                                                 name="seed/gemm.c")
        nest = database.get_or_create_nest(session, program_id=program.id, index=0, normalized={
            "name": "gemm.c:gemm_ijk#0", "params": ["ni", "nj", "nk"], "param_values": GEMM_PARAMS})
    r = api.post("/v1/tuning-jobs", json={"nest_id": nest.id, "budget": 2}, headers=auth)
    assert r.status_code == 202, r.text
    given = api.post("/v1/tuning-jobs", json={"nest_id": nest.id, "params": {"ni": 64}}, headers=auth)
    with app.state.perfembed.store().session() as session:
        assert database.get_job(session, job_id=r.json()["id"]).options["params"] == GEMM_PARAMS
        # Values given win; the others still come from the nest.
        assert database.get_job(session, job_id=given.json()["id"]).options["params"] == {**GEMM_PARAMS, "ni": 64}


@pytest.mark.parametrize("body, status, needle", [
    ({"nest_id": 999999, "params": GEMM_PARAMS}, 404, "999999"),
    ({"nest_id": 1, "params": GEMM_PARAMS, "target_id": 4242}, 404, "4242"),
    ({"nest_id": 1, "params": GEMM_PARAMS, "budget": 10**6}, 422, "over this server's limit"),
    ({"nest_id": 1, "params": GEMM_PARAMS, "warm_start": [{"steps": [{"op": "nope"}]}]}, 422, "nope"),
    ({"program": {"source": "void f(int n, double a[n]) { for (int i = 0; i < n; i++) a[i] = 0 }"}}, 422,
     "program.c:1"),
    ({"program": gemm_program(), "nest": 3}, 422, "has 1 supported loop nest"),
    ({"program": gemm_program(params={})}, 422, "missing value for parameter(s) ni, nj, nk"),
    ({"program": gemm_program(), "nest_id": 1}, 422, "exactly one of"),
    ({}, 422, "exactly one of"),
])
def test_user_errors_are_4xx_and_write_nothing(api: TestClient, app, auth, nest_id: int, body, status: int,
                                                needle: str) -> None:
    before = {t: count(app, t) for t in ("programs", "nests", "tuning_jobs")}
    r = api.post("/v1/tuning-jobs", json=body, headers=auth)
    assert r.status_code == status, r.text
    assert needle in r.json()["message"]
    assert {t: count(app, t) for t in before} == before


def test_a_job_for_a_nest_without_stored_values_needs_params(api: TestClient, app, auth) -> None:
    with app.state.perfembed.store().session() as session:
        program = database.get_or_create_program(session, source=gemm_program()["source"] + "\n// bare",
                                                 name="bare/gemm.c")
        nest = database.get_or_create_nest(session, program_id=program.id, index=0, normalized={
            "name": "gemm.c:gemm_ijk#0", "params": ["ni", "nj", "nk"]})
    before = count(app, "tuning_jobs")
    r = api.post("/v1/tuning-jobs", json={"nest_id": nest.id}, headers=auth)
    assert r.status_code == 422 and "missing value for parameter(s) ni, nj, nk" in r.json()["message"]
    assert count(app, "tuning_jobs") == before


def test_unknown_job_ids_are_404(api: TestClient, auth) -> None:
    assert api.get("/v1/tuning-jobs/123456").status_code == 404
    r = api.delete("/v1/tuning-jobs/123456", headers=auth)
    assert r.status_code == 404 and "123456" in r.json()["message"]
    assert api.get("/v1/tuning-jobs/0").status_code == 422
    assert api.get("/v1/tuning-jobs/99999999999999999999").status_code == 422


def test_a_write_that_fails_midway_leaves_no_rows(settings, auth, monkeypatch: pytest.MonkeyPatch) -> None:
    real = database.enqueue_job

    def enqueue_then_crash(session, **kwargs):
        real(session, **kwargs)  # the row is flushed inside the transaction...
        raise RuntimeError("the process died here")  # ...and the transaction never commits

    app = create_app(settings)
    with TestClient(app, raise_server_exceptions=False) as api:
        before = count(app, "tuning_jobs")
        monkeypatch.setattr(tuning_jobs, "enqueue_job", enqueue_then_crash)
        r = api.post("/v1/tuning-jobs", json={"nest_id": 1, "params": GEMM_PARAMS}, headers=auth)
        assert r.status_code == 500 and r.json()["error"] == "InternalError"
        assert count(app, "tuning_jobs") == before
