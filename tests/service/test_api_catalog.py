"""/v1/programs, /v1/nests, /v1/search and /v1/targets."""

from __future__ import annotations

import pytest
import sqlalchemy
from fastapi.testclient import TestClient

import database
from tests.service.factories import PB, TUNED, gemm_program, gemv_program


@pytest.fixture(scope="module")
def stored(api: TestClient, auth) -> dict[str, int]:
    gemm = api.post("/v1/programs", json=gemm_program(), headers=auth).json()["nest_ids"][0]
    gemv = api.post("/v1/programs", json=gemv_program(), headers=auth).json()["nest_ids"][0]
    return {"gemm": gemm, "gemv": gemv}


def test_storing_a_program_twice_gives_the_same_nests(api: TestClient, auth, stored) -> None:
    again = api.post("/v1/programs", json=gemm_program(), headers=auth)
    assert again.status_code == 201 and again.json()["nest_ids"] == [stored["gemm"]]


def test_a_program_with_headers_and_several_nests(api: TestClient, auth) -> None:
    body = {"source": (PB / "mb_gemm.c").read_text(), "params": {"ni": 8, "nj": 8, "nk": 8},
            "headers": {"minibench.h": (PB / "include" / "minibench.h").read_text()}}
    r = api.post("/v1/programs", json=body, headers=auth)
    assert r.status_code == 201, r.text
    assert len(r.json()["nest_ids"]) == 1
    # Every parameter of a nest needs a value: without them nothing is stored.
    r = api.post("/v1/programs", json={**body, "params": {"ni": 8}}, headers=auth)
    assert r.status_code == 422 and "missing value for parameter(s) nj, nk" in r.json()["message"]


def test_nests_are_listed_a_page_at_a_time(api: TestClient, stored) -> None:
    page = api.get("/v1/nests", params={"limit": 1}).json()
    assert page["count"] == 1 and page["limit"] == 1 and page["offset"] == 0
    everything = api.get("/v1/nests").json()["data"]
    assert {stored["gemm"], stored["gemv"]} <= {n["id"] for n in everything}
    assert api.get("/v1/nests", params={"offset": 10_000}).json()["data"] == []


def test_a_page_of_nests_reads_no_normalized_form_or_features(api: TestClient, stored) -> None:
    """Issue 59 (a keyless flood of ``/v1/nests?limit=1000``): each page decoded every nest's normalized form
    and features, tens of milliseconds of the interpreter's lock a page, and /healthz waited behind them
    (p99 765 ms; 65 ms since). A page's query reads the columns it shows."""
    statements: list[str] = []
    engine = api.app.state.perfembed.store().engine  # type: ignore[attr-defined]

    def seen(conn: object, cursor: object, statement: str, *args: object) -> None:
        statements.append(statement)

    sqlalchemy.event.listen(engine, "before_cursor_execute", seen)
    try:
        page = api.get("/v1/nests", params={"limit": 1000}).json()
    finally:
        sqlalchemy.event.remove(engine, "before_cursor_execute", seen)
    assert {n["name"] for n in page["data"] if n["id"] == stored["gemm"]} == {"gemm_ijk.c#0"}
    reads = [s for s in statements if "FROM nests" in s]
    assert reads and not any(column in s for s in reads for column in ("normalized", "static_features"))
    assert api.get("/v1/nests", params={"limit": 0}).status_code == 422


def test_a_nest_has_features_embedding_and_best_recipes(api: TestClient, app, stored) -> None:
    detail = api.get(f"/v1/nests/{stored['gemm']}").json()
    assert detail["id"] == stored["gemm"] and detail["name"] == "gemm_ijk.c#0"
    assert detail["features"]["static"]["depth"] == 3.0
    version, _ = app.state.perfembed.core().context.embeddings.model()
    assert detail["embedding"]["model_version"] == version and len(detail["embedding"]["vector"]) == 4
    assert detail["best_recipes"] == []  # stored, never measured
    # A tuned nest: its best recipe on each target, in its own loop names, naming the target.
    tuned = api.get("/v1/nests", params={"limit": 1}).json()["data"][0]
    assert tuned["name"] == "gemm_jki.c#0"
    (best,) = api.get(f"/v1/nests/{tuned['id']}").json()["best_recipes"]
    assert best["recipe"] == {"steps": TUNED["blas3/gemm_jki.c"]} and best["speedup"] == 1.5
    assert best["recipe_text"] == "interchange to j, i, k; tile j, i, k by 8x8x8"
    assert best["target"]["this_machine"] is True and best["target_id"] == best["target"]["id"]
    r = api.get("/v1/nests/987654")
    assert r.status_code == 404 and "987654" in r.json()["message"]


def test_search_by_vector_and_by_program(api: TestClient, stored) -> None:
    vector = api.get(f"/v1/nests/{stored['gemv']}").json()["embedding"]["vector"]
    by_vector = api.post("/v1/search", json={"vector": vector, "k": 1}).json()
    assert by_vector["count"] == 1 and by_vector["neighbours"][0]["nest_id"] == stored["gemv"]
    by_program = api.post("/v1/search", json={"program": gemm_program(), "k": 2}).json()
    assert by_program["neighbours"][0] == {"nest_id": stored["gemm"], "distance": 0.0, "name": "gemm_ijk.c#0",
                                           "best_speedup": None, "best_target_id": None, "best_target": None}
    # The next is a tuned nest: its best speedup names the machine it was measured on.
    tuned = by_program["neighbours"][1]
    assert tuned["best_speedup"] > 1 and tuned["best_target"]["id"] == tuned["best_target_id"]
    assert tuned["best_target"]["this_machine"] is True


@pytest.mark.parametrize("body, needle", [
    ({"k": 3}, "exactly one of"),
    ({"vector": [1.0, 2.0], "program": gemm_program()}, "exactly one of"),
    ({"vector": []}, "vector"),
    ({"vector": [1.0, 2.0, 3.0]}, "the vector has 3 components; the embedding has 4"),
    ({"program": {"source": "void f() { for (;;) }"}}, "program.c:1"),
])
def test_bad_searches_are_422(api: TestClient, body, needle: str) -> None:
    r = api.post("/v1/search", json=body)
    assert r.status_code == 422 and needle in r.json()["message"]


def test_targets(api: TestClient, app) -> None:
    with app.state.perfembed.store().session() as session:
        target = database.get_or_create_target(session, cpu_model="EPYC", cores=2, isa_level="x86-64-v3",
                                               cache_sizes={"l1d": 32768, "l2": 524288}, compiler="gcc",
                                               compiler_version="12.2.0", peak_gflops=50.0)
    data = api.get("/v1/targets").json()
    assert data["count"] >= 1
    (shown,) = [t for t in data["data"] if t["id"] == target.id]
    assert shown["cpu_model"] == "EPYC" and shown["cache_sizes"] == {"l1d": 32768, "l2": 524288}
    assert shown["peak_gflops"] == 50.0 and shown["signature_hash"] == target.signature_hash
