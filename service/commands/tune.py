"""``perfembed tune`` and ``perfembed worker``: autotuning from the command line.

Register with ``app.command("tune")(tune_command)`` and ``app.command("worker")(worker_command)``.
Both read :func:`database.config.get_database_settings` and open the database at
``settings.resolved_database_url`` (created on first use). Optuna and the tuner are imported inside
the commands (``tune``'s studies run in :mod:`service.commands.tuning`) so that ``perfembed --help``
stays fast. User errors are
:class:`~loopnest.errors.PerfembedError`, left to the CLI's handler (exit code 2).
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from autotune.workers.cpu_slots import claim_cpus, pin_to
from database import get_store
from database.config import get_database_settings
from loopnest.dropin import replace_regions
from loopnest.errors import ParameterError
from loopnest.frontend.extract import extract_scops
from loopnest.frontend.preprocess import PreprocessOptions
from loopnest.transform.recipe import Recipe
from service.commands.nests import require_nests
from service.commands.options import (
    MAX_SEED,
    MAX_TRIALS,
    REPS_HELP,
    DefineOpt,
    DensityOpt,
    FileArg,
    FunctionOpt,
    IncludeOpt,
    JsonOpt,
    MatrixOpt,
    NestOpt,
    ParamOpt,
    SparsityOpt,
    ThreadsOpt,
    console,
    emit_json,
    err_console,
    fmt_value,
    parse_params,
    read_recipe_file,
    resolve_threads,
    sparse_choice,
)
from service.supervisor import exit_with_parent

if TYPE_CHECKING:
    from autotune import TuneProgress
    from loopnest.ir import Scop
    from service.commands.tuning import NestTuner, TunedNest

MAX_SECONDS = 7 * 24 * 3600  # --timeout and --lease: a week at most


def tune_command(
    file: Path = FileArg,
    include: list[str] = IncludeOpt,
    define: list[str] = DefineOpt,
    param: list[str] = ParamOpt,
    function: str | None = FunctionOpt,
    nest: int | None = NestOpt,
    trials: int = typer.Option(50, "--trials", min=0, max=MAX_TRIALS,
                               help="Variants to evaluate per nest, counted over the whole study: a rerun "
                                    "resumes, and one that reached the budget returns at once; 0 registers the nest."),
    timeout: float | None = typer.Option(None, "--timeout", min=0, max=MAX_SECONDS,
                                         help="Stop each nest after S seconds."),
    reps: int = typer.Option(3, "--reps", min=1, max=1000, help=REPS_HELP),
    threads: int | None = ThreadsOpt,
    seed: int | None = typer.Option(None, "--seed", min=0, max=MAX_SEED, help="Sampler seed."),
    warm_start: list[Path] = typer.Option([], "--warm-start", help="Recipe JSON file to try first (repeatable)."),
    json_out: bool = JsonOpt,
    write_best: Path | None = typer.Option(None, "--write-best",
                                           help="Write FILE with every nest's best recipe applied (when faster)."),
    sparsity: str | None = SparsityOpt,
    density: float | None = DensityOpt,
    matrix: Path | None = MatrixOpt,
) -> None:
    """Autotune the loop nests of FILE; every verified measurement is stored in the database."""
    # Optuna and the tuner load here, not at the top: they add 52 ms (python -X importtime) to every
    # `perfembed` start, and only `tune` and `worker` need them.
    from service.commands.tuning import NestTuner, TuneOptions

    settings = get_database_settings()
    params = parse_params(param)
    sparse = sparse_choice(sparsity, density, matrix)
    options = TuneOptions(trials=trials, timeout=timeout, reps=reps, threads=resolve_threads(threads, settings.threads),
                          seed=seed, warm_start=tuple(Recipe.from_json(read_recipe_file(p)) for p in warm_start),
                          sparse=sparse)
    scops, chosen = _nests_to_tune(file, include, define, function=function, nest=nest, quiet=json_out)
    tuner = NestTuner(file, settings, options)
    with _progress(json_out) as progress:
        tuned = [_tune_with_bar(tuner, progress, i, scops[i], params) for i in chosen]
    best = {t.index: t.transformed for t in tuned if t.transformed is not None}
    if write_best is not None:
        write_best.write_text(replace_regions(file, best, scops))
    rows = [t.row for t in tuned]
    if json_out:
        emit_json({"file": str(file), "results": rows, "written": str(write_best) if write_best else None})
        return
    _print_tune_report(rows)
    if write_best is not None:
        err_console.print(f"wrote {write_best} ({len(best)} nest(s) transformed)")


def _nests_to_tune(file: Path, include: list[str], define: list[str], *, function: str | None, nest: int | None,
                   quiet: bool) -> tuple[list[Scop], list[int]]:
    """Every supported nest of FILE, and the indices of those to tune (``--function``, ``--nest``).

    Nest indices count every nest of the file, so that they match with or without --function."""
    options = PreprocessOptions(tuple(include), tuple(PreprocessOptions.parse_define(d) for d in define))
    extraction = extract_scops(file, options)
    require_nests(file, len(extraction.scops), extraction.rejected, quiet=quiet)
    scops = extraction.scops
    chosen = [i for i, s in enumerate(scops) if function is None or s.region.function == function]
    if nest is not None:
        if nest not in chosen:
            raise ParameterError(f"--nest {nest}: the file has {len(scops)} supported nest(s)"
                                 + (f", {len(chosen)} in {function}" if function else ""))
        chosen = [nest]
    if not chosen:
        raise ParameterError(f"{file}: no supported loop nest to tune"
                             + (f" in function {function!r}" if function else ""))
    return scops, chosen


def _tune_with_bar(tuner: NestTuner, progress: Progress, index: int, scop: Scop, params: dict[str, int]) -> TunedNest:
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
    once: bool = typer.Option(False, "--once", help="Exit when the queue is empty instead of waiting for jobs."),
    max_jobs: int | None = typer.Option(None, "--max-jobs", min=1, max=MAX_TRIALS, help="Exit after this many jobs."),
    lease: float = typer.Option(120.0, "--lease", min=1, max=MAX_SECONDS,
                                help="Lease length in seconds (renewed while running)."),
    poll: float = typer.Option(5.0, "--poll", min=0.1, max=3600, help="Seconds between looks at an empty queue."),
    worker_id: str | None = typer.Option(None, "--worker-id", help="Name in the jobs table (default host:pid)."),
    progress_bars: bool = typer.Option(True, "--progress/--log", help="Progress bars, or one log line per job "
                                       "(as under `perfembed serve --workers`)."),
    exit_with: int | None = typer.Option(None, "--exit-with", hidden=True, help="Stop when this process ends."),
    json_out: bool = JsonOpt,
) -> None:
    """Claim queued tuning jobs from the database and run them (Ctrl-C: finish the trial, requeue).

    PERFEMBED_WORKER_THREADS=T: pin to T CPUs no other worker holds, measure with T threads."""
    import optuna  # lazy, as the tuner in tune_command (52 ms at every start)

    from autotune.workers.worker import WorkerOptions, run_worker

    if exit_with is not None:
        exit_with_parent(exit_with)
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    settings = get_database_settings()
    store = get_store(settings.resolved_database_url, create=True)
    slot = claim_cpus(settings)
    if slot is not None:
        pin_to(slot)  # before any thread starts: every thread and child inherits it
        settings = settings.model_copy(update={"threads": len(slot.cpus)})
        err_console.print(f"worker pinned to CPUs {slot.describe()}, {len(slot.cpus)} thread(s) per measurement")
    stop = threading.Event()
    restore = _stop_on_signals(stop)
    try:
        with _progress(json_out or not progress_bars) as progress:
            shown = _WorkerDisplay(progress, log=not progress_bars and not json_out)
            options = WorkerOptions(worker_id=worker_id, once=once, max_jobs=max_jobs, lease_seconds=lease,
                                    poll_seconds=poll, cpus=slot.describe() if slot else None)
            report = run_worker(store, options, settings=settings, stop=stop, on_job=shown.on_job,
                                on_trial=shown.on_trial, on_outcome=shown.on_outcome)
    finally:
        restore()
        if slot is not None:
            slot.release()
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

