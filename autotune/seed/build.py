"""Build the seed database: autotune every corpus nest on this machine, resumably.

A nest counts as done when its study holds ``trials`` evaluated variants; re-running continues
unfinished nests and skips finished ones. Program names are ``family/file.c`` so that
evaluations can hold out whole families.
"""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import optuna

from autotune.search.study_names import tuning_study
from autotune.search.tuner import TuneConfig, tune_nest
from database import get_store
from database.records import MeasurementRecorder, ensure_local_target, register_nest
from loopnest.config import Settings
from loopnest.errors import ParameterError, PerfembedError
from loopnest.frontend.extract import extract_scops
from loopnest.harness import Limits
from loopnest.harness.timing_lock import working_beside_timers


@dataclass(frozen=True)
class SeedEntry:
    file: Path
    family: str
    function: str | None
    params: dict[str, int]
    fixed: frozenset[str] = frozenset()  # parameters --scale keeps

    @property
    def name(self) -> str:
        return f"{self.family}/{self.file.name}"


@dataclass(frozen=True)
class SeedOutcome:
    name: str
    status: str  # "tuned" | "skipped" | "failed"
    evaluated: int = 0
    best_speedup: float | None = None
    message: str = ""


def read_manifest(path: Path) -> list[SeedEntry]:
    try:
        raw = json.loads(Path(path).read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ParameterError(f"cannot read corpus manifest {path}: {exc}") from None
    entries = raw["nests"] if isinstance(raw, dict) else raw
    root = Path(path).parent
    out = []
    for number, item in enumerate(entries, 1):
        try:
            entry = SeedEntry(Path(item["file"]), str(item["family"]), item.get("function"),
                              {k: int(v) for k, v in item["params"].items()}, frozenset(item.get("fixed", ())))
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ParameterError(f"{path}: entry {number} is not a nest entry (file, family, params: integer "
                                 f"sizes): {type(exc).__name__} {exc}") from None
        file = entry.file
        if not file.is_absolute():
            file = (root / file) if (root / file).exists() else file.resolve()
        if not file.is_file():  # before anything is built or measured: one line, not a traceback mid-run
            raise ParameterError(f"{path}: entry {number} names {item['file']}, which is neither beside the "
                                 f"manifest nor under the current directory")
        out.append(dataclasses.replace(entry, file=file))
    return out


def scaled(entry: SeedEntry, factor: float) -> SeedEntry:
    """The entry with every size parameter multiplied by ``factor`` (at least 4, so loops stay loops);
    the manifest's ``fixed`` ones (a dense width, a filter size) are kept. Before they were, ``--scale
    0.5`` tuned spmm_csr_ijk_w16 at 8 dense columns and w64 at 32, and their recipes (the dense loop
    moved outward) did not carry to the widths they are named for."""
    if factor == 1.0:
        return entry
    return dataclasses.replace(entry, params={k: v if k in entry.fixed else max(4, int(round(v * factor)))
                                              for k, v in entry.params.items()})


def tune_entry(url: str, entry: SeedEntry, *, trials: int, reps: int, settings: Settings, seed: int = 0,
               warm_start: Sequence[Any] = ()) -> SeedOutcome:
    """Tune one corpus nest into the database at ``url`` (runs in a worker process); ``warm_start``
    recipes are tried first where they map into the nest's space."""
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    # The whole job (features, the recipe space's isl schedules, every trial) holds the timing lock
    # shared: another job's timed run waits for this one to time or finish, never runs beside its work.
    with working_beside_timers(settings.timing_lock):
        return _tune_entry(url, entry, trials=trials, reps=reps, settings=settings, seed=seed,
                           warm_start=warm_start)


def _tune_entry(url: str, entry: SeedEntry, *, trials: int, reps: int, settings: Settings, seed: int,
                warm_start: Sequence[Any]) -> SeedOutcome:
    try:
        store = get_store(url)
        scops = extract_scops(entry.file, function=entry.function).scops
        if not scops:
            return SeedOutcome(entry.name, "failed", message="no supported nest")
        scop = scops[0]
        nest = register_nest(store, source=entry.file.read_text(), name=entry.name, index=0, scop=scop,
                             params=entry.params)
        target = ensure_local_target(store, cc=settings.cc)
        # Resumes by the study of the nest's current recipe space, not by the measurements stored: a
        # nest tuned over an older space (before a new step applied to it) is tuned again over the new.
        study_name, space = tuning_study(store.url, nest.id, target.id, scop, entry.params)
        config = TuneConfig(storage=store.url, space=space, study_name=study_name, n_trials=trials, seed=seed,
                            reps=reps, threads=settings.threads or None, limits=Limits.from_settings(settings),
                            cc=settings.cc, cflags=settings.cflags, warm_start=tuple(warm_start))
        result = tune_nest(scop, entry.params, config,
                           recorder=MeasurementRecorder(store, nest_id=nest.id, target_id=target.id,
                                                        params=entry.params))
        if not result.evaluations and result.stopped == "budget":
            return SeedOutcome(entry.name, "skipped", result.evaluated)
        return SeedOutcome(entry.name, "tuned", result.evaluated, result.best_speedup)
    except PerfembedError as exc:
        return SeedOutcome(entry.name, "failed", message=str(exc))


def _tune_star(args: tuple[Any, ...]) -> SeedOutcome:
    url, entry, trials, reps, settings, warm_start = args
    return tune_entry(url, entry, trials=trials, reps=reps, settings=settings, warm_start=warm_start)


def build_seed(url: str, entries: Iterable[SeedEntry], *, trials: int, jobs: int, reps: int, settings: Settings,
               on_done: Callable[[SeedOutcome], None] | None = None,
               warm: Mapping[tuple[str, int], Sequence[Any]] | None = None) -> list[SeedOutcome]:
    """Tune every entry, ``jobs`` at a time (separate processes sharing the database). ``warm``: recipes
    per (entry name, nest index) to try first, e.g. an earlier build's best
    (:func:`database.seed.best_recipes`); they are measured again here like any trial, and a study
    already past ``trials`` gets none."""
    work = [(url, e, trials, reps, settings, tuple((warm or {}).get((e.name, 0), ()))) for e in entries]
    outcomes: list[SeedOutcome] = []
    if jobs <= 1:
        iterator: Iterable[SeedOutcome] = map(_tune_star, work)
        for outcome in iterator:
            outcomes.append(outcome)
            if on_done:
                on_done(outcome)
        return outcomes
    with multiprocessing.get_context("spawn").Pool(jobs) as pool:
        for outcome in pool.imap_unordered(_tune_star, work):
            outcomes.append(outcome)
            if on_done:
                on_done(outcome)
    return outcomes
