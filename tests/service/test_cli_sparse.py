"""Sparse nests from the command line: --sparsity/--density choose the generated matrix, --matrix runs on
the user's Matrix Market file, and every fault of those is one line with exit 2 (real subprocesses)."""

from __future__ import annotations

import json
from pathlib import Path

import scipy.io
import scipy.sparse

from autotune.search.study_names import tuning_study
from database import get_store, list_measurements
from loopnest.frontend.extract import extract_scops
from loopnest.harness.index_data import SparseChoice
from tests.helpers.waiting import perfembed
from tests.security.cli import run_perfembed

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


def test_a_result_on_one_matrix_is_not_tuned_before_on_another(tmp_path: Path) -> None:
    """Reproduction (sparse benchmark diagnosis, 2026-11-25): SpMM tuned on a uniform matrix, then asked
    about a banded one, showed the uniform matrix's 5.06x as "tuned before": measurements were matched
    by nest and sizes only. They now carry the structure they ran on, through a seed export too."""
    tuned = run_perfembed("tune", str(SPMV), *SIZES, "--trials", "2", "--reps", "1", "--sparsity", "banded",
                          "--json", cwd=tmp_path)
    assert tuned.returncode == 0, tuned.stderr

    def before(*choice: str) -> dict | None:
        proc = run_perfembed("suggest", str(SPMV), *SIZES, *choice, "--json", cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)["nests"][0]["tuned_before"]

    banded = before("--sparsity", "banded")
    assert banded is not None and banded["measurements"] >= 2  # the baseline and the trials
    assert before("--sparsity", "uniform") is None and before() is None
    assert before("--sparsity", "banded", "--density", "0.05") is None
    exported = run_perfembed("seed", "export", "--out", str(tmp_path / "seed.jsonl.gz"), cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    other = tmp_path / "other"
    other.mkdir()
    loaded = run_perfembed("seed", "load", "--no-fit", str(tmp_path / "seed.jsonl.gz"), cwd=other)
    assert loaded.returncode == 0, loaded.stderr
    store = get_store(f"sqlite:///{other / 'data' / 'perfembed.db'}")
    with store.session() as session:
        assert {m.structure for m in list_measurements(session)} == {SparseChoice(sparsity="banded").key()}
