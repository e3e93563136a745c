"""``perfembed jobs`` and ``perfembed nests`` on this machine's database and, the same, with --server."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from database import (
    Store,
    claim_next_job,
    create_api_key,
    enqueue_job,
    finish_job,
    get_or_create_recipe,
    get_store,
    update_job_progress,
)
from database.records import register_nest
from loopnest import extract_scops
from loopnest.config import get_settings
from service.cli import app
from service.commands.jobs import JobEndedError
from service.errors import ConflictError
from tests.database.factories import committed
from tests.security.cli import run_perfembed
from tests.service.factories import GEMM, GEMM_PARAMS
from tests.service.servers import api_server


class Data:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.url = f"sqlite:///{root / 'perfembed.db'}"
        self.store: Store = get_store(self.url, create=True)
        scop = extract_scops(GEMM).scops[0]
        self.nest = register_nest(self.store, source=GEMM.read_text(), name="gemm_ijk.c", index=0, scop=scop,
                                  params=GEMM_PARAMS).id
        self.done = self.job(budget=4)
        claimed = committed(self.store, claim_next_job, worker_id="w", lease_seconds=60)
        assert claimed is not None and claimed.id == self.done
        with self.store.session() as session:
            self.recipe = get_or_create_recipe(session, steps=[{"op": "tile", "loops": [2], "sizes": [64]},
                                                               {"op": "parallelize", "loop": 0}]).id
        committed(self.store, update_job_progress, job_id=self.done, worker_id="w", progress=4,
                  best_recipe_id=self.recipe, best_speedup=1.7)
        committed(self.store, finish_job, job_id=self.done, worker_id="w", best_recipe_id=self.recipe, best_speedup=1.7)

    def job(self, budget: int = 3) -> int:
        with self.store.session() as session:
            return enqueue_job(session, nest_id=self.nest, budget=budget, options={"params": GEMM_PARAMS}).id


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Data:
    return Data(tmp_path_factory.mktemp("cli-catalog"))


@pytest.fixture
def local(data: Data, monkeypatch: pytest.MonkeyPatch, wide_console: None) -> Iterator[Data]:
    monkeypatch.setenv("PERFEMBED_DATA_DIR", str(data.root))
    monkeypatch.setenv("PERFEMBED_DATABASE_URL", data.url)
    monkeypatch.delenv("PERFEMBED_SERVER", raising=False)
    get_settings.cache_clear()
    yield data
    get_settings.cache_clear()


def perfembed(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def as_json(*args: str) -> Any:
    result = perfembed(*args, "--json")
    assert result.exit_code == 0, (result.output, result.exception)
    return json.loads(result.stdout)


def test_jobs_list_and_show_give_progress_and_the_best_recipe_in_loop_names(local: Data) -> None:
    queued = local.job()
    listed = as_json("jobs", "list")["data"]
    assert {j["id"]: j["status"] for j in listed}[queued] == "queued"
    done = as_json("jobs", "show", str(local.done))
    assert (done["status"], done["trials_done"], done["budget"], done["best_speedup"]) == ("done", 4, 4, 1.7)
    assert done["best_recipe_text"] == "tile k by 64; parallelize i"
    text = perfembed("jobs", "show", str(local.done)).stdout
    assert "tuning job" in text and "1.70x with tile k by 64; parallelize i" in text
    assert "tile k by 64; parallelize i" in perfembed("jobs", "list", "--status", "done").stdout
    assert as_json("jobs", "list", "--status", "done", "--nest-id", str(local.nest))["count"] >= 1


def test_jobs_cancel_and_wait(local: Data) -> None:
    job = local.job()
    assert as_json("jobs", "cancel", str(job))["status"] == "cancelled"
    assert as_json("jobs", "cancel", str(job))["status"] == "cancelled"  # again: no error
    said = perfembed("jobs", "cancel", str(job)).stdout  # and in words, without --json
    assert said.strip() == f"tuning job {job} is cancelled (0/3 trials done)"
    ended = perfembed("jobs", "wait", str(job))
    assert isinstance(ended.exception, JobEndedError) and "cancelled" in str(ended.exception)
    refused = perfembed("jobs", "cancel", str(local.done))
    assert isinstance(refused.exception, ConflictError) and "already done" in str(refused.exception)
    slow = perfembed("jobs", "wait", str(local.job()), "--timeout", "0.2", "--interval", "0.05")
    assert isinstance(slow.exception, JobEndedError) and "still queued after 0.2 s" in str(slow.exception)


def test_jobs_wait_follows_a_job_until_a_worker_finishes_it(local: Data) -> None:
    job = local.job(budget=2)

    def worker() -> None:  # a worker's steps on the database, while `jobs wait` polls it
        while (claimed := committed(local.store, claim_next_job, worker_id="w2", lease_seconds=60)) is not None:
            if claimed.id != job:
                committed(local.store, finish_job, job_id=claimed.id, worker_id="w2")
                continue
            committed(local.store, update_job_progress, job_id=job, worker_id="w2", progress=1,
                      best_recipe_id=local.recipe, best_speedup=1.2)
            committed(local.store, finish_job, job_id=job, worker_id="w2", best_recipe_id=local.recipe,
                      best_speedup=1.3)
            return

    thread = threading.Timer(0.3, worker)
    thread.start()
    try:
        result = perfembed("jobs", "wait", str(job), "--interval", "0.05", "--timeout", "60")
    finally:
        thread.join()
    assert result.exit_code == 0, (result.output, result.exception)
    assert f"tuning job {job}: done" in result.stdout and "1.30x with tile k by 64; parallelize i" in result.stdout


def test_nests_list_and_show(local: Data) -> None:
    (listed,) = as_json("nests", "list")["data"]
    assert listed["id"] == local.nest and listed["name"] == "gemm_ijk.c#0"  # PROGRAM#INDEX, as in every answer
    detail = as_json("nests", "show", str(local.nest))
    assert detail["normalized"]["loop_names"] == ["i", "j", "k"] and detail["features"]["static"]
    text = perfembed("nests", "show", str(local.nest)).stdout
    assert "loops i, j, k" in text and "ni=16" in text and "C[i][j]" in text
    assert "no stored nest past --offset 5" in perfembed("nests", "list", "--offset", "5").stdout


def test_a_missing_job_or_database_is_one_line_and_exit_2(local: Data, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    missing = run_perfembed("jobs", "show", "999999", cwd=tmp_path)
    assert missing.returncode == 2 and missing.stderr == "error: tuning job 999999 does not exist\n"
    monkeypatch.delenv("PERFEMBED_DATABASE_URL")
    nothing = run_perfembed("nests", "list", cwd=tmp_path)  # no database in tmp_path/data: none is created
    assert nothing.returncode == 2 and "does not exist" in nothing.stderr and "perfembed db upgrade" in nothing.stderr
    assert len(nothing.stderr.strip().splitlines()) == 1 and not (tmp_path / "data" / "perfembed.db").exists()


def test_with_server_the_commands_print_what_they_print_locally(local: Data) -> None:
    with local.store.session() as session:
        # An admin key: the job below is enqueued from the CLI, so no key owns it (issue 59, item 11).
        _, key = create_api_key(session, name="cli-catalog", admin=True)
    env = {"PERFEMBED_DATA_DIR": str(local.root), "PERFEMBED_DATABASE_URL": local.url}
    with api_server(env) as url:
        for args in (("jobs", "show", str(local.done)), ("jobs", "list"), ("nests", "show", str(local.nest)),
                     ("nests", "list")):
            assert as_json(*args, "--server", url) == as_json(*args), args
        job = local.job()
        assert as_json("jobs", "cancel", str(job), "--server", url, "--api-key", key)["status"] == "cancelled"
        ended = perfembed("jobs", "wait", str(job), "--server", url)
        assert isinstance(ended.exception, JobEndedError) and "cancelled" in str(ended.exception)
