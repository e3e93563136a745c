"""The dashboard's pages over HTTP (no browser): content from the database, the read-key rule,
errors as one-line HTML pages, the drop-in file, and the static files (ours and Plotly's, no CDN)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from database import MeasurementIn, add_measurement, get_or_create_recipe
from database.records import ensure_local_target
from service.app import create_app
from service.config import ServiceSettings
from service.core.answer_cache import STAMP_TTL_S
from tests.service.ui_database import UiDatabase, build


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> UiDatabase:
    return build(Path(tmp_path_factory.mktemp("ui")))


def _client(db: UiDatabase, **overrides: object) -> TestClient:
    settings = ServiceSettings(database_url=db.url, data_dir=db.data_dir, threads=1, **overrides)  # type: ignore[arg-type]
    return TestClient(create_app(settings))


@pytest.fixture(scope="module")
def ui(db: UiDatabase) -> Iterator[TestClient]:
    with _client(db) as client:
        yield client


def test_overview_counts_families_and_activity(ui: TestClient, db: UiDatabase) -> None:
    page = ui.get("/ui")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert re.search(r'data-count="nests">6<', page.text)
    assert re.search(r'data-count="measurements">7<', page.text)
    for family in ("blas3", "blas2", "stencil_2d", "conv", "reduction", "transpose"):
        assert f'<th scope="row">{family}</th>' in page.text
    assert "3.25x" in page.text  # gemm's best, the best of its family
    assert 'data-fact="workers">0<' in page.text
    assert "1 queued" in page.text and "1 running" in page.text and "1 failed" in page.text


def test_the_families_table_follows_a_new_measurement(tmp_path: Path) -> None:
    """The families' table is remembered until the database changes (it read every nest's best result on
    each load); a measurement another process records shows on a load after the stamp's lifetime."""
    db = build(tmp_path)
    with _client(db) as client:
        assert "3.25x" in client.get("/ui").text and "9.75x" not in client.get("/ui").text
        store = client.app.state.perfembed.store()  # type: ignore[attr-defined]
        target_id = ensure_local_target(store).id
        with store.session() as session:
            recipe = get_or_create_recipe(session, steps=[{"op": "parallelize", "loop": 0}])
            add_measurement(session, MeasurementIn(
                nest_id=db.nests["blas3/gemm_ijk.c"], recipe_id=recipe.id, target_id=target_id,
                median_time_s=0.001, spread_s=0.0, repetitions=3, verified=True, origin="transfer",
                params={"ni": 8, "nj": 8, "nk": 8}, speedup=9.75))
        time.sleep(STAMP_TTL_S + 0.1)
        assert "9.75x" in client.get("/ui").text


def test_the_servers_address_opens_the_dashboard(ui: TestClient) -> None:
    """``make serve`` prints http://127.0.0.1:8000, which answered 404 (a new-user trial)."""
    r = ui.get("/", follow_redirects=False)
    assert r.status_code == 307 and r.headers["location"] == "/ui"
    assert ui.get("/").status_code == 200


def test_no_page_loads_anything_from_elsewhere(ui: TestClient, db: UiDatabase) -> None:
    for path in ("/ui", "/ui/map", f"/ui/nests/{db.nests['blas3/gemm_ijk.c']}", "/ui/jobs", "/ui/suggest"):
        page = ui.get(path)
        assert page.status_code == 200, path
        sources = re.findall(r'(?:src|href)="([^"#]+)"', page.text)
        assert sources and all(s.startswith("/") or s.startswith("data:") for s in sources), (path, sources)


def test_plotly_is_served_from_the_installed_package(ui: TestClient) -> None:
    bundle = ui.get("/ui/static/plotly.min.js")
    assert bundle.status_code == 200 and "plotly.js" in bundle.text[:2000]
    assert ui.get("/ui/static/../deps.py").status_code == 404
    assert ui.get("/ui/static/nothing.js").status_code == 404


def test_nest_page_shows_source_recipes_study_and_neighbours(ui: TestClient, db: UiDatabase) -> None:
    page = ui.get(f"/ui/nests/{db.nests['blas3/gemm_ijk.c']}").text
    assert "blas3/gemm_ijk.c#0" in page
    assert 'class="inside"' in page and "for (" in page  # the source region, marked
    assert "<code>i</code>" in page and "<code>k</code>" in page  # the loops by name
    assert "<td>tile i, j by 32x32; parallelize i_tile</td><td>3.25x [3.00, 3.50]</td>" in page  # readable
    assert '{"steps": [{"loops": [0, 1], "op": "tile", "sizes": [32, 32]}' in page  # and as JSON
    assert db.study in page.replace("&#34;", '"') and "5 trials, 4 with a verified speedup" in page
    assert "blas2/gemv.c#0" in page  # a neighbour


def test_drop_in_file_has_the_best_recipe_applied(ui: TestClient, db: UiDatabase) -> None:
    nest = db.nests["blas3/gemm_ijk.c"]
    shown = ui.get(f"/ui/nests/{nest}/dropin.c")
    assert shown.status_code == 200 and shown.headers["content-disposition"].startswith("inline")
    assert "#pragma omp parallel for" in shown.text and "void gemm" in shown.text
    download = ui.get(f"/ui/nests/{nest}/dropin.c?download=1")
    assert download.headers["content-disposition"] == \
        "attachment; filename=\"gemm_ijk.tuned.c\"; filename*=UTF-8''gemm_ijk.tuned.c"


def test_errors_are_one_line_html_pages(ui: TestClient) -> None:
    missing = ui.get("/ui/nests/999999")
    assert missing.status_code == 404 and "nest 999999 does not exist" in missing.text
    assert "Traceback" not in missing.text
    bad = ui.get("/ui/nests/0")
    assert bad.status_code == 422 and "nest_id" in bad.text
    assert ui.get("/ui/map?color=rainbow").status_code == 422


def test_map_highlights_a_program_with_its_neighbours(ui: TestClient, db: UiDatabase) -> None:
    page = ui.get(f"/ui/map?program={db.program_ids['blas3/gemm_ijk.c']}").text
    assert "Highlighted: the nests of <strong>blas3/gemm_ijk.c</strong>" in page
    assert re.search(r'"marked":\{.*"neighbours":\[\{"id":\d+', page)
    assert ui.get("/ui/map?program=999999").status_code == 404


def test_jobs_page_shows_progress_worker_lease_and_errors(ui: TestClient, db: UiDatabase) -> None:
    page = ui.get("/ui/jobs").text
    assert page.count("<tr data-job=") == 3
    assert "host:1:ui-tests" in page and "lease expires in" in page
    assert "the nest failed to compile: test" in page
    assert f'data-job="{db.jobs["queued"]}">Cancel job' in page
    assert f'data-job="{db.jobs["failed"]}">Cancel job' not in page
    only_failed = ui.get("/ui/jobs?status=failed").text
    assert only_failed.count("<tr data-job=") == 1


def test_suggest_form_answers_from_the_database_and_names_bad_input(ui: TestClient, db: UiDatabase) -> None:
    source = (Path(__file__).parents[2] / "corpus/kernels/blas3/gemm_ijk.c").read_text()
    answer = ui.post("/ui/suggest", data={"params": "ni=32 nj=32 nk=32", "k": "3"},
                     files={"file": ("mine.c", source.encode(), "text/x-c")})
    assert answer.status_code == 200
    assert "mine.c#0" in answer.text and "neighbour" in answer.text and "blas2/gemv.c#0" in answer.text
    bad = ui.post("/ui/suggest", data={"source": source, "params": "ni=thirty"})
    assert bad.status_code == 422 and "parameter &#39;ni=thirty&#39;: write NAME=INTEGER" in bad.text
    empty = ui.post("/ui/suggest", data={"source": " "})
    assert empty.status_code == 422 and "paste a C program" in empty.text


def test_suggest_form_with_no_neighbour_offers_the_recipe_spaces_first_guesses(tmp_path: Path) -> None:
    settings = ServiceSettings(data_dir=tmp_path / "empty", threads=1)
    source = (Path(__file__).parents[2] / "corpus/kernels/blas3/gemm_ijk.c").read_text()
    with TestClient(create_app(settings)) as client:
        answer = client.post("/ui/suggest", data={"source": source, "params": "ni=32 nj=32 nk=32"})
    assert answer.status_code == 200 and "No stored neighbour." in answer.text
    assert "recipe space (no neighbour within the gate)" in answer.text and "autoschedule (isl)" in answer.text


def test_reads_need_a_key_when_the_server_says_so(db: UiDatabase) -> None:
    with _client(db, api_keys_for_reads=True) as client:
        refused = client.get("/ui")
        assert refused.status_code == 401 and 'href="/ui/key"' in refused.text
        assert client.post("/ui/key", data={"key": "wrong"}).status_code == 401
        accepted = client.post("/ui/key", data={"key": db.key}, follow_redirects=False)
        assert accepted.status_code == 303 and "httponly" in accepted.headers["set-cookie"].lower()
        assert client.get("/ui").status_code == 200  # the cookie
        client.post("/ui/key", data={"forget": "1"})
        assert client.get("/ui").status_code == 401
        assert client.get("/ui", headers={"Authorization": f"Bearer {db.key}"}).status_code == 200
