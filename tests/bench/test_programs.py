"""The program benchmark (benchmarks/programs_bench.py) past perfembed's tuning, for real on mvpair at SMALL.

Only the tuning step is given: ``measure_program`` takes the suggest step as a parameter, and these
tests pass one that returns a fixed file and suggest-shaped JSON at once. Everything after it is the
benchmark's own: the program's Makefile builds the original, the written file and (where clang-16 can)
Polly in scratch copies, the runs are interleaved and their checksums compared, and the report row is
rendered. A copy of the suite whose original does not compile gives a failed-build row, not a crash.
mvpair rather than gemm: Polly's matrix-multiplication pattern alone takes 20-45 s to compile gemm.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from benchmarks.polly import polly_problem
from benchmarks.programs_bench import RunConfig, measure_program, parse_args, render_earlier
from benchmarks.programs_report import missing_figures, render_markdown, render_text, summarize
from benchmarks.programs_suite import (
    SUITE,
    Program,
    SuggestRequest,
    Tuning,
    dataset_params,
    failed_suggest,
    run_suggest,
)
from loopnest.harness import Limits
from service.commands.bench import bench_app

MVPAIR = Program.load(SUITE / "mvpair")
ROUNDS = 3


def fake_suggest(text: str | None, status: str = "tuned") -> tuple[list[SuggestRequest], Any]:
    """A suggest step that writes ``text`` (None: nothing) with suggest's JSON, and the requests it got."""
    calls: list[SuggestRequest] = []

    def suggest(program: Program, request: SuggestRequest) -> Tuning:
        calls.append(request)
        result = {"nests": [{"name": "mvpair.c#0", "accepted": True,
                             "best": {"speedup": 3.0, "interval": [2.5, 3.5], "recipe_text": "interchange"}}],
                  "rejected": [{"function": program.function, "reason": "a refused loop"}],
                  "outcome": {"status": status, "reason": f"{status} (given)", "written": "x"}}
        return Tuning(status, f"{status} (given)", text, result)
    return calls, suggest


def config(*, polly: bool, rounds: int = ROUNDS) -> RunConfig:
    # No timing lock: nothing here is a figure, and the machine's other timed runs would only make it wait.
    limits = dataclasses.replace(Limits.configured(), timing_lock="none")
    skip = polly_problem(limits=limits) if polly else "--no-polly"
    return RunConfig("SMALL", 5, 2, rounds, limits, skip)


def report_of(*rows: dict[str, Any]) -> dict[str, Any]:
    report = {"benchmark": "programs", "config": {"dataset": "SMALL", "threads": 2, "rounds": ROUNDS, "k": 5,
                                                  "gcc": "gcc", "polly": "clang-16", "polly_skipped": None},
              "machine": {"cpu": "test", "cores": 2}, "programs": list(rows)}
    report["summary"] = summarize(report)
    return report


@pytest.fixture(scope="module")
def tuned_row() -> tuple[list[SuggestRequest], dict[str, Any], RunConfig]:
    original = MVPAIR.kernel_path.read_text()
    calls, suggest = fake_suggest(original + "\n/* tuned by a test */\n")
    cfg = config(polly=True)
    return calls, measure_program(MVPAIR, cfg, suggest=suggest), cfg


def test_the_written_file_is_built_checked_and_timed_against_the_original(tuned_row: tuple) -> None:
    calls, row, cfg = tuned_row
    assert calls[0].params == dataset_params(MVPAIR, "SMALL") == {"m": 90, "n": 110}
    assert row["status"] == "tuned", row
    original, tuned, polly = (row["variants"][k] for k in ("original", "tuned", "polly"))
    assert original["status"] == tuned["status"] == "ok"
    assert tuned["checksum"] == original["checksum"] and original["checksum"]
    assert original["runs"] == tuned["runs"] == ROUNDS and original["median_kernel_seconds"] is not None
    speed = row["speedup"]["vs_gcc"]
    assert speed["pairs"] == ROUNDS and speed["low"] <= speed["ratio"] <= speed["high"]
    assert row["nests"] == {"accepted": 1, "total": 1, "refused": 1, "refused_reasons": ["a refused loop"]}
    if cfg.polly_skip is None:
        assert polly["status"] == "ok" and polly["checksum"] == original["checksum"]
        assert row["speedup"]["vs_polly"]["pairs"] == ROUNDS
    else:
        assert polly["status"] == "skipped" and row["speedup"]["vs_polly"] is None


def test_the_report_row_and_geomean(tuned_row: tuple) -> None:
    _, row, _ = tuned_row
    report = report_of(row)
    text, markdown = render_text(report), render_markdown(report)
    line = next(line for line in text.splitlines() if line.startswith("mvpair"))
    assert "tuned" in line and "1/1 (1)" in line and "#0 3.0x [2.5, 3.5]" in line
    assert f"{row['speedup']['vs_gcc']['ratio']:.2f}x" in line
    assert "| mvpair | tuned | 1/1 (1) |" in markdown and "| geomean | 1/1 tuned |" in markdown
    assert report["summary"]["geomean_vs_gcc"] == pytest.approx(row["speedup"]["vs_gcc"]["ratio"])
    assert missing_figures(report) == [] and "load average" in text


def test_a_file_that_prints_another_checksum_is_a_wrong_output_row() -> None:
    wrong = MVPAIR.kernel_path.read_text().replace("t[i] = 0.0;", "t[i] = 1.0;")
    _, suggest = fake_suggest(wrong)
    row = measure_program(MVPAIR, config(polly=False, rounds=1), suggest=suggest)
    assert row["status"] == "wrong-output" and "the original printed" in row["reason"]
    assert row["speedup"]["vs_gcc"] is None and row["variants"]["polly"]["reason"] == "--no-polly"
    assert "mvpair: wrong-output" in missing_figures(report_of(row))[0]


def test_nothing_written_counts_as_the_original() -> None:
    _, suggest = fake_suggest(None, status="not-tuned")
    row = measure_program(MVPAIR, config(polly=False, rounds=1), suggest=suggest)
    assert row["status"] == "not-tuned" and row["reason"] == "not-tuned (given)"
    assert row["speedup"]["vs_gcc"]["unchanged"] and row["variants"]["tuned"]["status"] == "skipped"


def test_an_original_that_does_not_build_is_a_row_with_the_error(tmp_path: Path) -> None:
    for part in ("common", "mvpair"):
        shutil.copytree(SUITE / part, tmp_path / part, ignore=shutil.ignore_patterns("build"))
    broken = Program.load(tmp_path / "mvpair")
    broken.kernel_path.write_text(broken.kernel_path.read_text().replace("t[i] = 0.0;", "t[i] = 0.0"))
    calls, suggest = fake_suggest(None, status="build-failed")
    row = measure_program(broken, config(polly=False, rounds=1), suggest=suggest)
    assert row["status"] == "build-failed" and calls
    assert row["variants"]["original"]["status"] == "build-failed" and row["speedup"]["vs_gcc"] is None
    report = report_of(row)
    assert "mvpair: build-failed" in missing_figures(report)[0]
    assert report["summary"]["targets"]["outcome"]["status"] == "NOT MET"
    assert "| mvpair | build-failed |" in render_markdown(report)


def test_usage_errors_name_the_program(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        parse_args(["--programs", "gemm,nosuch"])
    assert stop.value.code == 2 and "nosuch" in capsys.readouterr().err


def test_perfembed_bench_programs_passes_its_options_through(capfd: pytest.CaptureFixture[str]) -> None:
    result = CliRunner().invoke(bench_app, ["programs", "--programs", "nosuch"])
    assert result.exit_code == 2
    err = capfd.readouterr().err  # the child's stderr is this process's
    assert "unknown program(s) nosuch" in err and len(err.strip().splitlines()) == 1


def test_a_suggest_whose_original_does_not_build_reads_as_build_failed() -> None:
    message = "src/mvpair.c: the whole program does not build: src/mvpair.c:13:19: error: expected ';'"
    done = subprocess.CompletedProcess(["perfembed"], 2, json.dumps({"error": "ProgramBuildError",
                                                                     "message": message}), "")
    tuning = failed_suggest(json.loads(done.stdout), done, 1.0, ["perfembed"])
    assert tuning.status == "build-failed" and message in tuning.reason and tuning.exit_code == 2
    crashed = subprocess.CompletedProcess(["perfembed"], 1, "", "Traceback ...\nRuntimeError: boom\n")
    assert failed_suggest(None, crashed, 1.0, []).reason == "RuntimeError: boom"


def test_a_suggest_that_hangs_or_is_killed_says_so(tmp_path: Path) -> None:
    request = SuggestRequest("SMALL", {}, 5, 1, tmp_path, timeout_s=1)
    hung = run_suggest(["sleep", "30"], tmp_path / "tuned.c", request)
    assert hung.status == "error" and "no answer in 1 s" in hung.reason
    killed = run_suggest(["sh", "-c", "kill -TERM $$"], tmp_path / "tuned.c", request)
    assert killed.status == "error" and "stopped by signal 15" in killed.reason


def test_an_earlier_result_renders_again_with_its_remarks(tuned_row: tuple, tmp_path: Path) -> None:
    _, row, _ = tuned_row
    result = tmp_path / "programs.json"
    result.write_text(json.dumps({**report_of(row), "summary": None, "remarks": ["one disturbed round"]}))
    again = render_earlier(result, tmp_path / "programs.md")
    assert again["summary"] == summarize(again)
    markdown = (tmp_path / "programs.md").read_text()
    assert "## Remarks on this run\n\n- one disturbed round" in markdown and "| mvpair | tuned |" in markdown
