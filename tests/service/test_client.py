"""service.client: the Client mirrors the endpoints; local quoted includes travel as headers; --server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import scipy.io
import scipy.sparse
from fastapi.testclient import TestClient

from database import create_api_key, get_store
from loopnest.errors import ParameterError, SourceError
from loopnest.frontend.program import extract_program
from loopnest.frontend.program import program_from_file as local_program_from_file
from loopnest.harness.index_data import SparseChoice
from service.client import Client, ClientError, collect_quoted_includes, program_from_file
from service.commands.remote import analyze_remote, job_line, remote_program, suggest_remote
from service.core import TransferCore
from tests.service.factories import CORPUS, GEMM, GEMM_PARAMS, PB, gemm_program, gemv_program
from tests.service.servers import api_server

SPMV = Path(__file__).resolve().parents[1] / "loopnest" / "sparse_kernels" / "spmv_csr.c"


@pytest.fixture(scope="module")
def client(api: TestClient, api_key: str) -> Client:
    return Client("http://testserver", api_key=api_key, http=api)


def test_the_client_mirrors_the_endpoints(client: Client) -> None:
    assert client.health() == {"status": "ok"} and client.ready()["status"] == "ready"
    assert len(client.analyze(gemm_program())["nests"]) == 1
    (gemm,) = client.store_program(gemm_program())
    client.store_program(gemv_program())
    answer = client.suggest(gemm_program(), k=2, fallback=False)
    # Without evaluation or fallback nothing is stored or enqueued; the neighbours are the tuned nests.
    assert answer["nests"][0]["nest_id"] is None and answer["nests"][0]["job_id"] is None
    assert answer["nests"][0]["neighbours"][0]["name"] == "gemm_jki.c#0"
    assert client.search(program=gemm_program(), k=1)[0]["nest_id"] == gemm
    assert client.search(vector=client.nest(gemm)["embedding"]["vector"], k=1)[0]["nest_id"] == gemm
    assert gemm in [n["id"] for n in client.nests(limit=10)]
    assert [t["id"] for t in client.targets()] == [1]  # this machine, where populate() measured
    job = client.submit_job(nest_id=gemm, params=GEMM_PARAMS, budget=3, warm_start=[{"steps": []}])
    assert job["status"] == "queued" and client.job(job["id"])["budget"] == 3
    assert job["id"] in [j["id"] for j in client.jobs(status="queued")]
    assert client.cancel_job(job["id"])["status"] == "cancelled"
    seen: list[str] = []
    assert client.wait_for_job(job["id"], timeout=5, on_update=lambda j: seen.append(j["status"]))["status"] \
        == "cancelled" and seen == ["cancelled"]
    assert "perfembed_http_requests_total" in client.metrics()


def test_an_evaluation_is_polled_to_its_answer_and_its_progress_is_shown(client: Client) -> None:
    updates: list[dict[str, object]] = []
    answer = client.suggest(gemm_program(), k=2, evaluate=True, fallback=False, interval=0.01,
                            on_progress=updates.append)
    assert answer["evaluated"] is True and answer["nests"][0]["name"] == "gemm_ijk.c#0"
    assert updates[-1]["status"] == "done"
    assert job_line(updates[-1]) == "storing results"  # the last step the evaluation reported
    assert answer["nests"][0]["accepted"] is True  # the fake harness times every recipe faster
    job = client.suggest(gemm_program(), evaluate=True, fallback=False, wait=False)
    assert job["status"] in ("queued", "running", "done") and client.evaluation(job["id"])["id"] == job["id"]
    assert job_line({"status": "queued", "queue_position": 2}) == "queued on the server (position 2)"


def test_a_failed_evaluation_raises_the_error_the_request_would_have_got(
        client: Client, monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*_: object, **__: object) -> None:
        raise SourceError("program.c:4: unsupported construct")

    monkeypatch.setattr(TransferCore, "suggest", fail)
    with pytest.raises(ClientError) as info:
        client.suggest(gemm_program(), evaluate=True, interval=0.01)
    assert info.value.status == 422 and info.value.exit_code == 2 and "program.c:4" in str(info.value)


def test_errors_carry_the_status_and_the_servers_body(client: Client, api: TestClient) -> None:
    with pytest.raises(ClientError) as info:
        client.nest(55555)
    assert info.value.status == 404 and info.value.error == "NotFoundError" and "55555" in str(info.value)
    with pytest.raises(ClientError) as info:
        client.analyze({"source": "void f( {"})
    assert info.value.status == 422 and "program.c:1" in info.value.to_dict()["message"]
    anonymous = Client(client.url, http=api)
    with pytest.raises(ClientError) as info:
        anonymous.store_program(gemm_program())
    assert info.value.status == 401


def test_quoted_includes_are_collected_recursively(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "inc" / "sub").mkdir(parents=True)
    main = tmp_path / "src" / "main.c"
    main.write_text('#include <stdio.h>\n#include "local.h"\n  # include "sub/a.h"\n#include "missing.h"\nint x;\n')
    (tmp_path / "src" / "local.h").write_text("#define L 1\n")
    (tmp_path / "inc" / "sub" / "a.h").write_text('#include "b.h"\n#include "local.h"\n')
    (tmp_path / "inc" / "sub" / "b.h").write_text("#define B 2\n")
    (tmp_path / "inc" / "local.h").write_text("#define SHADOWED 1\n")
    headers = collect_quoted_includes(main, [tmp_path / "inc"])
    assert headers == {"local.h": "#define L 1\n", "sub/a.h": '#include "b.h"\n#include "local.h"\n',
                       "sub/b.h": "#define B 2\n"}
    (tmp_path / "src" / "up.c").write_text('#include "../inc/local.h"\n')
    with pytest.raises(ParameterError, match="leaves its directory"):
        collect_quoted_includes(tmp_path / "src" / "up.c")


def test_program_from_file_sends_headers_macros_and_params() -> None:
    program = program_from_file(PB / "mb_gemm.c", include_dirs=[PB / "include"], defines=["FAST", "N=4"],
                                params={"ni": 8}, function="kernel")
    assert set(program["headers"]) == {"minibench.h"} and program["defines"] == {"FAST": None, "N": "4"}
    assert program["params"] == {"ni": 8} and program["function"] == "kernel" and program["name"] == "mb_gemm.c"


def test_the_local_cli_reads_a_program_with_the_same_include_rule_as_the_client(tmp_path: Path) -> None:
    """Before: the local commands (``perfembed suggest FILE``) sent every ``*.h`` under the ``-I``
    directories and none beside the file, so a program including a header next to it failed locally
    ("file not found") while ``--server`` found it. Both now take the quoted includes, resolved as cpp does."""
    (tmp_path / "inc").mkdir()
    main = tmp_path / "main.c"
    main.write_text('#include "scale.h"\nvoid f(int n, double a[n]) { for (int i = 0; i < n; i++) a[i] = SCALE; }\n')
    (tmp_path / "scale.h").write_text("#define SCALE 2.0\n")
    (tmp_path / "inc" / "unrelated.h").write_text("#error never included\n")
    local = local_program_from_file(main, include_dirs=[tmp_path / "inc"], params={"n": 8})
    body = program_from_file(main, include_dirs=[tmp_path / "inc"], params={"n": 8})
    assert dict(local.headers) == body["headers"] == {"scale.h": "#define SCALE 2.0\n"}
    assert len(extract_program(local).scops) == 1


def test_against_a_real_server_with_the_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            wide_console: None) -> None:
    url = f"sqlite:///{tmp_path / 'perfembed.db'}"
    store = get_store(url, create=True)
    with store.session() as session:
        _, key = create_api_key(session, name="cli")
    store.dispose()
    env = {"PERFEMBED_DATABASE_URL": url, "PERFEMBED_DATA_DIR": str(tmp_path)}
    with api_server(env) as server:
        with Client(server) as api:
            assert api.ready()["status"] == "ready"
        data = analyze_remote(server, PB / "mb_gemm.c", include=[str(PB / "include")], define=[],
                              params={"ni": 8}, function=None)
        assert data["nests"] and data["nests"][0]["region"]["file"] == str(PB / "mb_gemm.c")
        assert set(data["missing_params"]) == {"nj", "nk"}
        reject = CORPUS / "kernels" / "reject" / "indirect_subscript.c"
        (rejected,) = analyze_remote(server, reject, include=[], define=[], params={}, function=None)["rejected"]
        assert rejected["location"]["file"] == str(reject) and rejected["construct"] == "indirect subscript"

        gemm = remote_program(GEMM, [], [], GEMM_PARAMS, None)
        suggest = {"k": 3, "evaluate": False, "fallback": True}
        with pytest.raises(ClientError) as info:
            suggest_remote(server, GEMM, gemm, **suggest)
        assert info.value.status == 401
        suggest_remote(server, GEMM, gemm, **suggest, api_key=key, json_out=True)
        (nest,) = json.loads(capsys.readouterr().out)["nests"]
        assert nest["job_id"] is not None and nest["gate"]["confident"] is False
        table = suggest_remote(server, GEMM, gemm, **suggest, api_key=key)  # the same answer, as a table
        out = capsys.readouterr().out  # as suggest prints it: the gate's answer and the job to follow
        assert "low confidence" in out and re.search(r"tuning job \d+ enqueued: `perfembed jobs wait \d+`", out)
        assert table["nests"][0]["nest_id"] == nest["nest_id"]
        measured = suggest_remote(server, GEMM, gemm, **{**suggest, "evaluate": True}, api_key=key)  # a job, polled
        assert measured["evaluated"] is True and "gemm_ijk.c#0" in capsys.readouterr().out
        # --matrix with --server: the file is sent first, and the request names it by the server's id.
        matrix = tmp_path / "a.mtx"
        scipy.io.mmwrite(matrix, scipy.sparse.random(60, 50, density=0.05, random_state=1, format="csr"))
        spmv = remote_program(SPMV, [], [], {"n": 60, "m": 50, "nnz": 600}, None)
        sent = suggest_remote(server, SPMV, spmv, **suggest, api_key=key, json_out=True,
                              sparse=SparseChoice(matrix=str(matrix)))
        capsys.readouterr()
        (stored,) = (tmp_path / "matrices").glob("*.mtx")
        assert stored.read_bytes() == matrix.read_bytes() and sent["nests"][0]["job_id"] is not None
