"""``perfembed tune`` and ``perfembed worker``: autotuning from the command line.

Register with ``app.command("tune")(tune_command)`` and ``app.command("worker")(worker_command)``.
Both work on this machine's database (created on first use): ``tune``'s studies run in
:mod:`service.core.tuning`, the worker in :mod:`service.core.worker_run`, each imported when its command
runs, so that ``perfembed --help`` stays fast (Optuna). User errors are
:class:`~service.core.errors.PerfembedError`, left to the CLI's handler (exit code 2).
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from service.commands.nests import require_nests
from service.commands.options import (
    MAX_SEED,
    MAX_TRIALS,
    Compiler,
    FileArg,
    Json,
    Kernel,
    Measuring,
    Nest,
    Reps,
    console,
    emit_json,
    err_console,
    fmt_value,
    grouped,
)
from service.core.local import read_recipe
from service.core.worker_run import LocalWorker, run_local_worker
from service.supervisor import exit_with_parent

if TYPE_CHECKING:
    from service.core.tuning import NestTuner, Scop, TunedNest, TuneProgress

MAX_SECONDS = 7 * 24 * 3600  # --timeout and --lease: a week at most


@dataclass(frozen=True)
class Study:
    """``tune``'s study of each nest: its budget, time limit, sampler seed and the recipes tried first."""

    PANEL: ClassVar[str] = "Study"

    trials: Annotated[int, typer.Option("--trials", min=0, max=MAX_TRIALS,
                                        help="Variants to evaluate per nest, counted over the whole study: a rerun "
                                             "resumes, and one that reached the budget returns at once; 0 "
                                             "registers the nest.")] = 50
    timeout: Annotated[float | None, typer.Option("--timeout", min=0, max=MAX_SECONDS,
                                                  help="Stop each nest after S seconds.")] = None
    seed: Annotated[int | None, typer.Option("--seed", min=0, max=MAX_SEED, help="Sampler seed.")] = None
    warm_start: Annotated[list[Path], typer.Option("--warm-start", help="Recipe JSON file to try first "
                                                   "(repeatable).")] = field(default_factory=list)


WriteBest = Annotated[Path | None, typer.Option("--write-best", help="Write FILE with every nest's best recipe "
                                                "applied (when faster).")]


@grouped
def tune_command(file: FileArg, compiler: Compiler, kernel: Kernel, nest: Nest = None, study: Study = Study(),
                 reps: Reps = 3,
                 measuring: Measuring = Measuring(), json_out: Json = False, write_best: WriteBest = None) -> None:
    """Autotune the loop nests of FILE; every verified measurement is stored in the database."""
    # Optuna and the tuner load here, not at the top: they add 52 ms (python -X importtime) to every
    # `perfembed` start, and only `tune` and `worker` need them.
    from service.core.tuning import NestTuner, TuneOptions, nests_to_tune, write_tuned

    src = compiler.source(file, kernel)
    options = TuneOptions(trials=study.trials, timeout=study.timeout, reps=reps, threads=measuring.threads,
                          seed=study.seed, warm_start=tuple(read_recipe(p) for p in study.warm_start),
                          sparse=measuring.sparse())
    scops, chosen = nests_to_tune(src, nest, lambda count, rejected: require_nests(file, count, rejected,
                                                                                   quiet=json_out))
    tuner = NestTuner(file, options)
    with _progress(json_out) as progress:
        tuned = [_tune_with_bar(tuner, progress, i, scops[i], src.params) for i in chosen]
    transformed = write_tuned(file, scops, tuned, write_best) if write_best is not None else 0
    rows = [t.row for t in tuned]
    if json_out:
        emit_json({"file": str(file), "results": rows, "written": str(write_best) if write_best else None})
        return
    _print_tune_report(rows)
    if write_best is not None:
        err_console.print(f"wrote {write_best} ({transformed} nest(s) transformed)")


def _tune_with_bar(tuner: NestTuner, progress: Progress, index: int, scop: Scop,
                   params: Mapping[str, int]) -> TunedNest:
    """One nest's study and re-measurement, shown as a progress bar with the best speedup so far."""
    task = progress.add_task(scop.name, total=tuner.options.trials, best="-")

    def on_trial(update: TuneProgress) -> None:
        shown = "-" if update.best_speedup is None else f"{update.best_speedup:.2f}x"
        progress.update(task, completed=update.evaluated, best=shown)

    study = tuner.study(index, scop, params, on_trial=on_trial)
    progress.update(task, completed=study.result.evaluated)
    progress.update(task, best="re-measuring")
    return tuner.confirm(study)


def _print_tune_report(rows: list[dict[str, Any]]) -> None:
    """The table of tuned nests on stdout, then a note on stderr for each nest that stopped early."""
    table = Table("nest", "evaluated", "baseline s", "best trial", "re-measured (interleaved, interval)",
                  "best recipe", "stopped")
    for r in rows:
        baseline = (r["baseline"] or {}).get("median")
        remeasured = r["confirmed"]["text"] if r["confirmed"] else (r["doubt"] or "- (below the margin: not kept)")
        table.add_row(r["name"], f"{r['evaluated']}/{r['budget']}", fmt_value(baseline, "{:.4g}"),
                      fmt_value(r["best_speedup"], "{:.2f}x"), remeasured,
                      r["best_recipe_text"] or "-", r["stopped"])
    console.print(table)
    for r in rows:
        if r.get("stop_reason"):
            err_console.print(f"[yellow]note[/] {escape(r['name'])}: {escape(r['stop_reason'])}", highlight=False)


def worker_command(
    once: Annotated[bool, typer.Option("--once", help="Exit when the queue is empty instead of waiting for "
                                       "jobs.")] = False,
    max_jobs: Annotated[int | None, typer.Option("--max-jobs", min=1, max=MAX_TRIALS,
                                                 help="Exit after this many jobs.")] = None,
    lease: Annotated[float, typer.Option("--lease", min=1, max=MAX_SECONDS,
                                         help="Lease length in seconds (renewed while running).")] = 120.0,
    poll: Annotated[float, typer.Option("--poll", min=0.1, max=3600,
                                        help="Seconds between looks at an empty queue.")] = 5.0,
    worker_id: Annotated[str | None, typer.Option("--worker-id", help="Name in the jobs table (default "
                                                  "host:pid).")] = None,
    progress_bars: Annotated[bool, typer.Option("--progress/--log", help="Progress bars, or one log line per job "
                                                "(as under `perfembed serve --workers`).")] = True,
    exit_with: Annotated[int | None, typer.Option("--exit-with", hidden=True,
                                                  help="Stop when this process ends.")] = None,
    json_out: Json = False,
) -> None:
    """Claim queued tuning jobs from the database and run them (Ctrl-C: finish the trial, requeue).

    PERFEMBED_WORKER_THREADS=T: pin to T CPUs no other worker holds, measure with T threads."""
    if exit_with is not None:
        exit_with_parent(exit_with)
    stop = threading.Event()
    restore = _stop_on_signals(stop)

    @contextmanager
    def display() -> Iterator[_WorkerDisplay]:
        with _progress(json_out or not progress_bars) as progress:
            yield _WorkerDisplay(progress, log=not progress_bars and not json_out)

    try:
        report = run_local_worker(LocalWorker(worker_id=worker_id, once=once, max_jobs=max_jobs, lease_seconds=lease,
                                              poll_seconds=poll), stop=stop, display=display,
                                  on_pinned=err_console.print)
    finally:
        restore()
    _print_report(report, json_out=json_out)


class _WorkerDisplay:
    """A worker's progress: one bar per job, or (``log``) one line when a job starts and ends."""

    def __init__(self, progress: Any, *, log: bool) -> None:
        self._progress = progress
        self._log = log
        self._tasks: dict[int, Any] = {}

    def on_job(self, job: Any) -> None:
        if self._log:
            err_console.print(f"worker {os.getpid()}: job {job.id} started (nest {job.nest_id}, {job.budget} trials, "
                              f"attempt {job.attempts})", highlight=False)
        self._tasks[job.id] = self._progress.add_task(f"job {job.id} (nest {job.nest_id})", total=job.budget,
                                                      completed=job.progress, best="-")

    def on_trial(self, job: Any, update: TuneProgress) -> None:
        best = "-" if update.best_speedup is None else f"{update.best_speedup:.2f}x"
        self._progress.update(self._tasks[job.id], completed=update.evaluated, best=best)

    def on_outcome(self, outcome: Any) -> None:
        if self._log:
            best = "" if outcome.best_speedup is None else f", best {outcome.best_speedup:.2f}x"
            why = f": {outcome.error}" if outcome.error else ""
            err_console.print(f"worker {os.getpid()}: job {outcome.job_id} {outcome.status} after {outcome.evaluated} "
                              f"trial(s){best}{why}", highlight=False, markup=False)


def _print_report(report: Any, *, json_out: bool) -> None:
    if json_out:
        emit_json({"worker_id": report.worker_id, "jobs": [
            {"job_id": o.job_id, "status": o.status, "evaluated": o.evaluated, "best_speedup": o.best_speedup,
             "best_recipe_id": o.best_recipe_id, "error": o.error} for o in report.jobs]})
        return
    table = Table("job", "status", "evaluated", "best speedup", "error")
    for o in report.jobs:
        table.add_row(str(o.job_id), o.status, str(o.evaluated), fmt_value(o.best_speedup, "{:.2f}x"), o.error or "")
    console.print(table)
    err_console.print(f"worker {report.worker_id}: {len(report.jobs)} job(s)")


# -- helpers -----------------------------------------------------------------------------------


def _progress(quiet: bool) -> Any:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TextColumn("best {task.fields[best]}"), TimeElapsedColumn(),
                    console=err_console, disable=quiet, transient=False)


def _stop_on_signals(stop: threading.Event) -> Any:
    """SIGINT/SIGTERM set ``stop`` (the worker finishes its trial and requeues the job); a second
    SIGINT interrupts at once. Returns a function that restores the previous handlers."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}

    def handler(signum: int, _frame: Any) -> None:
        if stop.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt
        stop.set()
        err_console.print("stopping after the current trial (Ctrl-C again to interrupt now)")

    for sig in previous:
        signal.signal(sig, handler)

    def restore() -> None:
        for sig, old in previous.items():
            signal.signal(sig, old)

    return restore

