"""The paper's evaluation on this machine: transfer tuning vs autotuning vs Polly, leave one family out.

    python -m experiments.paper [--json] [--url URL] [--data-dir DIR] [--per-family 2] [--families F ...]
                               [--k 1,3,5] [--tune-trials 10,25,100] [--no-polly] [--no-gate] [--reps 3]
                               [--out FILE.md]

(also ``perfembed bench paper``, which runs this module in a child process with ``--events`` and shows
its progress: nothing in the packages imports ``benchmarks``). For every family F of the tuned nests in
the database (family = program name before ``/``, as ``perfembed seed build`` names programs), up to
``per_family`` nests of F are held out, and the neighbour search may only return nests of *other*
families. For each held-out nest, in one run:

* **baseline**: ``gcc -O3 -march=native -fopenmp`` (the harness baseline), measured once in one
  :class:`~loopnest.harness.Harness`; every gcc ratio below is over this one median;
* **transfer k**: the best verified recipes of the k nearest neighbours, adapted to the nest
  (:meth:`TransferTuner.candidates`), each candidate whose generated code differs from the original's
  and from every earlier one's evaluated once in the same harness (the service runs no other). As
  in the service, when no neighbour lies within the embedding's confidence gate the recipe space's
  first guesses (isl's schedule, the outermost parallel loop with the innermost vectorized) are
  candidates too, listed as from the recipe space (``--no-gate``: never; ``--priors schedule|always``:
  isl's schedule, or both, also within the gate). The result is the best
  verified candidate when it is at least ``min_speedup`` (1.1x) faster, else 1.0 (the original is
  kept: the acceptance rule). Evaluations = candidates run, the first guesses included;
* **autotune n**: :func:`tune_nest` run fresh in a scratch Optuna storage (SQLite in a temporary
  folder, never the benchmark database) for ``max(tune_trials)`` evaluated trials with a fixed seed.
  Autotune n re-evaluates the three best verified recipes among the first n evaluated trials in the
  same harness as the transfer candidates and keeps the fastest; the same 1.1x acceptance rule applies.
  Evaluations = n (or fewer when the study ran out of legal distinct recipes). A search already run
  with the same nest, settings, machine and tuner code is read back instead of run again
  (:mod:`experiments.paper_autotune_cache`; ``--fresh-autotune``: never), its winners re-measured all the same;
* **confirmed**: each distinct recipe a method accepted, compared with the baseline interleaved in fresh
  processes until its interval clears the margin (:mod:`experiments.paper_confirm`); a method keeps its
  figure only when it holds up (``--no-confirm``: not done). The summary is given both ways;
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
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import optuna

from autotune.config import AutotuneSettings, get_autotune_settings
from autotune.transfer.priors import PRIOR_MODES
from benchmarks.entry import INTERRUPTED, exit_after
from benchmarks.polly import POLLY_CC, POLLY_FLAGS, polly_problem
from database import get_store
from experiments.paper_nests import (
    family_of,
)
from experiments.paper_report import (
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
from experiments.paper_run import MIN_SPEEDUP, PaperConfig, PaperRun, ProgressEvent
from loopnest.errors import ParameterError, PerfembedError

# The rules, the report and the per-nest measuring live beside this runner; their public names are
# re-exported so that ``experiments.paper`` stays the one import for callers (tests, transfer.py).
__all__ = [
    "DEFAULT_OUT", "EVAL_FRACTION", "MAX_TARGET_K", "MIN_SPEEDUP", "NEAR_FRACTION", "POLLY_CC", "POLLY_FLAGS",
    "PaperConfig", "PaperInterrupted", "ProgressEvent", "build_parser", "family_of", "geomean", "main",
    "markdown_report", "polly_problem", "run_paper_benchmark", "summarize", "summary_table", "write_plot",
    "write_report",
]

DEFAULT_OUT = Path(__file__).resolve().parents[1] / "docs" / "paper-benchmark.md"


def run_paper_benchmark(url: str, *, data_dir: str | Path, config: PaperConfig | None = None,
                        settings: AutotuneSettings | None = None,
                        progress: Callable[[ProgressEvent], None] | None = None,
                        out: str | Path | None = DEFAULT_OUT) -> dict[str, Any]:
    """Run the leave-one-family-out benchmark on the database at ``url``; the report as a dict.

    ``config`` says what to measure (:class:`PaperConfig`, default: its defaults); ``settings`` gives
    the compiler, threads and limits (default ``AutotuneSettings()``). ``out``: the markdown report to write
    (its plot goes beside it, same stem, ``.png``); None writes nothing. See the module docstring for
    the method.
    """
    report_file = report_path(out) if out is not None else None  # before an hour of measuring, not after
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    config = (config or PaperConfig()).checked()
    rows: list[dict[str, Any] | None] = []
    with tempfile.TemporaryDirectory(prefix="perfembed-paper-") as scratch:  # autotuning studies, rebuilt sources
        run = PaperRun(get_store(url), Path(data_dir), config, settings or AutotuneSettings(), progress, Path(scratch))
        try:
            for pos, held in enumerate(run.selection.held):
                rows.append(run.measure(pos, held))
        except KeyboardInterrupt:
            # A Ctrl-C an hour in kept nothing but the searches: the nests measured so far are reported.
            measured = sum(r is not None for r in rows)
            if report_file is None or not measured:
                raise
            report = {**run.report(rows), "interrupted": {"measured": measured, "held_out": len(run.selection.held)}}
            write_report(report, report_file)
            raise PaperInterrupted(measured, len(run.selection.held), report_file) from None
    report = run.report(rows)
    if report_file is not None:
        write_report(report, report_file)
        report["report"] = {"markdown": str(report_file), "plot": str(report_file.with_suffix(".png"))}
    return report


class PaperInterrupted(KeyboardInterrupt):
    """A Ctrl-C during a run, after the report of the nests measured before it was written."""

    def __init__(self, measured: int, held_out: int, report_file: Path) -> None:
        super().__init__(f"interrupted after {measured} of {held_out} held-out nests; their report: {report_file}")
        self.report_file = report_file


def report_path(out: str | Path) -> Path:
    """Where the markdown report goes: ``out``, or ``out/paper-benchmark.md`` when ``out`` is a directory.
    Checked before the run: a 30-nest run (2 h 20 min) once ended in an ``IsADirectoryError`` traceback
    on ``--out DIR``, its report lost."""
    path = Path(out)
    if path.is_dir():
        path = path / DEFAULT_OUT.name
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # as the report's writer always did
    except OSError as exc:
        raise ParameterError(f"--out {out}: the directory {path.parent} cannot be made ({exc.strerror})") from None
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise ParameterError(f"--out {out}: {path} cannot be written")
    return path


# -- command line -------------------------------------------------------------------------------


def _ints(text: str) -> list[int]:
    """An argparse type: "1,3,5" -> [1, 3, 5]."""
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers, got {text!r}") from None


def build_parser(description: str = "Leave one family out: transfer vs autotuning vs Polly.",
                 ) -> argparse.ArgumentParser:
    """The options this script shares with ``experiments/transfer.py`` (each adds its own report options)."""
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
    parser.add_argument("--no-gate", action="store_true",
                        help="transfer screens the neighbours' recipes alone, also with no neighbour within the "
                             "confidence gate (default: then also the recipe space's first guesses, as the service)")
    parser.add_argument("--priors", choices=list(PRIOR_MODES), default=None,
                        help="first guesses of the recipe space transfer tries beside neighbours within the gate "
                             "(default: PERFEMBED_TRANSFER_PRIORS, 'gate': none)")
    parser.add_argument("--no-confirm", action="store_true",
                        help="skip confirming each method's winner by interleaved re-measurement")
    parser.add_argument("--fresh-autotune", action="store_true",
                        help="run every autotuning search again (default: reuse a search of the same nest, "
                             "settings, machine and tuner code from DATA_DIR/paper-autotune; its winners are "
                             "re-measured in this run either way)")
    return parser


def config_from_args(args: argparse.Namespace, *, polly: bool) -> PaperConfig:
    """The :class:`PaperConfig` of the options :func:`build_parser` defines."""
    return PaperConfig(per_family=args.per_family, k_values=args.k, tune_trials=args.tune_trials,
                       families=args.families, reps=args.reps, seed=args.seed, polly=polly,
                       gate=not args.no_gate, priors=args.priors, confirm=not args.no_confirm,
                       reuse_autotune=not args.fresh_autotune)


def main(argv: list[str] | None = None) -> int:
    """The script: run, print the summary (or one JSON object) and write the report.

    With ``--events`` (what ``perfembed bench paper`` runs), stdout is JSON lines instead: one
    ``{"event": ...}`` per :class:`ProgressEvent`, then ``{"report": ...}``, or ``{"error": ...}`` (a
    user error's ``to_dict()`` and its ``exit_code``) and the exit code 2.
    """
    parser = build_parser()
    parser.add_argument("--no-polly", action="store_true", help="skip the Polly comparison")
    parser.add_argument("--out", default=str(DEFAULT_OUT),
                        help="markdown report, or a directory for paper-benchmark.md in it ('' for none)")
    parser.add_argument("--events", action="store_true", help="JSON lines: progress events, then the report")
    args = parser.parse_args(argv)
    settings = get_autotune_settings()
    progress = _event_line if args.events else _print_progress  # stderr: stdout keeps the one JSON object
    try:
        report = run_paper_benchmark(args.url or settings.resolved_database_url,
                                     data_dir=args.data_dir or settings.data_dir,
                                     config=config_from_args(args, polly=not args.no_polly), settings=settings,
                                     progress=progress, out=args.out or None)
    except PaperInterrupted as stop:
        print(stop, file=sys.stderr, flush=True)
        return INTERRUPTED
    except PerfembedError as exc:
        if not args.events:
            print(f"error: {exc}", file=sys.stderr)
            return getattr(exc, "exit_code", 2)
        _json_line({"error": {**exc.to_dict(), "exit_code": getattr(exc, "exit_code", 2)}})
        return 2
    if args.events:
        _json_line({"report": report})
    elif args.json:
        _json_line(report)
    else:
        print(summary_table(report))
        if "report" in report:
            print(f"wrote {report['report']['markdown']}")
    return 0


def _json_line(value: object) -> None:
    sys.stdout.write(json.dumps(value, default=str) + "\n")
    sys.stdout.flush()


def _event_line(event: ProgressEvent) -> None:
    _json_line({"event": asdict(event)})


def _print_progress(event: ProgressEvent) -> None:
    """Progress on stderr, one line per nest, so that stdout keeps the summary alone."""
    if event.phase in ("start", "done", "skip"):
        where = f"[{event.index}/{event.total}] " if event.phase != "start" else ""
        print(f"{where}{event.name} {event.detail}".strip(), file=sys.stderr, flush=True)


if __name__ == "__main__":
    exit_after(main)
