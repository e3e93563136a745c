"""The peak benchmark (benchmarks/peak.py) as a user runs it: ``perfembed bench peak --quick --json``.

A real but tiny run: syrk (dense, with numpy) and jacobi2d (stencil, with STREAM), two interleaved
rounds, two autotuning trials, no seed. gemm and 2mm are left out because Polly's matrix-multiplication
pattern alone takes about 20 s of CPU to compile. Nothing here is timed; the checks are that every
figure is a verified measurement and that the report and the tuning cache hold what they say.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from benchmarks.peak import kernel_row, kernel_scop, recipe_variant
from benchmarks.peak_kernels import select
from benchmarks.peak_measure import KernelRun, Variant, interleave, working_limits
from benchmarks.peak_report import complete, missing_figures, render_text, summarize, tables
from benchmarks.tuned_run import print_report
from loopnest.codegen import generate_c
from loopnest.harness import Limits, array_layouts

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ["syrk", "jacobi2d"]
ROUNDS = 2
pytestmark = pytest.mark.skipif(shutil.which("clang-16") is None,
                                reason="clang-16 (Polly) is not installed: apt-get install clang-16 libpolly-16-dev "
                                       "libomp-16-dev")


def run_peak(out: Path, *args: str, kernels: list[str] = KERNELS) -> tuple[subprocess.CompletedProcess[str],
                                                                          dict[str, Any]]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PERFEMBED_DATA_DIR": str(out / "data")}
    env.pop("PERFEMBED_DATABASE_URL", None)
    proc = subprocess.run([sys.executable, "-m", "service.cli", "bench", "peak", "--quick", "--json",
                           "--kernels", ",".join(kernels), "--out", str(out), *args],
                          capture_output=True, text=True, timeout=900, check=False, cwd=out, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc, json.loads(proc.stdout)


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str], dict[str, Any]]:
    out = tmp_path_factory.mktemp("peak")
    proc, report = run_peak(out)
    return out, proc, report


def _figures(row: dict[str, Any]) -> list[str]:
    return ["gcc", "polly", "perfembed"] + (["numpy"] if row["kind"] == "dense" else [])


def test_stdout_is_one_json_object_and_the_files_match(quick: tuple) -> None:
    out, proc, report = quick
    assert proc.stdout.count("\n") == 1 and proc.stdout.endswith("}\n")
    assert json.loads((out / "peak.json").read_text()) == json.loads(json.dumps(report))
    markdown = (out / "peak.md").read_text()
    assert all(f"| {name} |" in markdown for name in KERNELS)
    assert [row["kernel"] for row in report["kernels"]] == KERNELS
    config = report["config"]
    assert config["quick"] and config["rounds"] == ROUNDS and config["threads"] == os.cpu_count()
    assert "-mllvm -polly -mllvm -polly-parallel" in config["polly"] and config["gcc"].startswith("gcc -O3")
    assert config["form"] == "parameters" and "every C variant in the user's form" in markdown


def test_a_recipe_is_timed_in_the_users_form_as_the_drop_in_code(tmp_path: Path) -> None:
    # Reproduction: the benchmark timed recipes in the driver's static arrays while the tuner chose them in
    # the user's form; the two rank recipes differently (conv2d's tuned recipe: 36 GFLOP/s in the user's
    # form, 8 in static arrays), so the benchmark reported 6 GFLOP/s for a recipe perfembed found at 36.
    kernel = select(["gemm"])[0]
    params = kernel.params(quick=True)
    scop = kernel_scop(kernel)
    run = KernelRun(scop, params, array_layouts(scop, params), tmp_path, working_limits(Limits(), 512), threads=1)
    variant = recipe_variant(run, scop, "autotune", {"steps": [{"op": "parallelize", "loop": 0}]})
    assert variant.ok and variant.info["same_code"] is False
    source = (tmp_path / "perfembed_autotune.c").read_text()
    body = next(line for line in source.splitlines() if line.startswith("__attribute__((noinline, noipa)) void"))
    # the arrays are the function's parameters (the driver prefixes the user's names)
    assert all(f"(*perfembed_v_{name})[" in body for name in ("A", "B", "C"))
    assert "#pragma omp parallel for" in source and "__UINTPTR_TYPE__" in source  # with its overlap check


def test_every_figure_is_a_verified_measurement(quick: tuple) -> None:
    _, _, report = quick
    for row in report["kernels"]:
        assert {name for name in ("gcc", "polly", "perfembed", "numpy") if name in row} == set(_figures(row))
        for name in _figures(row):
            fig = row[name]
            assert fig["verified"] is True and fig["status"] == "ok", (row["kernel"], name, fig)
            assert len(fig["times_s"]) == ROUNDS and min(fig["times_s"]) > 0
            assert fig["rate"] == pytest.approx(row["work"] / statistics.median(fig["times_s"]) / 1e9)
            assert fig["rate_low"] <= fig["rate"] <= fig["rate_high"] and math.isfinite(fig["rate_high"])
        pe = row["perfembed"]
        if pe.get("role") == "original":  # perfembed kept the original: its figure is the baseline's
            assert pe["recipe"] is None and pe["times_s"] == row["gcc"]["times_s"]
        else:
            assert pe["name"].startswith("perfembed:") and pe["recipe"]["steps"]
    assert report["summary"]["complete"] is True


def test_polly_ran_and_numpy_used_blas_with_the_same_threads(quick: tuple) -> None:
    _, _, report = quick
    codegen = [row["polly"]["codegen"] for row in report["kernels"]]
    assert all(set(c) == {"polly_code", "packed", "parallel"} for c in codegen)
    assert any(c["polly_code"] for c in codegen)  # Polly generated code of its own: it really ran
    blas = report["kernels"][0]["numpy"]["blas"]
    assert blas and blas[0]["internal_api"]


def test_stream_and_stencil_share_of_it(quick: tuple) -> None:
    _, _, report = quick
    stream = report["stream"]
    assert stream["status"] == "ok" and stream["threads"] == os.cpu_count()
    for name in ("copy", "scale", "add", "triad"):
        k = stream["kernels"][name]
        assert 0 < k["median_gbs"] <= k["best_gbs"]
    share = report["summary"]["of_stream_copy"]["jacobi2d"]
    gcc = report["kernels"][1]["gcc"]["rate"]
    assert share["gcc"] == pytest.approx(gcc / stream["kernels"]["copy"]["best_gbs"])


def test_tuning_comes_from_perfembed_and_a_rerun_uses_the_cache(quick: tuple) -> None:
    out, _, report = quick
    for row in report["kernels"]:
        tuning = row["tuning"]
        assert tuning["cached"] is False and tuning["params"] == row["params"]
        assert tuning["transfer"]["status"] == "skipped"  # --quick loads no seed
        assert tuning["autotune"]["status"] in ("confirmed", "not kept") and tuning["autotune"]["evaluated"] >= 1
    _, again = run_peak(out, "--rounds", "1", kernels=KERNELS[:1])  # syrk alone: no STREAM, no stencil
    for first, second in zip(report["kernels"][:1], again["kernels"], strict=True):
        assert second["tuning"]["cached"] is True
        assert second["tuning"]["autotune"]["recipe"] == first["tuning"]["autotune"]["recipe"]
        assert len(second["gcc"]["times_s"]) == 1


def test_a_wrong_result_is_shown_as_wrong_and_never_counted(tmp_path: Path) -> None:
    # A "perfembed" variant whose alpha is off by 1e-4: it runs and is timed, but its outputs differ
    # from the gcc baseline's, so it is marked wrong, gets no speedup and makes the run incomplete.
    kernel = select(["gemm"])[0]
    params = kernel.params(quick=True)
    scop = kernel_scop(kernel)
    run = KernelRun(scop, params, array_layouts(scop, params), tmp_path, working_limits(Limits(), 512), threads=1)
    text = generate_c(scop)
    assert "alpha" in text
    gcc, wrong = run.build("gcc", text), run.build("perfembed:autotune", text.replace("alpha", "(alpha * 1.0001)"))
    wrong.info.update(source="autotune", recipe={"steps": [{"op": "parallelize", "loop": 0}]})
    interleave(run, [gcc, wrong], rounds=1)
    assert wrong.status == "wrong-output" and wrong.verification and not wrong.verification.verified
    assert len(wrong.times) == 1
    polly = Variant("polly")
    polly.fail("not available", "not compiled in this test")
    row = kernel_row(kernel, params, {}, gcc=gcc, polly=polly, found=[wrong], numpy=None, threads=1)
    report = {"config": {"rounds": 1, "threads": 1, "placement": "unpinned"}, "kernels": [row]}
    report["summary"] = summarize(report)
    assert row["perfembed"]["verified"] is False and report["summary"]["ratios"]["gemm"]["perfembed/gcc"] is None
    assert not complete(report)
    (_, _, rows), = tables(report)
    assert rows[0][4].endswith("WRONG")


def test_an_incomplete_run_exits_1_and_says_which_figure_on_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    # With --json, stdout is the JSON object only: stderr must say why the exit status is 1.
    failed = {"status": "failed", "message": "perfembed tune exited 1", "rate": None}
    report = {"kernels": [{"kernel": "gemm", "gcc": {"status": "ok", "rate": 10.0, "verified": True},
                           "perfembed": failed, "polly": {"status": "not available", "rate": None}}]}
    assert print_report(report, True, render_text, missing_figures) == 1
    out, err = capsys.readouterr()
    assert json.loads(out) == report
    assert err == ("incomplete: 1 figure(s) not measured or not verified: "
                   "gemm/perfembed: failed (perfembed tune exited 1)\n")
    report["kernels"][0]["perfembed"] = {"status": "ok", "rate": 12.0, "verified": True}
    assert print_report(report, True, render_text, missing_figures) == 0 and capsys.readouterr().err == ""
