"""The job worker: leases, progress, shared studies across processes, crashes and errors."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import optuna
from optuna.trial import TrialState

from autotune import WorkerOptions, open_storage, run_job, run_worker, tuning_study
from autotune.config import AutotuneSettings
from autotune.search.tune_outcome import TuneResult
from autotune.workers.worker import confirm_best
from database import JobStatus, cancel_job, claim_next_job, enqueue_job, get_job, list_measurements
from database.records import MeasurementRecorder, ensure_local_target, register_nest
from loopnest import Recipe
from service.core.local_suggest import run_fallback_jobs
from tests.autotune.harnesses import CorruptingHarness
from tests.autotune.kernels import GEMM, GEMM_PARAMS, load
from tests.database.factories import committed
from tests.helpers.paths import ROOT
from tests.helpers.waiting import wait_for

SETTINGS = AutotuneSettings(threads=1)


def gemm_job(store, *, budget: int, **options) -> tuple[int, int]:
    """A queued job tuning corpus gemm_ijk.c; returns (job id, nest id)."""
    nest = register_nest(store, source=GEMM.read_text(), name=GEMM.name, index=0, scop=load(GEMM))
    with store.session() as session:
        job = enqueue_job(session, nest_id=nest.id, budget=budget,
                          options={"params": GEMM_PARAMS, "reps": 1, **options})
    return job.id, nest.id


def study_of(store, nest_id: int):
    target = ensure_local_target(store)
    name, _ = tuning_study(store.url, nest_id, target.id, load(GEMM), GEMM_PARAMS)
    return optuna.load_study(study_name=name,
                             storage=open_storage(store.url))


def spawn_worker(url: str, worker_id: str, lease: float, barrier: Path | None = None) -> subprocess.Popen[str]:
    args = [sys.executable, "-m", "tests.autotune._worker_process", url, worker_id, str(lease)]
    if barrier is not None:
        args.append(str(barrier))
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen(args, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True)


def test_a_worker_runs_a_job_and_records_progress_and_the_best_recipe(store):
    job_id, nest_id = gemm_job(store, budget=4, seed=0)
    progress: list[int] = []
    report = run_worker(store, WorkerOptions(worker_id="w1", once=True, lease_seconds=30), settings=SETTINGS,
                        on_trial=lambda job, update: progress.append(update.evaluated))
    assert [o.status for o in report.jobs] == ["done"]
    with store.session() as session:
        job = get_job(session, job_id=job_id)
        measurements = list_measurements(session, nest_id=nest_id, origin="autotune", verified=True)
    assert job.status is JobStatus.DONE and job.progress == 4 and job.lease_owner == "w1"
    assert progress[-1] == 4 and progress == sorted(progress)
    trials = [m for m in measurements if m.speedup_low is None]
    # The best trial is re-measured against the baseline (paired, fresh runs): that figure, with its
    # interval, is the job's result, never the best-of-trials figure that chose it.
    confirmed = [m for m in measurements if m.speedup_low is not None]
    winner = max(trials, key=lambda m: m.speedup or 0.0)
    assert winner.speedup is not None and winner.speedup > 1.1  # ikj-like orders win by 2-3x at 48^3
    (remeasured,) = confirmed  # stored whether it held up or not
    assert remeasured.recipe_id == winner.recipe_id
    assert remeasured.speedup_low <= remeasured.speedup <= remeasured.speedup_high
    if report.jobs[0].confirmed is not None:  # the usual case
        assert remeasured.recipe_id == job.best_recipe_id and job.best_speedup == remeasured.speedup
        assert 1.1 < remeasured.speedup_low
    else:  # a winner that did not hold up on a busy machine is dropped, and the job says so
        assert job.best_recipe_id is None and job.best_speedup is None and "did not hold up" in (job.error or "")
    assert report.jobs[0].best_recipe_id == job.best_recipe_id


def test_a_winner_that_does_not_hold_up_is_stored_as_re_measured(store):
    """Reproduction: a study winner refused by its re-measurement left no trace of that figure, so
    `suggest` showed its screening speedup (2.41x) as the nest's "tuned before" result. The identity
    recipe claimed at 50x re-measures near 1x: refused, and stored with its interval."""
    nest = register_nest(store, source=GEMM.read_text(), name=GEMM.name, index=0, scop=load(GEMM))
    target = ensure_local_target(store)
    recorder = MeasurementRecorder(store, nest_id=nest.id, target_id=target.id, params=GEMM_PARAMS)
    claimed = TuneResult(study_name="s", best_recipe=Recipe.from_dict({"steps": []}), best_speedup=50.0,
                         best_trial=0, trials=1, evaluated=1)
    confirmed, doubt = confirm_best(load(GEMM), GEMM_PARAMS, claimed, recorder, SETTINGS, reps=1)
    assert confirmed is None and doubt is not None and "did not hold up" in doubt
    with store.session() as session:
        (stored,) = list_measurements(session, nest_id=nest.id, verified=True)
    assert stored.speedup_low is not None and stored.speedup_high is not None
    assert stored.speedup_low <= stored.speedup <= stored.speedup_high and stored.speedup < 50.0


def test_two_workers_share_one_study_without_repeating_a_trial_or_exceeding_the_budget(store, tmp_path):
    # Two jobs for the same nest, target and parameters: one study, one budget of 8 evaluations.
    first, nest_id = gemm_job(store, budget=8, seed=1)
    second, _ = gemm_job(store, budget=8, seed=2)
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    workers = [spawn_worker(store.url, name, 60, barrier) for name in ("wA", "wB")]
    wait_for(lambda: len(list(barrier.glob("ready-*"))) == 2 or any(w.poll() is not None for w in workers))
    (barrier / "go").touch()
    outputs = [w.communicate(timeout=180) for w in workers]
    assert [w.returncode for w in workers] == [0, 0], outputs
    with store.session() as session:
        jobs = [get_job(session, job_id=i) for i in (first, second)]
        measurements = list_measurements(session, nest_id=nest_id, origin="autotune")
    assert all(job.status is JobStatus.DONE for job in jobs)
    trials = study_of(store, nest_id).trials
    evaluated = [t for t in trials if t.state != TrialState.PRUNED and not t.user_attrs.get("free")]
    # Exactly the budget. One short was seen under load (1 run in 6): not an accounting race but the
    # sampler repeating its best recipe until the free-sample cap ended the study as "exhausted" (see
    # test_a_sampler_that_repeats_its_best_recipe_does_not_end_the_study_as_if_the_space_ran_out).
    assert len(evaluated) == 8
    assert len({t.number for t in trials}) == len(trials)
    assert {t.user_attrs["worker"] for t in trials} == {"wA", "wB"}  # both took part
    assert all(t.state.is_finished() for t in trials)
    ids = [t.user_attrs["measurement_id"] for t in evaluated]
    trial_measurements = [m for m in measurements if m.speedup_low is None]  # less the re-measured winners
    assert len(set(ids)) == len(ids) == len(trial_measurements)  # every evaluated trial measured exactly once
    assert {m.id for m in trial_measurements} == set(ids)


def test_a_killed_workers_job_resumes_and_keeps_every_measurement(store):
    job_id, nest_id = gemm_job(store, budget=10, seed=3, heartbeat_interval=1, grace_period=2)
    victim = spawn_worker(store.url, "victim", 2.0)

    def measured() -> list[int]:
        with store.session() as session:
            return [m.id for m in list_measurements(session, nest_id=nest_id, verified=True)]

    wait_for(lambda: len(measured()) >= 2 or victim.poll() is not None)
    os.killpg(victim.pid, signal.SIGKILL)
    victim.communicate()
    killed_at = time.monotonic()
    before = set(measured())
    with store.session() as session:
        job = get_job(session, job_id=job_id)
    assert job.status is JobStatus.RUNNING and job.lease_owner == "victim" and job.progress < 10

    def lease_expired() -> bool:
        with store.session() as session:
            expires = get_job(session, job_id=job_id).lease_expires_at
        return expires is not None and expires < datetime.now(UTC)

    # Wait for the lease to expire and for the victim's last trial heartbeat to go stale.
    wait_for(lambda: lease_expired() and time.monotonic() - killed_at > 3.5)
    report = run_worker(store, WorkerOptions(worker_id="rescuer", once=True, lease_seconds=30), settings=SETTINGS)
    assert [o.status for o in report.jobs] == ["done"]
    with store.session() as session:
        job = get_job(session, job_id=job_id)
    assert job.status is JobStatus.DONE and job.attempts == 2 and job.progress == 10
    assert before <= set(measured())  # nothing the victim measured was lost
    trials = study_of(store, nest_id).trials
    assert all(t.state.is_finished() for t in trials)  # the victim's running trial was failed as stale
    by_victim = [t.number for t in trials if t.user_attrs.get("worker") == "victim"]
    by_rescuer = [t.number for t in trials if t.user_attrs.get("worker") == "rescuer"]
    assert by_victim and by_rescuer and max(by_victim) < min(by_rescuer)
    evaluated = [t for t in trials if t.state != TrialState.PRUNED and not t.user_attrs.get("free")]
    assert len(evaluated) == 10
    recorded = {t.user_attrs["measurement_id"] for t in trials if t.user_attrs.get("measurement_id")}
    with store.session() as session:
        assert recorded <= {m.id for m in list_measurements(session, nest_id=nest_id)}


def test_a_job_with_wrong_outputs_ends_without_a_best_recipe(store):
    job_id, nest_id = gemm_job(store, budget=2, warm_start=[[{"op": "interchange", "order": [0, 2, 1]}]])
    # A code generator bug: every variant the worker's harness builds subtracts instead of accumulating.
    report = run_worker(store, WorkerOptions(worker_id="w", once=True, lease_seconds=30), settings=SETTINGS,
                        harness=CorruptingHarness)
    assert report.jobs[0].status == "done" and report.jobs[0].best_speedup is None
    with store.session() as session:
        job = get_job(session, job_id=job_id)
        measurements = list_measurements(session, nest_id=nest_id)
    assert job.best_recipe_id is None and job.best_speedup is None
    assert measurements and not any(m.verified for m in measurements)


def test_a_cancelled_job_stops_its_worker(store):
    job_id, _ = gemm_job(store, budget=50)

    def cancel(job, update):
        committed(store, cancel_job, job_id=job.id)

    claimed = committed(store, claim_next_job, worker_id="w", lease_seconds=30)
    assert claimed is not None and claimed.id == job_id
    outcome = run_job(store, claimed, worker_id="w", lease_seconds=30, settings=SETTINGS, on_trial=cancel)
    assert outcome.status == "lease-lost" and "cancelled" in (outcome.error or "")
    with store.session() as session:
        job = get_job(session, job_id=job_id)
    assert job.status is JobStatus.CANCELLED and job.progress < 50


def test_a_job_without_parameter_values_fails_with_a_clear_error(store):
    nest = register_nest(store, source=GEMM.read_text(), name=GEMM.name, index=0, scop=load(GEMM))
    with store.session() as session:
        job = enqueue_job(session, nest_id=nest.id, budget=3, options={"params": {"ni": 8}})
    report = run_worker(store, WorkerOptions(worker_id="w", once=True, lease_seconds=30), settings=SETTINGS)
    assert report.jobs[0].status == "failed"
    with store.session() as session:
        failed = get_job(session, job_id=job.id)
    assert failed.status is JobStatus.FAILED and "nj, nk" in (failed.error or "")
    assert committed(store, claim_next_job, worker_id="w", lease_seconds=30) is None  # not retried


def test_a_job_for_a_nest_stored_with_its_parameter_values_runs_at_them(store):
    """A seed nest's job without options.params failed with "no value for parameter(s)"."""
    nest = register_nest(store, source=GEMM.read_text(), name=GEMM.name, index=0, scop=load(GEMM),
                         params=GEMM_PARAMS)
    with store.session() as session:
        job = enqueue_job(session, nest_id=nest.id, budget=1, options={"reps": 1})
    report = run_worker(store, WorkerOptions(worker_id="w", once=True, lease_seconds=30), settings=SETTINGS)
    assert report.jobs[0].status == "done" and report.jobs[0].evaluated == 1, report.jobs[0].error
    with store.session() as session:
        (measured,) = {tuple(sorted(m.params.items())) for m in list_measurements(session, nest_id=nest.id)}
        assert get_job(session, job_id=job.id).status is JobStatus.DONE
    assert dict(measured) == GEMM_PARAMS


def test_max_jobs_limits_a_worker(store):
    gemm_job(store, budget=0)
    second, _ = gemm_job(store, budget=0)
    report = run_worker(store, WorkerOptions(worker_id="w", max_jobs=1, lease_seconds=30), settings=SETTINGS)
    assert len(report.jobs) == 1
    with store.session() as session:
        assert get_job(session, job_id=second).status is JobStatus.QUEUED


def _job_with_source(store, **options) -> int:
    nest = register_nest(store, source=GEMM.read_text(), name=GEMM.name, index=0, scop=load(GEMM))
    with store.session() as session:
        return enqueue_job(session, nest_id=nest.id, budget=0, options={"params": GEMM_PARAMS, **options}).id


def test_a_job_rebuilds_its_nest_from_the_program_headers_and_macros_it_was_sent_with(store):
    source = '#include "kernels/alpha.h"\n' + GEMM.read_text().replace("alpha *", "ALPHA * SCALE *")
    job_id = _job_with_source(store, source=source, filename="mine.c", defines=["SCALE=3"],
                              headers={"kernels/alpha.h": "#define ALPHA 2.0\n"})
    report = run_worker(store, WorkerOptions(worker_id="w", once=True, lease_seconds=30), settings=SETTINGS)
    assert [(j.job_id, j.status) for j in report.jobs] == [(job_id, "done")], report.jobs[0].error


def test_a_job_whose_program_is_wrong_fails_naming_its_file_and_never_a_temporary_path(store):
    bad_header = _job_with_source(store, source=GEMM.read_text(), headers={"../escape.h": "int x;\n"})
    bad_source = _job_with_source(store, source="void f(void) { for (;; }\n", filename="mine.c")
    run_worker(store, WorkerOptions(worker_id="w", once=True, lease_seconds=30), settings=SETTINGS)
    with store.session() as session:
        errors = {job_id: get_job(session, job_id=job_id).error or "" for job_id in (bad_header, bad_source)}
    assert errors[bad_header] == f"job {bad_header}: header name '../escape.h' is not a plain relative path"
    assert "mine.c:1:" in errors[bad_source] and "/tmp" not in errors[bad_source], errors[bad_source]


def test_a_job_with_a_malformed_option_fails_for_good_naming_it(store):
    """Before: options.reps = "x" raised a bare ValueError, an 'internal error' retried three times."""
    job_id, _ = gemm_job(store, budget=1, reps="x")
    report = run_worker(store, WorkerOptions(worker_id="w", once=True, lease_seconds=30), settings=SETTINGS)
    assert [(j.job_id, j.status) for j in report.jobs] == [(job_id, "failed")]
    with store.session() as session:
        assert get_job(session, job_id=job_id).error == "options.reps must be a number, got 'x'"


def test_suggest_fallback_runs_only_the_jobs_it_enqueued(store):
    """Before: ``perfembed suggest --fallback`` ran the oldest queued jobs of the database, so a job
    someone else queued earlier ran here and the suggestion's own job stayed queued."""
    theirs, _ = gemm_job(store, budget=1)
    gemv = ROOT / "corpus/kernels/blas2/gemv.c"
    nest = register_nest(store, source=gemv.read_text(), name=gemv.name, index=0, scop=load(gemv))
    with store.session() as session:
        ours = enqueue_job(session, nest_id=nest.id, budget=1, options={"params": {"m": 32, "n": 32}, "reps": 1}).id
    result = {"nests": [{"tuning_job": ours}]}
    run_fallback_jobs(store, SETTINGS, result, trials=1)
    with store.session() as session:
        assert get_job(session, job_id=theirs).status is JobStatus.QUEUED
        assert get_job(session, job_id=ours).status is JobStatus.DONE
    assert "autotuned" in result["nests"][0]
