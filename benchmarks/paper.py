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

This module is the runner and the command line; the held-out nests and their neighbours are in
``paper_nests``, the per-nest measurements in ``paper_measure``, the summary rules and the report
in ``paper_report``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# The rules, the report and the per-nest measuring live beside this runner; their public names are
# re-exported so that ``benchmarks.paper`` stays the one import for callers (CLI, tests, transfer.py).
from benchmarks.harness_cache import RecipeCache  # noqa: E402
from benchmarks.paper_measure import (  # noqa: E402
    POLLY_CC,
    POLLY_FLAGS,
    autotune_results,
    polly_available,
    run_polly,
    transfer_results,
)
from benchmarks.paper_nests import family_of, neighbours_outside, rebuild_scop, select_held_out  # noqa: E402
from benchmarks.paper_report import (  # noqa: E402
    EVAL_FRACTION,
    MAX_TARGET_K,
    NEAR_FRACTION,
    geomean,
    markdown_report,
    summarize,
    summary_table,
    write_plot,
    write_report,
)

__all__ = [
    "DEFAULT_OUT", "EVAL_FRACTION", "MAX_TARGET_K", "MIN_SPEEDUP", "NEAR_FRACTION", "POLLY_CC", "POLLY_FLAGS",
    "ProgressEvent", "build_parser", "family_of", "geomean", "main", "markdown_report", "polly_available",
    "run_paper_benchmark", "summarize", "summary_table", "write_plot", "write_report",
]

DEFAULT_OUT = ROOT / "docs" / "paper-benchmark.md"
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
    from database import get_store
    from database.embedding_store import EmbeddingStore
    from loopnest.config import Settings
    from loopnest.errors import ParameterError, PerfembedError
    from loopnest.harness import Harness, Limits, verify_outputs
    from loopnest.polyhedral import compute_dependences

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
    selection = select_held_out(store, target_id, per_family=per_family, families=families)
    held, chosen_families, fam_of_nest = selection.held, selection.chosen_families, selection.family_of_nest

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
                scop = rebuild_scop(h, Path(tmp))
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
            exclude = selection.family_ids[h.family]
            neighbours = neighbours_outside(store, es, h.features, k=max_k, target_id=target_id, exclude=exclude,
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
                cache = RecipeCache(harness, wall)
                transfer = transfer_results(cache, tuner, scop, params, neighbours, deps, k_values, min_speedup)
                autotune = autotune_results(cache, history, tune_trials, min_speedup)

                # 4. Polly: the same original nest through clang-16 + Polly, checked against gcc's outputs
                polly_row: dict[str, Any]
                if not polly:
                    polly_row = {"status": "off"}
                elif not use_polly:
                    polly_row = {"status": "not available"}
                else:
                    emit(ProgressEvent("measure", pos, total, h.name, "Polly"))
                    polly_row = run_polly(Harness, verify_outputs, scop, params, reps, threads, limits, harness,
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
            "database_nests": selection.database_nests, "tuned_nests": selection.tuned_nests,
            "families_in_database": selection.families_in_database,
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


def _row_line(row: Mapping[str, Any], k_values: Sequence[int], tune_trials: Sequence[int]) -> str:
    """One finished nest in a line, for the "done" progress event."""
    parts = [f"T{k} {row['transfer'][str(k)]['speedup']:.2f}x" for k in k_values]
    parts += [f"A{n} {row['autotune'][str(n)]['speedup']:.2f}x" for n in tune_trials]
    polly = row["polly"]
    if polly.get("speedup") and polly.get("status") == "verified":
        parts.append(f"Polly {polly['speedup']:.2f}x")
    return " ".join(parts)


# -- command line -------------------------------------------------------------------------------


def _ints(text: str) -> list[int]:
    """An argparse type: "1,3,5" -> [1, 3, 5]."""
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def build_parser(description: str = "Leave one family out: transfer vs autotuning vs Polly.",
                 ) -> argparse.ArgumentParser:
    """The options this script shares with ``benchmarks/transfer.py`` (each adds its own report options)."""
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
    """The script: run, print the summary (or one JSON object) and write the report."""
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
    """Progress on stderr, one line per nest, so that stdout keeps the summary alone."""
    if event.phase in ("start", "done", "skip"):
        where = f"[{event.index}/{event.total}] " if event.phase != "start" else ""
        print(f"{where}{event.name} {event.detail}".strip(), file=sys.stderr, flush=True)


if __name__ == "__main__":
    sys.exit(main())
