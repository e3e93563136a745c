"""Issue 10, item 14: a study whose recipe space ran out says so, in the result, the CLI and the
job, and ends when every distinct recipe of a small space was tried, not after ~400 samples."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import optuna
import pytest

from autotune import TuneConfig, WorkerOptions, run_worker, tune_nest
from autotune.config import AutotuneSettings
from database import JobStatus, enqueue_job, get_job, get_store
from database.records import register_nest
from loopnest import PreprocessOptions, extract_scops

optuna.logging.set_verbosity(optuna.logging.WARNING)
ENTRY = Path(sys.executable).with_name("perfembed")
# A scan carries a dependence (no parallel loop) and n=8 leaves no tile size: the space holds
# the five "inner" choices (none, simd, unroll 2/4/8) and nothing else.
SCAN = "void scan(int n, double A[n], double B[n]) {\n  for (int i = 1; i < n; i++)\n    A[i] = A[i - 1] + B[i];\n}\n"
PARAMS = {"n": 8}


@pytest.fixture
def scan(tmp_path: Path) -> Path:
    path = tmp_path / "scan.c"
    path.write_text(SCAN)
    return path


def test_an_exhausted_study_says_so_and_stops_early(tmp_path: Path, scan: Path) -> None:
    scop = extract_scops(scan, PreprocessOptions()).scops[0]
    result = tune_nest(scop, PARAMS, TuneConfig(storage=f"sqlite:///{tmp_path / 'db.sqlite'}", study_name="scan",
                       n_trials=40, seed=0, reps=1, threads=1))
    assert result.stopped == "exhausted"
    assert result.evaluated < 40
    assert result.stop_reason.startswith(f"the recipe space ran out: {result.evaluated} distinct ")
    assert "of 40 asked" in result.stop_reason
    assert result.to_dict()["stop_reason"] == result.stop_reason
    assert result.trials < 100, result.trials  # was 404: the free-sample cap of 10 x 40


def test_a_study_that_reached_its_budget_has_no_stop_reason(tmp_path: Path, scan: Path) -> None:
    scop = extract_scops(scan, PreprocessOptions()).scops[0]
    result = tune_nest(scop, PARAMS, TuneConfig(storage=f"sqlite:///{tmp_path / 'db.sqlite'}", study_name="scan",
                       n_trials=2, seed=0, reps=1, threads=1))
    assert result.stopped == "budget" and result.evaluated == 2 and result.stop_reason == ""


def test_perfembed_tune_prints_why_it_stopped(tmp_path: Path, scan: Path) -> None:
    env = {**os.environ, "PERFEMBED_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "200", "PERFEMBED_THREADS": "1"}
    args = [str(ENTRY), "tune", str(scan), "--param", "n=8", "--trials", "40", "--reps", "1", "--seed", "0"]
    text = subprocess.run(args, capture_output=True, text=True, timeout=600, check=False, env=env, cwd=tmp_path)
    assert text.returncode == 0, text.stdout + text.stderr
    assert "the recipe space ran out" in text.stderr and "of 40 asked" in text.stderr, text.stderr
    again = subprocess.run([*args, "--json"], capture_output=True, text=True, timeout=600, check=False, env=env,
                           cwd=tmp_path)
    (nest,) = json.loads(again.stdout)["results"]
    assert nest["stopped"] == "exhausted" and "the recipe space ran out" in nest["stop_reason"]


def test_a_job_whose_space_ran_out_is_done_with_the_reason_in_its_status(tmp_path: Path, scan: Path) -> None:
    store = get_store(f"sqlite:///{tmp_path / 'db.sqlite'}", create=True)
    try:
        scop = extract_scops(scan, PreprocessOptions()).scops[0]
        nest = register_nest(store, source=SCAN, name="scan.c", index=0, scop=scop, params=PARAMS)
        with store.session() as session:
            job = enqueue_job(session, nest_id=nest.id, budget=40, options={"params": PARAMS, "reps": 1, "seed": 0})
        report = run_worker(store, WorkerOptions(worker_id="w", once=True, lease_seconds=30),
                            settings=AutotuneSettings(threads=1))
        (outcome,) = report.jobs
        assert outcome.status == "done" and outcome.error is not None
        assert outcome.error.startswith("the recipe space ran out")
        with store.session() as session:
            stored = get_job(session, job_id=job.id)
        assert stored.status is JobStatus.DONE and stored.error == outcome.error
        assert stored.progress == outcome.evaluated < 40
    finally:
        store.dispose()
