"""Every analysis of a request is admitted: within the budget, within the caller's rate, in its share of
the analysis workers (issue 59, item 4).

Reproduction: ``POST /v1/tuning-jobs`` extracted the program in the request's thread before its budgeted
analysis (a 372-byte macro bomb ran 206 s there and took 4.46 GB before its 422); six slow analyses
without a key filled the analysis workers, and a normal ``/v1/search`` waited 10-14 s and got 422; no
client was ever told to slow down.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from database import create_api_key
from service.app import create_app
from tests.security.programs import deep_and_long
from tests.service.factories import GEMM_PARAMS, gemm_program, make_app, service_settings, wait_for_evaluation

SMALL = {"source": deep_and_long(1, 1), "params": {"n": 100}}


def big_initializer(rows: int) -> str:
    """A program whose parse alone takes seconds: 20 KB of source, 0.9 MB once preprocessed (under the 1 MB
    limit), an initializer of ``rows`` x 64 numbers."""
    return ("#define R 7, 7, 7, 7, 7, 7, 7, 7\n#define R8 R, R, R, R, R, R, R, R\n"
            f"int table[] = {{ {', '.join(['R8'] * rows)} }};\n{deep_and_long(1, 1)}")


def client(tmp: Path, **overrides: object) -> tuple[TestClient, dict[str, str]]:
    app = create_app(service_settings(tmp, **overrides))
    with app.state.perfembed.store().session() as session:
        _, key = create_api_key(session, name="admission")
    return TestClient(app), {"Authorization": f"Bearer {key}"}


@pytest.fixture(scope="module")
def api(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[TestClient, dict[str, str]]]:
    api, auth = client(Path(tmp_path_factory.mktemp("admission")), analysis_time_limit_s=2.0, analysis_workers=2,
                       analysis_slots_for_keys=1, analysis_queue_keyless=8, keyless_analyses_per_minute=6000.0)
    with api:
        warm = [threading.Thread(target=lambda n=n: api.post("/v1/programs:analyze", headers=auth,
                                                              json={**SMALL, "name": f"warm{n}.c"}))
                for n in range(2)]
        for thread in warm:  # both analysis workers started (a start is seconds, outside any budget)
            thread.start()
        for thread in warm:
            thread.join()
        yield api, auth


def test_slow_keyless_analyses_leave_a_worker_to_key_holders(api: tuple[TestClient, dict[str, str]]) -> None:
    client, auth = api
    slow = {"source": deep_and_long(8, 128), "params": {"n": 100}}
    answers: list[int] = []
    threads = [threading.Thread(target=lambda: answers.append(client.post("/v1/programs:analyze",
                                                                          json=slow).status_code))
               for _ in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)
    start = time.monotonic()
    r = client.post("/v1/search", json={"program": SMALL, "k": 3}, headers=auth)
    elapsed = time.monotonic() - start
    for thread in threads:
        thread.join()
    assert r.status_code in (200, 404), r.text[:300]  # 404: no embedding model fitted on this empty database
    assert r.json().get("error") != "AnalysisTimeoutError" and elapsed < 1.5, (elapsed, r.text[:200])
    assert set(answers) <= {422, 429}, answers


def test_a_tuning_job_analyses_its_program_within_the_budget(api: tuple[TestClient, dict[str, str]]) -> None:
    """A program whose parse takes ~10 s in the request's thread: refused at the 2 s budget."""
    client, auth = api
    start = time.monotonic()
    r = client.post("/v1/tuning-jobs", json={"program": {"source": big_initializer(4_700)}, "nest": 0},
                    headers=auth)
    elapsed = time.monotonic() - start
    assert r.status_code == 422 and r.json()["error"] == "AnalysisTimeoutError", r.text[:300]
    assert elapsed < 6.0, f"{elapsed:.1f} s"


def test_a_keyless_client_over_its_rate_is_told_to_wait(tmp_path: Path) -> None:
    api, auth = client(tmp_path, keyless_analyses_per_minute=1.0, keyed_analyses_per_minute=600.0)
    def fresh(n: int) -> dict[str, object]:  # never the same program: no analysis answered from the cache
        return {**SMALL, "source": f"/* rate {n} {time.monotonic_ns()} */\n{SMALL['source']}"}

    with api:
        first = api.post("/v1/programs:analyze", json=fresh(1))
        second = api.post("/v1/programs:analyze", json=fresh(2))
        keyed = api.post("/v1/programs:analyze", json=fresh(3), headers=auth)
    assert first.status_code == 200, first.text[:200]
    assert second.status_code == 429 and int(second.headers["Retry-After"]) >= 1, second.text[:200]
    assert "KEYLESS_ANALYSES_PER_MINUTE" in second.json()["message"]
    assert keyed.status_code == 200, keyed.text[:200]


def test_the_dashboards_tuned_file_analyses_within_the_budget(tmp_path: Path) -> None:
    """Reproduction: ``/ui/suggest/tuned`` extracted the posted program with no budget (16.6 s for the bomb)."""
    app = make_app(service_settings(tmp_path, analysis_time_limit_s=2.0), populated=True)
    with app.state.perfembed.store().session() as session:
        _, key = create_api_key(session, name="tuned")
    auth = {"Authorization": f"Bearer {key}"}
    with TestClient(app) as api:
        r = api.post("/v1/suggestions", json={**gemm_program(), "evaluate": True, "fallback": False}, headers=auth)
        assert r.status_code == 202, r.text[:300]
        job = wait_for_evaluation(api, r.headers["Location"], headers=auth)
        form = {"program": json.dumps({"source": big_initializer(4_700), "params": GEMM_PARAMS}), "job": job["id"]}
        start = time.monotonic()
        tuned = api.post("/ui/suggest/tuned", data=form, headers=auth)
        elapsed = time.monotonic() - start
        start = time.monotonic()
        keyless = api.post("/ui/suggest/tuned", data=form)  # the case: no key at all
        keyless_s = time.monotonic() - start
    # Without a key the job is nobody's to read: refused before any analysis.
    assert keyless.status_code in (401, 403) and keyless_s < 1.0, (keyless.status_code, keyless_s)
    assert tuned.status_code == 422 and "PERFEMBED_ANALYSIS_TIME_LIMIT_S" in tuned.text, tuned.text[:300]
    assert elapsed < 6.0, f"{elapsed:.1f} s"
