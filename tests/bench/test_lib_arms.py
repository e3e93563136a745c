"""The library columns of the peak and sparse benchmarks (issue 63): numpy (OpenBLAS) and Intel MKL.

Cheap checks of the column logic: MKL missing gives a column that says why (never a crash, never an
incomplete run); a library arm runs in a fresh process with its own threads and its outputs are
verified (MKL's against scipy's too); the reports' headline and targets against MKL and the best BLAS.
Only the tests marked so load MKL (in a child process), and they are skipped without the ``mkl`` extra.
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import scipy.sparse

from benchmarks import lib_arms, mkl
from benchmarks.lib_arms import LibArm, arm_environment, lib_variant
from benchmarks.peak import kernel_scop
from benchmarks.peak_kernels import select
from benchmarks.peak_measure import KernelRun, Variant, dump_outputs, working_limits
from benchmarks.peak_report import summarize as peak_summary
from benchmarks.sparse import case_row, check_against
from benchmarks.sparse_cases import BUILDERS, KERNELS, MATRICES, QUICK, make_cases
from benchmarks.sparse_report import headline, missing_figures, summarize
from loopnest.harness import Limits, array_layouts, verify_outputs

needs_mkl = pytest.mark.skipif(mkl.mkl_problem() is not None, reason=f"MKL: {mkl.mkl_problem()}")


def gemm_run(tmp_path: Path, reps: int = 1) -> tuple[KernelRun, dict[str, np.ndarray]]:
    kernel = select(["gemm"])[0]
    params = {"ni": 40, "nj": 30, "nk": 20}
    scop = kernel_scop(kernel)
    run = KernelRun(scop, params, array_layouts(scop, params), tmp_path, working_limits(Limits(), 256), threads=2,
                    reps=reps)
    rng = np.random.default_rng(1)
    inputs = {"A": rng.random((40, 20)), "B": rng.random((20, 30)), "C": rng.random((40, 30)),
              "alpha": np.array(1.5)}
    return run, inputs


def expected_gemm(run: KernelRun, inputs: dict[str, np.ndarray]) -> Path:
    want = {**inputs, "C": inputs["C"] + inputs["alpha"] * (inputs["A"] @ inputs["B"])}
    dump_outputs(want, run.layouts, run.workdir / "want.out")
    return run.workdir / "want.out"


def test_mkl_missing_is_a_column_that_says_why(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def absent(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    with monkeypatch.context() as patch:
        patch.setattr(importlib.metadata, "version", absent)
        assert mkl.mkl_problem() == "not installed (mkl, sparse_dot_mkl missing): pip install -e '.[mkl]'"
    monkeypatch.setattr(mkl, "find_mkl_rt", lambda: None)
    monkeypatch.setattr(mkl, "_installed", lambda name: True)
    reason = mkl.mkl_problem()
    assert reason is not None and "libmkl_rt.so.*" in reason
    monkeypatch.setattr(lib_arms, "mkl_problem", lambda: reason)
    run, inputs = gemm_run(tmp_path)
    variant, call = lib_variant(run, inputs, LibArm("mkl", "mkl", "peak:gemm"), threads=2)
    assert call is None and variant.status == "not available" and variant.message == reason
    # In the sparse report: the column shows it, the run stays complete, MKL's targets are not measured.
    case = make_cases(KERNELS[1:2], MATRICES[:1], QUICK, tmp_path)[0]
    gcc, twin = Variant("gcc", times=[0.01, 0.01]), Variant("scipy", times=[0.02, 0.02])
    tuning: dict[str, Any] = {"transfer": {"status": "skipped"}, "autotune": {"status": "not kept", "recipe": None}}
    row = case_row(case, 20000, tuning, gcc=gcc, found=[], twin=twin, threads=2, mkl=variant)
    report: dict[str, Any] = {"config": {"threads": 2}, "cases": [row]}
    report["summary"] = summarize(report)
    assert row["mkl"]["status"] == "not available" and not missing_figures(report)
    assert {t["status"] for name, t in report["summary"]["targets"].items() if "MKL" in name} == {"not measured"}
    assert headline(report) == [f"headline: no MKL figure: MKL not available: {reason}"]


def test_numpy_runs_in_a_fresh_process_with_its_own_threads_and_is_verified(tmp_path: Path) -> None:
    run, inputs = gemm_run(tmp_path, reps=3)
    variant, call = lib_variant(run, inputs, LibArm("numpy", "numpy", "peak:gemm"), threads=2)
    assert call is not None
    call()
    call()
    assert variant.status == "ok" and len(variant.times) == 2 and min(variant.times) > 0
    assert variant.info["blas"][0]["num_threads"] == 2  # OPENBLAS_NUM_THREADS of its own process
    check = verify_outputs(expected_gemm(run, inputs), run.out("numpy"), run.layouts, reorders_reduction=True)
    assert check.verified
    env = arm_environment("numpy", 3, base={"MKL_NUM_THREADS": "8", "OMP_NUM_THREADS": "8", "HOME": "/h"})
    assert env["OPENBLAS_NUM_THREADS"] == env["OMP_NUM_THREADS"] == "3" and "MKL_NUM_THREADS" not in env
    assert env["HOME"] == "/h" and env["PYTHONPATH"].split(":")[0] == str(lib_arms.ROOT)


def test_a_failing_arm_is_a_failed_figure_with_its_error(tmp_path: Path) -> None:
    run, inputs = gemm_run(tmp_path)
    variant, call = lib_variant(run, inputs, LibArm("numpy", "numpy", "peak:no-such-kernel"), threads=1)
    assert call is not None
    call()
    assert variant.status == "failed" and "no-such-kernel" in variant.message and not variant.times


@needs_mkl
def test_mkl_dgemm_column_in_a_fresh_process(tmp_path: Path) -> None:
    run, inputs = gemm_run(tmp_path)
    variant, call = lib_variant(run, inputs, LibArm("mkl", "mkl", "peak:gemm"), threads=2)
    assert call is not None and mkl.mkl_environment(2)["MKL_NUM_THREADS"] == "2"
    call()
    assert variant.status == "ok" and variant.info["version"].startswith("Intel") and variant.info["mkl_max_threads"]
    assert verify_outputs(expected_gemm(run, inputs), run.out("mkl"), run.layouts, reorders_reduction=True).verified


def sparse_run(tmp_path: Path, k: int) -> tuple[KernelRun, dict[str, np.ndarray], scipy.sparse.csr_array]:
    case = make_cases([next(kn for kn in KERNELS if kn.dense_cols == k)], [m for m in MATRICES if m.name == "fem3d"],
                      QUICK, tmp_path)[0]
    scop = kernel_scop(case)
    run = KernelRun(scop, case.params, array_layouts(scop, case.params), tmp_path, working_limits(Limits(), 256),
                    threads=2)
    matrix = BUILDERS["fem3d"][0](QUICK)
    n, rng = matrix.shape[0], np.random.default_rng(2)
    inputs = {"rowptr": matrix.indptr.astype(np.int32), "col": matrix.indices.astype(np.int32), "val": matrix.data,
              "B": rng.random((n, k)), "C": rng.random((n, k))}
    return run, inputs, matrix


@needs_mkl
def test_mkl_spmm_is_verified_against_scipy_and_a_difference_marks_it_wrong(tmp_path: Path) -> None:
    run, inputs, matrix = sparse_run(tmp_path, 16)
    variant, call = lib_variant(run, inputs, LibArm("mkl", "mkl", "sparse:spmm"), threads=2)
    assert call is not None
    call()
    assert variant.status == "ok" and "mkl_sparse_optimize" in variant.info["api"]
    scipy_twin = Variant("scipy", times=[1.0])
    dump_outputs({"C": inputs["C"] + matrix @ inputs["B"]}, run.layouts, run.out("scipy"))
    check_against(run, scipy_twin, variant)
    assert variant.status == "ok" and variant.info["against_scipy"]["verified"] is True
    dump_outputs({"C": inputs["C"] + 1.001 * (matrix @ inputs["B"])}, run.layouts, run.out("scipy"))
    check_against(run, scipy_twin, variant)
    assert variant.status == "wrong-output" and "differs from scipy's" in variant.message


def _fig(rate: float) -> dict[str, Any]:
    return {"status": "ok", "verified": True, "rate": rate, "times_s": [1.0 / rate] * 3}


def test_the_sparse_headline_and_targets_against_mkl() -> None:
    def row(kernel: str, matrix: str, transfer: float) -> dict[str, Any]:
        return {"case": f"{kernel}-{matrix}", "kernel": kernel, "matrix": matrix, "tuning": {},
                "transfer": _fig(transfer), "mkl": _fig(1.0)}

    rows = [row("spmm4", "a", 1.2), row("spmm16", "a", 1.3), row("spmm64", "a", 0.9), row("spmm256", "a", 1.1),
            row("spmv", "a", 0.95)]
    report: dict[str, Any] = {"config": {"threads": 2}, "cases": rows}
    report["summary"] = summarize(report)
    targets = report["summary"]["targets"]
    spmm = next(t for name, t in targets.items() if name.startswith("SpMM by transfer ahead of MKL"))
    assert spmm["status"] == "met" and spmm["per_matrix"] == {"a": {"ahead": 3, "widths": 4}}
    assert targets["SpMV by transfer within 10% of MKL"]["status"] == "met"
    lines = headline(report)
    assert lines[0].startswith("headline: SpMM by transfer against MKL (2 threads each): geomean 1.11x, ahead in "
                               "3 of 4; per case: spmm4-a 1.20x")
    assert lines[1].startswith("headline: SpMV by transfer against MKL (2 threads each): geomean 0.95x")
    rows[1]["transfer"] = _fig(0.8)  # two widths of four behind: missed
    report["summary"] = summarize(report)
    spmm = next(t for name, t in report["summary"]["targets"].items() if name.startswith("SpMM by transfer"))
    assert spmm["status"] == "missed" and spmm["matrices_short"] == ["a"]


def test_gemm_is_a_share_of_the_better_blas() -> None:
    row: dict[str, Any] = {"kernel": "gemm", "kind": "dense", "gcc": _fig(2.0), "polly": _fig(10.0),
                           "perfembed": _fig(60.0), "numpy": _fig(90.0), "mkl": _fig(100.0)}
    summary = peak_summary({"kernels": [row]})
    assert summary["ratios"]["gemm"]["perfembed/blas"] == pytest.approx(0.6) and summary["best_blas"]["gemm"] == "mkl"
    assert summary["targets"]["gemm at least 60% of the best BLAS"]["status"] == "met"
    row["mkl"] = {"status": "not available", "message": "not installed", "rate": None}
    summary = peak_summary({"kernels": [row]})
    assert summary["best_blas"]["gemm"] == "numpy" and summary["complete"] is True


def test_the_suitesparse_stand_ins_are_written_as_matrix_market_files(tmp_path: Path) -> None:
    names = ["poisson3d", "fem3d", "delaunay"]
    cases = make_cases(KERNELS[:1], [m for m in MATRICES if m.name in names], QUICK, tmp_path)
    sizes = {c.matrix.name: (c.params["n"], c.params["nnz"]) for c in cases}
    assert sizes == {"poisson3d": (512, 3200), "fem3d": (192, 9000), "delaunay": (1000, 5954)}
    for case in cases:
        assert case.args == ("--matrix", str(tmp_path / f"{case.matrix.name}.mtx"))
        assert (tmp_path / f"{case.matrix.name}.mtx").read_text().startswith("%%MatrixMarket matrix coordinate real "
                                                                              "symmetric")


def test_the_readme_rows_come_from_the_result_file() -> None:
    from benchmarks import peak_report, sparse_report  # noqa: PLC0415

    frame = {"config": {"threads": 2}, "load_before": {"loadavg": [0.5]}, "load_after": {"loadavg": [1.0]}}
    gemm = {"kernel": "gemm", "kind": "dense", "gcc": _fig(2.0), "polly": _fig(10.0), "perfembed": _fig(60.0),
            "numpy": _fig(90.0), "mkl": _fig(100.0)}
    (row,) = peak_report.readme_rows({**frame, "kernels": [gemm]})
    assert row["figure"] == "gemm at 60% of the best BLAS (MKL); 6.00x over Polly (1 dense kernel)"
    assert row["conditions"] == "2 threads, load 0.5-1.0"
    spmm = {"case": "spmm4-a", "kernel": "spmm4", "matrix": "a", "tuning": {}, "transfer": _fig(1.2), "mkl": _fig(1.0)}
    (row,) = sparse_report.readme_rows({**frame, "cases": [spmm]})
    assert row["figure"] == "SpMM 1.20x of MKL, ahead in 1 of 1"
