"""The paper's evaluation on this machine: transfer tuning vs autotuning vs Polly, leave one family out.

    python benchmarks/paper.py [--json] [--url URL] [--data-dir DIR] [--per-family 2] [--families F ...]
                               [--k 1,3,5] [--tune-trials 10,25,100] [--no-polly] [--reps 3] [--out FILE.md]

(also ``perfembed bench paper``). For every family F of the tuned nests in the database (family =
program name before ``/``, as ``perfembed seed build`` names programs), up to ``per_family`` nests of F
are held out, and the neighbour search may only return nests of *other* families. For each held-out
nest, in one run:

* **baseline**: ``gcc -O3 -march=native -fopenmp`` (the harness baseline), measured once in one
  :class:`~loopnest.harness.Harness`; every gcc ratio below is over this one median;
* **transfer k**: the best verified recipes of the k nearest neighbours, adapted to the nest
  (:meth:`TransferTuner.candidates`), each distinct candidate evaluated once in the same harness. The
  result is the best verified candidate when it is at least ``min_speedup`` (1.1x) faster, else 1.0
  (the original is kept: the acceptance rule). Evaluations = distinct candidates;
* **autotune n**: :func:`tune_nest` run fresh in a scratch Optuna storage (SQLite in a temporary
  folder, never the benchmark database) for ``max(tune_trials)`` evaluated trials with a fixed seed.
  Autotune n takes the best verified recipe among the first n evaluated trials and re-evaluates it in
  the same harness as the transfer candidates; the same 1.1x acceptance rule applies.
  Evaluations = n (or fewer when the study ran out of legal distinct recipes);
* **Polly**: the same baseline built by ``clang-16 -O3 -march=native -fopenmp -mllvm -polly
  -mllvm -polly-parallel`` in a second harness; speedup = gcc baseline median / Polly median. Polly's
  outputs are checked against gcc's baseline outputs; an unverified or failed Polly build is listed
  and left out of Polly's geometric mean.

Autotuning runs first and the shared harness afterwards, so that the baseline, the transfer
candidates, the re-evaluated autotuning winners and Polly are measured back to back.

The embedding model is fitted once on every stored nest (static features only; the fit is
unsupervised, so held-out nests' tuning results never enter it).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

DEFAULT_OUT = ROOT / "docs" / "paper-benchmark.md"
POLLY_CC = "clang-16"
POLLY_FLAGS = "-O3 -march=native -fopenmp -mllvm -polly -mllvm -polly-parallel"
MIN_SPEEDUP = 1.1
NEAR_FRACTION = 0.9  # "transfer reaches 90% of autotuning"
EVAL_FRACTION = 0.1  # "... with at most 10% of its evaluations"
MAX_TARGET_K = 5


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


@dataclass
class _HeldOut:
    nest_id: int
    name: str  # program name, "family/file.c"
    index: int  # nest index in the program
    family: str
    features: Mapping[str, float]
    normalized: Mapping[str, Any]
    source: str


@dataclass
class _Evaluated:
    """One distinct recipe measured in the shared harness."""

    recipe: Any
    speedup: float | None
    verified: bool
    status: str
    median_s: float | None
    message: str = ""


@dataclass
class _Cache:
    harness: Any
    wall_s: float
    results: dict[str, _Evaluated] = field(default_factory=dict)

    def evaluate(self, recipe: Any) -> _Evaluated:
        key = recipe.hash
        if key not in self.results:
            try:
                ev = self.harness.evaluate(recipe, wall_seconds=self.wall_s)
                variant = ev.variant
                ok = bool(ev.verified and variant.ok and ev.speedup)
                self.results[key] = _Evaluated(recipe, ev.speedup if ok else None, ok, variant.status, variant.median,
                                               variant.message[:300])
            except Exception as exc:  # an illegal or broken recipe costs this candidate only
                self.results[key] = _Evaluated(recipe, None, False, "error", None, f"{type(exc).__name__}: {exc}"[:300])
        return self.results[key]


def family_of(program_name: str) -> str | None:
    """The family of a seed-built program ("family/file.c"); None for a program named otherwise."""
    head, sep, tail = program_name.partition("/")
    return head if sep and head and tail else None


def _choice_key(name: str, index: int) -> str:
    """A deterministic, name-spread order for picking held-out nests within a family."""
    return hashlib.sha256(f"{name}#{index}".encode()).hexdigest()


def geomean(values: Sequence[float]) -> float | None:
    vals = [v for v in values if v is not None and v > 0 and math.isfinite(v)]
    if not vals:
        return None
    return math.exp(sum(math.log(v) for v in vals) / len(vals))


def polly_available(cc: str = POLLY_CC) -> bool:
    return shutil.which(cc) is not None


def _rebuild_scop(held: _HeldOut, workdir: Path) -> Any:
    """The nest's Scop, re-extracted from the stored program source."""
    from loopnest.errors import PerfembedError
    from loopnest.frontend.extract import extract_scops

    base = held.name.rsplit("/", 1)[-1] or "program.c"
    if not base.endswith(".c"):
        base += ".c"
    path = workdir / f"nest{held.nest_id}" / base
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(held.source)
    try:
        scops = extract_scops(path).scops
    except PerfembedError as exc:
        raise LookupError(f"the stored source does not extract: {exc}") from None
    want_name = held.normalized.get("name")
    want_schedule = held.normalized.get("schedule")
    matches = [s for s in scops if s.name == want_name and s.schedule_isl() == want_schedule]
    if matches:
        return matches[0]
    function = held.normalized.get("function")
    in_function = [s for s in scops if function is None or s.region.function == function]
    if 0 <= held.index < len(in_function):
        return in_function[held.index]
    raise LookupError("the stored source no longer holds this nest")


def _neighbours(store: Any, es: Any, features: Mapping[str, float], *, k: int, target_id: int,
                exclude: Sequence[int], settings: Any, min_speedup: float) -> list[Any]:
    """The k nearest nests outside ``exclude`` with a recipe worth transferring (the pipeline's rule)."""
    from service.pipeline import Context, neighbours_for

    ctx = Context(store, settings, _embeddings=es, _target_id=target_id)
    out = neighbours_for(ctx, features, k=k, exclude=tuple(exclude), min_speedup=min_speedup)
    assert not {n.nest_id for n in out} & set(exclude), "a held-out family's nest was offered as a neighbour"
    return out


def _accept(speedup: float | None, min_speedup: float) -> tuple[float, bool]:
    if speedup is not None and speedup >= min_speedup:
        return speedup, True
    return 1.0, False


def run_paper_benchmark(
    url: str,
    *,
    data_dir: str | Path,
    per_family: int = 2,
    k_values: Sequence[int] = (1, 3, 5),
    tune_trials: Sequence[int] = (10, 25, 100),
    polly: bool = True,
    reps: int = 3,
    families: Sequence[str] | None = None,
    progress: Callable[[ProgressEvent], None] | None = None,
    out: str | Path | None = DEFAULT_OUT,
    settings: Any = None,
    seed: int = 0,
    min_speedup: float = MIN_SPEEDUP,
    polly_cc: str = POLLY_CC,
    polly_flags: str = POLLY_FLAGS,
    fit_model: bool = True,
) -> dict[str, Any]:
    """Run the leave-one-family-out benchmark on the database at ``url``; the report as a dict.

    ``out``: the markdown report to write (its plot goes beside it, same stem, ``.png``); None writes
    nothing. ``settings`` (a :class:`loopnest.config.Settings`) gives the compiler, threads and limits
    (defaults: ``Settings()``). ``fit_model``: fit the standard embedding on every stored nest first
    (:meth:`EmbeddingStore.fit`; a model the database does not hold yet is registered and becomes its
    current one); False uses the database's current model. See the module docstring for the method.
    """
    import optuna

    from autotune.records import ensure_local_target
    from autotune.transfer import TransferTuner
    from autotune.tuner import MIN_VARIANT_WALL_S, VARIANT_WALL_FACTOR, tune_nest
    from database import best_recipe_for, get_store, list_nests, list_programs
    from database.embedding_store import EmbeddingStore
    from loopnest.config import Settings
    from loopnest.errors import ParameterError, PerfembedError
    from loopnest.harness import Harness, Limits, verify_outputs
    from loopnest.polyhedral import compute_dependences
    from loopnest.transform.recipe import Recipe

    k_values = sorted({int(k) for k in k_values})
    tune_trials = sorted({int(n) for n in tune_trials})
    if not k_values or k_values[0] < 1:
        raise ParameterError("k values must be 1 or more")
    if not tune_trials or tune_trials[0] < 1:
        raise ParameterError("autotuning budgets must be 1 or more")
    if per_family < 1:
        raise ParameterError("per_family must be 1 or more")
    settings = settings or Settings()
    threads = settings.threads or None
    limits = Limits.from_settings(settings)
    cc, cflags = settings.cc, settings.cflags
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    started = time.time()
    load_start = _load()

    def emit(event: ProgressEvent) -> None:
        if progress is not None:
            progress(event)

    store = get_store(url)
    target_id = ensure_local_target(store, cc=cc).id
    with store.session() as session:
        programs = {p.id: p for p in list_programs(session)}
        nests = list_nests(session)
        tuned = [n for n in nests if best_recipe_for(session, nest_id=n.id, target_id=target_id) is not None]
    fam_of_nest = {n.id: family_of(programs[n.program_id].name) for n in nests}
    by_family: dict[str, list[Any]] = {}
    for n in tuned:
        fam = fam_of_nest[n.id]
        if fam is not None:
            by_family.setdefault(fam, []).append(n)
    if families:
        unknown = sorted(set(families) - set(by_family))
        if unknown:
            raise ParameterError(f"no tuned nests in famil{'y' if len(unknown) == 1 else 'ies'} "
                                 f"{', '.join(unknown)}; the database has {', '.join(sorted(by_family)) or 'none'}")
    chosen_families = sorted(f for f in by_family if not families or f in families)
    if len(by_family) < 2:
        raise ParameterError("leave-one-family-out needs tuned nests of at least two families "
                             f"(found {len(by_family)}); build a seed database first")
    held: list[_HeldOut] = []
    for fam in chosen_families:
        members = sorted(by_family[fam], key=lambda n: _choice_key(programs[n.program_id].name, n.index))
        for n in members[:per_family]:
            held.append(_HeldOut(n.id, programs[n.program_id].name, n.index, fam, dict(n.static_features),
                                 n.normalized if isinstance(n.normalized, dict) else {},
                                 programs[n.program_id].source))
    family_ids = {fam: sorted(i for i, f in fam_of_nest.items() if f == fam) for fam in chosen_families}

    es = EmbeddingStore(store, data_dir=Path(data_dir))
    if fit_model:
        es.fit()
    model_version = es.model()[0]  # the model searches use: the database's current one
    tuner = TransferTuner(min_speedup=min_speedup)
    max_k, max_trials = k_values[-1], tune_trials[-1]
    use_polly = bool(polly) and polly_available(polly_cc)
    polly_note = None if not polly else (None if use_polly else f"{polly_cc} not found: Polly not available")
    rows: list[dict[str, Any]] = []
    skipped: list[dict[str, Any]] = []
    total = len(held)
    emit(ProgressEvent("start", 0, total, detail=f"{total} held-out nests in {len(chosen_families)} families"))

    with tempfile.TemporaryDirectory(prefix="perfembed-paper-") as tmp:
        scratch = f"sqlite:///{Path(tmp) / 'autotune.db'}"
        for pos, h in enumerate(held):
            emit(ProgressEvent("nest", pos, total, h.name))
            params = h.normalized.get("param_values")
            if not isinstance(params, dict) or h.normalized.get("loop_roles") is None:
                skipped.append({"nest_id": h.nest_id, "name": h.name, "family": h.family,
                                "reason": "stored without parameter values or loop roles"})
                emit(ProgressEvent("skip", pos, total, h.name, skipped[-1]["reason"]))
                continue
            try:
                scop = _rebuild_scop(h, Path(tmp))
                deps = compute_dependences(scop)
            except (LookupError, PerfembedError) as exc:
                skipped.append({"nest_id": h.nest_id, "name": h.name, "family": h.family, "reason": str(exc)})
                emit(ProgressEvent("skip", pos, total, h.name, str(exc)))
                continue
            # 1. autotuning, fresh, in the scratch storage (its own harness: its timings only pick winners)
            def on_trial(tp: Any, pos: int = pos, name: str = h.name) -> None:
                emit(ProgressEvent("autotune", pos, total, name,
                                   f"best {tp.best_speedup:.2f}x" if tp.best_speedup else "", tp.evaluated, tp.budget))

            try:
                tuned_run = tune_nest(scop, params, storage=scratch, study_name=f"paper:nest={h.nest_id}",
                                      n_trials=max_trials, seed=seed, reps=reps, threads=threads, limits=limits,
                                      cc=cc, cflags=cflags, on_trial=on_trial)
            except PerfembedError as exc:
                skipped.append({"nest_id": h.nest_id, "name": h.name, "family": h.family,
                                "reason": f"autotuning failed: {exc}"})
                emit(ProgressEvent("skip", pos, total, h.name, skipped[-1]["reason"]))
                continue
            history = [r for r in tuned_run.evaluations if r.evaluated]

            # 2. neighbours from other families only
            exclude = family_ids[h.family]
            neighbours = _neighbours(store, es, h.features, k=max_k, target_id=target_id, exclude=exclude,
                                     settings=settings, min_speedup=min_speedup)
            assert all(fam_of_nest.get(nb.nest_id) != h.family for nb in neighbours)

            # 3. one gcc harness: baseline, transfer candidates, autotuning winners
            emit(ProgressEvent("measure", pos, total, h.name, "baseline, transfer, autotune winners"))
            harness = Harness(scop, params, reps=reps, threads=threads, limits=limits, cc=cc, cflags=cflags)
            with harness:
                base = harness.baseline()
                if not base.ok or not base.median:
                    skipped.append({"nest_id": h.nest_id, "name": h.name, "family": h.family,
                                    "reason": f"baseline failed: {base.status} {base.message}".strip()})
                    emit(ProgressEvent("skip", pos, total, h.name, skipped[-1]["reason"]))
                    continue
                wall = min(limits.wall_seconds, max(MIN_VARIANT_WALL_S, VARIANT_WALL_FACTOR * base.median * (reps + 1)))
                cache = _Cache(harness, wall)
                transfer: dict[str, Any] = {}
                for k in k_values:
                    cands = tuner.candidates(scop, params, neighbours[:k], deps)
                    evaluated = []
                    for cand in cands:
                        ev = cache.evaluate(cand.recipe)
                        evaluated.append({"from": cand.neighbour.name, "from_nest_id": cand.neighbour.nest_id,
                                          "distance": cand.neighbour.distance, "recipe": cand.recipe.to_dict(),
                                          "speedup": ev.speedup, "verified": ev.verified, "status": ev.status})
                    good = [c for c in evaluated if c["verified"] and c["speedup"]]
                    best = max(good, key=lambda c: c["speedup"]) if good else None
                    speedup, accepted = _accept(best["speedup"] if best else None, min_speedup)
                    transfer[str(k)] = {"k": k, "neighbours": len(neighbours[:k]), "evaluations": len(cands),
                                        "speedup": speedup, "accepted": accepted,
                                        "best_measured": best["speedup"] if best else None,
                                        "recipe": best["recipe"] if accepted and best else None,
                                        "from": best["from"] if accepted and best else None,
                                        "candidates": evaluated}
                autotune: dict[str, Any] = {}
                for n in tune_trials:
                    first = history[:n]
                    good_trials = [r for r in first if r.verified and r.speedup]
                    pick = max(good_trials, key=lambda r: r.speedup) if good_trials else None
                    entry: dict[str, Any] = {"trials": n, "evaluations": len(first),
                                             "search_speedup": pick.speedup if pick else None,
                                             "trial": pick.number if pick else None}
                    if pick is not None:
                        recipe = Recipe.from_dict({"steps": list(pick.recipe.get("steps", []))})
                        if recipe.is_identity:
                            entry.update(speedup=1.0, accepted=False, measured=1.0, verified=True, recipe=None)
                        else:
                            ev = cache.evaluate(recipe)
                            speedup, accepted = _accept(ev.speedup if ev.verified else None, min_speedup)
                            entry.update(speedup=speedup, accepted=accepted, measured=ev.speedup,
                                         verified=ev.verified, status=ev.status,
                                         recipe=recipe.to_dict() if accepted else None)
                    else:
                        entry.update(speedup=1.0, accepted=False, measured=None, verified=False, recipe=None)
                    autotune[str(n)] = entry

                # 4. Polly: the same original nest through clang-16 + Polly, checked against gcc's outputs
                polly_row: dict[str, Any]
                if not polly:
                    polly_row = {"status": "off"}
                elif not use_polly:
                    polly_row = {"status": "not available"}
                else:
                    emit(ProgressEvent("measure", pos, total, h.name, "Polly"))
                    polly_row = _run_polly(Harness, verify_outputs, scop, params, reps, threads, limits, harness,
                                           base.median, polly_cc, polly_flags)

            rows.append({
                "nest_id": h.nest_id, "name": h.name, "index": h.index, "family": h.family, "params": params,
                "baseline_s": base.median, "baseline_spread": base.spread,
                "excluded_nests": len(exclude),
                "neighbours": [{"nest_id": nb.nest_id, "name": nb.name, "family": fam_of_nest.get(nb.nest_id),
                                "distance": nb.distance, "recorded_speedup": nb.recorded_speedup}
                               for nb in neighbours],
                "transfer": transfer, "autotune": autotune, "polly": polly_row,
                "autotune_evaluated": len(history), "autotune_stopped": tuned_run.stopped,
            })
            emit(ProgressEvent("done", pos + 1, total, h.name, _row_line(rows[-1], k_values, tune_trials)))

    report = {
        "benchmark": "paper",
        "config": {
            "k_values": k_values, "tune_trials": tune_trials, "per_family": per_family,
            "families": chosen_families, "reps": reps, "threads": threads, "seed": seed,
            "min_speedup": min_speedup, "cc": cc, "cflags": cflags,
            "polly": {"requested": bool(polly), "available": use_polly, "cc": polly_cc, "flags": polly_flags,
                      "note": polly_note},
            "model_version": model_version, "target_id": target_id,
            "cpus": os.cpu_count(), "load_average": {"start": load_start, "end": _load()},
            "database_nests": len(nests), "tuned_nests": len(tuned), "families_in_database": sorted(by_family),
        },
        "nests": rows,
        "skipped": skipped,
        "summary": summarize(rows, k_values, tune_trials, polly_requested=bool(polly), polly_available=use_polly),
        "seconds": round(time.time() - started, 1),
    }
    if out is not None:
        write_report(report, Path(out))
        report["report"] = {"markdown": str(Path(out)), "plot": str(Path(out).with_suffix(".png"))}
    return report


def _load() -> list[float] | None:
    """The 1/5/15-minute load averages: other work on the machine makes every ratio noisier."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def _run_polly(harness_cls: Any, verify_outputs: Any, scop: Any, params: Mapping[str, int], reps: int,
               threads: int | None, limits: Any, gcc: Any, gcc_median: float, polly_cc: str,
               polly_flags: str) -> dict[str, Any]:
    try:
        with harness_cls(scop, params, reps=reps, threads=threads, limits=limits, cc=polly_cc,
                         cflags=polly_flags) as ph:
            res = ph.baseline()
            row: dict[str, Any] = {"median_s": res.median, "compile_s": res.compile_seconds}
            if not res.ok or not res.median:
                return {**row, "status": "failed", "message": f"{res.status}: {res.message}"[:300], "speedup": None}
            expected, actual = _workdir(gcc) / "baseline.out", _workdir(ph) / "baseline.out"
            check = verify_outputs(expected, actual, gcc.layouts)
            tolerance = "default"
            if not check.verified:  # clang may contract or order floating point differently from gcc
                loose = verify_outputs(expected, actual, gcc.layouts, reorders_reduction=True)
                if loose.verified:
                    check, tolerance = loose, "reordered-reduction"
            speedup = gcc_median / res.median
            return {**row, "status": "verified" if check.verified else "unverified", "speedup": speedup,
                    "verified": check.verified, "tolerance": tolerance, "max_rel_error": check.max_rel_error,
                    "mismatch": check.mismatch}
    except Exception as exc:  # Polly is a comparison point; its failure must not end the benchmark
        return {"status": "failed", "message": f"{type(exc).__name__}: {exc}"[:300], "speedup": None}


def _workdir(harness: Any) -> Path:
    """The harness's private working folder, where ``baseline.out`` holds the baseline's outputs."""
    return harness.workdir


def _row_line(row: Mapping[str, Any], k_values: Sequence[int], tune_trials: Sequence[int]) -> str:
    parts = [f"T{k} {row['transfer'][str(k)]['speedup']:.2f}x" for k in k_values]
    parts += [f"A{n} {row['autotune'][str(n)]['speedup']:.2f}x" for n in tune_trials]
    polly = row["polly"]
    if polly.get("speedup") and polly.get("status") == "verified":
        parts.append(f"Polly {polly['speedup']:.2f}x")
    return " ".join(parts)


# -- summary ------------------------------------------------------------------------------------


def summarize(rows: Sequence[Mapping[str, Any]], k_values: Sequence[int], tune_trials: Sequence[int], *,
              polly_requested: bool = True, polly_available: bool = True) -> dict[str, Any]:
    """Geomeans, mean evaluations, the 90%-of-autotuning fraction and the two targets."""
    n = len(rows)
    methods: list[dict[str, Any]] = [{"method": "baseline", "kind": "baseline", "geomean_speedup": 1.0 if n else None,
                                      "mean_evaluations": 0.0, "nests": n}]
    for k in k_values:
        sp = [r["transfer"][str(k)]["speedup"] for r in rows]
        ev = [r["transfer"][str(k)]["evaluations"] for r in rows]
        methods.append({"method": f"transfer k={k}", "kind": "transfer", "k": k, "geomean_speedup": geomean(sp),
                        "mean_evaluations": statistics.fmean(ev) if ev else None, "nests": n,
                        "accepted": sum(r["transfer"][str(k)]["accepted"] for r in rows),
                        "min_speedup": min(sp) if sp else None})
    for t in tune_trials:
        sp = [r["autotune"][str(t)]["speedup"] for r in rows]
        ev = [r["autotune"][str(t)]["evaluations"] for r in rows]
        methods.append({"method": f"autotune {t}", "kind": "autotune", "trials": t, "geomean_speedup": geomean(sp),
                        "mean_evaluations": statistics.fmean(ev) if ev else None, "nests": n,
                        "accepted": sum(r["autotune"][str(t)]["accepted"] for r in rows),
                        "min_speedup": min(sp) if sp else None})
    polly: dict[str, Any] | None = None
    if polly_requested:
        verified = [r["polly"]["speedup"] for r in rows if r["polly"].get("status") == "verified"]
        polly = {"method": "polly", "kind": "polly", "available": polly_available,
                 "geomean_speedup": geomean(verified) if polly_available else None,
                 "mean_evaluations": 0.0, "nests": len(verified),
                 "unverified": sum(r["polly"].get("status") == "unverified" for r in rows),
                 "failed": sum(r["polly"].get("status") == "failed" for r in rows),
                 "slower_than_baseline": sum(1 for v in verified if v < 1.0)}
        methods.append(polly)

    ref_t = tune_trials[-1]
    by = {m["method"]: m for m in methods}
    ref = by[f"autotune {ref_t}"]
    near: dict[str, Any] = {"reference": f"autotune {ref_t}", "threshold": NEAR_FRACTION}
    for k in k_values:
        hits = [r["transfer"][str(k)]["speedup"] >= NEAR_FRACTION * r["autotune"][str(ref_t)]["speedup"] for r in rows]
        near[f"k={k}"] = sum(hits) / n if n else None
    best_k_hits = [max(r["transfer"][str(k)]["speedup"] for k in k_values)
                   >= NEAR_FRACTION * r["autotune"][str(ref_t)]["speedup"] for r in rows]
    near["best k"] = sum(best_k_hits) / n if n else None

    small_k = [k for k in k_values if k <= MAX_TARGET_K]
    checks_a = []
    for k in small_k:
        m = by[f"transfer k={k}"]
        ok = bool(n and m["geomean_speedup"] and ref["geomean_speedup"]
                  and m["geomean_speedup"] >= NEAR_FRACTION * ref["geomean_speedup"]
                  and m["mean_evaluations"] <= EVAL_FRACTION * ref["mean_evaluations"])
        checks_a.append({"k": k, "geomean_ratio": (m["geomean_speedup"] / ref["geomean_speedup"])
                         if n and ref["geomean_speedup"] else None,
                         "evaluation_ratio": (m["mean_evaluations"] / ref["mean_evaluations"])
                         if n and ref["mean_evaluations"] else None, "pass": ok})
    passing_a = [c["k"] for c in checks_a if c["pass"]]
    target_a = {"name": f"transfer (k<={MAX_TARGET_K}) reaches >= {NEAR_FRACTION:.0%} of autotune-{ref_t}'s geomean "
                        f"with <= {EVAL_FRACTION:.0%} of its evaluations",
                "status": "PASS" if passing_a else "FAIL", "passing_k": passing_a, "checks": checks_a}
    checks_b = []
    if polly is not None and polly["available"] and polly["geomean_speedup"] is not None:
        for k in small_k:
            m = by[f"transfer k={k}"]
            ok = bool(n and m["geomean_speedup"] and m["geomean_speedup"] > polly["geomean_speedup"]
                      and m["min_speedup"] is not None and m["min_speedup"] >= 1.0)
            checks_b.append({"k": k, "geomean_speedup": m["geomean_speedup"], "polly_geomean": polly["geomean_speedup"],
                             "min_speedup": m["min_speedup"], "pass": ok})
        passing_b = [c["k"] for c in checks_b if c["pass"]]
        status_b = "PASS" if passing_b else "FAIL"
    else:
        passing_b, status_b = [], "NOT EVALUATED" if polly is None else "NOT AVAILABLE"
    target_b = {"name": f"transfer (k<={MAX_TARGET_K}) beats Polly's geomean and is never slower than the baseline "
                        "(accepted-only rule)", "status": status_b, "passing_k": passing_b, "checks": checks_b}
    return {"nests": n, "methods": methods, "near_autotune": near, "targets": {"a": target_a, "b": target_b}}


# -- report -------------------------------------------------------------------------------------


def _fmt(value: float | None, suffix: str = "x", digits: int = 2) -> str:
    return "-" if value is None else f"{value:.{digits}f}{suffix}"


def _load_note(cfg: Mapping[str, Any]) -> list[str]:
    load, cpus = cfg.get("load_average") or {}, cfg.get("cpus") or 1
    start, end = load.get("start"), load.get("end")
    if not start or not end:
        return []
    text = f"Load average (1 min) at start {start[0]:.1f}, at end {end[0]:.1f}, on {cpus} CPUs."
    if max(start[0], end[0]) > 0.75 * cpus:
        text += " **The machine was busy with other work during this run: ratios are noisier than usual.**"
    return [text, ""]


def _time(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms" if seconds >= 1e-4 else f"{seconds * 1e6:.1f} us"


def _pct(ratio: float | None, digits: int) -> str:
    return "-" if ratio is None else f"{ratio * 100:.{digits}f}%"


def markdown_report(report: Mapping[str, Any], plot_name: str | None = None) -> str:
    cfg, summary, rows = report["config"], report["summary"], report["nests"]
    k_values, tune_trials = cfg["k_values"], cfg["tune_trials"]
    ref_t = tune_trials[-1]
    lines = [
        "# Transfer tuning vs autotuning vs Polly (leave one family out)",
        "",
        f"Generated by `perfembed bench paper` (`benchmarks/paper.py`) in {report.get('seconds', 0):.0f} s: "
        f"{summary['nests']} held-out nests from {len(cfg['families'])} families "
        f"(up to {cfg['per_family']} per family), of {cfg['tuned_nests']} tuned nests in the database. "
        f"Baseline `{cfg['cc']} {cfg['cflags']}`, {cfg['reps']} timed repetition(s) (median), "
        f"threads: {cfg['threads'] or 'all cores'}; embedding model `{cfg['model_version']}`.",
        "",
        *_load_note(cfg),
        "## Summary",
        "",
        "| method | geomean speedup | mean evaluations | nests | accepted / notes |",
        "| --- | --- | --- | --- | --- |",
    ]
    for m in summary["methods"]:
        if m["kind"] == "polly":
            if not m["available"]:
                lines.append("| Polly | not available | - | - | " + (cfg["polly"].get("note") or "") + " |")
                continue
            note = f"{m['unverified']} unverified, {m['failed']} failed (left out); " \
                   f"{m['slower_than_baseline']} slower than baseline"
            lines.append(f"| Polly (`{cfg['polly']['cc']}`) | {_fmt(m['geomean_speedup'])} | 0 (one compile) | "
                         f"{m['nests']} | {note} |")
            continue
        note = "" if m["kind"] == "baseline" else f"{m['accepted']} of {m['nests']} accepted (>= " \
                                                  f"{cfg['min_speedup']}x), else 1.0"
        lines.append(f"| {m['method']} | {_fmt(m['geomean_speedup'])} | {_fmt(m['mean_evaluations'], '', 1)} | "
                     f"{m['nests']} | {note} |")
    near = summary["near_autotune"]
    lines += ["", f"Nests where transfer reaches >= {near['threshold']:.0%} of autotune {ref_t}: "
              + ", ".join(f"{key} {_pct(val, 0)}"
                          for key, val in near.items() if key not in ("reference", "threshold")) + ".", ""]
    for key in ("a", "b"):
        t = summary["targets"][key]
        detail = ""
        if t["checks"]:
            if key == "a":
                detail = "; ".join(f"k={c['k']}: {_pct(c['geomean_ratio'], 0)} of the geomean with "
                                   f"{_pct(c['evaluation_ratio'], 1)} of the evaluations" for c in t["checks"])
            else:
                detail = "; ".join(f"k={c['k']}: {_fmt(c['geomean_speedup'])} vs Polly {_fmt(c['polly_geomean'])}, "
                                   f"slowest {_fmt(c['min_speedup'])}" for c in t["checks"])
        lines.append(f"- **Target ({key})** {t['name']}: **{t['status']}**" + (f" ({detail})" if detail else ""))
    if plot_name:
        lines += ["", f"![geomean speedup vs mean evaluations]({plot_name})"]
    head = ["nest", "family", "baseline"] + [f"T k={k}" for k in k_values] + [f"AT {t}" for t in tune_trials] \
        + ["Polly", "nearest neighbours (other families)"]
    lines += ["", "## Per nest", "",
              "Speedups over the gcc baseline, measured in one harness per nest; `(n)` = evaluations; "
              "`*` = accepted; Polly `?` = outputs differ from gcc's.", "",
              "| " + " | ".join(head) + " |", "|" + " --- |" * len(head)]
    for r in rows:
        cells = [r["name"] + ("" if r["index"] == 0 else f"#{r['index']}"), r["family"], _time(r["baseline_s"])]
        for k in k_values:
            t = r["transfer"][str(k)]
            cells.append(f"{t['speedup']:.2f}x{'*' if t['accepted'] else ''} ({t['evaluations']})")
        for n in tune_trials:
            a = r["autotune"][str(n)]
            cells.append(f"{a['speedup']:.2f}x{'*' if a['accepted'] else ''} ({a['evaluations']})")
        p = r["polly"]
        if p.get("status") == "verified":
            cells.append(_fmt(p["speedup"]))
        elif p.get("status") == "unverified":
            cells.append(_fmt(p["speedup"]) + " ?")
        else:
            cells.append(p.get("status", "-"))
        cells.append(", ".join(f"{nb['name']} ({nb['distance']:.2g})" for nb in r["neighbours"][:3]) or "none")
        lines.append("| " + " | ".join(cells) + " |")
    if report["skipped"]:
        lines += ["", "Skipped: " + "; ".join(f"{s['name']} ({s['reason']})" for s in report["skipped"]) + "."]
    lines += [
        "", "## Method", "",
        "- Families are program-name prefixes (`family/file.c`). While a family is held out, the neighbour search "
        "excludes every nest of that family, so no recipe reaches a nest from its own family.",
        "- Transfer k: the k nearest neighbours' best verified recipes, adapted to the nest; each distinct "
        f"candidate evaluated once. The best verified candidate counts if >= {cfg['min_speedup']}x, else the "
        "original is kept (1.0x).",
        f"- Autotune n: one fresh Optuna study per nest (TPE, seed {cfg['seed']}) in a scratch SQLite storage "
        f"for {ref_t} evaluated trials; autotune n takes the best of the first n evaluated trials and re-evaluates "
        "it in the same harness as the transfer candidates; same acceptance rule.",
        "- Polly: the original nest built by `" + cfg["polly"]["cc"] + " " + cfg["polly"]["flags"]
        + "`, outputs checked against gcc's baseline outputs.",
        "- Caveat: the transfer result is the maximum over its candidates' measurements, while the autotuning "
        "winner is re-measured once; with run-to-run noise of about 15% this favours transfer slightly when "
        "k > 1.",
        "",
    ]
    return "\n".join(lines)


def write_plot(report: Mapping[str, Any], path: Path) -> Path:
    """Geomean speedup vs mean evaluations (log x) per method; baseline and Polly as horizontal lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    methods = report["summary"]["methods"]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for kind, colour, marker in (("transfer", "tab:blue", "o"), ("autotune", "tab:orange", "s")):
        pts = [m for m in methods if m["kind"] == kind and m["geomean_speedup"] is not None]
        if not pts:
            continue
        xs = [max(m["mean_evaluations"] or 0.0, 0.8) for m in pts]
        ys = [m["geomean_speedup"] for m in pts]
        ax.plot(xs, ys, marker=marker, color=colour, label=kind)
        for m, x, y in zip(pts, xs, ys, strict=True):
            ax.annotate(f"k={m['k']}" if kind == "transfer" else f"n={m['trials']}", (x, y),
                        textcoords="offset points", xytext=(5, 5), fontsize=8)
    ax.axhline(1.0, color="grey", linestyle=":", label="baseline (gcc -O3)")
    polly = next((m for m in methods if m["kind"] == "polly"), None)
    if polly and polly.get("geomean_speedup"):
        ax.axhline(polly["geomean_speedup"], color="tab:green", linestyle="--",
                   label=f"Polly ({polly['nests']} verified nests)")
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _pos: f"{v:g}"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xlabel("mean evaluations per nest (log)")
    ax.set_ylabel("geomean speedup over gcc -O3")
    ax.set_title(f"leave one family out, {report['summary']['nests']} nests")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def write_report(report: Mapping[str, Any], out: Path) -> tuple[Path, Path]:
    """The markdown report at ``out`` and its plot beside it (``.png``)."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    plot = write_plot(report, out.with_suffix(".png"))
    out.write_text(markdown_report(report, plot.name))
    return out, plot


def summary_table(report: Mapping[str, Any]) -> str:
    """A plain-text summary for terminals."""
    lines = [f"{'method':<16} {'geomean':>9} {'mean evals':>11} {'nests':>6}"]
    for m in report["summary"]["methods"]:
        if m["kind"] == "polly" and not m["available"]:
            lines.append(f"{'polly':<16} {'n/a':>9}")
            continue
        lines.append(f"{m['method']:<16} {_fmt(m['geomean_speedup']):>9} {_fmt(m['mean_evaluations'], '', 1):>11} "
                     f"{m['nests']:>6}")
    for key, t in report["summary"]["targets"].items():
        lines.append(f"target ({key}): {t['status']}" + (f" (k={t['passing_k']})" if t["passing_k"] else ""))
    return "\n".join(lines)


# -- command line -------------------------------------------------------------------------------


def _ints(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def build_parser(description: str = "Leave one family out: transfer vs autotuning vs Polly.",
                 ) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--url", default=None, help="database URL (default: PERFEMBED_* settings)")
    parser.add_argument("--data-dir", default=None, help="data folder for the index (default: settings)")
    parser.add_argument("--per-family", type=int, default=2)
    parser.add_argument("--families", nargs="*", default=None)
    parser.add_argument("--k", type=_ints, default=[1, 3, 5], help="k values, e.g. 1,3,5")
    parser.add_argument("--tune-trials", type=_ints, default=[10, 25, 100], help="autotuning budgets, e.g. 10,25,100")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    parser.add_argument("--no-polly", action="store_true", help="skip the Polly comparison")
    parser.add_argument("--out", default=str(DEFAULT_OUT), help="markdown report ('' for none)")
    args = parser.parse_args(argv)
    from loopnest.config import get_settings

    settings = get_settings()
    report = run_paper_benchmark(args.url or settings.resolved_database_url,
                                 data_dir=args.data_dir or settings.data_dir, per_family=args.per_family,
                                 k_values=args.k, tune_trials=args.tune_trials, polly=not args.no_polly,
                                 reps=args.reps, families=args.families, out=args.out or None, settings=settings,
                                 seed=args.seed, progress=None if args.json else _print_progress)
    if args.json:
        sys.stdout.write(json.dumps(report, default=str) + "\n")
    else:
        print(summary_table(report))
        if args.out:
            print(f"wrote {args.out}")
    return 0


def _print_progress(event: ProgressEvent) -> None:
    if event.phase in ("start", "done", "skip"):
        where = f"[{event.index}/{event.total}] " if event.phase != "start" else ""
        print(f"{where}{event.name} {event.detail}".strip(), file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
