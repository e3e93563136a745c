"""``perfembed bench``: the paper's evaluation (leave one family out) and the peak benchmark.

Register with ``app.add_typer(bench_app, name="bench")``. The logic lives in ``benchmarks/paper.py``
(see its docstring for the method); this command reads :func:`loopnest.config.get_settings` for the
database URL, data folder, compiler and limits, and shows progress on stderr. ``bench peak`` runs
``benchmarks/peak.py`` in a subprocess (nothing imports ``benchmarks``), passing its options through.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import typer

from loopnest.errors import ParameterError
from service.commands.options import MAX_NEST, MAX_SEED, MAX_TRIALS, make_console

bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: transfer tuning vs autotuning vs Polly.")
console = make_console()
err_console = make_console(stderr=True)

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_OUT = Path("docs") / "paper-benchmark.md"


def _paper_module() -> Any:
    """``benchmarks.paper``; the repository root goes on the path when the package is not installed."""
    try:
        import benchmarks.paper as paper
    except ImportError:
        sys.path.insert(0, str(ROOT))
        import benchmarks.paper as paper
    return paper


def _ints(text: str, what: str, most: int) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ParameterError(f"{what} {text!r}: expected comma-separated integers such as 10,25,100") from None
    if not values or min(values) < 1 or max(values) > most:
        raise ParameterError(f"{what} {text!r}: expected integers from 1 to {most}")
    return values


@bench_app.command("paper")
def paper_command(
    json_out: bool = typer.Option(False, "--json", help="Print one JSON object."),
    per_family: int = typer.Option(2, "--per-family", min=1, max=MAX_NEST, help="Held-out nests per family."),
    families: list[str] = typer.Option([], "--families", "--family", help="Only hold out these families."),
    tune_trials: str = typer.Option("10,25,100", "--tune-trials", help="Autotuning budgets, comma-separated."),
    k: str = typer.Option("1,3,5", "--k", help="Neighbour counts for transfer, comma-separated."),
    polly: bool = typer.Option(True, "--polly/--no-polly", help="Compare with clang-16 + Polly."),
    reps: int = typer.Option(3, "--reps", min=1, max=100, help="Timed repetitions per variant."),
    seed: int = typer.Option(0, "--seed", min=0, max=MAX_SEED, help="Autotuning sampler seed."),
    out: Path | None = typer.Option(DEFAULT_OUT, "--out", help="Markdown report (the plot goes beside it)."),
    no_report: bool = typer.Option(False, "--no-report", help="Write no markdown or plot."),
) -> None:
    """Leave one family out: transfer (k neighbours) vs autotuning (n trials) vs Polly, with a report."""
    from loopnest.config import get_settings

    paper = _paper_module()
    settings = get_settings()
    trials = _ints(tune_trials, "--tune-trials", MAX_TRIALS)
    ks = _ints(k, "--k", 50)
    target = None if no_report else out
    # Progress goes to stderr in both modes: a run takes tens of minutes, and stdout stays one JSON object.
    report = _with_progress(paper, settings, per_family=per_family, k_values=ks, tune_trials=trials, polly=polly,
                            reps=reps, families=families or None, out=target, seed=seed)
    if json_out:
        sys.stdout.write(json.dumps(report, default=str) + "\n")
        return
    _render(report)


def _with_progress(paper: Any, settings: Any, **options: Any) -> dict[str, Any]:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  TextColumn("{task.fields[status]}"), console=err_console) as bar:
        task = bar.add_task("held-out nests", total=None, status="fitting the embedding model")

        def on_event(event: Any) -> None:
            if event.phase == "start":
                bar.update(task, total=event.total, status=event.detail)
            elif event.phase == "nest":
                bar.update(task, status=f"{event.name}: autotuning")
            elif event.phase == "autotune":
                bar.update(task, status=f"{event.name}: autotune {event.trial}/{event.trials} {event.detail}")
            elif event.phase == "measure":
                bar.update(task, status=f"{event.name}: {event.detail}")
            elif event.phase == "skip":
                bar.update(task, advance=1, status=f"{event.name}: skipped")
                err_console.print(f"skipped {event.name}: {event.detail}")
            elif event.phase == "done":
                bar.update(task, completed=event.index, status=f"{event.name}: {event.detail}")
                err_console.print(f"{event.name}: {event.detail}")

        return paper.run_paper_benchmark(settings.resolved_database_url, data_dir=settings.data_dir,
                                         settings=settings, progress=on_event, **options)


def _render(report: dict[str, Any]) -> None:
    from rich.table import Table

    table = Table(title=f"leave one family out: {report['summary']['nests']} nests")
    for col in ("method", "geomean speedup", "mean evaluations", "nests", "notes"):
        table.add_column(col)
    for m in report["summary"]["methods"]:
        if m["kind"] == "polly":
            if not m["available"]:
                table.add_row("polly", "not available", "-", "-", report["config"]["polly"].get("note") or "")
                continue
            note = f"{m['unverified']} unverified, {m['failed']} failed"
        else:
            note = "" if m["kind"] == "baseline" else f"{m['accepted']} accepted"
        gm = m["geomean_speedup"]
        ev = m["mean_evaluations"]
        table.add_row(m["method"], "-" if gm is None else f"{gm:.2f}x", "-" if ev is None else f"{ev:.1f}",
                      str(m["nests"]), note)
    console.print(table)
    for key, target in report["summary"]["targets"].items():
        console.print(f"target ({key}): {target['status']}: {target['name']}")
    if report.get("report"):
        console.print(f"wrote {report['report']['markdown']} and {report['report']['plot']}")


@bench_app.command("peak", add_help_option=False,
                   context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
def peak_command(ctx: typer.Context) -> None:
    """GFLOP/s and GB/s of dense kernels and stencils: gcc, Polly, perfembed, numpy (benchmarks/peak.py;
    its options pass through: --quick, --json, --kernels, --retune, --help, ...)."""
    script = ROOT / "benchmarks" / "peak.py"
    if not script.is_file():
        raise ParameterError(f"perfembed bench peak runs {script}: it needs a source checkout of perfembed")
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    done = subprocess.run([sys.executable, "-m", "benchmarks.peak", *ctx.args], env={**os.environ, "PYTHONPATH": path},
                          check=False)
    raise typer.Exit(done.returncode)
