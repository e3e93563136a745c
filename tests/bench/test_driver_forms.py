"""The driver-forms benchmark (experiments/driver_forms.py) as a user runs it: ``perfembed bench driver-forms``.

A real but tiny run on two corpus nests. Nothing here is timed; the checks are that stdout is one JSON
object, that every figure comes from a verified run of all five kernels, and that the summary counts what
the rows hold."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from experiments.driver_forms import KERNELS

ROOT = Path(__file__).resolve().parents[2]


def test_two_nests_measured_in_every_form(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PERFEMBED_DATA_DIR": str(tmp_path / "data")}
    out = tmp_path / "forms.json"
    proc = subprocess.run([sys.executable, "-m", "service.cli", "bench", "driver-forms", "--family", "gemm_orders",
                           "--limit", "2", "--reps", "2", "--json", "--out", str(out)], capture_output=True,
                          text=True, timeout=600, check=False, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    assert report == json.loads(out.read_text())
    rows = report["nests"]
    assert [r["status"] for r in rows] == ["ok", "ok"] and all(r["nest"].startswith("gemm_orders/") for r in rows)
    for row in rows:
        assert set(row["median_s"]) == set(KERNELS) and all(t > 0 for t in row["median_s"].values())
        assert row["repetitions"] == 2 and row["threads"] == 2 and row["recipe"]["steps"]
        for key in ("original_parameters_over_global", "speedup_global", "speedup_parameters", "speedup_restrict"):
            assert row[key]["low"] <= row[key]["ratio"] <= row[key]["high"]
    summary = report["summary"]
    assert summary["nests"] == summary["measured"] == 2
    assert summary["best_at_least_1.1x_parameters"] == sum(r["speedup_parameters"]["ratio"] >= 1.1 for r in rows)
    assert "[2/" in proc.stderr  # a progress line per nest
