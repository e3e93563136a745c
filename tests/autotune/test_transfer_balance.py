"""Transfer gives a guided schedule to a parallel loop whose iterations do data-dependent work (CSR rows):
the neighbour's static schedule was tuned on another matrix (sparse benchmark, spmv-banded: the static
recipe transfer accepted ran at one thread's speed in 9 of 11 rounds, 0.69x of autotuning's guided one)."""

from __future__ import annotations

from pathlib import Path

from autotune.transfer import Neighbour, TransferTuner, loop_roles
from autotune.transfer.balance import balance_schedules, runs_data_dependent_work
from loopnest import extract_scops
from loopnest.harness import Harness
from loopnest.harness.index_data import SparseChoice
from loopnest.ir import Scop
from loopnest.polyhedral import compute_dependences
from loopnest.transform.recipe import Recipe, apply_recipe
from tests.loopnest.recipe_check import apply_and_verify

KERNELS = Path(__file__).parents[1] / "loopnest" / "sparse_kernels"
SPMV = {"n": 60, "m": 50, "nnz": 400}


def kernel(name: str) -> Scop:
    return extract_scops(KERNELS / name).scops[0]


def balanced(scop: Scop, steps: list[dict]) -> list[dict]:
    return balance_schedules(Recipe.from_dict(steps), scop, compute_dependences(scop)).to_dict()["steps"]


def test_a_static_row_loop_of_csr_gets_a_guided_schedule() -> None:
    spmv = kernel("spmv_csr.c")
    assert runs_data_dependent_work(spmv, 0) and not runs_data_dependent_work(spmv, 1)
    assert balanced(spmv, [{"op": "parallelize", "loop": 0}, {"op": "unroll", "loop": 1, "factor": 8}]) == [
        {"op": "parallelize", "loop": 0, "schedule": "guided"}, {"op": "unroll", "loop": 1, "factor": 8}]
    explicit = [{"op": "parallelize", "loop": 0, "schedule": "dynamic", "chunk": 16}]
    assert balanced(spmv, explicit) == explicit  # the neighbour's own choice is kept


def test_only_loops_around_the_data_dependent_loop_are_balanced() -> None:
    spmm = kernel("spmm_csr.c")
    rows = [{"op": "parallelize", "loop": 0}]
    assert balanced(spmm, rows) == [{"op": "parallelize", "loop": 0, "schedule": "guided"}]
    tiles = [{"op": "tile", "loops": [0], "sizes": [32]}, {"op": "parallelize", "loop": 0}]  # tiles of rows
    assert balanced(spmm, tiles)[1] == {"op": "parallelize", "loop": 0, "schedule": "guided"}
    # The dense loop moved outward: each of its iterations runs the whole matrix, alike.
    dense_out = [{"op": "interchange", "order": [2, 0, 1]}, {"op": "parallelize", "loop": 0}]
    moved = apply_recipe(spmm, Recipe.from_dict(dense_out[:1]))
    assert not runs_data_dependent_work(moved, 0) and runs_data_dependent_work(moved, 1)
    assert balanced(spmm, dense_out) == dense_out


def test_dense_nests_are_left_as_they_are(tmp_path: Path) -> None:
    path = tmp_path / "tri.c"
    path.write_text("void tri(int n, double a[n][n]) {\n  for (int i = 0; i < n; i++)\n"
                    "    for (int j = 0; j <= i; j++)\n      a[i][j] = a[i][j] * 2.0;\n}\n")
    triangular = extract_scops(path).scops[0]
    steps = [{"op": "parallelize", "loop": 0}]
    assert balanced(triangular, steps) == steps


def test_transfer_offers_the_guided_recipe_and_it_verifies() -> None:
    spmv = kernel("spmv_csr.c")
    lent = Recipe.from_dict([{"op": "parallelize", "loop": 0}, {"op": "unroll", "loop": 1, "factor": 8}])
    neighbour = Neighbour(1, "spmv_csr_f64", 0.0, lent, loop_roles(spmv, SPMV), 1.9)
    (candidate,) = [c for c in TransferTuner().candidates(spmv, SPMV, [neighbour]) if not c.variant]
    assert candidate.recipe.to_dict()["steps"][0] == {"op": "parallelize", "loop": 0, "schedule": "guided"}
    with Harness(spmv, SPMV, reps=1, threads=2, sparse=SparseChoice(sparsity="powerlaw", density=0.1)) as h:
        assert apply_and_verify(h, candidate.recipe)
