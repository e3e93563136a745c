"""The NumPy kernels' benchmark (benchmarks/python_bench.py, ``perfembed bench python``), past perfembed's
tuning: given the recipes, each variant of a real kernel is built, checked against NumPy and timed, and the
report, its targets and its figure are rendered. A peer that is missing or fails is a row with its reason."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from benchmarks.python_bench import SUITE, main, measure_kernel, sizes
from benchmarks.python_report import headline, missing_figures, render_markdown, summarize, write_report
from benchmarks.python_variants import Inputs, interleave, numba_variants, relative_error
from loopnest.config import get_settings
from service.commands.bench import bench_app

NOT_TUNED = {"transfer": {"status": "nothing accepted", "recipe": None, "neighbours": ["stencil/jacobi1d_t.c#0"],
                          "distances": [0.5]},
             "autotune": {"status": "confirmed", "recipe": {"steps": [{"op": "parallelize", "loop": 0}]}}}


def test_perfembed_bench_python_passes_its_options_through(capfd: pytest.CaptureFixture[str]) -> None:
    result = CliRunner().invoke(bench_app, ["python", "--kernels", "gemm,nosuch"])
    assert result.exit_code == 2
    err = capfd.readouterr().err  # the child's stderr is this process's
    assert "unknown kernel(s) nosuch" in err and len(err.strip().splitlines()) == 1


def test_a_missing_peer_is_a_reason_not_a_crash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "numba", None)  # import numba raises ImportError
    found = numba_variants(SUITE.softmax_rows, ("i",))
    assert found == {"numba": "numba is not installed (pip install -e '.[peers]')",
                     "numba-parallel": "numba is not installed (pip install -e '.[peers]')"}


def test_outputs_are_compared_as_numpy_users_would() -> None:
    a = np.array([1.0, 2.0, np.nan])
    assert relative_error(a, a + 1e-12) < 1e-9
    assert relative_error(a, np.array([1.0, 2.0, 3.0])) == float("inf")  # a NaN where NumPy has none
    assert relative_error(a, a[:2]) == float("inf")


def _row(tmp_path: Path, name: str, tuning: dict[str, Any]) -> dict[str, Any]:
    settings = get_settings()
    return measure_kernel(name, sizes(name, 0.02), tuning, rounds=3, settings=settings)


def test_a_kernel_is_checked_and_timed_against_numpy(tmp_path: Path) -> None:
    row = _row(tmp_path, "softmax_rows", NOT_TUNED)
    variants = row["variants"]
    assert variants["numpy"]["status"] == "ok" and variants["numpy"]["speedup"] == pytest.approx(1.0, rel=0.5)
    for label in ("perfembed-untuned", "perfembed-transfer", "perfembed-autotune"):
        assert variants[label]["status"] == "ok", variants[label]
        assert variants[label]["max_rel_error"] <= 1e-6 and variants[label]["first_s"] > 0
    assert variants["perfembed-autotune"]["recipe"].startswith("parallelize")
    assert variants["perfembed-transfer"]["recipe"] == "the nest as it is"
    decision = variants["perfembed-transfer"]["write_best"]  # perfembed's own check, as --write-best runs it
    assert decision["status"] == "ok" and decision["written"] == (decision["check_speedup"] >= 1.0)
    assert row["load_before_timing"]["loadavg"] and row["load_after_timing"]["cpus"]
    assert variants["dace"]["status"] == "missing" and variants["dace"]["reason"]
    if "numba" in sys.modules or variants["numba"]["status"] != "missing":
        assert variants["numba-parallel"]["status"] == "ok", variants["numba-parallel"]
    assert row["neighbours"] == [{"name": "stencil/jacobi1d_t.c#0", "distance": 0.5}]

    report: dict[str, Any] = {"kernels": [row], "config": {"threads": 1, "scale": 0.02, "rounds": 3,
                                                           "tuning": {"trials": 40}},
                              "machine": {"cpu": "test", "cores": 2}, "load_before": {}, "seconds": 1.0}
    report["summary"] = summarize(report)
    assert not missing_figures(report)
    assert report["summary"]["targets"]["correct"]["status"] == "MET"
    text = render_markdown(report)
    assert "| softmax_rows |" in text and "Cross-language transfer" in text and "jacobi1d_t.c#0 (0.50)" in text
    markdown, figure = write_report(report, tmp_path / "python.md")
    assert figure.stat().st_size > 0 and f"]({figure.name})" in markdown.read_text()
    assert json.loads((tmp_path / "python.json").read_text())["kernels"][0]["kernel"] == "softmax_rows"
    assert main(["--render", str(tmp_path / "python.json"), "--report", str(tmp_path / "again.md")]) == 0
    assert (tmp_path / "again.md").read_text() == markdown.read_text().replace("python.png", "again.png")


def test_a_failed_tuning_step_is_a_row_with_its_reason(tmp_path: Path) -> None:
    failed = {**NOT_TUNED, "autotune": {"status": "failed", "message": "perfembed tune exited 2: boom"}}
    row = _row(tmp_path, "jacobi_1d", failed)
    assert row["variants"]["perfembed-autotune"] == {"status": "missing",
                                                     "reason": "failed: perfembed tune exited 2: boom"}
    report = {"kernels": [row]}
    assert missing_figures(report) == ["jacobi_1d: perfembed-autotune: missing (failed: perfembed tune exited 2: "
                                       "boom)"]


def _kernel(name: str, transfer: float, written: bool, numba: float = 2.0, autotune: float = 4.0) -> dict[str, Any]:
    def ok(speedup: float) -> dict[str, Any]:
        return {"status": "ok", "speedup": speedup, "speedup_low": speedup * 0.9, "speedup_high": speedup * 1.1,
                "median_s": 0.1 / speedup, "first_s": 0.2}
    decision = {"written": written, "status": "ok", "check_speedup": transfer, "message": ""}
    return {"kernel": name, "neighbours": [], "load_before_timing": {"loadavg": [1.5, 1, 1]},
            "load_after_timing": {"loadavg": [2.5, 1, 1]},
            "variants": {"numpy": ok(1.0), "numba-parallel": ok(numba), "perfembed-autotune": ok(autotune),
                         "perfembed-transfer": {**ok(transfer), "recipe": "tile i by 32", "write_best": decision}}}


def test_the_targets_are_judged_on_what_write_best_leaves_the_user() -> None:
    """A module --write-best refuses (slower than NumPy) leaves the user NumPy: 1x, not the module's 0.5x;
    a written module that the interleaved rounds find slower is a slowdown all the same."""
    kernels = [_kernel("fast", 8.0, True), _kernel("refused", 0.5, False), _kernel("slow", 0.8, True)]
    report = {"kernels": kernels, "config": {"threads": 2, "scale": 0.5, "rounds": 7, "tuning": {"trials": 20}},
              "machine": {"cpu": "test", "cores": 2}, "load_before": {"loadavg": [1.0]}, "started": "now"}
    report["summary"] = summary = summarize(report)
    assert summary["methods"]["perfembed"]["geomean_speedup"] == pytest.approx((8.0 * 1.0 * 0.8) ** (1 / 3))
    assert summary["methods"]["perfembed-transfer"]["geomean_speedup"] == pytest.approx((8.0 * 0.5 * 0.8) ** (1 / 3))
    assert summary["targets"]["no_slowdown"]["value"] == ["slow"]
    assert summary["written"] == 2 and summary["load"]["during_1min_max"] == 2.5
    text = render_markdown(report)
    assert "autotuning ran 20 trials per kernel, not the issue's 40 (`--trials 20`)" in text
    assert "transfer at least 85% of autotune-20 (issue: autotune-40)" in text
    assert "nothing written (perfembed's check: 0.50x); NumPy kept" in text
    (row,) = headline(report)
    assert row["figure"] == "1.86x over NumPy, 0.93x over Numba parallel, 3 kernels; transfer 37% of autotune-20"
    assert row["conditions"] == "sizes x0.5, load 2.0"


def test_an_interrupted_run_reports_the_kernels_it_measured_and_says_so() -> None:
    report: dict[str, Any] = {"kernels": [_kernel("fast", 8.0, True)], "interrupted": "stopped after 1 of 21 kernels",
                              "config": {"threads": 2, "scale": 1.0, "rounds": 7, "tuning": {"trials": 40}},
                              "machine": {"cpu": "test", "cores": 2}, "load_before": {}}
    report["summary"] = summarize(report)
    assert missing_figures(report)[0] == "stopped after 1 of 21 kernels"
    report["remarks"] = ["the machine was busy"]
    text = render_markdown(report)
    assert "**Interrupted:** stopped after 1 of 21 kernels" in text and "Budget cut" not in text
    assert text.endswith("## Remarks on this run\n\n- the machine was busy\n")


def test_each_variant_is_timed_after_the_one_before_went_quiet(tmp_path: Path) -> None:
    """A variant whose thread pool spins on after its call (OpenBLAS's under NumPy) slowed whichever variant
    ran right after it: here one leaves a 'busy until' stamp, and another called before it passes is slowed
    by 20 ms; the rounds must time the second at its own speed."""
    busy = {"until": 0.0}

    def spins_after(x: np.ndarray) -> None:
        busy["until"] = time.perf_counter() + 0.15

    def slowed_while_busy(x: np.ndarray) -> None:
        if time.perf_counter() < busy["until"]:
            time.sleep(0.02)

    np.savez(tmp_path / "inputs.npz", x=np.zeros(4))
    times = interleave({"numpy": spins_after, "other": slowed_while_busy}, Inputs(tmp_path / "inputs.npz", ["x"]),
                       rounds=2)
    assert max(times["other"]) < 0.01
