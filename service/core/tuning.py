"""The work behind ``perfembed tune``: the nests of a file to tune, one study per nest, its winner
re-measured, one report row each, and the file with every winner applied.

:mod:`service.commands.tune` parses the options, shows the progress and prints the report; this
module runs the studies. It imports Optuna and the tuner at the top, so ``tune_command`` imports
it only when it runs (they add 52 ms to every ``perfembed`` start, python -X importtime).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import optuna

from autotune import TuneConfig, TuneProgress, TuneResult, tune_nest, tuning_study
from autotune.config import AutotuneSettings, get_autotune_settings
from autotune.workers.worker import confirm_best
from database import get_store, ranked_recipes_for
from database.records import MeasurementRecorder, ensure_local_target, register_nest
from loopnest.errors import ParameterError
from loopnest.harness import Limits
from loopnest.harness.index_data import SparseChoice, structure_key
from loopnest.ir import Scop
from loopnest.parameters import missing_params
from loopnest.transform.recipe import Recipe, apply_recipe
from loopnest.transform.recipe_text import loop_names, recipe_text
from service.core.dropin import dropin_source
from service.core.local import CheckNests, SourceFile, resolve_threads

KNOWN_RECIPES = 3  # the nest's best stored recipes on this target, tried after --warm-start


@dataclass(frozen=True)
class TuneOptions:
    """``perfembed tune``'s study options, parsed: the same for every nest of the file."""

    trials: int
    timeout: float | None
    reps: int
    threads: int | None  # --threads as given: None is the settings', 0 every core
    seed: int | None
    warm_start: tuple[Recipe, ...]
    sparse: SparseChoice | None


@dataclass(frozen=True)
class NestStudy:
    """One nest's study, run: its database records and the tuner's result."""

    index: int  # among every nest of the file
    scop: Scop
    values: dict[str, int]  # the parameter values that apply to this nest
    complete: bool  # every parameter has a value: only then is the winner re-measured
    nest_id: int
    recorder: MeasurementRecorder
    result: TuneResult


@dataclass(frozen=True)
class TunedNest:
    """One nest, tuned: its report row (``--json``'s ``results`` entry) and, when its re-measured
    winner held up, the nest with that recipe applied (for ``--write-best``)."""

    index: int
    row: dict[str, Any]
    transformed: Scop | None


class NestTuner:
    """Tunes the nests of one file in the database of ``settings`` (default: this machine's) on this
    machine's target."""

    def __init__(self, file: Path, options: TuneOptions, settings: AutotuneSettings | None = None) -> None:
        optuna.logging.set_verbosity(optuna.logging.WARNING)
        settings = settings or get_autotune_settings()
        self.file = file
        self.settings = settings
        self.options = replace(options, threads=resolve_threads(options.threads, settings.threads))
        self.store = get_store(settings.resolved_database_url, create=True)
        self.source = file.read_text()
        self.target = ensure_local_target(self.store, cc=settings.cc)

    def study(self, index: int, scop: Scop, params: Mapping[str, int], *,
              on_trial: Callable[[TuneProgress], None]) -> NestStudy:
        """Register the nest and run (or resume) its study up to the trial budget."""
        values = {p: params[p] for p in scop.params if p in params}
        complete = not missing_params(scop.params, values)
        db_nest = register_nest(self.store, source=self.source, name=self.file.name, index=index, scop=scop,
                                params=values if complete else None, data_dir=self.settings.data_dir)
        with self.store.session() as session:
            known = ranked_recipes_for(session, nest_id=db_nest.id, target_id=self.target.id, limit=KNOWN_RECIPES)
        # The same study name as the seed build and the workers (it carries the recipe space's signature).
        study_name, space = tuning_study(self.store.url, db_nest.id, self.target.id, scop, values,
                                         self.options.sparse)
        recorder = MeasurementRecorder(self.store, nest_id=db_nest.id, target_id=self.target.id, params=values,
                                       structure=structure_key(self.options.sparse))
        opts = self.options
        result = tune_nest(scop, values, TuneConfig(
            storage=self.store.url, study_name=study_name, space=space,
            n_trials=opts.trials, timeout=opts.timeout, seed=opts.seed,
            warm_start=[*opts.warm_start, *(Recipe.from_dict(r.recipe.steps) for r in known)],
            reps=opts.reps, threads=opts.threads, limits=Limits.from_settings(self.settings),
            cc=self.settings.cc, cflags=self.settings.cflags, sparse=opts.sparse), recorder=recorder,
            on_trial=on_trial)
        return NestStudy(index, scop, values, complete, db_nest.id, recorder, result)

    def confirm(self, study: NestStudy) -> TunedNest:
        """Re-measure the study's winner against the original (when every parameter has a value)
        and make the nest's report row."""
        result = study.result
        confirmed, doubt = (None, None)
        if study.complete and result.best_recipe is not None:
            confirmed, doubt = confirm_best(study.scop, study.values, result, study.recorder, self.settings,
                                            reps=self.options.reps, threads=self.options.threads,
                                            sparse=self.options.sparse)
        transformed = None
        if confirmed is not None and result.best_recipe is not None:
            transformed = apply_recipe(study.scop, result.best_recipe)
        row = {"nest": study.index, "name": study.scop.name, "nest_id": study.nest_id, "target_id": self.target.id,
               "params": study.values, "budget": self.options.trials, **result.to_dict(),
               "best_recipe_text": None if result.best_recipe is None
               else recipe_text(result.best_recipe, loop_names(study.scop)),
               "confirmed": None if confirmed is None else confirmed.to_dict(), "doubt": doubt}
        return TunedNest(study.index, row, transformed)


def nests_to_tune(src: SourceFile, nest: int | None, check_nests: CheckNests) -> tuple[list[Scop], list[int]]:
    """Every supported nest of FILE, and the indices of those to tune (``--function``, ``--nest``);
    ``check_nests(count, rejected)`` hears what the extraction found first.

    Nest indices count every nest of the file, so that they match with or without --function."""
    extraction = src.extract(get_autotune_settings(), every_function=True)
    check_nests(len(extraction.scops), [r.to_dict() for r in extraction.rejected])
    scops, function = extraction.scops, src.function
    chosen = [i for i, s in enumerate(scops) if function is None or s.region.function == function]
    if nest is not None:
        if nest not in chosen:
            raise ParameterError(f"--nest {nest}: the file has {len(scops)} supported nest(s)"
                                 + (f", {len(chosen)} in {function}" if function else ""))
        chosen = [nest]
    if not chosen:
        raise ParameterError(f"{src.path}: no supported loop nest to tune"
                             + (f" in function {function!r}" if function else ""))
    return scops, chosen


def write_tuned(path: Path, scops: list[Scop], tuned: list[TunedNest], out: Path) -> int:
    """Write ``path`` with every nest whose re-measured winner held up transformed (the drop-in file) to
    ``out``; how many nests that transforms."""
    best = {t.index: t.transformed for t in tuned if t.transformed is not None}
    out.write_text(dropin_source(path, scops, best))
    return len(best)
