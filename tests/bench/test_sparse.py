"""The sparse benchmark (benchmarks/sparse.py) as a user runs it: ``perfembed bench sparse --quick --json``.

A real but tiny run: SpMV and SpMM (16 columns) on a generated powerlaw matrix and on the 2-D Poisson
matrix that the benchmark writes as a Matrix Market file and runs through ``--matrix``; two interleaved
rounds, two autotuning trials, no seed. Nothing here is timed; the checks are that every figure is a
verified measurement on the very matrix perfembed tuned on, and that the report says what it holds.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import scipy.io

from benchmarks.peak_measure import Variant
from benchmarks.peak_tuning import TuneConfig, cache_key
from benchmarks.sparse import case_row, parse_args
from benchmarks.sparse_cases import KERNELS, MATRICES, QUICK, make_cases
from benchmarks.sparse_report import complete, paired_ratio, summarize, tables

ROOT = Path(__file__).resolve().parents[2]
KERNEL_NAMES, MATRIX_NAMES = ["spmv", "spmm16"], ["powerlaw", "poisson2d"]
ROUNDS = 2


def run_sparse(out: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PERFEMBED_DATA_DIR": str(out / "data")}
    env.pop("PERFEMBED_DATABASE_URL", None)
    return subprocess.run([sys.executable, "-m", "service.cli", "bench", "sparse", *args], capture_output=True,
                          text=True, timeout=600, check=False, cwd=out, env=env)


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, subprocess.CompletedProcess[str], dict[str, Any]]:
    out = tmp_path_factory.mktemp("sparse")
    proc = run_sparse(out, "--quick", "--json", "--kernels", ",".join(KERNEL_NAMES), "--matrices",
                      ",".join(MATRIX_NAMES), "--out", str(out))
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out, proc, json.loads(proc.stdout)


def test_stdout_is_one_json_object_and_the_files_match(quick: tuple) -> None:
    out, proc, report = quick
    assert proc.stdout.count("\n") == 1 and proc.stdout.endswith("}\n")
    assert "[sparse] spmv-powerlaw: measuring" in proc.stderr  # progress on stderr
    assert json.loads((out / "sparse.json").read_text()) == json.loads(json.dumps(report))
    markdown = (out / "sparse.md").read_text()
    assert "| spmm16 | poisson2d | 900 | 4380 |" in markdown and "scipy.sparse single-threaded" in markdown
    assert [r["case"] for r in report["cases"]] == [f"{k}-{m}" for m in MATRIX_NAMES for k in KERNEL_NAMES]
    config = report["config"]
    assert config["quick"] and config["rounds"] == ROUNDS and config["reps"] == 1
    assert config["threads"] == os.cpu_count() and config["gcc"].startswith("gcc -O3")


def test_every_figure_is_a_verified_measurement(quick: tuple) -> None:
    _, _, report = quick
    for row in report["cases"]:
        for name in ("gcc", "autotune", "perfembed", "scipy"):
            fig = row[name]
            assert fig["verified"] is True and fig["status"] == "ok", (row["case"], name, fig)
            assert len(fig["times_s"]) == ROUNDS and min(fig["times_s"]) > 0
            assert fig["rate"] == pytest.approx(row["work"] / statistics.median(fig["times_s"]) / 1e9)
            assert fig["rate_low"] <= fig["rate"] <= fig["rate_high"]
        k = row["params"].get("k", 1)
        assert row["work"] == 2 * row["nnz"] * k and row["unit"] == "GFLOP/s"
        assert row["scipy"]["threads"] == 1 and "single-threaded" in row["scipy"]["note"]
        assert row["transfer"]["status"] == "skipped"  # --quick loads no seed
        tuning = row["tuning"]
        assert tuning["autotune"]["status"] in ("confirmed", "not kept") and tuning["autotune"]["evaluated"] >= 1
        assert tuning["extra"] == row["perfembed_args"]  # perfembed tuned on the measured structure
        if tuning["autotune"]["status"] == "not kept":  # the original's figure is the baseline's
            assert row["autotune"]["role"] == "original" and row["autotune"]["times_s"] == row["gcc"]["times_s"]
    summary = report["summary"]
    assert summary["complete"] is True
    spmm = summary["targets"]["SpMM ahead of scipy.sparse"]
    assert set(spmm["cases"]) == {"spmm16-powerlaw", "spmm16-poisson2d"} and spmm["status"] in ("met", "missed")
    assert summary["targets"]["transfer within 10% of autotuning"]["status"] == "not measured"


def test_structures_are_the_generated_pattern_and_the_matrix_market_file(quick: tuple) -> None:
    out, _, report = quick
    rows = {r["case"]: r for r in report["cases"]}
    powerlaw = rows["spmv-powerlaw"]
    assert powerlaw["perfembed_args"] == ["--sparsity", "powerlaw", "--density", "0.02"]
    assert powerlaw["nnz"] == powerlaw["params"]["nnz"] == 20000  # 1000 rows of 20 entries on average
    matrix = scipy.io.mmread(out / "poisson2d.mtx")
    assert matrix.shape == (900, 900) and matrix.nnz == 4380 and matrix.diagonal().tolist() == [4.0] * 900
    poisson = rows["spmv-poisson2d"]
    assert poisson["perfembed_args"] == ["--matrix", str(out / "poisson2d.mtx")]
    assert poisson["nnz"] == 4380 and poisson["params"] == {"n": 900, "m": 900, "nnz": 4380}


def test_a_wrong_or_missing_figure_makes_the_run_incomplete(quick: tuple) -> None:
    _, _, report = quick
    wrong = json.loads(json.dumps(report))
    wrong["cases"][0]["scipy"]["verified"] = False
    failed = json.loads(json.dumps(report))
    failed["cases"][1]["autotune"] = {"status": "failed", "message": "perfembed tune exited 1", "rate": None}
    for bad in (wrong, failed):
        assert not complete(bad) and summarize(bad)["complete"] is False


def test_a_recipe_that_changes_nothing_gets_the_originals_figure_and_a_refused_one_none(tmp_path: Path) -> None:
    # Transfer accepted a recipe whose code is the original's (a timing fluke under load): its figure is
    # the baseline's, not a second noisy measurement of the same code. A recipe refused at the
    # benchmark's sizes has no figure, and the run is incomplete.
    case = make_cases(KERNELS[1:2], MATRICES[:1], QUICK, tmp_path)[0]
    gcc, twin = Variant("gcc", times=[0.010, 0.012]), Variant("scipy", times=[0.02, 0.03])
    recipe = {"steps": [{"op": "fuse", "loop": 1}]}
    same = Variant("perfembed:transfer", info={"source": "transfer", "recipe": recipe, "same_code": True})
    tuning: dict[str, Any] = {"transfer": {"status": "accepted", "recipe": recipe},
                              "autotune": {"status": "not kept", "recipe": None}}
    row = case_row(case, 20000, tuning, gcc=gcc, found=[same], twin=twin, threads=2)
    report: dict[str, Any] = {"config": {"rounds": 2, "reps": 1, "threads": 2, "placement": "unpinned"}, "cases": [row]}
    report["summary"] = summarize(report)
    assert row["transfer"]["times_s"] == row["gcc"]["times_s"] and row["transfer"]["recipe"] == recipe
    assert report["summary"]["ratios"][case.name]["transfer/autotune"] == pytest.approx(1.0)
    ((_title, _header, rows),) = tables(report)
    assert complete(report) and rows[0][-2] == "fuse loop=1 (same code as the original)"
    refused = Variant("perfembed:transfer", info={"source": "transfer", "recipe": recipe})
    refused.fail("refused", "tile: loop 1 has bounds read from data")
    row = case_row(case, 20000, tuning, gcc=gcc, found=[refused], twin=twin, threads=2)
    assert row["transfer"]["status"] == "refused" and "rate" not in row["transfer"]
    assert not complete({"cases": [row]})


def test_transfer_against_autotuning_is_paired_round_by_round() -> None:
    """Issue #15: the per-case verdict divided two medians taken over different rounds; each round times
    both, so the figure is the geometric mean of the rounds' ratios, with its interval."""
    def figure(times: list[float]) -> dict[str, Any]:
        return {"status": "ok", "verified": True, "times_s": times, "rate": 1.0 / statistics.median(times)}

    # Two rounds as fast, three where transfer took 1.25x as long: medians say 0.80x, the rounds 0.87x.
    row = {"case": "spmv-x", "kernel": "spmv", "tuning": {}, "autotune": figure([1.0] * 5),
           "transfer": figure([1.0, 1.0, 1.25, 1.25, 1.25])}
    paired = paired_ratio(row, "transfer", "autotune")
    assert paired is not None and paired["ratio"] == pytest.approx(0.8 ** 0.6)
    assert paired["low"] == pytest.approx(0.8) and paired["high"] <= 1.0
    summary = summarize({"cases": [row]})
    target = summary["targets"]["transfer within 10% of autotuning"]
    assert summary["ratios"]["spmv-x"]["transfer/autotune"] == pytest.approx(0.8 ** 0.6)
    assert target["missed_by"] == ["spmv-x"] and target["below_with_confidence"] == []
    # Rounds that do not line up (a variant missing from one) give no paired figure.
    row["transfer"] = figure([1.0, 1.0, 1.25, 1.25])
    assert paired_ratio(row, "transfer", "autotune") is None


def test_the_matrix_file_counts_by_its_contents_in_the_tuning_cache(tmp_path: Path) -> None:
    class Nest:
        name, file, function = "spmv-poisson2d", "benchmarks/sparse_kernels.c", "spmv_csr"

    config, path = TuneConfig(trials=2, threads=1, transfer=False), tmp_path / "a.mtx"
    path.write_text("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1.0\n")
    first = cache_key(Nest(), {"n": 1}, config, "code", ("--matrix", str(path)))
    path.write_text("%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 2.0\n")
    assert cache_key(Nest(), {"n": 1}, config, "code", ("--matrix", str(path))) != first
    assert cache_key(Nest(), {"n": 1}, config, "code") != first


def test_usage_errors_are_one_line_with_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    proc = run_sparse(tmp_path, "--matrices", "diagonal")  # through perfembed bench sparse
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr == ("benchmarks/sparse.py: unknown matrix(es) diagonal; choose from "
                           + ", ".join(m.name for m in MATRICES) + "\n")
    for args, message in [(["--kernels", "spmm32"], "unknown kernel(s) spmm32; choose from "
                           + ", ".join(k.name for k in KERNELS)),
                          (["--reps", "0"], "--reps must be at least 1")]:
        with pytest.raises(SystemExit) as exit_:
            parse_args(args)
        assert exit_.value.code == 2 and capsys.readouterr().err == f"benchmarks/sparse.py: {message}\n"
