"""Autotuning of loop nests with Optuna, sharing studies and results through the perfembed database.

* :class:`RecipeSpace`: the engine's recipe space of one nest as Optuna parameters, and back
  (``params_for``, for warm starts with ``enqueue_trial``);
* :func:`tune_nest` (its options in a :class:`TuneConfig`): one study per (nest, target, parameter
  values) in Optuna's RDB storage in the same database; illegal samples pruned before compiling,
  failures as FAIL trials, a trial budget shared by every worker, heartbeats to fail a dead
  worker's trial;
* :func:`study_name_for`, :func:`tuning_study`: the study a nest is tuned in (what tuning writes of
  a nest, its target and its measurements is :mod:`database.records`);
* :func:`run_worker` / :func:`run_job`: the worker that claims queued tuning jobs;
* :class:`TransferTuner` (``autotune.transfer``), :func:`adapt_recipe` and friends
  (``autotune.transfer.adapt``): the neighbours' recipes mapped onto a new nest, which
  :func:`tune_nest` takes as ``warm_start``.

The subpackages are the stages: :mod:`autotune.search` (the recipe space and the Optuna tuner),
:mod:`autotune.transfer` (neighbours and their recipes adapted), :mod:`autotune.workers` (the job
queue's workers) and :mod:`autotune.seed` (building the shipped seed).

Names load on first access, so ``import autotune`` does not import Optuna (52 ms, python -X importtime).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from autotune.search.space.recipe_space import TILE_SIZES, UNROLL_FACTORS, RecipeSpace
    from autotune.search.study_names import resolve_study_name, study_name_for, tuning_study
    from autotune.search.study_queue import StudyMismatchError
    from autotune.search.study_storage import default_sampler, open_storage
    from autotune.search.tune_outcome import TrialRecord, TuneProgress, TuneResult
    from autotune.search.tuner import TuneConfig, tune_nest
    from autotune.transfer import Candidate, Neighbour, TransferResult, TransferTuner
    from autotune.transfer.adapt import LoopRoles, adapt_recipe, loop_roles, map_loops
    from autotune.workers.worker import JobOutcome, WorkerOptions, WorkerReport, default_worker_id, run_job, run_worker

_MODULE_OF = {
    "study_name_for": "autotune.search.study_names",
    "resolve_study_name": "autotune.search.study_names",
    "tuning_study": "autotune.search.study_names",
    "RecipeSpace": "autotune.search.space.recipe_space",
    "TILE_SIZES": "autotune.search.space.recipe_space",
    "UNROLL_FACTORS": "autotune.search.space.recipe_space",
    "StudyMismatchError": "autotune.search.study_queue",
    "TrialRecord": "autotune.search.tune_outcome",
    "TuneConfig": "autotune.search.tuner",
    "TuneProgress": "autotune.search.tune_outcome",
    "TuneResult": "autotune.search.tune_outcome",
    "default_sampler": "autotune.search.study_storage",
    "open_storage": "autotune.search.study_storage",
    "tune_nest": "autotune.search.tuner",
    "Candidate": "autotune.transfer",
    "LoopRoles": "autotune.transfer.adapt",
    "Neighbour": "autotune.transfer",
    "TransferResult": "autotune.transfer",
    "TransferTuner": "autotune.transfer",
    "adapt_recipe": "autotune.transfer.adapt",
    "loop_roles": "autotune.transfer.adapt",
    "map_loops": "autotune.transfer.adapt",
    "JobOutcome": "autotune.workers.worker",
    "WorkerOptions": "autotune.workers.worker",
    "WorkerReport": "autotune.workers.worker",
    "default_worker_id": "autotune.workers.worker",
    "run_job": "autotune.workers.worker",
    "run_worker": "autotune.workers.worker",
}

__all__ = [
    "Candidate",
    "JobOutcome",
    "LoopRoles",
    "Neighbour",
    "RecipeSpace",
    "StudyMismatchError",
    "TILE_SIZES",
    "TransferResult",
    "TransferTuner",
    "TrialRecord",
    "TuneConfig",
    "TuneProgress",
    "TuneResult",
    "UNROLL_FACTORS",
    "WorkerOptions",
    "WorkerReport",
    "adapt_recipe",
    "default_sampler",
    "default_worker_id",
    "loop_roles",
    "map_loops",
    "open_storage",
    "run_job",
    "run_worker",
    "resolve_study_name",
    "study_name_for",
    "tuning_study",
    "tune_nest",
]


def __getattr__(name: str) -> Any:
    if name not in _MODULE_OF:
        raise AttributeError(f"module 'autotune' has no attribute {name!r}")
    value = getattr(importlib.import_module(_MODULE_OF[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
