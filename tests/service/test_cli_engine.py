"""The perfembed CLI: analyze, apply and measure from a user's point of view (real subprocesses)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.helpers.paths import CORPUS
from tests.helpers.waiting import perfembed

PB = CORPUS / "pbstyle"


def test_analyze_json_reports_nests_and_params() -> None:
    proc = perfembed("analyze", str(PB / "mb_gemm.c"), "-I", str(PB / "include"), "--param", "ni=20",
                     "--param", "nj=30", "--param", "nk=40", "--param", "unused=1", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    (nest,) = data["nests"]
    assert nest["params"] == {"ni": 20, "nj": 30, "nk": 40} or set(nest["params"]) == {"ni", "nj", "nk"}
    assert [p["parallel"] for p in nest["parallel"]] == [True, False, True]  # i, k (reduction), j
    assert nest["trip_counts"]["statements"]["S1"] == 20 * 30 * 40


def test_unsupported_file_exits_2_with_construct_and_line() -> None:
    proc = perfembed("analyze", str(CORPUS / "kernels/reject/indirect_subscript.c"), "--json")
    assert proc.returncode == 2
    (rej,) = json.loads(proc.stdout)["rejected"]
    assert rej["construct"] == "indirect subscript" and rej["location"]["line"] > 0
    text = perfembed("analyze", str(CORPUS / "kernels/reject/indirect_subscript.c"))
    assert text.returncode == 2 and "indirect subscript" in text.stderr and "Traceback" not in text.stderr


def test_illegal_recipe_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    recipe = tmp_path / "r.json"
    recipe.write_text(json.dumps({"steps": [{"op": "parallelize", "loop": 1}]}))
    out = tmp_path / "out.c"
    proc = perfembed("apply", str(PB / "mb_gemm.c"), "-I", str(PB / "include"), "--recipe", str(recipe),
                     "-o", str(out))
    assert proc.returncode == 2 and "carries the dependence" in proc.stderr and not out.exists()
    recipe.write_text("{not json")
    assert perfembed("apply", str(PB / "mb_gemm.c"), "--recipe", str(recipe)).returncode == 2


def test_measure_verifies_and_times_a_variant(tmp_path: Path) -> None:
    recipe = tmp_path / "r.json"
    recipe.write_text(json.dumps({"steps": [{"op": "interchange", "order": [0, 2, 1]},
                                            {"op": "parallelize", "loop": 0}]}))
    proc = perfembed("measure", str(CORPUS / "kernels/blas3/gemm_ijk.c"), "--recipe", str(recipe),
                     "--param", "ni=64", "--param", "nj=48", "--param", "nk=32", "--reps", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    (result,) = json.loads(proc.stdout)["results"]
    assert result["verified"] is True and result["speedup"] > 0
    # At least the 2 repetitions asked for; a kernel this fast is timed until its calls add up to 50 ms.
    assert 2 <= len(result["baseline"]["times"]) <= 200 and result["reps"] == 2
    missing = perfembed("measure", str(CORPUS / "kernels/blas3/gemm_ijk.c"))
    assert missing.returncode == 2 and "--param ni=" in missing.stderr


def test_suggest_fallback_autotunes_and_writes_the_autotuned_recipe(tmp_path: Path) -> None:
    # An empty database: no neighbour, so --fallback autotunes here, and --write-best must use that
    # result when it is verified and >= 1.1x (and write nothing otherwise, never the original as tuned).
    # The file has no main: --no-program-check asks for the file verified nest by nest.
    kernel = CORPUS / "kernels/blas3/gemm_ijk.c"
    env = {**os.environ, "PERFEMBED_DATA_DIR": str(tmp_path / "data"), "PERFEMBED_THREADS": "1"}
    env.pop("PERFEMBED_DATABASE_URL", None)
    out = tmp_path / "best.c"
    proc = subprocess.run([sys.executable, "-m", "service.cli", "suggest", str(kernel), "--param", "ni=96",
                           "--param", "nj=96", "--param", "nk=96", "--evaluate", "--fallback", "--trials", "6",
                           "--write-best", str(out), "--no-program-check", "--json"], capture_output=True, text=True,
                          timeout=600, check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    (nest,) = json.loads(proc.stdout)["nests"]
    assert nest["neighbours"] == [] and nest["tuning_job"] is not None and "autotuned" in nest
    tuned = nest["autotuned"]
    outcome = json.loads(proc.stdout)["outcome"]
    if tuned is None:
        assert outcome["status"] == "not-tuned" and not out.exists() and "not written" in proc.stderr
    else:
        assert tuned["speedup"] >= 1.1 and 0 < tuned["evaluated"] <= 6
        assert outcome["status"] == "nest-verified" and outcome["written"] == str(out)
        assert "1 of 1 nest(s) tuned" in proc.stderr and "NOT checked as a whole program" in out.read_text()
    assert "A new study created" not in proc.stderr  # Optuna's INFO log stays quiet


def test_suggest_on_an_empty_database_names_the_file_and_says_how_to_load_the_seed(tmp_path: Path) -> None:
    env = {**os.environ, "PERFEMBED_DATA_DIR": str(tmp_path / "data"), "COLUMNS": "300"}
    env.pop("PERFEMBED_DATABASE_URL", None)
    proc = subprocess.run([sys.executable, "-m", "service.cli", "suggest", str(CORPUS / "kernels/blas3/gemm_ijk.c"),
                           "--param", "ni=96", "--param", "nj=96", "--param", "nk=96"],
                          capture_output=True, text=True, timeout=300, check=False, env=env)
    assert proc.returncode == 0, proc.stderr
    assert "gemm_ijk.c#0 (function gemm_ijk, nest 0)" in proc.stdout and "program.c" not in proc.stdout
    assert "perfembed seed load" in proc.stdout
    # No neighbour within the gate: the recipe space's first guesses are still offered, isl's schedule first.
    assert "recipe space (no neighbour within the gate)" in proc.stdout and "autoschedule" in proc.stdout


def test_suggest_without_a_size_says_how_to_give_it(tmp_path: Path) -> None:
    """A new user's 'missing value for parameter(s) n, m' said nothing of --param."""
    env = {**os.environ, "PERFEMBED_DATA_DIR": str(tmp_path / "data")}
    env.pop("PERFEMBED_DATABASE_URL", None)
    proc = subprocess.run([sys.executable, "-m", "service.cli", "suggest", str(CORPUS / "kernels/blas3/gemm_ijk.c"),
                           "--param", "ni=96"], capture_output=True, text=True, timeout=300, check=False, env=env)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "missing value for parameter(s) nj, nk; give each size its value: --param nj=INT" in proc.stderr
