"""What a tuning run reports: a record per trial, the progress events, and the run's result."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

import optuna

from autotune.search.study_queue import StudyCounts
from loopnest.transform.recipe import Recipe

if TYPE_CHECKING:
    from loopnest.harness import VariantResult


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


def tune_result(study: optuna.Study, counts: StudyCounts, records: tuple[TrialRecord, ...],
            baseline: VariantResult | None, stopped: str, reason: str = "") -> TuneResult:
    best = counts.best_trial
    recipe = Recipe.from_dict({"steps": best.user_attrs["recipe"]}) if best and "recipe" in best.user_attrs else None
    return TuneResult(study.study_name, recipe, counts.best_value, best.number if best else None,
                      counts.trials, counts.evaluated, records, baseline, stopped, reason)
