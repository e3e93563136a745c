"""The program suite end to end, as a user runs it: perfembed tunes each program, then the tuned program
is timed against gcc -O3 and Polly in the program's own build.

    python -m benchmarks.programs_bench [--json] [--programs gemm,heat2d] [--dataset SMALL|MEDIUM|LARGE]
                                        [--k 5] [--threads N] [--rounds R] [--no-polly] [--with-p PROG|none]
                                        [--suggest-timeout S] [--out DIR] [--report FILE.md]

(``perfembed bench programs`` runs it with the same options.) For each program of ``benchmarks/programs/``
(``benchmarks/programs_suite.py``):

1. ``perfembed suggest KERNEL --function F --param ... --evaluate --write-best TMP/tuned.c --build 'make -C
   PROG clean all ...' --run 'cd PROG && ./PROG' --project benchmarks/programs --json``, a subprocess of the
   CLI in the same environment (its database included). Once per run (``--with-p``, default the first
   program) the ``-p BUILD_DIR`` form too, after ``cmake -S PROG -B BUILD_DIR -DDATASET=..``.
2. The program's own Makefile builds the original (``gcc -O3 -march=native -fopenmp``), the written file
   swapped in (same flags; when perfembed wrote nothing, the user's program is the original: 1.00x) and
   Polly (``clang-16 -O3 -march=native -fopenmp -mllvm -polly -mllvm -polly-parallel``; skipped with the
   reason when clang-16 or Polly is missing), each in a scratch copy of the suite.
3. ``--rounds`` rounds, each variant once per round in a rotating order, ``OMP_NUM_THREADS`` = threads;
   whole-process wall times; every run's checksum must be the original's (otherwise a wrong-output row,
   never a speedup); speedups are geometric means of the rounds' ratios with a 95% bootstrap interval
   (``benchmarks/programs_measure.py``).

The report (a table, or with ``--json`` one JSON object) goes to stdout and OUT/programs.json (and
OUT/programs.md, and ``--report`` when given); progress to stderr. Exit status: 0 when every program was
measured (tuned or not), 1 when one failed to build, run or check out, 2 on a usage error.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchmarks.entry import exit_after
from benchmarks.peak_measure import machine_load
from benchmarks.polly import POLLY_CC, POLLY_FLAGS, polly_problem
from benchmarks.programs_measure import Variant, build_variant, interleave, paired_ratio
from benchmarks.programs_report import missing_figures, render_markdown, render_text, summarize
from benchmarks.programs_suite import (
    DATASETS,
    GCC,
    GCC_FLAGS,
    SUGGEST_TIMEOUT_S,
    Program,
    SuggestFn,
    SuggestRequest,
    Tuning,
    cli_suggest,
    cli_suggest_p,
    dataset_params,
    load_suite,
    select_programs,
)
from benchmarks.tuned_run import UsageParser, check_at_least, finish_report, machine, progress, run_main
from loopnest.config import Settings
from loopnest.harness import Limits

NAME = "programs"


@dataclass(frozen=True)
class RunConfig:
    """The options every program is run with; ``polly_skip`` says why Polly is left out (None: measured)."""

    dataset: str
    k: int
    threads: int
    rounds: int
    limits: Limits
    polly_skip: str | None = None
    suggest_timeout_s: float = SUGGEST_TIMEOUT_S

    def request(self, params: dict[str, int], work: Path) -> SuggestRequest:
        return SuggestRequest(self.dataset, params, self.k, self.threads, work, self.suggest_timeout_s)


def measure_program(program: Program, cfg: RunConfig, suggest: SuggestFn = cli_suggest) -> dict[str, Any]:
    """One program's row: ``suggest`` tunes it (the CLI; a test passes its own), then its three builds are
    timed interleaved. Never raises for the program's own failures: the row says what failed."""
    row: dict[str, Any] = {"program": program.name, "kernel_file": program.kernel_file,
                           "function": program.function, "dataset": cfg.dataset}
    try:
        params = dataset_params(program, cfg.dataset)
    except ValueError as exc:
        return {**row, "status": "failed", "reason": str(exc)}
    row["params"] = params
    with tempfile.TemporaryDirectory(prefix="perfembed-programs-") as tmp:
        work = Path(tmp)
        work.chmod(0o755)  # the sandbox's nobody builds and runs in folders below it
        progress(NAME, f"{program.name}: perfembed suggest --evaluate (k={cfg.k}, {cfg.threads} threads)")
        tuning = suggest(program, cfg.request(params, work))
        progress(NAME, f"{program.name}: {tuning.status}: {tuning.reason}")
        row["suggest"] = tuning.to_dict()
        row.update(nest_fields(tuning, program.function))
        variants = build_variants(program, cfg, tuning, work)
        row["load_before_timing"] = machine_load()
        if variants[0].active:
            progress(NAME, f"{program.name}: timing {', '.join(v.name for v in variants if v.active)} "
                           f"({cfg.rounds} interleaved rounds)")
            interleave(program, variants, cfg.rounds, cfg.threads, cfg.limits)
        row["load_after_timing"] = machine_load()
    return {**row, **measured_fields(tuning, *variants)}


def build_variants(program: Program, cfg: RunConfig, tuning: Tuning, work: Path) -> list[Variant]:
    """The original, the written file swapped in, and Polly, each built in its own copy of the suite."""
    original = build_variant(program, "original", work / "original", dataset=cfg.dataset, limits=cfg.limits)
    if tuning.tuned_text is None:
        tuned = Variant("tuned", status="skipped", reason="perfembed wrote no file: the program stays the original")
    else:
        tuned = build_variant(program, "tuned", work / "tuned", dataset=cfg.dataset, limits=cfg.limits,
                              replacement=tuning.tuned_text)
    if cfg.polly_skip is not None:
        polly = Variant("polly", status="skipped", reason=cfg.polly_skip)
    else:
        polly = build_variant(program, "polly", work / "polly", dataset=cfg.dataset, limits=cfg.limits, cc=POLLY_CC,
                              cflags=POLLY_FLAGS)
    return [original, tuned, polly]


def nest_fields(tuning: Tuning, function: str) -> dict[str, Any]:
    """From suggest's JSON: nests accepted, nests of the function, regions refused, each nest's figure."""
    result = tuning.result or {}
    nests = result.get("nests") or []
    refused = [r for r in result.get("rejected") or [] if r.get("function") in (None, function)]
    figures = []
    for nest in nests:
        best = nest.get("best") or {}
        figures.append({"nest": nest.get("name"), "accepted": bool(nest.get("accepted")),
                        "speedup": best.get("speedup"), "interval": best.get("interval"),
                        "recipe": best.get("recipe_text"), "text": best.get("text")})
    return {"nests": {"accepted": sum(f["accepted"] for f in figures), "total": len(nests), "refused": len(refused),
                      "refused_reasons": [str(r.get("reason") or r.get("message") or r)[:200] for r in refused]},
            "nest_speedups": figures, "suggest_program": result.get("program")}


def measured_fields(tuning: Tuning, original: Variant, tuned: Variant, polly: Variant) -> dict[str, Any]:
    """The variants' times, the speedups (tuned vs gcc, tuned vs Polly, Polly vs gcc), status and reason."""
    unchanged = tuning.tuned_text is None
    user = original if unchanged else tuned  # what the user's program is after perfembed
    vs_gcc = paired_ratio(original, tuned)
    if unchanged and original.active:
        vs_gcc = {"ratio": 1.0, "low": 1.0, "high": 1.0, "unchanged": True, "text": "1.00x (unchanged)"}
    status, reason = row_status(tuning, original, tuned)
    return {"status": status, "reason": reason,
            "variants": {v.name: v.summary() for v in (original, tuned, polly)},
            "speedup": {"vs_gcc": vs_gcc, "vs_polly": paired_ratio(polly, user),
                        "polly_vs_gcc": paired_ratio(original, polly)}}


def row_status(tuning: Tuning, original: Variant, tuned: Variant) -> tuple[str, str]:
    """``tuned``, ``not-tuned`` (perfembed's reason), ``build-failed``, ``wrong-output`` or ``failed``."""
    if tuning.status == "build-failed":
        return "build-failed", tuning.reason
    if not original.active:
        return ("build-failed" if original.status == "build-failed" else "failed"), f"original: {original.reason}"
    if tuned.status == "wrong-output":
        return "wrong-output", f"the written file: {tuned.reason}"
    if tuned.status in ("build-failed", "failed"):
        return "failed", f"the written file {tuned.status}: {tuned.reason}"
    if tuning.tuned_text is not None:
        return "tuned", tuning.reason
    return ("failed" if tuning.status == "error" else "not-tuned"), tuning.reason


def with_p(program: Program, cfg: RunConfig, suggest_p: SuggestFn) -> dict[str, Any]:
    """The ``-p BUILD_DIR`` form on ``program``: its outcome and whether it tuned."""
    progress(NAME, f"{program.name}: cmake + perfembed suggest -p BUILD_DIR")
    try:
        params = dataset_params(program, cfg.dataset)
    except ValueError as exc:
        return {"program": program.name, "status": "failed", "reason": str(exc), "tuned": False}
    with tempfile.TemporaryDirectory(prefix="perfembed-programs-p-") as tmp:
        tuning = suggest_p(program, cfg.request(params, Path(tmp)))
    progress(NAME, f"{program.name} (-p): {tuning.status}: {tuning.reason}")
    return {"program": program.name, **tuning.to_dict(), "tuned": tuning.tuned_text is not None,
            **nest_fields(tuning, program.function)}


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = UsageParser(prog="perfembed bench programs", description=__doc__,
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--programs", type=lambda t: [p for p in t.split(",") if p], default=None,
                        help="comma-separated program names (default: the whole suite)")
    parser.add_argument("--dataset", choices=DATASETS, default="MEDIUM", help="dataset size (default MEDIUM)")
    parser.add_argument("--k", type=int, default=5, help="neighbours perfembed suggest adapts (default 5)")
    parser.add_argument("--threads", type=int, default=0, help="threads of every run (default: every core)")
    parser.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds (default 5)")
    parser.add_argument("--no-polly", action="store_true", help="leave Polly out")
    parser.add_argument("--suggest-timeout", type=int, default=int(SUGGEST_TIMEOUT_S), metavar="S",
                        help=f"stop a program's suggest after S seconds (default {SUGGEST_TIMEOUT_S:.0f})")
    parser.add_argument("--with-p", default=None, metavar="PROG",
                        help="also run the -p BUILD_DIR form on PROG (default: the first program; none: skip)")
    parser.add_argument("--out", type=Path, default=None,
                        help="folder of programs.json/.md (default DATA_DIR/programs)")
    parser.add_argument("--report", type=Path, default=None, help="also write the markdown report here")
    parser.add_argument("--render", type=Path, default=None, metavar="JSON",
                        help="run nothing: render an earlier result (programs.json) as text, or to --report")
    args = parser.parse_args(argv)
    check_at_least(parser, args, ("k", 1), ("threads", 0), ("rounds", 1), ("suggest_timeout", 1))
    try:
        args.selected = select_programs(load_suite(), args.programs)
    except ValueError as exc:
        parser.error(str(exc))
    if args.with_p not in (None, "none") and args.with_p not in {p.name for p in args.selected}:
        parser.error(f"--with-p {args.with_p}: not among the programs run")
    return args


def run_benchmark(args: argparse.Namespace, settings: Settings, suggest: SuggestFn = cli_suggest,
                  suggest_p: SuggestFn = cli_suggest_p) -> dict[str, Any]:
    """Every selected program's row, the ``-p`` check, the summary; written to OUT (and ``--report``).
    With ``--render``, the earlier result instead (its summary computed again), written to ``--report``."""
    if args.render is not None:
        return render_earlier(args.render, args.report)
    limits = Limits.from_settings(settings)
    polly_skip = "--no-polly" if args.no_polly else polly_problem(POLLY_CC, POLLY_FLAGS, limits)
    cfg = RunConfig(args.dataset, args.k, args.threads or os.cpu_count() or 1, args.rounds, limits, polly_skip,
                    args.suggest_timeout)
    out_dir = (args.out or settings.data_dir / NAME).resolve()
    out_dir.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "benchmark": NAME, "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "machine": machine(),
        "load_before": machine_load(),
        "config": {"dataset": cfg.dataset, "k": cfg.k, "threads": cfg.threads, "rounds": cfg.rounds,
                   "suggest_timeout_s": cfg.suggest_timeout_s,
                   "gcc": f"{GCC} {GCC_FLAGS}", "polly": f"{POLLY_CC} {POLLY_FLAGS}", "polly_skipped": polly_skip,
                   "programs": [p.name for p in args.selected], "out": str(out_dir), "commit": git_commit()}}
    start = time.perf_counter()
    report["programs"] = [measure_program(p, cfg, suggest) for p in args.selected]
    p_name = args.with_p or (args.selected[0].name if args.selected else "none")
    if p_name != "none":
        report["with_p"] = with_p(next(p for p in args.selected if p.name == p_name), cfg, suggest_p)
    report = finish_report(report, out_dir, start, summarize, render_markdown)
    if args.report is not None:
        args.report.parent.mkdir(parents=True, exist_ok=True)
        args.report.write_text(render_markdown(report))
    return report


def render_earlier(result: Path, markdown: Path | None) -> dict[str, Any]:
    """An earlier result (``programs.json``), its summary computed again, rendered to ``markdown`` if given."""
    report: dict[str, Any] = json.loads(result.read_text())
    report["summary"] = summarize(report)
    if markdown is not None:
        markdown.write_text(render_markdown(report))
    return report


def git_commit() -> str | None:
    """The checkout's commit (``+ changes`` when its tracked files differ from it); None outside a checkout."""
    root = Path(__file__).resolve().parents[1]
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=root, capture_output=True, text=True,
                              timeout=30, check=True).stdout.strip()
        dirty = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", "loopnest", "service", "autotune",
                                "database", "embeddings"], cwd=root, timeout=30, check=False).returncode != 0
    except (OSError, subprocess.SubprocessError):
        return None
    return head + (" + uncommitted changes" if dirty else "")


def main(argv: list[str] | None = None) -> int:
    return run_main(argv, parse_args, run_benchmark, render_text, missing_figures)


if __name__ == "__main__":
    exit_after(main)
