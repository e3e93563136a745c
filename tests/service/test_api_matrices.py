"""/v1/matrices: a Matrix Market file is sent once (plain or gzip), checked, stored by content, and named
by id where a suggestion or tuning job chooses the matrix its sparse nests run on; every fault is one
4xx line."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import scipy.io
import scipy.sparse
from fastapi.testclient import TestClient

import database
from tests.service.factories import make_app, service_settings, wait_for_evaluation

SPMV = Path(__file__).resolve().parents[1] / "loopnest" / "sparse_kernels" / "spmv_csr.c"


def _mtx(rows: int, cols: int, seed: int = 3) -> bytes:
    out = io.BytesIO()
    scipy.io.mmwrite(out, scipy.sparse.random(rows, cols, density=0.05, random_state=seed, format="csr"))
    return out.getvalue()


def _app_and_key(tmp_path: Path, **overrides: object) -> tuple[TestClient, dict[str, str]]:
    api = TestClient(make_app(service_settings(tmp_path, **overrides), populated=True))
    with api.app.state.perfembed.store().session() as session:  # type: ignore[attr-defined]
        _, key = database.create_api_key(session, name="matrices")
    return api, {"Authorization": f"Bearer {key}"}


def _spmv(**extra: object) -> dict[str, object]:
    return {"source": SPMV.read_text(), "name": "spmv.c", "params": {"n": 60, "m": 50, "nnz": 600}, **extra}


def test_a_matrix_is_stored_once_by_content_and_described(tmp_path: Path) -> None:
    api, auth = _app_and_key(tmp_path)
    body = _mtx(60, 50)
    with api:
        r = api.post("/v1/matrices", content=body, headers={**auth, "Content-Type": "text/plain"})
        assert r.status_code == 201, r.text
        info = r.json()
        assert info["rows"] == 60 and info["cols"] == 50 and info["nnz"] == 150 and info["values"] is True
        assert info["bytes"] == len(body) and len(info["id"]) == 16
        # The same file again, or gzip-compressed: the same id, nothing new.
        again = api.post("/v1/matrices", content=gzip.compress(body), headers=auth)
        assert again.status_code == 200 and again.json() == info
        assert api.get(f"/v1/matrices/{info['id']}").json() == info
        assert (tmp_path / "matrices" / f"{info['id']}.mtx").read_bytes() == body
        missing = api.get("/v1/matrices/0123456789abcdef")
        assert missing.status_code == 404 and "POST /v1/matrices" in missing.json()["message"]
        assert api.post("/v1/matrices", content=body).status_code == 401  # a write needs a key


def test_every_fault_of_a_sent_matrix_is_one_4xx_line(tmp_path: Path) -> None:
    api, auth = _app_and_key(tmp_path, max_request_bytes=1024, max_matrix_bytes=4096)
    bad = b"%%MatrixMarket matrix coordinate real general\n300 200 5\n1 1 1.0\n"
    complex_ = b"%%MatrixMarket matrix coordinate complex general\n2 2 1\n1 1 1.0 2.0\n"
    cases = [(bad, 422, "matrix.mtx: malformed coordinate Matrix Market data"),
             (b"hello\n", 422, "matrix.mtx: not a Matrix Market file"),
             (complex_, 422, "matrix.mtx: complex matrices are not supported"),
             (b"", 422, "the request body is empty"),
             (gzip.compress(bad)[:20], 422, "gzip-compressed body"),
             (b"%" * 5000, 413, "PERFEMBED_MAX_MATRIX_BYTES"),  # refused before it is read
             (gzip.compress(b"%" * 5000), 413, "the decompressed matrix file is over the limit of 4096 bytes")]
    with api:
        for body, status, message in cases:
            r = api.post("/v1/matrices", content=body, headers=auth)
            assert r.status_code == status, (body[:30], r.text)
            assert message in r.json()["message"] and "\n" not in r.json()["message"], r.text
        assert not list((tmp_path / "matrices").glob("*"))  # nothing stored, not even half
        # The matrix route has a limit of its own: 3000 bytes pass it, not the other routes' 1024.
        padded = b"%%MatrixMarket matrix coordinate real general\n%" + b"x" * 2900 + b"\n3 3 1\n1 1 1.0\n"
        assert api.post("/v1/matrices", content=padded, headers=auth).status_code == 201
        assert api.post("/v1/suggestions", content=b" " * 3000, headers=auth).status_code == 413


def test_a_fallback_job_takes_the_sent_matrix_along(tmp_path: Path) -> None:
    api, auth = _app_and_key(tmp_path, min_speedup=99.0)  # no neighbour is good enough: a tuning job
    with api:
        good = api.post("/v1/matrices", content=_mtx(60, 50), headers=auth).json()["id"]
        (nest,) = api.post("/v1/suggestions", json=_spmv(matrix=good, k=2), headers=auth).json()["nests"]
        with api.app.state.perfembed.store().session() as session:  # type: ignore[attr-defined]
            job = database.get_job(session, job_id=nest["job_id"])
        assert job.options["matrix"] == str(tmp_path / "matrices" / f"{good}.mtx")  # the worker reads it there


def test_an_evaluation_runs_its_sparse_nests_on_the_sent_matrix(tmp_path: Path) -> None:
    api, auth = _app_and_key(tmp_path)
    with api:
        good = api.post("/v1/matrices", content=_mtx(60, 50), headers=auth).json()["id"]
        wrong = api.post("/v1/matrices", content=_mtx(40, 50), headers=auth).json()["id"]
        r = api.post("/v1/suggestions", json=_spmv(matrix=good, evaluate=True, fallback=False), headers=auth)
        assert r.status_code == 202, r.text
        done = wait_for_evaluation(api, r.headers["Location"], headers=auth)
        assert done["status"] == "done" and done["result"]["nests"][0]["results"], done
        # A matrix of the wrong shape fails the job with the file's fault: the harness did read it.
        r = api.post("/v1/suggestions", json=_spmv(matrix=wrong, evaluate=True, fallback=False), headers=auth)
        failed = wait_for_evaluation(api, r.headers["Location"], headers=auth)
        assert failed["status"] == "failed" and failed["error"]["status"] == 422
        assert "a 40 x 50 matrix; the nest's rowptr holds 60 rows" in failed["error"]["message"]
        unknown = api.post("/v1/suggestions", json=_spmv(matrix="0123456789abcdef", evaluate=True), headers=auth)
        assert unknown.status_code == 404 and "no such matrix" in unknown.json()["message"]
        both = api.post("/v1/suggestions", json=_spmv(matrix=good, sparsity="banded"), headers=auth)
        assert both.status_code == 422 and "either matrix or sparsity/density" in both.text
