"""Issue 59, item 19: a program's name never becomes a file name.

Reproduction (before the fix): ``POST /v1/tuning-jobs`` with a program named 120 x ``日`` (360 bytes in
UTF-8) was accepted (202); the worker then wrote the program under that name to rebuild the nest and failed
three times with ``OSError [Errno 36] File name too long``. Now the worker writes ``program.c`` whatever the
job is called, and the name appears only in its messages.
"""

from __future__ import annotations

from pathlib import Path

from autotune import WorkerOptions, run_worker
from autotune.config import AutotuneSettings
from database import enqueue_job, get_job, get_store
from database.records import register_nest
from loopnest.frontend.extract import extract_scops
from tests.service.factories import GEMM, GEMM_PARAMS

LONG_NAME = "日" * 120


def _job(tmp_path: Path, *, name: str, source: str) -> tuple[object, int]:
    store = get_store(f"sqlite:///{tmp_path / 'perfembed.db'}", create=True)
    nest = register_nest(store, source=source, name=name, index=0, scop=extract_scops(GEMM).scops[0])
    with store.session() as session:
        job = enqueue_job(session, nest_id=nest.id, budget=0, options={"params": GEMM_PARAMS})
    return store, job.id


def test_a_job_of_a_program_with_a_long_unicode_name_runs(tmp_path: Path) -> None:
    store, job_id = _job(tmp_path, name=LONG_NAME + ".c", source=GEMM.read_text())
    report = run_worker(store, WorkerOptions(worker_id="w", once=True, lease_seconds=30),  # type: ignore[arg-type]
                        settings=AutotuneSettings(threads=1))
    assert [(j.job_id, j.status) for j in report.jobs] == [(job_id, "done")], report.jobs[0].error


def test_its_errors_still_name_the_program_and_never_a_temporary_file(tmp_path: Path) -> None:
    broken = GEMM.read_text() + "\nvoid broken(void) { for (;; }\n"
    store, job_id = _job(tmp_path, name="mine.c", source=broken)
    run_worker(store, WorkerOptions(worker_id="w", once=True, lease_seconds=30),  # type: ignore[arg-type]
               settings=AutotuneSettings(threads=1))
    with store.session() as session:  # type: ignore[attr-defined]
        error = get_job(session, job_id=job_id).error or ""
    assert "mine.c:" in error and "program.c" not in error and "/tmp" not in error, error
