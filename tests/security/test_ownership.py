"""Issue 59, items 11 and 12: jobs, evaluation jobs, sources and drop-in files belong to their key.

Reproduction (before the fix): key B cancelled key A's tuning job (200); anyone, with no key at all, read an
evaluation job and the whole program another key uploaded (``GET /ui/nests/{id}/dropin.c``: 200 with the
source). Now a job is cancelled, and an evaluation job read, only by the key that started it or an admin
key (403 otherwise); a program sent with a key is that key's: its source, statements and drop-in file are
served to the keys that sent it and to admin keys only, unless ``PERFEMBED_PUBLIC_SOURCES`` is set. The
seed's programs (stored without a key) stay public, and features, recipes and measurements stay shared.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from database import create_api_key, delete_api_key, enqueue_job
from service.access import PRIVATE_TEXT
from tests.security.owners import MARKER, World, build, source
from tests.service.factories import GEMM_PARAMS, wait_for_evaluation


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    built = build(Path(tmp_path_factory.mktemp("owners")))
    yield built
    built.client.__exit__(None, None, None)


def _job(world: World, who: str) -> int:
    r = world.client.post("/v1/tuning-jobs", json={"nest_id": world.nests["public"], "budget": 1},
                          headers=world.auth(who))
    assert r.status_code == 202, r.text
    return int(r.json()["id"])


def test_a_key_cannot_cancel_another_keys_job(world: World) -> None:
    job = _job(world, "a")
    refused = world.client.delete(f"/v1/tuning-jobs/{job}", headers=world.auth("b"))
    assert refused.status_code == 403 and "belongs to another API key" in refused.json()["message"]
    assert world.client.get(f"/v1/tuning-jobs/{job}").json()["status"] == "queued"
    assert world.client.delete(f"/v1/tuning-jobs/{job}", headers=world.auth("a")).json()["status"] == "cancelled"


def test_an_admin_key_cancels_any_job_even_one_the_cli_enqueued(world: World) -> None:
    job = _job(world, "b")
    assert world.client.delete(f"/v1/tuning-jobs/{job}", headers=world.auth("admin")).status_code == 200
    with world.client.app.state.perfembed.store().session() as session:  # type: ignore[attr-defined]
        cli_job = enqueue_job(session, nest_id=world.nests["public"], budget=1).id
    assert world.client.delete(f"/v1/tuning-jobs/{cli_job}", headers=world.auth("a")).status_code == 403
    assert world.client.delete(f"/v1/tuning-jobs/{cli_job}", headers=world.auth("admin")).status_code == 200


def test_an_evaluation_job_is_read_only_with_its_key(world: World) -> None:
    body = {"source": source("a"), "params": GEMM_PARAMS, "name": "mine.c", "evaluate": True, "fallback": False}
    r = world.client.post("/v1/suggestions", json=body, headers=world.auth("a"))
    assert r.status_code == 202, r.text
    location = r.headers["Location"]
    assert wait_for_evaluation(world.client, location, headers=world.auth("a"))["status"] == "done"
    assert world.client.get(location).status_code == 401
    other = world.client.get(location, headers=world.auth("b"))
    assert other.status_code == 403 and "result" not in other.json()
    assert world.client.get(location, headers=world.auth("admin")).json()["status"] == "done"
    # The dashboard's tuned file of that job: the same rule.
    form = {"program": '{"source": "x"}', "job": r.json()["id"]}
    assert world.client.post("/ui/suggest/tuned", data={**form, "key": world.keys["b"]}).status_code == 403
    assert world.client.post("/ui/suggest/tuned", data=form).status_code == 401


@pytest.mark.parametrize("who, status", [(None, 401), ("b", 403), ("a", 200), ("admin", 200)])
def test_a_drop_in_file_is_served_to_the_key_that_sent_the_program(world: World, who: str | None,
                                                                   status: int) -> None:
    r = world.client.get(f"/ui/nests/{world.nests['a']}/dropin.c", headers=world.auth(who) if who else {})
    assert r.status_code == status, r.text
    assert (MARKER in r.text) == (status == 200)


def test_the_seeds_programs_stay_public(world: World) -> None:
    r = world.client.get(f"/ui/nests/{world.nests['public']}/dropin.c")
    assert r.status_code == 200 and MARKER in r.text
    assert "PRIVATE" not in str(world.client.get(f"/v1/nests/{world.nests['public']}").json()["normalized"])


def test_the_nest_page_and_api_hide_a_private_programs_code_but_share_its_knowledge(world: World) -> None:
    nest = world.nests["a"]
    page = world.client.get(f"/ui/nests/{nest}")
    code = "alpha * A[i][k] * B[k][j]"
    assert page.status_code == 200 and code not in page.text and "belongs to the API key that sent it" in page.text
    assert "tile" in page.text  # its measured recipes are shared knowledge
    assert code in world.client.get(f"/ui/nests/{nest}", headers=world.auth("a")).text
    hidden = world.client.get(f"/v1/nests/{nest}").json()
    assert {s["text"] for s in hidden["normalized"]["statements"]} == {PRIVATE_TEXT}
    assert hidden["features"]["static"] and hidden["best_recipes"]
    own = world.client.get(f"/v1/nests/{nest}", headers=world.auth("a")).json()
    assert PRIVATE_TEXT not in str(own["normalized"]) and "C[i][j]" in str(own["normalized"])


def test_a_key_that_sends_the_same_source_owns_it_too_and_a_deleted_key_makes_nothing_public(world: World) -> None:
    store = world.client.app.state.perfembed.store()  # type: ignore[attr-defined]
    with store.session() as session:
        _, c_key = create_api_key(session, name="c")
    auth = {"Authorization": f"Bearer {c_key}"}
    r = world.client.post("/v1/programs", json={"source": source("a"), "params": GEMM_PARAMS}, headers=auth)
    assert r.json()["nest_ids"] == [world.nests["a"]]
    assert world.client.get(f"/ui/nests/{world.nests['a']}/dropin.c", headers=auth).status_code == 200
    with store.session() as session:
        delete_api_key(session, name="c")
    assert world.client.get(f"/ui/nests/{world.nests['a']}/dropin.c").status_code == 401


def test_a_deployment_can_make_sources_public(tmp_path: Path) -> None:
    shared = build(tmp_path, public_sources=True)
    try:
        r = shared.client.get(f"/ui/nests/{shared.nests['a']}/dropin.c")
        assert r.status_code == 200 and MARKER in r.text
    finally:
        shared.client.__exit__(None, None, None)
