"""Tune one nest at fixed parameter values with an Optuna study in the perfembed database.

One study per (nest, target, parameter values) lives in Optuna's RDB storage inside the same
database, so every worker on every machine that tunes the same nest shares it; a study that
was interrupted simply goes on where it stopped. The loop is Optuna's ask/tell:

1. under the study's budget lock (:mod:`autotune._locks`): fail the trials of dead workers
   (stale heartbeats, or no ``worker`` attribute: see :func:`_fail_orphans`), stop if the
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
makes the next trial a random legal recipe not tried yet (:func:`_enqueue_unseen`): TPE tends to
propose its best recipe again and again, which used to spend the free samples before the budget. A small
space is listed instead (:mod:`autotune._sweep`), and its study ends once every distinct recipe
was tried. Either way the result is ``stopped="exhausted"`` with a ``stop_reason`` in words.
"""

from __future__ import annotations

import logging
import random
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import optuna
from optuna.exceptions import ExperimentalWarning
from optuna.storages import RDBStorage
from optuna.trial import TrialState
from sqlalchemy import event

from autotune._locks import study_lock
from autotune._repeat import Repeating
from autotune._sweep import distinct_points, needs_sweep, stop_reason, sweep_unseen
from autotune.space import RecipeSpace
from loopnest.errors import IllegalTransformError, ParameterError, PerfembedError, RecipeError
from loopnest.harness import Harness, Limits
from loopnest.harness.index_data import SparseChoice
from loopnest.polyhedral import compute_dependences
from loopnest.transform.recipe import Recipe, apply_recipe

if TYPE_CHECKING:
    from loopnest.harness import Evaluation, VariantResult
    from loopnest.ir import Scop

_logger = logging.getLogger(__name__)

DEFAULT_HEARTBEAT_INTERVAL = 10  # seconds between trial heartbeats; a trial is stale after twice that
# A variant may run this many times longer than the baseline (all repetitions and the driver's
# set-up included) before it is killed: slow variants cost time, hung ones must not stall a study.
VARIANT_WALL_FACTOR = 20.0
MIN_VARIANT_WALL_S = 5.0
# Free (pruned or repeated) trials after which a study that evaluated almost nothing gets probes.
PROBE_AFTER_FREE = 20
_EVALUATED = (TrialState.RUNNING, TrialState.COMPLETE, TrialState.FAIL)
_UNSEEN_DRAWS = 8  # random points tried for a legal one whose recipe is new (a spent space has none left)


class StudyMismatchError(PerfembedError):
    """An existing study was built over another recipe space (another perfembed version or nest)."""


@dataclass(frozen=True)
class TrialRecord:
    """One trial of a tuning run, as this worker saw it."""

    number: int
    state: str  # "complete", "pruned" or "fail"
    status: str  # "ok", "illegal", "duplicate", "error", or the harness status ("wrong-output", ...)
    params: Mapping[str, Any]
    recipe: Mapping[str, Any]
    speedup: float | None = None
    median_s: float | None = None
    verified: bool = False
    measurement_id: int | None = None
    message: str = ""

    @property
    def evaluated(self) -> bool:
        """Whether the variant reached the compiler (what the budget counts)."""
        return self.status not in ("illegal", "duplicate")

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "params": dict(self.params), "recipe": dict(self.recipe)}


@dataclass(frozen=True)
class TuneProgress:
    """Passed to ``on_trial`` after every trial."""

    record: TrialRecord
    evaluated: int  # evaluated trials in the study, every worker's
    budget: int
    best_speedup: float | None
    best_recipe: list[dict[str, Any]] | None = None  # steps of the study's best recipe


@dataclass(frozen=True)
class TuneResult:
    """The state of the study when this worker stopped, and what this worker did.

    ``best_*`` and the counts cover the whole study (every worker, earlier runs included);
    ``evaluations`` lists only this call's trials.
    """

    study_name: str
    best_recipe: Recipe | None
    best_speedup: float | None
    best_trial: int | None
    trials: int  # finished trials in the study, any state
    evaluated: int  # trials that reached the compiler: what the budget counts
    evaluations: tuple[TrialRecord, ...] = ()
    baseline: VariantResult | None = None
    stopped: str = "budget"  # "budget", "timeout", "exhausted" (the space ran out) or "stopped"
    stop_reason: str = ""  # for "exhausted": "the recipe space ran out: 4 distinct legal recipes ..."

    def to_dict(self) -> dict[str, Any]:
        return {
            "study_name": self.study_name,
            "best_recipe": self.best_recipe.to_dict() if self.best_recipe else None,
            "best_speedup": self.best_speedup,
            "best_trial": self.best_trial,
            "trials": self.trials,
            "evaluated": self.evaluated,
            "stopped": self.stopped,
            "stop_reason": self.stop_reason,
            "baseline": self.baseline.to_dict() if self.baseline else None,
            "evaluations": [r.to_dict() for r in self.evaluations],
        }


# -- storage -----------------------------------------------------------------------------------


def open_storage(url: str, *, heartbeat_interval: int | None = DEFAULT_HEARTBEAT_INTERVAL,
                 grace_period: int | None = None) -> RDBStorage:
    """Optuna's RDB storage on the database at ``url`` (its tables sit beside perfembed's).

    SQLite connections wait for locks and start every transaction with ``BEGIN IMMEDIATE``, as
    perfembed's own do: a deferred transaction that reads and then writes fails at once when
    another process wrote in between, which is common with several workers.
    """
    is_sqlite = url.startswith("sqlite")
    kwargs: dict[str, Any] = {"connect_args": {"timeout": 60}} if is_sqlite else {"pool_pre_ping": True}
    with warnings.catch_warnings(), study_lock(url, "perfembed-optuna-schema"):
        warnings.simplefilter("ignore", ExperimentalWarning)
        storage = RDBStorage(url, engine_kwargs=kwargs, heartbeat_interval=heartbeat_interval,
                             grace_period=grace_period)
    if is_sqlite:
        _begin_immediate(storage.engine)
    return storage


def _begin_immediate(engine: Any) -> None:
    @event.listens_for(engine, "connect")
    def _connect(dbapi_connection: Any, _record: Any) -> None:
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        try:
            cursor.execute("PRAGMA busy_timeout = 60000")
            cursor.execute("PRAGMA journal_mode = WAL")  # as perfembed's own connections set it
            cursor.execute("PRAGMA synchronous = NORMAL")
        finally:
            cursor.close()

    @event.listens_for(engine, "begin")
    def _begin(connection: Any) -> None:
        connection.exec_driver_sql("BEGIN IMMEDIATE")

    engine.dispose()  # connections made before the listeners would keep deferred transactions


def default_sampler(seed: int | None = None, *, n_trials: int = 50) -> optuna.samplers.BaseSampler:
    """TPE over the joint space, with the constant liar so parallel workers spread out."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)
        return optuna.samplers.TPESampler(seed=seed, multivariate=True, constant_liar=True,
                                          n_startup_trials=max(3, min(10, n_trials // 3)))


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
    of a sparse nest) configure the :class:`~loopnest.harness.Harness`. ``max_free_trials`` caps pruned
    and repeated samples (default ``max(50, 10 * n_trials)``).
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
    max_free_trials: int | None = None

    def __post_init__(self) -> None:
        if self.n_trials < 0:
            raise ParameterError(f"n_trials must be zero or more, got {self.n_trials}")

    def harness(self, scop: Scop, params: Mapping[str, int]) -> Harness:
        return Harness(scop, params, reps=self.reps, threads=self.threads, limits=self.limits or Limits(),
                       cc=self.cc, cflags=self.cflags, sparse=self.sparse)


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
    :class:`~autotune.records.MeasurementRecorder`) and returns a measurement id; ``on_trial`` gets a
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
               heartbeat_interval=rdb.heartbeat_interval or config.heartbeat_interval, recorder=recorder,
               on_trial=on_trial, distinct=distinct_points(space))
    try:
        study = run.open_study(config.sampler or default_sampler(config.seed, n_trials=n_trials), config.warm_start)
        counts = _counts(study)
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
            _check_space(study, self.space, self.scop, self.params)
            auto = self.space.autoschedule_params()
            if auto is not None and not study.get_trials(deepcopy=False):
                study.enqueue_trial(auto, user_attrs={"autoschedule": True})
            _enqueue_warm_start(study, self.space, warm_start, self.n_trials)
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
            with self.locked():
                _fail_stale(study)
                _fail_orphans(study, self.storage, study_id)
                counts = _counts(study)
                if counts.evaluated >= self.n_trials:
                    break
                if _needs_probes(study, counts):
                    _enqueue_probes(study, self.space, self.n_trials - counts.evaluated)
                if self._ran_out(study, counts):
                    stopped = "exhausted"
                    break
                trial = _ask(study)
                trial_id = self.storage.get_trial_id_from_study_id_trial_number(study_id, trial.number)
                heartbeat = _Heartbeat(self.storage, trial_id, self.heartbeat_interval)
                heartbeat.start()
                trial.set_user_attr("worker", self.worker)  # from here on, a dead worker's trial goes stale
                try:
                    record, pending = _prepare(study, trial, self.space, self.scop, self.deps, counts)
                except BaseException:
                    heartbeat.stop()
                    _tell_failed_quietly(study, trial)
                    raise
                if record is not None:
                    heartbeat.stop()
            if pending is not None:
                try:
                    record = _evaluate(study, trial, pending, harness, wall, self.recorder)
                finally:
                    heartbeat.stop()
            assert record is not None
            records.append(record)
            if self.on_trial is not None:
                counts = _counts(study)
                best = counts.best_trial
                self.on_trial(TuneProgress(record, counts.evaluated, self.n_trials, counts.best_value,
                                           best.user_attrs.get("recipe") if best is not None else None))
        return self.result(study, _counts(study), tuple(records), base, stopped)

    def _ran_out(self, study: optuna.Study, counts: _Counts) -> bool:
        """Every distinct recipe of a listed space was settled, or the free-sample cap was reached
        (the unseen recipes of a listed space are enqueued once the sampler starts repeating)."""
        if self.distinct is not None:
            if self.distinct.keys() <= counts.seen:
                return True
            if needs_sweep(study, counts.free):
                sweep_unseen(study, self.distinct, counts.seen)
        return counts.free >= self.free_cap and not _waiting(study)

    def result(self, study: optuna.Study, counts: _Counts, records: tuple[TrialRecord, ...],
               baseline: VariantResult | None, stopped: str) -> TuneResult:
        reason = stop_reason(stopped, evaluated=counts.evaluated, n_trials=self.n_trials, free=counts.free,
                             listed=len(self.distinct) if self.distinct is not None else None)
        return _result(study, counts, records, baseline, stopped, reason)


@dataclass(frozen=True)
class _Pending:
    params: dict[str, Any]
    recipe: Recipe
    transformed: Scop


def _prepare(study: optuna.Study, trial: optuna.Trial, space: RecipeSpace, scop: Scop, deps: list[Any],
             counts: _Counts) -> tuple[TrialRecord | None, _Pending | None]:
    """Sample the trial and settle it at once if it is illegal or a repeat (under the lock)."""
    params = space.sample(trial)
    recipe = space.recipe_for(params)
    steps = recipe.to_dict()
    trial.set_user_attr("recipe", steps["steps"])
    trial.set_user_attr("recipe_hash", recipe.hash)
    try:
        transformed = apply_recipe(scop, recipe, deps)
    except (IllegalTransformError, RecipeError) as exc:
        trial.set_user_attr("status", "illegal")
        trial.set_user_attr("message", str(exc)[:500])
        study.tell(trial, state=TrialState.PRUNED)
        return TrialRecord(trial.number, "pruned", "illegal", params, steps, message=str(exc)), None
    earlier = counts.by_recipe.get(recipe.hash)
    if earlier is not None:
        trial.set_user_attr("status", "duplicate")
        trial.set_user_attr("duplicate_of", earlier.number)
        trial.set_user_attr("free", True)
        _enqueue_unseen(study, space, scop, deps, counts, random.Random(f"{study.study_name}:{trial.number}"))
        if earlier.state == TrialState.COMPLETE and earlier.value is not None:
            study.tell(trial, earlier.value)
            return TrialRecord(trial.number, "complete", "duplicate", params, steps, speedup=earlier.value,
                               verified=True, message=f"same recipe as trial {earlier.number}"), None
        study.tell(trial, state=TrialState.FAIL)
        return TrialRecord(trial.number, "fail", "duplicate", params, steps,
                           message=f"same recipe as trial {earlier.number}, which failed"), None
    return None, _Pending(params, recipe, transformed)


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


# -- study bookkeeping -------------------------------------------------------------------------


@dataclass(frozen=True)
class _Counts:
    trials: int
    evaluated: int
    free: int
    best_value: float | None
    best_trial: optuna.trial.FrozenTrial | None
    by_recipe: Mapping[str, optuna.trial.FrozenTrial]
    seen: frozenset[str] = frozenset()  # recipes some finished trial settled (evaluated or illegal)


def _counts(study: optuna.Study) -> _Counts:
    trials = study.get_trials(deepcopy=False)
    evaluated = free = finished = 0
    best: optuna.trial.FrozenTrial | None = None
    by_recipe: dict[str, optuna.trial.FrozenTrial] = {}
    seen: set[str] = set()
    for t in trials:
        if t.state.is_finished():
            finished += 1
            if "status" in t.user_attrs and t.user_attrs.get("recipe_hash"):
                seen.add(t.user_attrs["recipe_hash"])
        if t.state == TrialState.PRUNED or t.user_attrs.get("free"):
            free += 1
        elif t.state in _EVALUATED:
            evaluated += 1
            key = t.user_attrs.get("recipe_hash")
            # Only trials this code told: a worker that died leaves a stale FAIL without a status.
            if key and "status" in t.user_attrs and t.state != TrialState.RUNNING and key not in by_recipe:
                by_recipe[key] = t
        if t.state == TrialState.COMPLETE and t.value is not None and (best is None or t.value > (best.value or 0)):
            best = t
    return _Counts(finished, evaluated, free, best.value if best else None, best, by_recipe, frozenset(seen))


def _result(study: optuna.Study, counts: _Counts, records: tuple[TrialRecord, ...],
            baseline: VariantResult | None, stopped: str, reason: str = "") -> TuneResult:
    best = counts.best_trial
    recipe = Recipe.from_dict({"steps": best.user_attrs["recipe"]}) if best and "recipe" in best.user_attrs else None
    return TuneResult(study.study_name, recipe, counts.best_value, best.number if best else None,
                      counts.trials, counts.evaluated, records, baseline, stopped, reason)


def _check_space(study: optuna.Study, space: RecipeSpace, scop: Scop, params: Mapping[str, int]) -> None:
    attrs = study.user_attrs
    if "space" not in attrs:
        study.set_user_attr("space", space.signature)
        study.set_user_attr("nest", scop.name)
        study.set_user_attr("params", {k: int(v) for k, v in params.items()})
        return
    if attrs["space"] != space.signature:
        raise StudyMismatchError(
            f"study {study.study_name!r} was built over another recipe space (signature {attrs['space']}, "
            f"this nest gives {space.signature}); tune under another study name")


def _enqueue_warm_start(study: optuna.Study, space: RecipeSpace,
                        recipes: Iterable[Recipe | Mapping[str, Any] | list[Any]], n_trials: int) -> int:
    """Enqueue the recipes that map into the space, at most as many as the budget has left."""
    counts = _counts(study)
    waiting = _waiting(study)
    room = n_trials - counts.evaluated - waiting
    added = 0
    for recipe in recipes:
        if added >= room:
            break
        params = space.params_for(recipe)
        if params is None:
            continue
        before = _waiting(study)
        study.enqueue_trial(params, user_attrs={"warm_start": True}, skip_if_exists=True)
        added += _waiting(study) - before
    return added


def _waiting(study: optuna.Study) -> int:
    return len(study.get_trials(deepcopy=False, states=(TrialState.WAITING,)))


def _needs_probes(study: optuna.Study, counts: _Counts) -> bool:
    """Whether the sampler keeps proposing illegal recipes: PROBE_AFTER_FREE settled for free and
    almost nothing evaluated (once per study)."""
    return (counts.free >= PROBE_AFTER_FREE and counts.evaluated * 10 < counts.free
            and not study.user_attrs.get("probed"))


def _enqueue_probes(study: optuna.Study, space: RecipeSpace, room: int) -> None:
    """Enqueue the space's one-step points (:meth:`RecipeSpace.probe_params`), at most ``room``.

    In a nest where most combinations are illegal (tiling across a loop-local scalar, say) TPE
    learns nothing from pruned trials and would spend the whole free-trial cap on them; a few
    evaluated simple recipes give it something to build on.
    """
    study.set_user_attr("probed", True)
    for params in space.probe_params()[:max(0, room)]:
        study.enqueue_trial(params, user_attrs={"probe": True}, skip_if_exists=True)


def _enqueue_unseen(study: optuna.Study, space: RecipeSpace, scop: Scop, deps: list[Any], counts: _Counts,
                    rng: random.Random) -> None:
    """After a repeat, make the next trial a random legal point of the space whose recipe no trial has
    settled (nothing when a few draws find none: a space nearly spent ends by the free-sample cap).

    Once it has a few results TPE proposes its best point again and again; each repeat is told the
    earlier result, which makes the next one likelier still, and two workers sharing a study repeat
    several times while one of them evaluates. The repeats are free, but they filled the study's
    free-sample cap (``max(50, 10 * n_trials)``) before its budget, and it ended as if the space had
    run out: 7 of 8 trials evaluated, "7 distinct legal recipes" in a space of thousands. A random
    point is illegal about half the time in gemm's space, and an illegal one is followed by the same
    repeat: hence legal points only (a check costs milliseconds, as in :func:`_prepare`).
    """
    if _waiting(study):
        return  # an enqueued point comes next already
    for _ in range(_UNSEEN_DRAWS):
        params = {name: rng.choice(choices) for name, choices in space.choices.items()}
        recipe = space.recipe_for(params)
        if recipe.hash in counts.seen or recipe.hash in counts.by_recipe:
            continue
        try:
            apply_recipe(scop, recipe, deps)
        except (IllegalTransformError, RecipeError):
            continue
        study.enqueue_trial(params, user_attrs={"explore": True}, skip_if_exists=True)
        return


def _ask(study: optuna.Study) -> optuna.Trial:
    with warnings.catch_warnings():
        # This loop records the heartbeats itself (``_Heartbeat``), which Optuna cannot know.
        warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used")
        return study.ask()


def _fail_orphans(study: optuna.Study, storage: RDBStorage, study_id: int) -> None:
    """Fail the running trials whose worker died between ``ask`` and naming itself.

    Every worker asks and sets the ``worker`` attribute under the budget lock, and the caller
    holds it now: a running trial without that attribute has no live worker. Such a trial may
    have no heartbeat either (the worker died before its first one), so the stale check would
    never fail it.
    """
    for trial in study.get_trials(deepcopy=False, states=(TrialState.RUNNING,)):
        if "worker" not in trial.user_attrs:
            trial_id = storage.get_trial_id_from_study_id_trial_number(study_id, trial.number)
            try:
                storage.set_trial_user_attr(trial_id, "free", True)  # it never reached the compiler
                storage.set_trial_user_attr(trial_id, "status", "orphaned")
                storage.set_trial_state_values(trial_id, state=TrialState.FAIL)
            except optuna.exceptions.UpdateFinishedTrialError:
                _logger.info("orphaned trial %d of %s was already finished by another worker",
                             trial.number, study.study_name)


def _fail_stale(study: optuna.Study) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)
        optuna.storages.fail_stale_trials(study)


class _Heartbeat:
    """Records a trial's heartbeat every ``interval`` seconds, so a dead worker's trial goes stale."""

    def __init__(self, storage: RDBStorage, trial_id: int, interval: int) -> None:
        self._storage = storage
        self._trial_id = trial_id
        self._repeat = Repeating(f"heartbeat-{trial_id}", interval, self._beat)

    def start(self) -> None:
        self._beat()
        self._repeat.start()

    def stop(self) -> None:
        self._repeat.stop()

    def _beat(self) -> None:
        try:
            self._storage.record_heartbeat(self._trial_id)
        except Exception:  # a missed beat only risks the trial being failed as stale
            _logger.warning("could not record the heartbeat of trial id %d", self._trial_id, exc_info=True)
