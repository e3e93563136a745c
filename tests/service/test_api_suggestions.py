"""/v1/suggestions: per-nest answers, a job when the gate says no, evaluation jobs in a bounded pool."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

import database
from autotune.transfer import PRIOR_SOURCE
from autotune.transfer.priors import PRIOR_SOURCE_NEAR
from loopnest.errors import CompileError, PerfembedError, SourceError
from service.core import ProgramSource, TransferCore
from service.services import evaluation_jobs
from service.services.evaluation_pool import EvaluationPool
from service.services.suggestions import tuned_file
from tests.service import fake_harness
from tests.service.factories import TUNED, gemm_program, make_app, service_settings, wait_for_evaluation
from tests.service.fake_harness import fake_speedup


def test_each_nest_gets_a_job_when_the_gate_says_no(tmp_path: Path) -> None:
    # No stored recipe clears a 99x margin: no neighbour is good enough, so the gate says no.
    api, auth = _app_and_key(tmp_path, populated=True, min_speedup=99.0)
    with api:
        r = api.post("/v1/suggestions", json={**gemm_program(), "k": 3}, headers=auth)
        assert r.status_code == 200, r.text
        data = r.json()
        (nest,) = data["nests"]
        assert data["evaluated"] is False and nest["index"] == 0 and nest["neighbours"] == []
        assert nest["gate"]["confident"] is False and nest["gate"]["distance"] is None
        assert nest["gate"]["threshold"] > 0 and nest["job_id"] is not None
        # No neighbour within the gate: the recipe space's first guesses are the candidates, from no stored nest.
        assert nest["recipes"] and all(c["from_nest_id"] is None and c["from"] == PRIOR_SOURCE
                                       for c in nest["recipes"])
        assert nest["recipes"][0]["recipe"]["steps"][0]["op"] == "autoschedule"
        job = api.get(f"/v1/tuning-jobs/{nest['job_id']}").json()
        assert job["status"] == "queued" and job["nest_id"] == nest["nest_id"]
        # Asked again, the same open job answers: one job per nest.
        again = api.post("/v1/suggestions", json={**gemm_program(), "k": 3}, headers=auth).json()["nests"][0]
        assert again["job_id"] == nest["job_id"]


def test_a_chosen_sparse_structure_travels_with_the_fallback_job(tmp_path: Path) -> None:
    api, auth = _app_and_key(tmp_path, populated=True, min_speedup=99.0)
    with api:
        body = {**gemm_program(), "k": 3, "sparsity": "powerlaw", "density": 0.02}
        (nest,) = api.post("/v1/suggestions", json=body, headers=auth).json()["nests"]
        with api.app.state.perfembed.store().session() as session:  # type: ignore[attr-defined]
            job = database.get_job(session, job_id=nest["job_id"])
            assert (job.options["sparsity"], job.options["density"]) == ("powerlaw", 0.02)


def test_no_job_without_fallback(api: TestClient, auth) -> None:
    r = api.post("/v1/suggestions", json={**gemm_program(), "fallback": False}, headers=auth)
    assert r.status_code == 200 and r.json()["nests"][0]["job_id"] is None
    assert r.json()["nests"][0]["nest_id"] is None  # nothing stored


def test_answers_come_from_the_database_when_a_neighbour_has_a_verified_recipe(api: TestClient, app, auth) -> None:
    nest = api.post("/v1/suggestions", json=gemm_program(), headers=auth).json()["nests"][0]
    assert nest["gate"]["confident"] is True and nest["job_id"] is None
    # The neighbour's 1.5x is another nest's speedup: it is in the neighbour, never among this nest's results.
    nearest = nest["neighbours"][0]
    assert nest["results"] == [] and nearest["name"] == "gemm_jki.c#0"
    assert nearest["recorded_speedup"] == fake_speedup(TUNED["blas3/gemm_jki.c"]) == 1.5
    assert nearest["recipe"] == {"steps": TUNED["blas3/gemm_jki.c"]} and nearest["target"]["this_machine"] is True
    # Its recipe adapted to this nest (gemm_ijk's loops i, j, k), in this nest's loop names.
    assert nest["recipes"][0] == {
        "from": "gemm_jki.c#0", "from_nest_id": nearest["nest_id"],
        "recipe": {"steps": [{"op": "interchange", "order": [1, 0, 2]},
                             {"op": "tile", "loops": [0, 1, 2], "sizes": [8, 8, 8]}]},
        "recipe_text": "interchange to j, i, k; tile j, i, k by 8x8x8",
        # Which of the neighbour's recipes it came from (its best here), in the neighbour's loop names.
        "from_recipe_text": nearest["recipe_text"], "from_speedup": 1.5,
        "variant": ""}  # the lent recipe itself, not transfer's taller block or SIMD reduction of it
    # The gate: the distance to the nearest neighbour, and apart from it the threshold.
    threshold = app.state.perfembed.core().context.embeddings.gate_distance()
    assert nest["gate"] == {"confident": True, "distance": nearest["distance"], "threshold": threshold,
                            "accepted": None}
    assert 0 < nearest["distance"] <= threshold
    assert set(nest) == {"index", "nest_id", "name", "function", "params", "loop_names", "tuned_before",
                         "neighbours", "recipes", "gate", "job_id", "results"}  # nothing internal


def test_with_transfer_priors_schedule_isls_schedule_is_offered_beside_a_near_neighbour(tmp_path: Path) -> None:
    api, auth = _app_and_key(tmp_path, transfer_priors="schedule")
    with api:
        nest = api.post("/v1/suggestions", json=gemm_program(), headers=auth).json()["nests"][0]
        assert nest["gate"]["confident"] is True
        first, lent = nest["recipes"][0], nest["recipes"][1]
        assert first["from"] == PRIOR_SOURCE_NEAR and first["from_nest_id"] is None
        assert first["recipe"]["steps"][0]["op"] == "autoschedule"
        assert lent["from"] == "gemm_jki.c#0" and lent["from_nest_id"] == nest["neighbours"][0]["nest_id"]


@pytest.mark.parametrize("body, status, needle", [
    ({"source": "int f( {", "k": 2}, 422, "program.c:1"),
    ({**gemm_program(), "k": 0}, 422, "k"),
    ({**gemm_program(), "k": 101}, 422, "k"),
    ({**gemm_program(), "sparsity": "diagonal"}, 422, "sparsity"),
    ({**gemm_program(), "density": 1.5}, 422, "density"),
])
def test_bad_requests_are_4xx(api: TestClient, auth, body, status: int, needle: str) -> None:
    r = api.post("/v1/suggestions", json=body, headers=auth)
    assert r.status_code == status and needle in r.json()["message"]


def test_the_server_limit_on_k_is_a_422_naming_it(tmp_path: Path, auth) -> None:
    settings = service_settings(tmp_path, max_k=4)
    with TestClient(make_app(settings)) as api:
        with api.app.state.perfembed.store().session() as session:
            _, key = database.create_api_key(session, name="k")
        r = api.post("/v1/suggestions", json={**gemm_program(), "k": 5}, headers={"Authorization": f"Bearer {key}"})
        assert r.status_code == 422 and "limit of 4" in r.json()["message"]


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    fake_harness.HOLD = threading.Event()
    try:
        yield fake_harness.HOLD
    finally:
        fake_harness.HOLD.set()
        fake_harness.HOLD = None


def _app_and_key(tmp_path: Path, *, populated: bool = True, **overrides: object) -> tuple[TestClient, dict[str, str]]:
    api = TestClient(make_app(service_settings(tmp_path, **overrides), populated=populated))
    with api.app.state.perfembed.store().session() as session:  # type: ignore[attr-defined]
        _, key = database.create_api_key(session, name="evaluations")
    return api, {"Authorization": f"Bearer {key}"}


def test_an_evaluation_is_a_job_polled_with_its_progress_then_its_answer(tmp_path: Path, gate) -> None:
    api, headers = _app_and_key(tmp_path)
    with api:
        r = api.post("/v1/suggestions", json={**gemm_program(), "evaluate": True}, headers=headers)
        assert r.status_code == 202, r.text
        location = r.headers["Location"]
        assert location == f"/v1/evaluation-jobs/{r.json()['id']}" and r.json()["status"] in ("queued", "running")
        assert fake_harness.STARTED.acquire(timeout=30)
        assert api.get(location).status_code == 401  # the job is its key's (issue 59, item 11)
        running = api.get(location, headers=headers).json()
        assert running["status"] == "running" and running["result"] is None
        total = running["progress"]["total"]
        assert running["progress"]["text"] == f"candidate 1/{total} (from gemm_jki.c#0): compiling"
        assert running["progress"]["current"] == 1 and total >= 1
        gate.set()
        done = wait_for_evaluation(api, location, headers=headers)
        assert done["status"] == "done" and done["error"] is None and done["finished_at"]
        assert done["result"]["evaluated"] is True
        (nest,) = done["result"]["nests"]
        assert nest["name"] == "gemm_ijk.c#0" and nest["nest_id"] is not None
        # Every candidate measured (the fake harness: 1 + 0.25 x its steps), the fastest accepted, re-measured;
        # after them, the fastest that ran on one thread once more in parallel (autotune.transfer.parallel).
        assert [r["source"] for r in nest["results"]] == ["measured"] * nest["evaluations"]
        assert nest["evaluations"] in (total, total + 1)
        fastest = max(fake_speedup(r["recipe"]["steps"]) for r in nest["results"])
        assert nest["gate"]["accepted"] is True and nest["accepted"] is True
        assert nest["best"]["speedup"] == fastest and nest["best"]["interval"] == [fastest * 0.98, fastest * 1.02]
        assert all(r["verified"] and r["status"] == "ok" and r["recipe_text"] for r in nest["results"])
        assert api.get("/v1/evaluation-jobs/" + "0" * 32, headers=headers).status_code == 404
        assert api.get("/v1/evaluation-jobs/not-an-id", headers=headers).status_code == 422


def test_an_evaluation_jobs_tuned_file_is_its_program_with_the_accepted_recipe(tmp_path: Path, gate) -> None:
    """The API's download of the tuned file (the dashboard had the only one): the program the job kept, the
    same text the dashboard gives, for the job's key only, and a one-line 409 before there is one (the job's
    state is why, not the request: a 422 told a new user to fix a request that was right)."""
    api, headers = _app_and_key(tmp_path)
    with api:
        r = api.post("/v1/suggestions", json={**gemm_program(), "evaluate": True}, headers=headers)
        location, job = r.headers["Location"], r.json()["id"]
        early = api.get(f"{location}/tuned-file", headers=headers)
        assert early.status_code == 409 and early.json()["message"].startswith(f"evaluation job {job} has no result")
        gate.set()
        assert wait_for_evaluation(api, location, headers=headers)["result"]["nests"][0]["accepted"] is True
        tuned = api.get(f"{location}/tuned-file", headers=headers)
        assert tuned.status_code == 200 and tuned.headers["content-type"].startswith("text/x-c")
        assert tuned.headers["content-disposition"].startswith('attachment; filename="gemm_ijk.tuned.c"')
        # Its header says what was applied and the flags it needs, as the CLI's --write-best file does.
        assert tuned.text.startswith("/*\n * Tuned by perfembed.\n") and " * Build with: -O3" in tuned.text
        assert 'NOT checked as a whole program (evaluate: true, not "program")' in tuned.text
        page = api.post("/ui/suggest/tuned", data={"program": json.dumps(gemm_program()), "job": job}, headers=headers)
        assert page.status_code == 200 and page.text == tuned.text
        assert api.get(f"{location}/tuned-file").status_code == 401
        assert api.get(f"/v1/evaluation-jobs/{'0' * 32}/tuned-file", headers=headers).status_code == 404


def test_a_burst_of_evaluations_is_queued_then_refused_with_retry_after(tmp_path: Path, gate) -> None:
    api, headers = _app_and_key(tmp_path, evaluation_pool_size=1, evaluation_queue_size=1,
                                evaluation_retry_after_s=9)
    with api:
        body = {**gemm_program(), "evaluate": True}
        first = api.post("/v1/suggestions", json=body, headers=headers)
        assert first.status_code == 202 and fake_harness.STARTED.acquire(timeout=30)  # holds the slot
        second = api.post("/v1/suggestions", json=body, headers=headers)
        assert second.status_code == 202, second.text
        assert second.json()["status"] == "queued" and second.json()["queue_position"] == 1
        third = api.post("/v1/suggestions", json=body, headers=headers)
        assert third.status_code == 429 and third.headers["Retry-After"] == "9"
        assert third.json()["retry_after"] == 9 and "busy" in third.json()["message"]
        # Reads and non-evaluating suggestions are not held up by the pool.
        assert api.post("/v1/suggestions", json=gemm_program(), headers=headers).status_code == 200
        gate.set()
        assert fake_harness.STARTED.acquire(timeout=30)  # the second ran once the first ended
        ended = [wait_for_evaluation(api, r.headers["Location"], headers=headers) for r in (first, second)]
        assert [job["status"] for job in ended] == ["done", "done"]
        assert "perfembed_evaluations_rejected_total 1.0" in api.get("/metrics").text


@pytest.mark.parametrize("raised, status, needle", [
    (SourceError("program.c:3: unsupported construct"), 422, "program.c:3"),
    (CompileError("generated code did not compile"), 500, "bug in perfembed"),  # generated code: our bug
    (RuntimeError("boom"), 500, "bug in perfembed"),
])
def test_a_failed_evaluation_job_carries_the_error_the_request_would_have_got(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, raised: Exception, status: int, needle: str) -> None:
    def fail(*_: object, **__: object) -> None:
        raise raised

    monkeypatch.setattr(TransferCore, "suggest", fail)
    api, headers = _app_and_key(tmp_path, populated=False)
    with api:
        r = api.post("/v1/suggestions", json={**gemm_program(), "evaluate": True}, headers=headers)
        job = wait_for_evaluation(api, r.headers["Location"], headers=headers)
    assert job["status"] == "failed" and job["result"] is None
    assert job["error"]["status"] == status and needle in job["error"]["message"]
    # Our own errors keep their class (CompileError: a bug, 500); anything else is an InternalError.
    assert job["error"]["error"] == (type(raised).__name__ if isinstance(raised, PerfembedError) else "InternalError")


def test_evaluations_run_under_the_per_request_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[object] = []
    real = TransferCore.suggest

    def spy(self, program, options, **kwargs):
        seen.append(kwargs.get("settings") or self.settings)
        return real(self, program, options, **kwargs)

    monkeypatch.setattr(TransferCore, "suggest", spy)
    api, headers = _app_and_key(tmp_path, request_wall_time_limit_s=7, request_cpu_time_limit_s=5,
                                request_threads=3)
    with api:
        evaluate = {**gemm_program(), "evaluate": True}
        r = api.post("/v1/suggestions", json=evaluate, headers=headers)
        done = wait_for_evaluation(api, r.headers["Location"], headers=headers)
        assert r.status_code == 202 and done["status"] == "done"
        assert api.post("/v1/suggestions", json=gemm_program(), headers=headers).status_code == 200
        settings = api.app.state.perfembed.settings  # type: ignore[attr-defined]
    evaluated, plain = seen
    assert (evaluated.wall_time_limit_s, evaluated.cpu_time_limit_s, evaluated.threads) == (7, 5, 3)
    # By default a request evaluates with every core, as the CLI does (it used 1 thread silently).
    assert type(settings)().request_threads == 0
    assert plain.wall_time_limit_s == settings.wall_time_limit_s


def test_the_programs_kept_for_tuned_files_are_bounded_in_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    """A job keeps its program for its tuned file, but 10,000 kept jobs of 2 MB programs would be 20 GB: the
    newest PROGRAMS_KEPT_BYTES are kept, and an older job's tuned file says to evaluate it again."""
    monkeypatch.setattr(evaluation_jobs, "PROGRAMS_KEPT_BYTES", 3_000)
    jobs = evaluation_jobs.EvaluationJobs(EvaluationPool(size=1, queue=10, retry_after=1), keep_s=60)
    done = threading.Event()
    submitted = [jobs.submit(lambda _: {"nests": []}, program=ProgramSource(source="x" * 1_000, name=f"p{i}.c"))
                 for i in range(4)]
    def last(_: object) -> dict[str, list[object]]:
        done.set()
        return {"nests": []}

    submitted.append(jobs.submit(last))
    assert done.wait(30)
    assert jobs.program(submitted[0]) is None  # pushed out by the three after it
    assert [jobs.program(j).name for j in submitted[1:4]] == ["p1.c", "p2.c", "p3.c"]  # type: ignore[union-attr]
    huge = jobs.submit(lambda _: {"nests": []}, program=ProgramSource(source="x" * 10_000))
    assert jobs.program(huge) is None and jobs.program(submitted[3]) is not None  # never kept, evicts nothing
    with pytest.raises(PerfembedError, match="its program is no longer kept on this server"):
        tuned_file(jobs, jobs.get(submitted[0].id))
