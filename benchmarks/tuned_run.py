"""What the peak and sparse benchmarks share around their measurements.

Both tune each item with perfembed (``benchmarks/peak_tuning.py``), measure it against references, and
report: usage errors as one line (:class:`UsageParser`, :func:`check_at_least`), a report framed by the
machine, its load and the configuration (:class:`TunedRun`), progress lines on stderr, the report
written to OUT/NAME.json and OUT/NAME.md (:func:`finish_report`), and the exit status
(:func:`run_main`: 0 when every figure is in).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NoReturn

from benchmarks.peak_measure import machine_load
from benchmarks.peak_tuning import Nest, TuneConfig, TuningCache, code_fingerprint, tune_kernel
from loopnest.config import Settings, get_settings

Report = dict[str, Any]


class UsageParser(argparse.ArgumentParser):
    """Usage errors as one line naming the problem, exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {message}\n")


def check_at_least(parser: argparse.ArgumentParser, args: argparse.Namespace, *lows: tuple[str, int]) -> None:
    """A usage error for the first option (``name``, ``low``) that was given below its ``low``."""
    for name, low in lows:
        value = getattr(args, name)
        if value is not None and value < low:
            parser.error(f"--{name} must be at least {low}")


def machine() -> dict[str, Any]:
    cpu = "unknown"
    cpuinfo = Path("/proc/cpuinfo")
    if cpuinfo.exists():
        cpu = next((line.split(":", 1)[1].strip() for line in cpuinfo.read_text().splitlines()
                    if line.startswith("model name")), cpu)
    return {"cpu": cpu, "cores": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}


def progress(benchmark: str, text: str) -> None:
    """A progress line on stderr, ``[NAME] text``."""
    sys.stderr.write(f"[{benchmark}] {text}\n")
    sys.stderr.flush()


@dataclass(frozen=True)
class TunedRun:
    """One run of a benchmark named ``name``: its threads, perfembed's tuning options, the output folder
    (``--out``, else DATA_DIR/NAME or NAME-quick) and the tuning cache in it."""

    name: str
    quick: bool
    threads: int
    config: TuneConfig
    out_dir: Path
    cache: TuningCache
    fingerprint: str

    @classmethod
    def from_args(cls, name: str, args: argparse.Namespace, settings: Settings) -> TunedRun:
        """``--threads``, ``--trials``, ``--quick``, ``--no-transfer`` and ``--out``; creates the folder."""
        threads = args.threads or os.cpu_count() or 1
        config = TuneConfig(trials=args.trials or (2 if args.quick else 40), threads=threads,
                            transfer=not (args.quick or args.no_transfer), reps=1 if args.quick else 3)
        out_dir = (args.out or settings.data_dir / (f"{name}-quick" if args.quick else name)).resolve()
        out_dir.mkdir(parents=True, exist_ok=True)
        return cls(name, args.quick, threads, config, out_dir, TuningCache(out_dir / "tuning.json"), code_fingerprint())

    def new_report(self, rounds: int, **config: Any) -> Report:
        """The report's frame: when, where, the load before, and the configuration (``config`` after the
        rounds)."""
        return {
            "benchmark": self.name, "started": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "machine": machine(), "load_before": machine_load(),
            "config": {"quick": self.quick, "threads": self.threads, "placement": "unpinned", "rounds": rounds,
                       **config, "tuning": asdict(self.config), "code": self.fingerprint[:16],
                       "out": str(self.out_dir)}}

    def progress(self, text: str) -> None:
        progress(self.name, text)

    def tune(self, item: Nest, params: dict[str, int], *, retune: bool, extra: Sequence[str] = (),
             cold_autotune: bool = False) -> dict[str, Any]:
        """perfembed's recipes for ``item`` (:func:`~benchmarks.peak_tuning.tune_kernel`), with progress lines."""
        detail = f"; {' '.join(extra)}" if extra else ""
        self.progress(f"{item.name}: perfembed's recipes (transfer: {self.config.transfer}, "
                      f"{self.config.trials} trials{detail})")
        tuning = tune_kernel(item, params, self.config, out_dir=self.out_dir, cache=self.cache, retune=retune,
                             fingerprint=self.fingerprint, extra=extra, cold_autotune=cold_autotune)
        self.progress(f"{item.name}: " + ("from the cache" if tuning["cached"] else "tuned") + "; " + ", ".join(
            f"{part} {tuning[part]['status']}" for part in ("transfer", "autotune")))
        return tuning


def finish_report(report: Report, out_dir: Path, start: float, summarize: Callable[[Report], Any],
                  render_markdown: Callable[[Report], str]) -> Report:
    """``report`` with its duration, the load after it and its summary, written to OUT/NAME.json and
    OUT/NAME.md (NAME: the report's ``benchmark``)."""
    report["seconds"] = round(time.perf_counter() - start, 1)
    report["load_after"] = machine_load()
    report["summary"] = summarize(report)
    name = report["benchmark"]
    (out_dir / f"{name}.json").write_text(json.dumps(report, indent=1, default=str))
    (out_dir / f"{name}.md").write_text(render_markdown(report))
    return report


def print_report(report: Report, as_json: bool, render_text: Callable[[Report], str],
                 missing_figures: Callable[[Report], list[str]]) -> int:
    """One JSON object or the text tables on stdout; the exit status (0 when every figure is in). What
    is missing goes to stderr as well, so a script reading only the exit status and stderr knows why."""
    sys.stdout.write(json.dumps(report, default=str) + "\n" if as_json else render_text(report))
    missing = missing_figures(report)
    if missing:
        shown = "; ".join(missing[:5]) + (f"; and {len(missing) - 5} more" if len(missing) > 5 else "")
        sys.stderr.write(f"incomplete: {len(missing)} figure(s) not measured or not verified: {shown}\n")
    return 1 if missing else 0


def run_main(argv: list[str] | None, parse_args: Callable[[list[str] | None], argparse.Namespace],
             run_benchmark: Callable[[argparse.Namespace, Settings], Report], render_text: Callable[[Report], str],
             missing_figures: Callable[[Report], list[str]]) -> int:
    """A benchmark's ``main``: parse, run with the settings, print; the exit status."""
    args = parse_args(argv)
    return print_report(run_benchmark(args, get_settings()), args.json, render_text, missing_figures)
