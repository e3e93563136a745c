"""The tuning worker: claims queued jobs from the database and runs them.

A job names a nest (``nest_id``), a budget of evaluated trials and, in ``options``, what the
worker needs to rebuild and run the nest (:class:`autotune.workers.job_options.JobOptions`: parameter values,
the program and its headers and macros when it was sent along, repetitions, threads, time budget,
seed, warm-start recipes, study overrides).

While it runs, the worker's one heartbeat (:mod:`autotune.workers.heartbeat`) renews the job's lease,
keeps its row in the workers table and records the running trial's Optuna heartbeat, and the worker
records the progress (evaluated trials, best recipe, best speedup) after every trial. If the lease is lost
(the job was cancelled, or this worker stalled and another took the job over) it stops after
the current trial. A worker that dies leaves its lease to expire; the next worker to claim the
job resumes the same study, and the dead worker's running trial is failed by Optuna's
heartbeat check. A user error (bad C, missing parameter, a nest that does not run) fails the
job for good; an unexpected error puts it back in the queue until it has been tried
``MAX_ATTEMPTS`` times.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import traceback
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from autotune.config import get_autotune_settings
from autotune.search.study_names import tuning_study
from autotune.search.study_storage import DEFAULT_HEARTBEAT_INTERVAL
from autotune.search.tune_outcome import TuneProgress, TuneResult
from autotune.search.tuner import TuneConfig, tune_nest
from autotune.workers.heartbeat import Heartbeat, JobLease
from autotune.workers.job_options import JobOptions
from database.errors import StorageError
from database.records import MeasurementRecorder, ensure_local_target, stored_param_values
from database.repositories.jobs import (
    LeaseLostError,
    claim_next_job,
    fail_job,
    finish_job,
    note_job,
    update_job_progress,
)
from database.repositories.programs import get_nest, get_program
from loopnest.errors import ParameterError, PerfembedError, SourceError
from loopnest.frontend.preprocess import PreprocessOptions
from loopnest.frontend.program import PROGRAM_FILE, ProgramSource, extract_program
from loopnest.harness import Harness, Limits
from loopnest.harness.compare import AcceptancePolicy
from loopnest.harness.factory import HarnessFactory
from loopnest.harness.index_data import structure_key
from loopnest.harness.sandbox import ensure_isolated
from loopnest.parameters import require_params

if TYPE_CHECKING:
    from autotune.config import AutotuneSettings
    from database import Store, TuningJob
    from loopnest.config import Settings
    from loopnest.harness.compare import Speedup
    from loopnest.harness.index_data import SparseChoice
    from loopnest.ir import Scop

_logger = logging.getLogger(__name__)

MAX_ATTEMPTS = 3
DEFAULT_LEASE_SECONDS = 120.0


def default_worker_id() -> str:
    """``host:pid:random``: unique per worker process, readable in the jobs table."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


@dataclass(frozen=True)
class JobOutcome:
    """What one worker did with one job."""

    job_id: int
    status: str  # "done", "failed", "requeued", "lease-lost" or "stopped"
    evaluated: int = 0
    best_speedup: float | None = None
    best_recipe_id: int | None = None
    error: str | None = None  # for "done": why it stopped before its budget ("the recipe space ran out: ...")
    result: TuneResult | None = field(default=None, repr=False)
    confirmed: Speedup | None = None  # the winner re-measured against the baseline (its interval)


@dataclass(frozen=True)
class WorkerReport:
    """What one worker did: its id and the outcome of every job it ran."""

    worker_id: str
    jobs: tuple[JobOutcome, ...] = ()


@dataclass(frozen=True)
class WorkerOptions:
    """Which jobs a worker claims, and for how long (:func:`run_worker`).

    ``worker_id`` names it in the jobs and workers tables (default :func:`default_worker_id`).
    With ``once`` it returns as soon as no job can be claimed; otherwise it polls every
    ``poll_seconds``. It stops after ``max_jobs`` jobs. ``lease_seconds``: how long a claim lasts
    without renewal. ``cpus``: the CPUs it is pinned to, shown in the workers table. With
    ``job_ids``, only those jobs are claimed (``perfembed suggest --fallback`` runs its own).
    """

    worker_id: str | None = None
    once: bool = False
    max_jobs: int | None = None
    lease_seconds: float = DEFAULT_LEASE_SECONDS
    poll_seconds: float = 5.0
    cpus: str | None = None
    job_ids: frozenset[int] | None = None


def run_worker(
    store: Store,
    options: WorkerOptions | None = None,
    *,
    settings: AutotuneSettings | None = None,
    stop: threading.Event | None = None,
    on_trial: Callable[[TuningJob, TuneProgress], None] | None = None,
    on_job: Callable[[TuningJob], None] | None = None,
    on_outcome: Callable[[JobOutcome], None] | None = None,
    harness: HarnessFactory = Harness,
) -> WorkerReport:
    """Claim and run jobs as ``options`` say, until ``max_jobs`` were run or ``stop`` is set.

    ``settings`` (default :func:`autotune.config.get_autotune_settings`) give the compiler, flags, threads,
    harness limits and the heartbeat interval: the worker keeps its row in the workers table fresh
    while it runs. ``on_job``, ``on_trial`` and ``on_outcome`` are called as a job is claimed,
    after each of its trials, and when it ends. ``harness`` makes the harness that compiles and times each
    job's nest (default: :class:`~loopnest.harness.Harness`).
    """
    options = options or WorkerOptions()
    settings = settings or get_autotune_settings()
    ensure_isolated(settings.sandbox, settings.allow_unsandboxed, "a tuning worker")
    worker_id = options.worker_id or default_worker_id()
    lease_seconds, max_jobs = options.lease_seconds, options.max_jobs
    stop = stop or threading.Event()
    outcomes: list[JobOutcome] = []
    with Heartbeat(store, worker_id, interval_s=settings.worker_heartbeat_s, cpus=options.cpus) as heartbeat:
        while not stop.is_set() and (max_jobs is None or len(outcomes) < max_jobs):
            with store.session() as session:
                job = claim_next_job(session, worker_id=worker_id, lease_seconds=lease_seconds,
                                     job_ids=options.job_ids)
            if job is None:
                if options.once:
                    break
                stop.wait(options.poll_seconds)
                continue
            _logger.info("worker %s claimed job %d (attempt %d)", worker_id, job.id, job.attempts)
            if on_job is not None:
                on_job(job)
            outcomes.append(run_job(store, job, worker_id=worker_id, lease_seconds=lease_seconds, settings=settings,
                                    stop=stop, on_trial=on_trial, harness=harness, heartbeat=heartbeat))
            if on_outcome is not None:
                on_outcome(outcomes[-1])
    return WorkerReport(worker_id, tuple(outcomes))


def run_job(
    store: Store,
    job: TuningJob,
    *,
    worker_id: str,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
    settings: AutotuneSettings | None = None,
    stop: threading.Event | None = None,
    on_trial: Callable[[TuningJob, TuneProgress], None] | None = None,
    harness: HarnessFactory = Harness,
    heartbeat: Heartbeat | None = None,
) -> JobOutcome:
    """Run one claimed job to its end and record the outcome in the database (``harness``: as
    :func:`run_worker`'s). ``heartbeat`` (the worker's) holds the job's lease while it runs; without one,
    the job gets a heartbeat of its own, with a row in the workers table named ``worker_id``."""
    settings = settings or get_autotune_settings()
    if heartbeat is None:
        with Heartbeat(store, worker_id, interval_s=settings.worker_heartbeat_s) as own:
            return run_job(store, job, worker_id=worker_id, lease_seconds=lease_seconds, settings=settings,
                           stop=stop, on_trial=on_trial, harness=harness, heartbeat=own)
    run = _JobRun(store, job, worker_id, settings, on_trial, harness)
    with heartbeat.running(job.id, lease_seconds) as lease:
        return _run_leased(run, lease, heartbeat, stop or threading.Event())


def _run_leased(run: _JobRun, lease: JobLease, heartbeat: Heartbeat, stop: threading.Event) -> JobOutcome:
    store, job, worker_id = run.store, run.job, run.worker_id
    try:
        result = run.tune(lease, heartbeat, stop)
    except LeaseLostError as exc:
        return JobOutcome(job.id, "lease-lost", error=str(exc))
    except StorageError as exc:  # the database, not the job: another worker may do better
        return _fail(store, job, worker_id, str(exc), retry=job.attempts < MAX_ATTEMPTS)
    except PerfembedError as exc:
        return _fail(store, job, worker_id, str(exc), retry=False)
    except Exception as exc:
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        _logger.exception("job %d failed", job.id)
        return _fail(store, job, worker_id, f"internal error: {detail}", retry=job.attempts < MAX_ATTEMPTS)
    if lease.lost.is_set():
        return JobOutcome(job.id, "lease-lost", result.evaluated, result.best_speedup, result=result,
                          error=lease.error)
    if result.stopped == "stopped":  # the worker is shutting down: let another one go on
        return _fail(store, job, worker_id, "worker stopped; requeued", retry=True, result=result)
    return run.finish(result)


class _JobRun:
    """One job as one worker runs it: the nest rebuilt from the job, the study tuned, the winner confirmed."""

    def __init__(self, store: Store, job: TuningJob, worker_id: str, settings: AutotuneSettings,
                 on_trial: Callable[[TuningJob, TuneProgress], None] | None, harness: HarnessFactory) -> None:
        self.store, self.job, self.worker_id, self.settings = store, job, worker_id, settings
        self.on_trial, self.harness = on_trial, harness
        self.options = JobOptions()  # read from the job's row when it starts (a malformed one fails the job)
        self.reps = 3
        self.threads: int | None = settings.threads or None
        self.recorder: MeasurementRecorder | None = None
        self.scop: Scop | None = None
        self.params: dict[str, int] = {}
        self._best: tuple[list[dict[str, Any]] | None, int | None] = (None, None)  # steps, recipe id

    def tune(self, lease: JobLease, heartbeat: Heartbeat, stop: threading.Event) -> TuneResult:
        """Rebuild the nest and run the study until the budget is spent, the lease lost or ``stop`` set."""
        job, settings = self.job, self.settings
        self.options = options = JobOptions.from_json(job.options)
        self.reps = options.reps if options.reps is not None else 3
        self.threads = options.threads or settings.threads or None
        self.scop, self.params = scop, params = _load_nest(self.store, job, options)
        target_id = job.target_id if job.target_id is not None else ensure_local_target(self.store, cc=settings.cc).id
        self.recorder = MeasurementRecorder(self.store, nest_id=job.nest_id, target_id=target_id, params=params,
                                            structure=structure_key(options.sparse))
        study_name, space = tuning_study(self.store.url, job.nest_id, target_id, scop, params, options.sparse)
        config = TuneConfig(
            storage=self.store.url, study_name=options.study_name or study_name, space=space,
            n_trials=job.budget, timeout=options.timeout, seed=options.seed, warm_start=list(options.warm_start),
            reps=self.reps, threads=self.threads, limits=Limits.from_settings(settings), cc=settings.cc,
            cflags=settings.cflags, sparse=options.sparse, worker_id=self.worker_id,
            heartbeat_interval=options.heartbeat_interval if options.heartbeat_interval is not None
            else DEFAULT_HEARTBEAT_INTERVAL, grace_period=options.grace_period, trial_heartbeat=heartbeat,
            harness_factory=self.harness)
        return tune_nest(scop, params, config, recorder=self.recorder, on_trial=self._progress,
                         should_stop=lambda: lease.lost.is_set() or stop.is_set())

    def _progress(self, update: TuneProgress) -> None:
        """After every trial: the job's progress and best recipe in the database, then ``on_trial``."""
        assert self.recorder is not None
        if update.best_recipe is not None and update.best_recipe != self._best[0]:
            self._best = (update.best_recipe, self.recorder.recipe_id(list(update.best_recipe)))
        with self.store.session() as session:
            update_job_progress(session, job_id=self.job.id, worker_id=self.worker_id, progress=update.evaluated,
                                best_recipe_id=self._best[1], best_speedup=update.best_speedup)
        if self.on_trial is not None:
            self.on_trial(self.job, update)

    def finish(self, result: TuneResult) -> JobOutcome:
        """Confirm the study's winner, then record the job as done (with why it stopped early, if it did)."""
        store, job, worker_id, recorder = self.store, self.job, self.worker_id, self.recorder
        best_id = recorder.recipe_id(list(result.best_recipe.to_dict()["steps"])) \
            if result.best_recipe is not None and recorder is not None else None
        note = result.stop_reason or None  # a space that ran out: the job is done, and says why it stopped early
        best_speedup, confirmed = result.best_speedup, None
        if best_id is not None and recorder is not None and self.scop is not None:
            confirmed, doubt = confirm_best(self.scop, self.params, result, recorder, self.settings, reps=self.reps,
                                            threads=self.threads, sparse=self.options.sparse, harness=self.harness)
            if doubt is not None:
                best_id, best_speedup, note = None, None, "; ".join(filter(None, [note, doubt]))
            elif confirmed is not None:
                best_speedup = confirmed.ratio
        try:
            with store.session() as session:
                update_job_progress(session, job_id=job.id, worker_id=worker_id, progress=result.evaluated)
            if note:
                with store.session() as session:
                    note_job(session, job_id=job.id, worker_id=worker_id, note=note)
            with store.session() as session:
                finish_job(session, job_id=job.id, worker_id=worker_id, best_recipe_id=best_id,
                           best_speedup=best_speedup, clear_best=best_id is None)
        except LeaseLostError as exc:
            return JobOutcome(job.id, "lease-lost", result.evaluated, best_speedup, best_id, str(exc), result)
        return JobOutcome(job.id, "done", result.evaluated, best_speedup, best_id, note, result, confirmed)


def confirm_best(scop: Scop, params: dict[str, int], result: TuneResult, recorder: MeasurementRecorder,
                 settings: Settings, *, reps: int = 3, threads: int | None = None,
                 sparse: SparseChoice | None = None,
                 harness: HarnessFactory = Harness) -> tuple[Speedup | None, str | None]:
    """The study's winner is the best of its trials (the winner's curse): re-measure it against the
    baseline in fresh, interleaved runs (in a harness ``harness`` makes). Returns the re-measured speedup,
    or why it did not hold up."""
    policy = AcceptancePolicy.from_settings(settings)
    if result.best_recipe is None or (result.best_speedup or 0.0) < policy.margin:
        return None, None  # below the margin it is offered to nobody: nothing to confirm
    with harness(scop, params, reps=reps, threads=threads, limits=Limits.from_settings(settings), cc=settings.cc,
                 cflags=settings.cflags, sparse=sparse) as measuring:
        comparison = measuring.compare(result.best_recipe, policy=policy)
        baseline = measuring.baseline().median
    speedup = comparison.speedup
    if comparison.ok and speedup is not None and baseline:
        # Stored whether or not it holds up: it is this recipe's honest figure, and "tuned before"
        # prefers it to the screening figure that chose the winner.
        recorder.confirmed(list(result.best_recipe.to_dict()["steps"]), speedup, baseline)
        if speedup.above(policy.margin):
            return speedup, None
    found = speedup.describe() if speedup else f"{comparison.status} {comparison.message}".strip()
    return None, f"the best trial ({result.best_speedup:.2f}x) did not hold up when re-measured: {found}"


def _fail(store: Store, job: TuningJob, worker_id: str, error: str, *, retry: bool,
          result: TuneResult | None = None) -> JobOutcome:
    try:
        with store.session() as session:
            fail_job(session, job_id=job.id, worker_id=worker_id, error=error[:4000], retry=retry)
    except LeaseLostError as exc:
        return JobOutcome(job.id, "lease-lost", error=str(exc), result=result)
    status = "requeued" if retry else "failed"
    if result is not None and result.stopped == "stopped":
        status = "stopped"
    return JobOutcome(job.id, status, result.evaluated if result else 0,
                      result.best_speedup if result else None, error=error, result=result)


def _load_nest(store: Store, job: TuningJob, options: JobOptions) -> tuple[Scop, dict[str, int]]:
    """Rebuild the job's nest from its source and check the parameter values."""
    with store.session() as session:
        nest = get_nest(session, nest_id=job.nest_id)
        program = None if options.source else get_program(session, program_id=nest.program_id)
    source = options.source or (program.source if program else "")
    filename = _shown_name(options.filename or (program.name if program else "") or "nest.c")
    # A job's program came from the network: includes resolve only among its own headers. Its name is
    # never a file name (120 x "日" is too long for one): the file is program.c, messages use the name.
    defines = dict(PreprocessOptions.parse_define(d) for d in options.defines)
    try:
        extraction = extract_program(ProgramSource(source, headers=options.headers, defines=defines))
    except ParameterError as exc:  # a header name that is not a plain relative path
        raise ParameterError(f"job {job.id}: {exc}") from None
    except PerfembedError as exc:  # the source: its locations name the job's program, not program.c
        raise SourceError(str(exc).replace(PROGRAM_FILE, filename)) from None
    index = options.nest_index if options.nest_index is not None else nest.index
    if not 0 <= index < len(extraction.scops):
        raise ParameterError(f"job {job.id}: nest index {index} is out of range; {filename} has "
                             f"{len(extraction.scops)} supported nest(s)")
    scop = extraction.scops[index]
    if options.function is not None and scop.region.function != options.function:
        raise ParameterError(f"job {job.id}: nest {index} of {filename} is in {scop.region.function}, "
                             f"not in {options.function}")
    raw = {**stored_param_values(nest.normalized), **options.params}  # the stored nest's values are the default
    return scop, require_params(scop.params, raw, what=f"job {job.id}",
                                hint=f"give them in options.params (nest {nest.id} has none stored)")


def _shown_name(name: str, limit: int = 80) -> str:
    """The job's program as its messages name it: the last part of its name, at most ``limit`` characters."""
    shown = Path(name).name or "nest.c"
    if not shown.endswith(".c"):
        shown += ".c"
    return shown if len(shown) <= limit else shown[:limit - 3] + "..."

