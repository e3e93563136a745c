"""One run of the paper benchmark: what it measures (:class:`PaperConfig`), the progress events it
sends, and the per-nest measuring (baseline, transfer k, autotune n, Polly) behind
:func:`experiments.paper.run_paper_benchmark`."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from autotune.config import AutotuneSettings
from autotune.search.tune_outcome import TuneResult
from autotune.search.tuner import MIN_VARIANT_WALL_S, VARIANT_WALL_FACTOR, TuneConfig, tune_nest
from autotune.transfer import TransferTuner, within_gate
from autotune.transfer.neighbours import FAR_FAMILIES, TRANSFER_NEAR
from benchmarks.polly import POLLY_CC, POLLY_FLAGS, polly_problem
from database import Store
from database.embedding_store import EmbeddingStore
from database.records import ensure_local_target
from embeddings.features.signature import machine_signature
from experiments.harness_cache import RecipeCache
from experiments.paper_autotune_cache import AutotuneCache, ReusedSearch, search_key
from experiments.paper_confirm import CONFIRM_POLICY, confirm_row, confirmed_line, confirmed_summary
from experiments.paper_measure import autotune_results, run_polly, transfer_results
from experiments.paper_nests import (
    HeldOut,
    Selection,
    neighbours_outside,
    rebuild_scop,
    select_held_out,
)
from experiments.paper_report import (
    summarize,
)
from loopnest.errors import ParameterError, PerfembedError
from loopnest.harness import Harness, Limits
from loopnest.harness.timing_lock import working_beside_timers
from loopnest.ir import Scop
from loopnest.polyhedral import Dependence, compute_dependences

MIN_SPEEDUP = 1.1


@dataclass(frozen=True)
class ProgressEvent:
    """Passed to ``progress``: ``phase`` is "start", "nest", "autotune", "measure", "skip" or "done"."""

    phase: str
    index: int  # held-out nest being worked on (0-based); the count of finished nests for "done"
    total: int  # held-out nests in this run
    name: str = ""
    detail: str = ""
    trial: int | None = None  # autotune: evaluated trials so far
    trials: int | None = None  # autotune: budget


@dataclass(frozen=True)
class PaperConfig:
    """What one run measures: held-out nests per family (of ``families``, default all), the neighbour
    counts ``k_values``, the autotuning budgets ``tune_trials`` (one study of ``max(tune_trials)``
    trials with sampler ``seed``), timed repetitions ``reps``, the acceptance margin ``min_speedup``,
    and Polly (``polly``, built with ``polly_cc`` and ``polly_flags``). ``fit_model``: fit the standard
    embedding on every stored nest first (:meth:`EmbeddingStore.fit`; a model the database does not
    hold yet is registered and becomes its current one); False uses the database's current model.
    ``gate``: as the service does, transfer also screens the recipe space's first guesses when no
    neighbour lies within the embedding's confidence gate (:mod:`autotune.transfer.priors`); False
    screens the neighbours' recipes alone. ``priors``: the first guesses transfer tries all the same with a
    neighbour within the gate (:data:`autotune.transfer.priors.PRIOR_MODES`; None: the settings'
    ``transfer_priors``, as the service). ``confirm``: each method's accepted recipe is compared with the
    baseline interleaved until its interval clears the margin (:mod:`experiments.paper_confirm`).
    ``reuse_autotune``: a search already run with the same nest, settings, machine and tuner code is
    read back from the data folder instead of run again (:mod:`experiments.paper_autotune_cache`; its
    winners are still re-measured in this run); False searches again and keeps the new searches."""

    per_family: int = 2
    k_values: Sequence[int] = (1, 3, 5)
    tune_trials: Sequence[int] = (10, 25, 100)
    families: Sequence[str] | None = None
    reps: int = 3
    seed: int = 0
    min_speedup: float = MIN_SPEEDUP
    polly: bool = True
    polly_cc: str = POLLY_CC
    polly_flags: str = POLLY_FLAGS
    fit_model: bool = True
    gate: bool = True
    priors: str | None = None
    confirm: bool = True
    reuse_autotune: bool = True

    def checked(self) -> PaperConfig:
        """The same run with sorted, distinct budgets; a :class:`ParameterError` names a value out of range."""
        k_values = sorted({int(k) for k in self.k_values})
        tune_trials = sorted({int(n) for n in self.tune_trials})
        if not k_values or k_values[0] < 1:
            raise ParameterError("k values must be 1 or more")
        if not tune_trials or tune_trials[0] < 1:
            raise ParameterError("autotuning budgets must be 1 or more")
        if self.per_family < 1:
            raise ParameterError("per_family must be 1 or more")
        return PaperConfig(**{**asdict(self), "k_values": tuple(k_values), "tune_trials": tuple(tune_trials)})


class _Skipped(Exception):
    """A held-out nest that cannot be measured; the message says why (it is listed, not fatal)."""


@dataclass
class PaperRun:
    """One run: the held-out nests, the embedding store and tuner shared by them, and the harness settings."""

    store: Store
    data_dir: Path
    config: PaperConfig
    settings: AutotuneSettings
    progress: Callable[[ProgressEvent], None] | None
    scratch: Path
    started: float = field(default_factory=time.time)
    load_start: list[float] | None = field(default_factory=lambda: _load())
    skipped: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.threads = self.settings.threads or None
        self.limits = Limits.from_settings(self.settings)
        self.target_id = ensure_local_target(self.store, cc=self.settings.cc).id
        self.machine = machine_signature(cc=self.settings.cc).signature_hash  # once: every search key holds it
        self.selection: Selection = select_held_out(self.store, self.target_id, per_family=self.config.per_family,
                                                    families=self.config.families)
        self.embeddings = EmbeddingStore(self.store, data_dir=self.data_dir)
        if self.config.fit_model:
            self.embeddings.fit()
        self.model_version = self.embeddings.model()[0]  # the model searches use: the database's current one
        self.gate_distance = self.embeddings.gate_distance() if self.config.gate else None
        self.priors = self.config.priors or self.settings.transfer_priors
        self.tuner = TransferTuner(min_speedup=self.config.min_speedup, gate_distance=self.gate_distance,
                                   priors=self.priors)
        self.confirm_policy = replace(CONFIRM_POLICY, margin=self.config.min_speedup)
        self.polly_problem = polly_problem(self.config.polly_cc, self.config.polly_flags, self.limits) \
            if self.config.polly else None
        self.use_polly = self.config.polly and self.polly_problem is None
        self.autotune_cache = AutotuneCache(self.data_dir / "paper-autotune", reuse=self.config.reuse_autotune)
        total = len(self.selection.held)
        polly = f"; Polly not available: {self.polly_problem}" if self.polly_problem else ""
        families = len(self.selection.chosen_families)
        self.emit(ProgressEvent("start", 0, total, detail=f"{total} held-out nests in {families} families{polly}"))

    def emit(self, event: ProgressEvent) -> None:
        if self.progress is not None:
            self.progress(event)

    def measure(self, pos: int, held: HeldOut) -> dict[str, Any] | None:
        """One held-out nest's row (None when it was skipped, with the reason in ``skipped``)."""
        total = len(self.selection.held)
        self.emit(ProgressEvent("nest", pos, total, held.name))
        try:
            # Held shared through the nest's isl work, code generation and compiles, as a seed build's job:
            # unlocked, this process's work would run beside a seed build's timed runs: a stencil's parallel
            # recipe read 0.38x there against 1.60x in its study.
            with working_beside_timers(self.settings.timing_lock):
                params, scop, deps = self._nest(held)
                tuned = self._autotune(pos, held, scop, params)
                row = self._measure(pos, held, scop, params, deps, tuned)
        except _Skipped as why:
            self.skipped.append({"nest_id": held.nest_id, "name": held.name, "family": held.family,
                                 "reason": str(why)})
            self.emit(ProgressEvent("skip", pos, total, held.name, str(why)))
            return None
        self.emit(ProgressEvent("done", pos + 1, total, held.name,
                                _row_line(row, self.config.k_values, self.config.tune_trials)))
        return row

    def _nest(self, held: HeldOut) -> tuple[dict[str, int], Scop, list[Dependence]]:
        params = held.normalized.get("param_values")
        if not isinstance(params, dict) or held.normalized.get("loop_roles") is None:
            raise _Skipped("stored without parameter values or loop roles")
        try:
            scop = rebuild_scop(held, self.scratch)
            return params, scop, compute_dependences(scop)
        except (LookupError, PerfembedError) as exc:
            raise _Skipped(str(exc)) from exc

    def _autotune(self, pos: int, held: HeldOut, scop: Scop, params: Mapping[str, int]) -> TuneResult | ReusedSearch:
        """Autotuning, fresh, in a scratch storage (its own harness: its timings only pick winners), or the
        same search read back from an earlier run."""
        total, cfg = len(self.selection.held), self.config
        search = {"trials": max(cfg.tune_trials), "seed": cfg.seed, "reps": cfg.reps, "threads": self.threads,
                  "limits": repr(self.limits), "cc": self.settings.cc, "cflags": self.settings.cflags}
        nest = {"index": held.index, "name": held.normalized.get("name"), "schedule": held.normalized.get("schedule"),
                "function": held.normalized.get("function")}
        key = search_key(held.source, nest, params, search, machine=self.machine)
        reused = self.autotune_cache.get(key)
        if reused is not None:
            self.emit(ProgressEvent("autotune", pos, total, held.name, f"search of {reused.searched_at} reused",
                                    len([r for r in reused.evaluations if r.evaluated]), max(cfg.tune_trials)))
            return reused

        def on_trial(tp: Any) -> None:
            best = f"best {tp.best_speedup:.2f}x" if tp.best_speedup else ""
            self.emit(ProgressEvent("autotune", pos, total, held.name, best, tp.evaluated, tp.budget))

        config = TuneConfig(storage=f"sqlite:///{self.scratch / 'autotune.db'}",
                            study_name=f"paper:nest={held.nest_id}", n_trials=max(cfg.tune_trials), seed=cfg.seed,
                            reps=cfg.reps, threads=self.threads, limits=self.limits, cc=self.settings.cc,
                            cflags=self.settings.cflags)
        try:
            result = tune_nest(scop, params, config, on_trial=on_trial)
        except PerfembedError as exc:
            raise _Skipped(f"autotuning failed: {exc}") from exc
        self.autotune_cache.put(key, result)
        return result

    def _measure(self, pos: int, held: HeldOut, scop: Scop, params: dict[str, int], deps: list[Dependence],
                 tuned: TuneResult | ReusedSearch) -> dict[str, Any]:
        """Neighbours from other families only, then one gcc harness: baseline, transfer candidates,
        autotuning winners; then Polly, checked against gcc's outputs."""
        cfg, total = self.config, len(self.selection.held)
        exclude = self.selection.excluded_for(held.family)
        neighbours = neighbours_outside(self.store, self.embeddings, held.features, k=max(cfg.k_values),
                                        target_id=self.target_id, exclude=exclude, settings=self.settings,
                                        min_speedup=cfg.min_speedup)
        family_of_nest = self.selection.family_of_nest
        assert all(family_of_nest.get(nb.nest_id) != held.family for nb in neighbours)
        history = [r for r in tuned.evaluations if r.evaluated]
        self.emit(ProgressEvent("measure", pos, total, held.name, "baseline, transfer, autotune winners"))
        with Harness(scop, params, reps=cfg.reps, threads=self.threads, limits=self.limits, cc=self.settings.cc,
                     cflags=self.settings.cflags) as harness:
            base = harness.baseline()
            if not base.ok or not base.median:
                raise _Skipped(f"baseline failed: {base.status} {base.message}".strip())
            wall = min(self.limits.wall_seconds,
                       max(MIN_VARIANT_WALL_S, VARIANT_WALL_FACTOR * base.median * (cfg.reps + 1)))
            cache = RecipeCache(harness, wall)
            transfer = transfer_results(cache, self.tuner, scop, params, neighbours, deps, cfg.k_values,
                                        cfg.min_speedup)
            autotune = autotune_results(cache, history, cfg.tune_trials, cfg.min_speedup)
            confirmed = None
            if cfg.confirm:
                self.emit(ProgressEvent("measure", pos, total, held.name, "winners confirmed, interleaved"))
                confirmed = confirm_row(harness, {"transfer": transfer, "autotune": autotune}, self.confirm_policy)
            polly = self._polly(pos, held, harness, base.median)
        return {
            "nest_id": held.nest_id, "name": held.name, "index": held.index, "family": held.family, "params": params,
            "baseline_s": base.median, "baseline_spread": base.spread, "excluded_nests": len(exclude),
            "neighbours": [{"nest_id": nb.nest_id, "name": nb.name, "family": family_of_nest.get(nb.nest_id),
                            "distance": nb.distance, "recorded_speedup": nb.recorded_speedup} for nb in neighbours],
            "within_gate": within_gate(neighbours, self.gate_distance),
            "transfer": transfer, "autotune": autotune, "confirmed": confirmed, "polly": polly,
            "autotune_evaluated": len(history), "autotune_stopped": tuned.stopped,
            "autotune_searched_at": tuned.searched_at if isinstance(tuned, ReusedSearch) else None,
        }

    def _polly(self, pos: int, held: HeldOut, gcc: Harness, gcc_median: float) -> dict[str, Any]:
        if not self.config.polly:
            return {"status": "off"}
        if not self.use_polly:
            return {"status": "not available"}
        self.emit(ProgressEvent("measure", pos, len(self.selection.held), held.name, "Polly"))
        return run_polly(gcc, gcc_median, cc=self.config.polly_cc, flags=self.config.polly_flags)

    def report(self, rows: Sequence[dict[str, Any] | None]) -> dict[str, Any]:
        """The report of the finished run."""
        cfg, sel, settings = self.config, self.selection, self.settings
        measured = [r for r in rows if r is not None]
        polly_note = f"Polly not available: {self.polly_problem}" if self.polly_problem else None
        report: dict[str, Any] = {
            "benchmark": "paper",
            "config": {
                "k_values": list(cfg.k_values), "tune_trials": list(cfg.tune_trials), "per_family": cfg.per_family,
                "families": sel.chosen_families, "reps": cfg.reps, "threads": self.threads, "seed": cfg.seed,
                "min_speedup": cfg.min_speedup, "transfer_families": settings.transfer_families,
                "transfer_near": TRANSFER_NEAR, "far_families": FAR_FAMILIES,
                "gate_distance": self.gate_distance, "transfer_priors": self.priors,
                "autotune_cache": self.autotune_cache.summary(),
                "cc": settings.cc, "cflags": settings.cflags,
                "polly": {"requested": cfg.polly, "available": self.use_polly, "cc": cfg.polly_cc,
                          "flags": cfg.polly_flags, "note": polly_note},
                "model_version": self.model_version, "target_id": self.target_id,
                "cpus": os.cpu_count(), "load_average": {"start": self.load_start, "end": _load()},
                "database_nests": sel.database_nests, "tuned_nests": sel.tuned_nests,
                "nests_outside_families": len(sel.outside_ids),
                "families_in_database": sel.families_in_database,
            },
            "nests": measured,
            "skipped": self.skipped,
            "summary": summarize(measured, cfg.k_values, cfg.tune_trials, polly_requested=cfg.polly,
                                 polly_available=self.use_polly),
            "seconds": round(time.time() - self.started, 1),
        }
        if cfg.confirm:
            report["confirmed"] = confirmed_summary(report, self.confirm_policy)
        return report


def _load() -> list[float] | None:
    """The 1/5/15-minute load averages: other work on the machine makes every ratio noisier."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _row_line(row: Mapping[str, Any], k_values: Sequence[int], tune_trials: Sequence[int]) -> str:
    """One finished nest in a line, for the "done" progress event."""
    parts = [f"T{k} {row['transfer'][str(k)]['speedup']:.2f}x" for k in k_values]
    parts += [f"A{n} {row['autotune'][str(n)]['speedup']:.2f}x" for n in tune_trials]
    polly = row["polly"]
    if polly.get("speedup") and polly.get("status") == "verified":
        parts.append(f"Polly {polly['speedup']:.2f}x")
    if row.get("confirmed"):
        parts.append("confirmed " + confirmed_line(row["confirmed"], k_values[-1], tune_trials[-1]))
    return " ".join(parts)
