"""``perfembed bench``: the paper's evaluation (leave one family out), the peak, sparse and program benchmarks.

Register with ``app.add_typer(bench_app, name="bench")``. The benchmark is ``python -m experiments.paper``
(see its docstring for the method), run in a child process: the packages never import ``benchmarks``
(the layers contract in pyproject.toml). The child reads the same ``PERFEMBED_*`` settings (database
URL, data folder, compiler, limits) and reports on stdout in JSON lines (``--events``): progress
events, shown here on stderr, then the report or the user error that ended it. ``bench peak``,
``bench sparse``, ``bench programs`` and ``bench python`` run ``benchmarks/peak.py``, ``benchmarks/sparse.py``,
``benchmarks/programs_bench.py`` and ``benchmarks/python_bench.py`` the same way, passing their options through.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from service.commands.options import MAX_NEST, MAX_SEED, MAX_TRIALS, REPS_HELP, Json, grouped, make_console
from service.core.errors import InternalError, ParameterError, PerfembedError
from service.core.local_suggest import TRANSFER_PRIORS

bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: transfer tuning vs autotuning vs Polly.")
console = make_console()
err_console = make_console(stderr=True)

DEFAULT_OUT = Path("docs") / "paper-benchmark.md"
BENCHMARK_MODULE = "experiments.paper"
CHILD_INTERRUPTED = 130  # benchmarks.entry.INTERRUPTED, after a Ctrl-C (service never imports benchmarks)


class BenchmarkError(PerfembedError):
    """The benchmark ended on an error of its own input or database; it carries the child's error as is."""

    def __init__(self, payload: Mapping[str, Any]) -> None:
        self.payload = {k: v for k, v in payload.items() if k != "exit_code"}
        self.exit_code = int(payload.get("exit_code", 2))
        super().__init__(str(payload.get("message") or payload))

    def to_dict(self) -> dict[str, object]:
        return dict(self.payload)


def _ints(text: str, what: str, most: int) -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ParameterError(f"{what} {text!r}: expected comma-separated integers such as 10,25,100") from None
    if not values or min(values) < 1 or max(values) > most:
        raise ParameterError(f"{what} {text!r}: expected integers from 1 to {most}")
    return values


@dataclass(frozen=True)
class PaperRun:
    """What the paper benchmark compares: the held-out nests, the budgets and neighbour counts, the baselines."""

    per_family: Annotated[int, typer.Option("--per-family", min=1, max=MAX_NEST,
                                            help="Held-out nests per family.")] = 2
    families: Annotated[list[str], typer.Option("--families", "--family",
                                                help="Only hold out these families.")] = field(default_factory=list)
    tune_trials: Annotated[str, typer.Option("--tune-trials", help="Autotuning budgets, comma-separated.")] = \
        "10,25,100"
    k: Annotated[str, typer.Option("--k", help="Neighbour counts for transfer, comma-separated.")] = "1,3,5"
    polly: Annotated[bool, typer.Option("--polly/--no-polly", help="Compare with clang-16 + Polly.")] = True
    reps: Annotated[int, typer.Option("--reps", min=1, max=100, help=REPS_HELP)] = 3
    seed: Annotated[int, typer.Option("--seed", min=0, max=MAX_SEED, help="Autotuning sampler seed.")] = 0
    priors: Annotated[str | None, typer.Option(
        "--priors", help="First guesses transfer tries beside neighbours within the gate: gate (none), "
        "schedule, always (default: PERFEMBED_TRANSFER_PRIORS).")] = None
    fresh_autotune: Annotated[bool, typer.Option(
        "--fresh-autotune", help="Search every nest again (default: reuse an earlier run's search of the "
        "same nest, settings, machine and tuner code; its winners are re-measured in this run either way).")] = False

    def args(self, out: str) -> list[str]:
        """The benchmark's command line, with its report at ``out`` ("": none)."""
        args = ["--per-family", str(self.per_family), "--k", ",".join(map(str, _ints(self.k, "--k", 50))),
                "--tune-trials", ",".join(map(str, _ints(self.tune_trials, "--tune-trials", MAX_TRIALS))),
                "--reps", str(self.reps), "--seed", str(self.seed), "--out", out]
        if self.families:
            args += ["--families", *self.families]
        if not self.polly:
            args.append("--no-polly")
        if self.fresh_autotune:
            args.append("--fresh-autotune")
        if self.priors is not None:
            if self.priors not in TRANSFER_PRIORS:
                raise ParameterError(f"--priors {self.priors!r}: expected one of {', '.join(TRANSFER_PRIORS)}")
            args += ["--priors", self.priors]
        return args


@bench_app.command("paper")
@grouped
def paper_command(
    run: PaperRun,
    json_out: Json = False,
    out: Annotated[Path | None, typer.Option("--out", help="Markdown report (the plot goes beside it).")] = DEFAULT_OUT,
    no_report: Annotated[bool, typer.Option("--no-report", help="Write no markdown or plot.")] = False,
) -> None:
    """Leave one family out: transfer (k neighbours) vs autotuning (n trials) vs Polly, with a report."""
    args = run.args("" if no_report or out is None else str(out.resolve()))
    # Progress goes to stderr in both modes: a run takes tens of minutes, and stdout stays one JSON object.
    report = _with_progress(args)
    if json_out:
        sys.stdout.write(json.dumps(report, default=str) + "\n")
        return
    _render(report)


def benchmark_environment(package: str = "benchmarks") -> dict[str, str]:
    """The environment of a ``python -m PACKAGE.X`` child: it imports the packages from where this
    process found them (a checkout on sys.path included); a user error when there is no checkout.
    ``experiments`` (the paper experiment, the driver forms) is never installed: it runs from a checkout."""
    spec = importlib.util.find_spec("benchmarks")  # finds the package without importing it
    root = Path(spec.origin).resolve().parents[1] if spec is not None and spec.origin is not None else None
    if root is None or not (root / package / "__init__.py").is_file():
        what = "the benchmarks are" if package == "benchmarks" else f"{package}/ (a development tool) is"
        raise ParameterError(f"{what} not installed with this perfembed: run `perfembed bench` from a "
                             "perfembed checkout installed with `pip install -e .`")
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}


def run_benchmark(args: list[str], on_event: Callable[[Any], None]) -> dict[str, Any]:
    """``python -m experiments.paper --events ARGS`` in a child process: each progress event to
    ``on_event`` (its fields as attributes), then the report. The child's user error is raised as a
    :class:`BenchmarkError` (exit code 2); a child that ends without a report as an :class:`InternalError`."""
    env = benchmark_environment("experiments")
    command = [sys.executable, "-m", BENCHMARK_MODULE, "--events", *args]
    report: dict[str, Any] | None = None
    with subprocess.Popen(command, stdout=subprocess.PIPE, text=True, env=env) as child:  # stderr: the terminal
        assert child.stdout is not None
        for message in _messages(child.stdout):
            if "event" in message:
                on_event(SimpleNamespace(**message["event"]))
            elif "error" in message:
                raise BenchmarkError(message["error"])
            elif "report" in message:
                report = message["report"]
    if child.returncode in (CHILD_INTERRUPTED, -signal.SIGINT):  # stopped by a Ctrl-C: not a bug to report
        raise KeyboardInterrupt
    if child.returncode != 0 or report is None:
        raise InternalError(f"the paper benchmark ({' '.join(command[1:3])}) ended with exit code "
                            f"{child.returncode} and no report; its error is above")
    return report


def _messages(lines: Iterator[str]) -> Iterator[dict[str, Any]]:
    """The child's JSON lines; any other line (a library printing on stdout) goes on to stderr."""
    for line in lines:
        try:
            message = json.loads(line)
        except json.JSONDecodeError:
            message = None
        if isinstance(message, dict):
            yield message
        elif line.strip():
            err_console.print(line.rstrip("\n"), markup=False, highlight=False)


def _with_progress(args: list[str]) -> dict[str, Any]:
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

        return run_benchmark(args, on_event)


def _render(report: dict[str, Any]) -> None:
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
    _render_confirmed(report.get("confirmed"))
    cache = report["config"].get("autotune_cache") or {}
    if cache.get("reused"):
        console.print(f"autotuning searches reused from earlier runs: {cache['reused']} of "
                      f"{cache['reused'] + cache['searched']} (winners re-measured in this run; --fresh-autotune: "
                      "search again)")
    if report.get("report"):
        console.print(f"wrote {report['report']['markdown']} and {report['report']['plot']}")


def _render_confirmed(confirmed: dict[str, Any] | None) -> None:
    """The geomeans and targets again with each method's winner re-measured interleaved with the baseline."""
    if not confirmed:
        return
    geomeans = ", ".join(f"{m['method']} {m['geomean_speedup']:.2f}x" for m in confirmed["summary"]["methods"]
                         if m["kind"] in ("transfer", "autotune") and m["geomean_speedup"])
    console.print(f"winners re-measured interleaved: {confirmed['held']} of {confirmed['confirmed_cells']} held up; "
                  f"{geomeans}")
    for key, target in confirmed["summary"]["targets"].items():
        console.print(f"target ({key}), winners confirmed: {target['status']}")


def _pass_through(module: str, ctx: typer.Context) -> None:
    """``python -m MODULE ARGS`` with this command's arguments; its exit status is this command's."""
    done = subprocess.run([sys.executable, "-m", module, *ctx.args], env=benchmark_environment(module.split(".")[0]),
                          check=False)
    raise typer.Exit(done.returncode)


_PASS_THROUGH = {"allow_extra_args": True, "ignore_unknown_options": True}  # --help included


@bench_app.command("peak", add_help_option=False, context_settings=_PASS_THROUGH)
def peak_command(ctx: typer.Context) -> None:
    """GFLOP/s and GB/s of dense kernels and stencils: gcc, Polly, perfembed, numpy (OpenBLAS) and MKL, each
    library in a fresh process (benchmarks/peak.py; MKL from `pip install -e '.\\[mkl]'`; its options pass
    through: --quick, --json, --kernels, --threads, --retune, --help, ...)."""
    _pass_through("benchmarks.peak", ctx)


@bench_app.command("sparse", add_help_option=False, context_settings=_PASS_THROUGH)
def sparse_command(ctx: typer.Context) -> None:
    """GFLOP/s of SpMV and SpMM on generated and Matrix Market matrices: gcc, perfembed's transferred and
    autotuned recipes, scipy.sparse and MKL at the same threads (benchmarks/sparse.py; MKL from
    `pip install -e '.\\[mkl]'`; its options pass through: --quick, --json, --kernels, --matrices, --threads,
    --retune, --help, ...)."""
    _pass_through("benchmarks.sparse", ctx)


@bench_app.command("driver-forms", add_help_option=False, context_settings=_PASS_THROUGH)
def driver_forms_command(ctx: typer.Context) -> None:
    """Each corpus nest's original and best stored recipe timed with the driver's static arrays and in the
    user's form (experiments/driver_forms.py; its options pass through: --family, --limit, --json, --help, ...)."""
    _pass_through("experiments.driver_forms", ctx)


@bench_app.command("programs", add_help_option=False, context_settings=_PASS_THROUGH)
def programs_command(ctx: typer.Context) -> None:
    """The program suite end to end: perfembed suggest --evaluate --write-best on each program of
    benchmarks/programs with its own build, then the written program timed against gcc -O3 and Polly
    (benchmarks/programs_bench.py; its options pass through: --programs, --dataset, --k, --threads,
    --no-polly, --json, --out, --report, --help, ...)."""
    _pass_through("benchmarks.programs_bench", ctx)


@bench_app.command("python", add_help_option=False, context_settings=_PASS_THROUGH)
def python_command(ctx: typer.Context) -> None:
    """NumPy kernels against their peers in one run: NumPy, Numba (@njit and parallel=True), DaCe where it
    installs, perfembed by transfer (k = 5) and by autotuning (40 trials), every output checked against NumPy's
    (benchmarks/python_bench.py; peers from `pip install -e '.\\[peers]'`; its options pass through: --kernels,
    --scale, --reps, --threads, --out, --help, ...)."""
    _pass_through("benchmarks.python_bench", ctx)


@bench_app.command("service", add_help_option=False, context_settings=_PASS_THROUGH)
def service_command(ctx: typer.Context) -> None:
    """The REST API under load: suggestion and search latency (p50, p99) and throughput at 1, 8 and 32 clients
    (locust, from `pip install -e '.\\[load]'`), the dashboard's page times and the API's memory with 100,000
    nests, against their targets (benchmarks/service.py; its options pass through: --nests, --clients,
    --seconds, --rss-nests, --pages-only, --json, --help, ...)."""
    _pass_through("benchmarks.service", ctx)


@bench_app.command("hostile-clients", add_help_option=False, context_settings=_PASS_THROUGH)
def hostile_clients_command(ctx: typer.Context) -> None:
    """`perfembed serve` against hostile clients, pass or fail: a keyless flood beside a key holder, 20,000
    idle connections and oversized headers, with /healthz probed throughout (benchmarks/hostile_clients.py;
    its options pass through: --flood, --seconds, --idle, --header-mb, --json, --help, ...)."""
    _pass_through("benchmarks.hostile_clients", ctx)
