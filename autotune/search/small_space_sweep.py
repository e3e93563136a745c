"""When a study's recipe space runs out: small spaces are enumerated, so the tuner knows when every
distinct recipe was tried (evaluated, or refused as illegal) and stops there, and says so.

TPE samples with replacement and learns nothing from pruned samples, so in a space of five
distinct recipes it used to draw about 400 samples (the free-trial cap) before giving up, and
the study ended "done" at 4 of 40 trials without a word. Here a small space is listed once;
after :data:`SWEEP_AFTER_FREE` free samples the recipes TPE has not drawn yet are enqueued, and
the study ends as soon as every one of them was seen.
"""

from __future__ import annotations

import itertools
from collections.abc import Collection, Mapping
from typing import Any

import optuna

from autotune.search.space.recipe_space import RecipeSpace

# Spaces with at most this many points are listed (a recipe per point: milliseconds each).
MAX_LISTED_POINTS = 4096
# Free (pruned or repeated) samples after which the unseen recipes of a listed space are enqueued.
SWEEP_AFTER_FREE = 20
MAX_SWEPT = 256


def distinct_points(space: RecipeSpace, limit: int = MAX_LISTED_POINTS) -> dict[str, dict[str, Any]] | None:
    """Recipe hash -> the first point giving that recipe, for a space of at most ``limit`` points."""
    if space.size > limit:
        return None
    names = list(space.choices)
    out: dict[str, dict[str, Any]] = {}
    for values in itertools.product(*(space.choices[n] for n in names)):
        point = dict(zip(names, values, strict=True))
        out.setdefault(space.recipe_for(point).hash, point)
    return out


def sweep_unseen(study: optuna.Study, distinct: Mapping[str, dict[str, Any]], seen: Collection[str]) -> int:
    """Enqueue (once per study) the listed recipes no trial has settled yet; returns how many."""
    study.set_user_attr("swept", True)
    unseen = [point for key, point in distinct.items() if key not in seen][:MAX_SWEPT]
    for point in unseen:
        study.enqueue_trial(point, user_attrs={"sweep": True}, skip_if_exists=True)
    return len(unseen)


def needs_sweep(study: optuna.Study, free: int) -> bool:
    return free >= SWEEP_AFTER_FREE and not study.user_attrs.get("swept")


def stop_reason(stopped: str, *, evaluated: int, n_trials: int, free: int, listed: int | None) -> str:
    """Why a study ended before its budget, in words ("" when it did not run out)."""
    if stopped != "exhausted":
        return ""
    why = (f"every one of its {listed} distinct recipes was tried" if listed is not None
           else f"{free} samples were illegal or repeats")
    return (f"the recipe space ran out: {evaluated} distinct legal recipes evaluated of {n_trials} asked "
            f"({why})")
