"""Sparse nests from the command line: --sparsity/--density choose the generated matrix, --matrix runs on
the user's Matrix Market file, and every fault of those is one line with exit 2 (real subprocesses)."""

from __future__ import annotations

import json
from pathlib import Path

import scipy.io
import scipy.sparse

from autotune.records import tuning_study
from database import get_store
from loopnest.frontend.extract import extract_scops
from loopnest.harness.index_data import SparseChoice
from tests.service.test_cli_engine import perfembed

SPMV = Path(__file__).resolve().parents[1] / "loopnest" / "sparse_kernels" / "spmv_csr.c"
SIZES = ("--param", "n=300", "--param", "m=200", "--param", "nnz=6000")


def _recipe(tmp_path: Path) -> Path:
    path = tmp_path / "dynamic.json"
    path.write_text(json.dumps({"steps": [{"op": "parallelize", "loop": 0, "schedule": "dynamic", "chunk": 8}]}))
    return path


def test_measure_on_a_chosen_generated_structure_verifies(tmp_path: Path) -> None:
    proc = perfembed("measure", str(SPMV), *SIZES, "--recipe", str(_recipe(tmp_path)), "--reps", "2",
                     "--sparsity", "powerlaw", "--density", "0.05", "--json")
    assert proc.returncode == 0, proc.stderr
    (result,) = json.loads(proc.stdout)["results"]
    assert result["verified"] is True and result["speedup"] > 0


def test_measure_on_the_users_matrix_and_its_faults(tmp_path: Path) -> None:
    good = tmp_path / "a.mtx"
    scipy.io.mmwrite(good, scipy.sparse.random(300, 200, density=0.02, random_state=3, format="csr"))
    proc = perfembed("measure", str(SPMV), *SIZES, "--recipe", str(_recipe(tmp_path)), "--reps", "2",
                     "--matrix", str(good), "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["results"][0]["verified"] is True

    wrong = tmp_path / "wrong.mtx"
    scipy.io.mmwrite(wrong, scipy.sparse.random(40, 200, density=0.02, random_state=3, format="csr"))
    bad = tmp_path / "bad.mtx"
    bad.write_text("%%MatrixMarket matrix coordinate real general\n300 200 5\n1 1 1.0\n")
    for args, message in [(("--matrix", str(wrong)), "wrong.mtx: a 40 x 200 matrix"),
                          (("--matrix", str(bad)), "bad.mtx: malformed coordinate"),
                          (("--matrix", str(good), "--sparsity", "banded"), "--matrix: the matrix fixes"),
                          (("--sparsity", "diagonal"), "--sparsity 'diagonal': one of uniform, banded, powerlaw")]:
        proc = perfembed("measure", str(SPMV), *SIZES, "--reps", "1", *args)
        assert proc.returncode == 2, (args, proc.stderr)
        assert message in proc.stderr and "Traceback" not in proc.stderr, proc.stderr


def test_a_chosen_structure_is_tuned_in_a_study_of_its_own(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'db.sqlite'}"
    get_store(url, create=True)
    scop = extract_scops(SPMV).scops[0]
    params = {"n": 300, "m": 200, "nnz": 6000}

    def name(sparse: SparseChoice | None) -> str:
        return tuning_study(url, 1, 1, scop, params, sparse)[0]

    default, banded = name(None), name(SparseChoice(sparsity="banded"))
    assert default != banded and banded == name(SparseChoice(sparsity="banded"))
    assert name(SparseChoice(sparsity="banded", density=0.05)) not in (default, banded)
