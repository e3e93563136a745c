"""Where studies live and how their trials stay alive: Optuna's RDB storage in the perfembed database,
the default sampler, each trial's heartbeat, and failing the trials of workers that died."""

from __future__ import annotations

import logging
import warnings
from typing import Any, Protocol

import optuna
from optuna.exceptions import ExperimentalWarning
from optuna.storages import RDBStorage
from optuna.trial import TrialState
from sqlalchemy import event

from autotune.repeating import Repeating
from autotune.search.budget_lock import study_lock

_logger = logging.getLogger(__name__)

DEFAULT_HEARTBEAT_INTERVAL = 10  # seconds between trial heartbeats; a trial is stale after twice that


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


def ask_trial(study: optuna.Study) -> optuna.Trial:
    with warnings.catch_warnings():
        # This loop records the heartbeats itself (a :class:`TrialHeartbeat`), which Optuna cannot know.
        warnings.filterwarnings("ignore", message="Heartbeat of storage is supposed to be used")
        return study.ask()


def fail_orphans(study: optuna.Study, storage: RDBStorage, study_id: int) -> None:
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


def fail_stale(study: optuna.Study) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExperimentalWarning)
        optuna.storages.fail_stale_trials(study)


class TrialHeartbeat(Protocol):
    """Records the Optuna heartbeat of the trial being evaluated, so that a dead worker's trial goes stale
    (:func:`fail_stale`): once at :meth:`trial_started`, then every ``interval_s`` seconds until
    :meth:`trial_ended`. A worker's :class:`~autotune.workers.heartbeat.Heartbeat` is one (its one beat
    also keeps its row and its job's lease); :class:`OwnTrialHeartbeat` is the tuner's outside a worker."""

    def trial_started(self, storage: RDBStorage, trial_id: int, interval_s: float) -> None: ...

    def trial_ended(self) -> None: ...


class OwnTrialHeartbeat:
    """A :class:`TrialHeartbeat` on a thread of its own: for a tuner that runs outside a worker."""

    def __init__(self) -> None:
        self._repeat: Repeating | None = None

    def trial_started(self, storage: RDBStorage, trial_id: int, interval_s: float) -> None:
        self.trial_ended()
        record_trial_heartbeat(storage, trial_id)
        self._repeat = Repeating(f"heartbeat-{trial_id}", interval_s,
                                 lambda: record_trial_heartbeat(storage, trial_id))
        self._repeat.start()

    def trial_ended(self) -> None:
        if self._repeat is not None:
            self._repeat.stop()
            self._repeat = None


def record_trial_heartbeat(storage: RDBStorage, trial_id: int) -> None:
    try:
        storage.record_heartbeat(trial_id)
    except Exception:  # a missed beat only risks the trial being failed as stale
        _logger.warning("could not record the heartbeat of trial id %d", trial_id, exc_info=True)
