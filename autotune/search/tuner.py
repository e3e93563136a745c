"""Tune one nest at fixed parameter values with an Optuna study in the perfembed database.

One study per (nest, target, parameter values) lives in Optuna's RDB storage inside the same
database, so every worker on every machine that tunes the same nest shares it; a study that
was interrupted simply goes on where it stopped. The loop is Optuna's ask/tell:

1. under the study's budget lock (:mod:`autotune.search.budget_lock`): fail the trials of dead workers
   (stale heartbeats, or no ``worker`` attribute: see :func:`fail_orphans`), stop if the
   budget is spent, ``ask``, start the trial's heartbeat, build the sampled recipe and check it
   against the exact dependences. An illegal sample is told PRUNED, and a recipe some earlier
   trial already measured is told that trial's result: neither reaches the compiler;
2. outside the lock, with the heartbeat running: compile, run, verify and time the variant,
   write the measurement to the database, then ``tell`` the speedup. A variant that fails to
   compile, crashes, times out or computes wrong outputs is a FAIL trial.

Every worker of a study must run this loop (not ``study.optimize``): it relies on the lock and
on the trial attributes it sets.

**The budget** ``n_trials`` counts evaluated trials, those that reached the compiler (running,
complete or failed), across all workers of the study, and is never exceeded: the count and the
``ask`` happen under one lock. Pruned samples and repeats are free, up to ``max_free_trials``
(default ``max(50, 10 * n_trials)``) so that a space with nothing legal left still ends. A repeat
makes the next trial a random legal recipe not tried yet (:func:`enqueue_unseen`): TPE tends to
propose its best recipe again and again, which used to spend the free samples before the budget. A small
space is listed instead (:mod:`autotune.search.small_space_sweep`), and its study ends once every distinct recipe
was tried. Either way the result is ``stopped="exhausted"`` with a ``stop_reason`` in words.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import optuna
from optuna.storages import RDBStorage
from optuna.trial import TrialState

from autotune.search.budget_lock import study_lock
from autotune.search.small_space_sweep import distinct_points, needs_sweep, stop_reason, sweep_unseen
from autotune.search.space.recipe_space import RecipeSpace
from autotune.search.study_queue import (
    StudyCounts,
    check_space,
    enqueue_probes,
    enqueue_unseen,
    enqueue_warm_start,
    needs_probes,
    study_counts,
    waiting_trials,
)
from autotune.search.study_storage import (
    DEFAULT_HEARTBEAT_INTERVAL,
    OwnTrialHeartbeat,
    TrialHeartbeat,
    ask_trial,
    default_sampler,
    fail_orphans,
    fail_stale,
    open_storage,
)
from autotune.search.tune_outcome import TrialRecord, TuneProgress, TuneResult, tune_result
from loopnest.errors import IllegalTransformError, ParameterError, RecipeError
from loopnest.harness import Harness, Limits
from loopnest.harness.factory import HarnessFactory
from loopnest.harness.index_data import SparseChoice
from loopnest.harness.timing_lock import working_beside_timers
from loopnest.polyhedral import compute_dependences
from loopnest.transform.recipe import Recipe, apply_recipe

if TYPE_CHECKING:
    from loopnest.harness import Evaluation, VariantResult
    from loopnest.ir import Scop

_logger = logging.getLogger(__name__)

# A variant may run this many times longer than the baseline (all repetitions and the driver's
# set-up included) before it is killed: slow variants cost time, hung ones must not stall a study.
VARIANT_WALL_FACTOR = 20.0
MIN_VARIANT_WALL_S = 5.0


# -- the tuning loop ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class TuneConfig:
    """How :func:`tune_nest` searches and measures: the study and its budget, the sampler, the harness.

    ``storage`` is a database URL (opened with ``heartbeat_interval`` and ``grace_period``) or an
    :class:`~optuna.storages.RDBStorage` from :func:`open_storage`, whose settings then apply.
    ``n_trials`` counts evaluated trials of the study, every worker's; ``timeout`` (seconds) ends this
    call earlier. ``warm_start`` recipes (e.g. the neighbours' adapted recipes) are mapped into the
    space with :meth:`RecipeSpace.params_for` and enqueued, so they are the first trials of a new study.
    ``space`` defaults to the nest's :class:`RecipeSpace`; ``sampler`` to :func:`default_sampler` with
    ``seed``. ``reps``, ``threads``, ``limits``, ``cc``, ``cflags`` and ``sparse`` (the index structures
    of a sparse nest) configure the :class:`~loopnest.harness.Harness`, which ``harness_factory`` makes
    (default: the class itself; a test passes one that scripts compile and time). ``max_free_trials`` caps
    pruned and repeated samples (default ``max(50, 10 * n_trials)``). ``trial_heartbeat`` records the
    running trial's heartbeat every ``heartbeat_interval`` seconds: a worker passes its one heartbeat
    (:class:`~autotune.workers.heartbeat.Heartbeat`); by default a thread of the tuner's own does it.
    """

    storage: str | RDBStorage
    study_name: str
    n_trials: int
    timeout: float | None = None
    sampler: optuna.samplers.BaseSampler | None = None
    seed: int | None = None
    warm_start: Iterable[Recipe | Mapping[str, Any] | list[Any]] = ()
    space: RecipeSpace | None = None
    reps: int = 3
    threads: int | None = None
    limits: Limits | None = None
    cc: str = "gcc"
    cflags: str = "-O3 -march=native -fopenmp"
    sparse: SparseChoice | None = None
    worker_id: str | None = None
    heartbeat_interval: int = DEFAULT_HEARTBEAT_INTERVAL
    grace_period: int | None = None
    trial_heartbeat: TrialHeartbeat | None = None
    max_free_trials: int | None = None
    harness_factory: HarnessFactory = Harness

    def __post_init__(self) -> None:
        if self.n_trials < 0:
            raise ParameterError(f"n_trials must be zero or more, got {self.n_trials}")

    def harness(self, scop: Scop, params: Mapping[str, int]) -> Harness:
        return self.harness_factory(scop, params, reps=self.reps, threads=self.threads,
                                    limits=self.limits or Limits.configured(), cc=self.cc, cflags=self.cflags,
                                    sparse=self.sparse)


def tune_nest(
    scop: Scop,
    params: Mapping[str, int],
    config: TuneConfig,
    *,
    recorder: Callable[[Evaluation], int | None] | None = None,
    on_trial: Callable[[TuneProgress], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> TuneResult:
    """Tune ``scop`` at ``params`` in the study ``config.study_name`` until ``config.n_trials`` variants
    of the study were evaluated (by any worker), ``config.timeout`` seconds passed, or ``should_stop()``.

    ``recorder`` is called with every evaluation that ran (see
    :class:`~database.records.MeasurementRecorder`) and returns a measurement id; ``on_trial`` gets a
    :class:`TuneProgress` after every trial. Raises :class:`~loopnest.errors.ExecutionError` if the
    original nest itself does not run, :class:`~loopnest.errors.CompileError` if it does not compile
    (a perfembed bug), and :class:`StudyMismatchError` if the study was built over another recipe space.
    """
    start = time.monotonic()
    space = config.space
    deps = space.deps if space is not None and space.deps is not None else compute_dependences(scop)
    space = space or RecipeSpace(scop, deps, params=params)
    harness = config.harness(scop, params)
    storage = config.storage
    rdb = open_storage(storage, heartbeat_interval=config.heartbeat_interval, grace_period=config.grace_period) \
        if isinstance(storage, str) else storage
    n_trials = config.n_trials
    free_cap = max(50, 10 * n_trials) if config.max_free_trials is None else config.max_free_trials
    run = _Run(scop=scop, params=dict(harness.params), deps=deps, space=space, storage=rdb,
               study_name=config.study_name, n_trials=n_trials, free_cap=free_cap, worker=config.worker_id or "local",
               heartbeat_interval=rdb.heartbeat_interval or config.heartbeat_interval,
               heartbeat=config.trial_heartbeat or OwnTrialHeartbeat(), recorder=recorder,
               on_trial=on_trial, distinct=distinct_points(space))
    try:
        study = run.open_study(config.sampler or default_sampler(config.seed, n_trials=n_trials), config.warm_start)
        counts = study_counts(study)
        if counts.evaluated >= n_trials:
            return run.result(study, counts, (), None, "budget")
        with harness:
            deadline = None if config.timeout is None else start + config.timeout
            return run.loop(study, harness, deadline=deadline, should_stop=should_stop)
    finally:
        if isinstance(storage, str):
            rdb.engine.dispose()


@dataclass
class _Run:
    """One worker's tuning run of one study (the arguments of :func:`tune_nest`, resolved)."""

    scop: Scop
    params: dict[str, int]
    deps: list[Any]
    space: RecipeSpace
    storage: RDBStorage
    study_name: str
    n_trials: int
    free_cap: int
    worker: str
    heartbeat_interval: int
    heartbeat: TrialHeartbeat
    recorder: Callable[[Evaluation], int | None] | None
    on_trial: Callable[[TuneProgress], None] | None
    distinct: dict[str, dict[str, Any]] | None = None  # recipe hash -> point, for a listed (small) space

    def locked(self) -> Any:
        return study_lock(self.storage.url, self.study_name)

    def open_study(self, sampler: optuna.samplers.BaseSampler,
                   warm_start: Iterable[Recipe | Mapping[str, Any] | list[Any]]) -> optuna.Study:
        with self.locked():
            study = optuna.create_study(storage=self.storage, study_name=self.study_name, direction="maximize",
                                        sampler=sampler, load_if_exists=True)
            check_space(study, self.space, self.scop, self.params)
            fresh = not study.get_trials(deepcopy=False)
            auto = self.space.autoschedule_params()
            if fresh and auto is not None:
                study.enqueue_trial(auto, user_attrs={"autoschedule": True})
            enqueue_warm_start(study, self.space, warm_start, self.n_trials)
            if fresh:
                extras = [(p, "autoschedule") for p in (self.space.register_block_params(),
                                                        *self.space.time_tile_params()) if p != auto]
                extras += [(self.space.parallel_simd_params(), "parallel_simd"),
                           (self.space.simd_block_params(), "parallel_simd")]
                for extra, label in extras:
                    # After the warm start (a user's or neighbour's recipe first), and only within the budget:
                    # one left waiting would run before the warm start of a later, larger run of this study.
                    if extra is not None and waiting_trials(study) < self.n_trials:
                        study.enqueue_trial(extra, user_attrs={label: True}, skip_if_exists=True)
        return study

    def loop(self, study: optuna.Study, harness: Harness, *, deadline: float | None,
             should_stop: Callable[[], bool] | None) -> TuneResult:
        base = harness.baseline()
        median = base.require_median(f"{self.scop.name}: the original nest at {self.params}")
        wall = min(harness.limits.wall_seconds,
                   max(MIN_VARIANT_WALL_S, VARIANT_WALL_FACTOR * median * (harness.reps + 1)))
        study_id = self.storage.get_study_id_from_name(self.study_name)
        records: list[TrialRecord] = []
        stopped = "budget"
        while True:
            if should_stop is not None and should_stop():
                stopped = "stopped"
                break
            if deadline is not None and time.monotonic() >= deadline:
                stopped = "timeout"
                break
            # The trial's work holds the timing lock shared: another job's timed run waits for it to end.
            with working_beside_timers(harness.limits.timing_lock):
                record = self._trial(study, study_id, harness, wall)
            if isinstance(record, str):
                stopped = record
                break
            records.append(record)
            if self.on_trial is not None:
                counts = study_counts(study)
                best = counts.best_trial
                self.on_trial(TuneProgress(record, counts.evaluated, self.n_trials, counts.best_value,
                                           best.user_attrs.get("recipe") if best is not None else None))
        return self.result(study, study_counts(study), tuple(records), base, stopped)

    def _trial(self, study: optuna.Study, study_id: int, harness: Harness, wall: float) -> TrialRecord | str:
        """Ask, prepare and evaluate one trial; or why the loop ends ("budget" when it is spent,
        "exhausted" when nothing is left to try)."""
        with self.locked():
            fail_stale(study)
            fail_orphans(study, self.storage, study_id)
            counts = study_counts(study)
            if counts.evaluated >= self.n_trials:
                return "budget"
            if needs_probes(study, counts):
                enqueue_probes(study, self.space, self.n_trials - counts.evaluated)
            if self._ran_out(study, counts):
                return "exhausted"
            trial = ask_trial(study)
            trial_id = self.storage.get_trial_id_from_study_id_trial_number(study_id, trial.number)
            self.heartbeat.trial_started(self.storage, trial_id, self.heartbeat_interval)
            trial.set_user_attr("worker", self.worker)  # from here on, a dead worker's trial goes stale
            try:
                record, pending = _prepare(study, trial, self.space, self.scop, self.deps, counts)
            except BaseException:
                self.heartbeat.trial_ended()
                _tell_failed_quietly(study, trial)
                raise
            if record is not None:
                self.heartbeat.trial_ended()
                return record
        assert pending is not None
        try:
            return _evaluate(study, trial, pending, harness, wall, self.recorder)
        finally:
            self.heartbeat.trial_ended()

    def _ran_out(self, study: optuna.Study, counts: StudyCounts) -> bool:
        """Every distinct recipe of a listed space was settled, or the free-sample cap was reached
        (the unseen recipes of a listed space are enqueued once the sampler starts repeating)."""
        if self.distinct is not None:
            if self.distinct.keys() <= counts.seen:
                return True
            if needs_sweep(study, counts.free):
                sweep_unseen(study, self.distinct, counts.seen)
        return counts.free >= self.free_cap and not waiting_trials(study)

    def result(self, study: optuna.Study, counts: StudyCounts, records: tuple[TrialRecord, ...],
               baseline: VariantResult | None, stopped: str) -> TuneResult:
        reason = stop_reason(stopped, evaluated=counts.evaluated, n_trials=self.n_trials, free=counts.free,
                             listed=len(self.distinct) if self.distinct is not None else None)
        return tune_result(study, counts, records, baseline, stopped, reason)


@dataclass(frozen=True)
class _Pending:
    params: dict[str, Any]
    recipe: Recipe
    transformed: Scop


def _prepare(study: optuna.Study, trial: optuna.Trial, space: RecipeSpace, scop: Scop, deps: list[Any],
             counts: StudyCounts) -> tuple[TrialRecord | None, _Pending | None]:
    """Sample the trial and settle it at once if it is illegal or a repeat (under the lock)."""
    params = space.sample(trial)
    recipe = space.recipe_for(params)
    steps = recipe.to_dict()
    trial.set_user_attr("recipe", steps["steps"])
    trial.set_user_attr("recipe_hash", recipe.hash)
    # A repeat is settled from the earlier trial before any legality check: checking again cost seconds a
    # sample where isl schedules the nest (a 3-D stencil's study sampled 236 repeats for 23 evaluations).
    earlier = counts.by_recipe.get(recipe.hash)
    if earlier is not None and earlier.user_attrs.get("status") == "illegal":
        return _illegal(study, trial, params, steps, str(earlier.user_attrs.get("message", ""))), None
    try:
        transformed = apply_recipe(scop, recipe, deps) if earlier is None else None
    except (IllegalTransformError, RecipeError) as exc:
        return _illegal(study, trial, params, steps, str(exc)), None
    if earlier is not None:
        trial.set_user_attr("status", "duplicate")
        trial.set_user_attr("duplicate_of", earlier.number)
        trial.set_user_attr("free", True)
        enqueue_unseen(study, space, scop, deps, counts, random.Random(f"{study.study_name}:{trial.number}"))
        if earlier.state == TrialState.COMPLETE and earlier.value is not None:
            study.tell(trial, earlier.value)
            return TrialRecord(trial.number, "complete", "duplicate", params, steps, speedup=earlier.value,
                               verified=True, message=f"same recipe as trial {earlier.number}"), None
        study.tell(trial, state=TrialState.FAIL)
        return TrialRecord(trial.number, "fail", "duplicate", params, steps,
                           message=f"same recipe as trial {earlier.number}, which failed"), None
    assert transformed is not None
    return None, _Pending(params, recipe, transformed)


def _illegal(study: optuna.Study, trial: optuna.Trial, params: dict[str, Any], steps: dict[str, Any],
             message: str) -> TrialRecord:
    trial.set_user_attr("status", "illegal")
    trial.set_user_attr("message", message[:500])
    study.tell(trial, state=TrialState.PRUNED)
    return TrialRecord(trial.number, "pruned", "illegal", params, steps, message=message)


def _evaluate(study: optuna.Study, trial: optuna.Trial, pending: _Pending, harness: Harness, wall: float,
              recorder: Callable[[Evaluation], int | None] | None) -> TrialRecord:
    """Compile, run, verify and time the variant; store the measurement; tell the result."""
    steps = pending.recipe.to_dict()
    try:
        evaluation = harness.evaluate(pending.recipe, transformed=pending.transformed, wall_seconds=wall)
    except Exception as exc:  # a code generation bug must cost one trial, not the whole study
        _logger.warning("trial %d: evaluating %s failed", trial.number, pending.recipe.canonical_json(),
                        exc_info=True)
        message = f"{type(exc).__name__}: {exc}"[:500]
        _finish(study, trial, None, {"status": "error", "message": message})
        return TrialRecord(trial.number, "fail", "error", pending.params, steps, message=message)
    variant = evaluation.variant
    verified = bool(evaluation.verified and variant.ok and evaluation.speedup and evaluation.speedup > 0)
    try:
        measurement_id = recorder(evaluation) if recorder is not None else None
    except BaseException:
        _tell_failed_quietly(study, trial)
        raise
    attrs: dict[str, Any] = {"status": variant.status, "message": variant.message[:500], "median_s": variant.median,
                             "verified": verified, "measurement_id": measurement_id}
    value = evaluation.speedup if verified else None
    _finish(study, trial, value, attrs)
    return TrialRecord(trial.number, "complete" if verified else "fail", variant.status, pending.params, steps,
                       speedup=value, median_s=variant.median, verified=verified, measurement_id=measurement_id,
                       message=variant.message)


def _tell_failed_quietly(study: optuna.Study, trial: optuna.Trial) -> None:
    """Best effort on the way out of an error: the stale check would fail the trial later anyway."""
    try:
        study.tell(trial, state=TrialState.FAIL, skip_if_finished=True)
    except Exception:
        _logger.warning("could not fail trial %d", trial.number, exc_info=True)


def _finish(study: optuna.Study, trial: optuna.Trial, value: float | None, attrs: Mapping[str, Any]) -> None:
    """Set the attributes and tell; a trial another worker already failed as stale stays failed."""
    try:
        for key, item in attrs.items():
            trial.set_user_attr(key, item)
    except optuna.exceptions.UpdateFinishedTrialError:
        _logger.warning("trial %d of %s was failed as stale by another worker while it ran; its result "
                        "(%s) is not recorded in the study", trial.number, study.study_name, dict(attrs))
    if value is None:
        study.tell(trial, state=TrialState.FAIL, skip_if_finished=True)
    else:
        study.tell(trial, value, skip_if_finished=True)


