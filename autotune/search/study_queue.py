"""What a study holds and which trials it runs next: its counts, the check that it was built over this
recipe space, and the points enqueued ahead of the sampler (warm start, one-step probes, unseen recipes)."""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import optuna
from optuna.trial import TrialState

from autotune.search.space.recipe_space import RecipeSpace
from loopnest.errors import IllegalTransformError, PerfembedError, RecipeError
from loopnest.transform.recipe import Recipe, apply_recipe

if TYPE_CHECKING:
    from loopnest.ir import Scop


# Free (pruned or repeated) trials after which a study that evaluated almost nothing gets probes.
PROBE_AFTER_FREE = 20
_EVALUATED = (TrialState.RUNNING, TrialState.COMPLETE, TrialState.FAIL)
_UNSEEN_DRAWS = 8  # random points tried for a legal one whose recipe is new (a spent space has none left)


class StudyMismatchError(PerfembedError):
    """An existing study was built over another recipe space (another perfembed version or nest)."""


@dataclass(frozen=True)
class StudyCounts:
    trials: int
    evaluated: int
    free: int
    best_value: float | None
    best_trial: optuna.trial.FrozenTrial | None
    by_recipe: Mapping[str, optuna.trial.FrozenTrial]
    seen: frozenset[str] = frozenset()  # recipes some finished trial settled (evaluated or illegal)


def study_counts(study: optuna.Study) -> StudyCounts:
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
    return StudyCounts(finished, evaluated, free, best.value if best else None, best, by_recipe, frozenset(seen))


def check_space(study: optuna.Study, space: RecipeSpace, scop: Scop, params: Mapping[str, int]) -> None:
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


def enqueue_warm_start(study: optuna.Study, space: RecipeSpace,
                        recipes: Iterable[Recipe | Mapping[str, Any] | list[Any]], n_trials: int) -> int:
    """Enqueue the recipes that map into the space, at most as many as the budget has left."""
    counts = study_counts(study)
    waiting = waiting_trials(study)
    room = n_trials - counts.evaluated - waiting
    added = 0
    for recipe in recipes:
        if added >= room:
            break
        params = space.params_for(recipe)
        if params is None:
            continue
        before = waiting_trials(study)
        study.enqueue_trial(params, user_attrs={"warm_start": True}, skip_if_exists=True)
        added += waiting_trials(study) - before
    return added


def waiting_trials(study: optuna.Study) -> int:
    return len(study.get_trials(deepcopy=False, states=(TrialState.WAITING,)))


def needs_probes(study: optuna.Study, counts: StudyCounts) -> bool:
    """Whether the sampler keeps proposing illegal recipes: PROBE_AFTER_FREE settled for free and
    almost nothing evaluated (once per study)."""
    return (counts.free >= PROBE_AFTER_FREE and counts.evaluated * 10 < counts.free
            and not study.user_attrs.get("probed"))


def enqueue_probes(study: optuna.Study, space: RecipeSpace, room: int) -> None:
    """Enqueue the space's one-step points (:meth:`RecipeSpace.probe_params`), at most ``room``.

    In a nest where most combinations are illegal (tiling across a loop-local scalar, say) TPE
    learns nothing from pruned trials and would spend the whole free-trial cap on them; a few
    evaluated simple recipes give it something to build on.
    """
    study.set_user_attr("probed", True)
    for params in space.probe_params()[:max(0, room)]:
        study.enqueue_trial(params, user_attrs={"probe": True}, skip_if_exists=True)


def enqueue_unseen(study: optuna.Study, space: RecipeSpace, scop: Scop, deps: list[Any], counts: StudyCounts,
                    rng: random.Random) -> None:
    """After a repeat, make the next trial a random legal point of the space whose recipe no trial has
    settled (nothing when a few draws find none: a space nearly spent ends by the free-sample cap).

    Once it has a few results TPE proposes its best point again and again; each repeat is told the
    earlier result, which makes the next one likelier still, and two workers sharing a study repeat
    several times while one of them evaluates. The repeats are free, but they filled the study's
    free-sample cap (``max(50, 10 * n_trials)``) before its budget, and it ended as if the space had
    run out: 7 of 8 trials evaluated, "7 distinct legal recipes" in a space of thousands. A random
    point is illegal about half the time in gemm's space, and an illegal one is followed by the same
    repeat: hence legal points only (a check costs milliseconds, as in :func:`autotune.search.tuner._prepare`).
    """
    if waiting_trials(study):
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
