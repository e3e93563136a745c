"""Sparse nests end to end (issue 15): the driver fills index arrays with a valid structure (generated,
or a user's Matrix Market matrix), recipes on SpMV, SpMM, SDDMM, CSC, histograms, gathers and masked
updates compile, run and verify against the original in the sandbox, and a matrix that does not fit
the nest is a one-line user error."""

from __future__ import annotations

import atexit
from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

from loopnest import extract_scops
from loopnest.codegen import generate_c
from loopnest.errors import IllegalTransformError, InputError, RecipeError
from loopnest.harness import Harness, Limits, array_layouts, run_limited, synthesize_driver, verify_outputs
from loopnest.harness.index_data import SparseChoice, index_contents
from loopnest.ir import Scop
from loopnest.omp_clauses import reorders_reduction
from loopnest.transform.recipe import Recipe, apply_recipe
from tests.loopnest.recipe_check import apply_and_verify

KERNELS = Path(__file__).parent / "sparse_kernels"
PARAMS = {
    "spmv_csr.c": {"n": 60, "m": 50, "nnz": 400},
    "spmv_csc.c": {"n": 60, "m": 50, "nnz": 400},
    "spmm_csr.c": {"n": 40, "m": 30, "nnz": 300, "K": 24},
    "sddmm.c": {"n": 40, "m": 30, "nnz": 300, "K": 16},
    "histogram.c": {"n": 500, "nbins": 32},
    "gather.c": {"n": 200, "m": 64},
    "scatter.c": {"n": 200, "m": 64},
    "masked.c": {"n": 300},
    "ell.c": {"n": 50, "m": 40, "K": 6},
}
_HARNESSES: dict[str, Harness] = {}


def harness(kernel: str) -> Harness:
    if kernel not in _HARNESSES:
        (scop,) = extract_scops(KERNELS / kernel).scops
        _HARNESSES[kernel] = Harness(scop, PARAMS[kernel], reps=1, threads=2,
                                     sparse=SparseChoice(density=0.1))
        atexit.register(_HARNESSES[kernel].close)
    return _HARNESSES[kernel]


def contents(kernel: str, params: dict[str, int], choice: SparseChoice | None = None) -> dict[str, np.ndarray]:
    (scop,) = extract_scops(KERNELS / kernel).scops
    return index_contents(scop, params, array_layouts(scop, params), choice)


def write_matrix(path: Path, matrix: scipy.sparse.spmatrix) -> Path:
    scipy.io.mmwrite(str(path), matrix)
    return path


def test_default_structure_is_a_uniform_csr_of_one_percent_capped_by_the_index_arrays() -> None:
    filled = contents("spmv_csr.c", {"n": 100, "m": 100, "nnz": 60})
    rowptr, col = filled["rowptr"], filled["col"]
    assert rowptr.dtype == np.int32 and rowptr.shape == (101,) and rowptr[0] == 0
    assert np.all(np.diff(rowptr) >= 0) and rowptr[-1] == 60  # 1% of 100 x 100 is 100, over the 60 col holds
    assert col.shape == (60,) and col.min() >= 0 and col.max() < 100
    for r in range(100):
        assert np.all(np.diff(col[rowptr[r]:rowptr[r + 1]]) > 0)
    assert contents("spmv_csr.c", {"n": 100, "m": 100, "nnz": 500})["rowptr"][-1] == 100


def test_csc_indices_range_over_the_rows_and_standalone_indices_over_their_target() -> None:
    filled = contents("spmv_csc.c", {"n": 30, "m": 20, "nnz": 200}, SparseChoice(density=0.2))
    assert filled["colptr"].shape == (21,) and filled["colptr"][-1] == 120
    assert filled["row"][:120].max() < 30
    gathered = contents("gather.c", {"n": 1000, "m": 7})["idx"]
    assert gathered.min() >= 0 and gathered.max() == 6
    lengths = contents("ell.c", {"n": 1000, "m": 9, "K": 5})["len"]
    assert lengths.min() == 0 and lengths.max() == 5  # a row holds 0 to K entries


def test_matrix_market_matrix_fills_pointers_indices_and_values(tmp_path: Path) -> None:
    matrix = scipy.sparse.random(12, 9, density=0.3, random_state=1, format="csr")
    path = write_matrix(tmp_path / "a.mtx", matrix)
    filled = contents("spmv_csr.c", {"n": 12, "m": 9, "nnz": 100}, SparseChoice(matrix=str(path)))
    assert np.array_equal(filled["rowptr"], matrix.indptr)
    assert np.array_equal(filled["col"][:matrix.nnz], matrix.indices)
    assert np.allclose(filled["val"][:matrix.nnz], matrix.data)
    csc = contents("spmv_csc.c", {"n": 12, "m": 9, "nnz": 100}, SparseChoice(matrix=str(path)))
    assert np.array_equal(csc["colptr"], matrix.tocsc().indptr)  # the same matrix, by columns


def test_a_matrix_file_is_hashed_once_per_version(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every measurement and study of a run asks for the structure's key: the file is read once, and
    read again (a new key) when its contents change."""
    path = write_matrix(tmp_path / "a.mtx", scipy.sparse.random(12, 9, density=0.3, random_state=1))
    reads: list[Path] = []
    read_bytes = Path.read_bytes

    def counted(self: Path) -> bytes:
        reads.append(self)
        return read_bytes(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    first = SparseChoice(matrix=str(path)).key()
    assert [SparseChoice(matrix=str(path)).key() for _ in range(3)] == [first] * 3
    assert len(reads) == 1
    write_matrix(path, scipy.sparse.random(12, 9, density=0.5, random_state=2))
    assert SparseChoice(matrix=str(path)).key() != first and len(reads) == 2


def test_a_matrix_that_does_not_fit_the_nest_is_a_one_line_user_error(tmp_path: Path) -> None:
    wide = write_matrix(tmp_path / "wide.mtx", scipy.sparse.random(12, 40, density=0.2, random_state=2))
    with pytest.raises(InputError) as too_wide:
        contents("spmv_csr.c", {"n": 12, "m": 9, "nnz": 500}, SparseChoice(matrix=str(wide)))
    assert str(too_wide.value).startswith("wide.mtx: a 12 x 40 matrix") and "\n" not in str(too_wide.value)
    full = write_matrix(tmp_path / "full.mtx", scipy.sparse.random(12, 9, density=0.9, random_state=3))
    with pytest.raises(InputError, match=r"full.mtx: 97 nonzeros; the nest's col hold 50"):
        contents("spmv_csr.c", {"n": 12, "m": 9, "nnz": 50}, SparseChoice(matrix=str(full)))


def test_a_harness_on_a_matrix_that_does_not_fit_refuses_before_running(tmp_path: Path) -> None:
    wide = write_matrix(tmp_path / "wide.mtx", scipy.sparse.random(60, 80, density=0.05, random_state=4))
    (scop,) = extract_scops(KERNELS / "spmv_csr.c").scops
    with pytest.raises(InputError, match="wide.mtx"):
        Harness(scop, PARAMS["spmv_csr.c"], sparse=SparseChoice(matrix=str(wide)))


def test_spmv_runs_and_verifies_on_a_user_matrix(tmp_path: Path) -> None:
    matrix = scipy.sparse.random(60, 50, density=0.1, random_state=5, format="csr")
    path = write_matrix(tmp_path / "m.mtx", matrix)
    (scop,) = extract_scops(KERNELS / "spmv_csr.c").scops
    with Harness(scop, PARAMS["spmv_csr.c"], reps=1, threads=2, sparse=SparseChoice(matrix=str(path))) as h:
        assert apply_and_verify(h, Recipe.from_dict([{"op": "parallelize", "loop": 0, "schedule": "dynamic"}]))


def source_text(scop: Scop) -> str:
    """The nest as the user wrote it (the region's lines), as a kernel body for the driver."""
    lines = Path(scop.region.file).read_text().splitlines()
    return "{\n" + "\n".join(lines[scop.region.first_line - 1: scop.region.last_line]) + "\n}"


@pytest.mark.parametrize(("kernel", "steps"), [
    ("spmv_csr.c", []), ("spmv_csc.c", [{"op": "parallelize", "loop": 0}]), ("spmm_csr.c", []),
    ("sddmm.c", [{"op": "parallelize", "loop": 0}]), ("histogram.c", []), ("gather.c", []), ("scatter.c", []),
    ("masked.c", [{"op": "parallelize", "loop": 0}]), ("ell.c", [{"op": "parallelize", "loop": 0}]),
])
def test_generated_code_computes_what_the_source_computes(kernel: str, steps: list[dict]) -> None:
    """The user's own loop text against perfembed's code for the nest (the baseline every variant is
    compared with), in one driver on the same structure: the printed data-dependent bounds, guards and
    indirect subscripts mean what the source means."""
    h = harness(kernel)
    mine = apply_recipe(h.scop, Recipe.from_dict(steps))
    src = h.workdir / f"source_{kernel}.c"
    src.write_text(synthesize_driver(h.scop, [source_text(h.scop), generate_c(mine)], h.params, h.layouts, h.inputs))
    exe = h.workdir / f"source_{kernel}"
    assert run_limited(["gcc", "-O2", "-fopenmp", "-o", str(exe), str(src), "-lm"], cwd=h.workdir, limits=Limits()).ok
    outs = [h.workdir / f"source_{kernel}.{k}.out" for k in (0, 1)]
    ran = run_limited([str(exe), *(str(h.params[p]) for p in h.scop.params), "1", *map(str, outs)],
                      cwd=h.workdir, limits=Limits(), env={"OMP_NUM_THREADS": "2"}, threads=2)
    assert ran.ok, ran.describe()
    check = verify_outputs(outs[0], outs[1], h.layouts, reorders_reduction=reorders_reduction(mine))
    assert check.verified, check


@pytest.mark.parametrize(("kernel", "steps"), [
    ("spmv_csr.c", [{"op": "parallelize", "loop": 0, "schedule": "dynamic", "chunk": 4}]),
    ("spmv_csr.c", [{"op": "expand", "scalar": "s"}, {"op": "parallelize", "loop": 0}, {"op": "unroll", "loop": 1,
                                                                                         "factor": 4}]),
    ("spmv_csr.c", [{"op": "parallelize", "loop": 0}, {"op": "vectorize", "loop": 1}]),
    ("spmv_csr.c", [{"op": "parallelize", "loop": 0, "schedule": "guided"},
                    {"op": "vectorize", "loop": 1, "reduction": True, "simdlen": 4}]),
    ("spmv_csr.c", [{"op": "expand", "scalar": "s"}, {"op": "parallelize", "loop": 0},
                    {"op": "vectorize", "loop": 1, "simdlen": 8}]),
    ("spmv_csc.c", [{"op": "parallelize", "loop": 0}]),
    ("spmm_csr.c", [{"op": "interchange", "order": [0, 2, 1]}, {"op": "tile", "loops": [1], "sizes": [8]},
                    {"op": "parallelize", "loop": 0, "schedule": "guided"}]),
    ("spmm_csr.c", [{"op": "tile", "loops": [0], "sizes": [8]}, {"op": "vectorize", "loop": 3}]),
    ("sddmm.c", [{"op": "parallelize", "loop": 0, "schedule": "dynamic"}, {"op": "vectorize", "loop": 2}]),
    ("histogram.c", [{"op": "parallelize", "loop": 0}]),
    ("gather.c", [{"op": "parallelize", "loop": 0}, {"op": "vectorize", "loop": 0}]),
    ("scatter.c", [{"op": "unroll", "loop": 0, "factor": 4}]),
    ("masked.c", [{"op": "parallelize", "loop": 0}, {"op": "vectorize", "loop": 0}]),
])
def test_recipes_on_sparse_nests_compile_run_and_verify(kernel: str, steps: list[dict]) -> None:
    assert apply_and_verify(harness(kernel), Recipe.from_dict(steps)), steps


_STEPS = st.sampled_from([
    {"op": "parallelize", "loop": 0, "schedule": "dynamic", "chunk": 2},
    {"op": "parallelize", "loop": 0},
    {"op": "interchange", "order": [0, 2, 1]},
    {"op": "tile", "loops": [2], "sizes": [4]},
    {"op": "tile", "loops": [0], "sizes": [8]},
    {"op": "tile", "loops": [1], "sizes": [4]},
    {"op": "vectorize", "loop": 2},
    {"op": "vectorize", "loop": 3},
    {"op": "unroll", "loop": 1, "factor": 2},
    {"op": "unroll_jam", "loop": 0, "factor": 2},
])


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(_STEPS, min_size=1, max_size=3))
def test_every_legal_recipe_on_spmm_preserves_its_output(steps: list[dict]) -> None:
    spmm, recipe = harness("spmm_csr.c"), Recipe.from_dict(steps)
    try:
        transformed = apply_recipe(spmm.scop, recipe, spmm.dependences)
    except (IllegalTransformError, RecipeError):
        # A refused recipe is no example: were every one drawn refused, Hypothesis would fail the test as
        # unsatisfiable rather than pass it having verified nothing.
        reject()
    result = spmm.evaluate(recipe, transformed=transformed)
    assert result.variant.status == "ok" and result.verified, (steps, result.variant.message, result.verification)
