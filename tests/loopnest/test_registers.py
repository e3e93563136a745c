"""The tuned branch of the drop-in code keeps an innermost loop's elements in locals (loopnest/codegen/registers.py).

Reproduction (2026-11-29, peak benchmark in the user's form): gemm's tuned register block ``C[i][j] += alpha *
A[i][k] * B[k][j]`` (i jammed by 2, k by 4, j innermost) ran 28 GFLOP/s as drop-in code against 34 with
static arrays: with the arrays as pointers, gcc 12 reloaded and multiplied ``alpha * A[i][k]`` in every
iteration of ``j`` and stored ``C[i][j]`` after each of the four copies.
"""

from __future__ import annotations

import re
from pathlib import Path

from loopnest import Recipe, apply_recipe, extract_scops
from loopnest.codegen.overlap_guard import guarded_c
from loopnest.harness import Harness
from tests.helpers.paths import ROOT
from tests.loopnest.recipe_check import apply_and_verify

GEMM_BLOCK = Recipe.from_dict({"steps": [{"op": "interchange", "order": [0, 2, 1]},
                                         {"op": "unroll_jam", "loop": 0, "factor": 2},
                                         {"op": "unroll_jam", "loop": 1, "factor": 4}]})


def _branches(code: str) -> tuple[str, str]:
    """The tuned branch and the original's (after the check's ``else``) of a drop-in block."""
    tuned, _, original = code.partition("\nelse\n")
    assert original, code
    return tuned, original


def test_a_jammed_gemm_loads_a_once_per_loop_and_stores_each_c_element_once_per_iteration(tmp_path: Path) -> None:
    scop = extract_scops(ROOT / "corpus/kernels/blas3/gemm_ijk.c").scops[0]
    tuned, original = _branches(guarded_c(scop, apply_recipe(scop, GEMM_BLOCK)))
    # The 8 elements of A the jammed body reads (2 rows x 4 columns), loaded before the j loop.
    hoisted = re.findall(r"const double (perfembed_reg\d+) = A\[", tuned)
    assert len(hoisted) == 8
    # The full block's body: each of the two C elements loaded once, updated 4 times in a local, stored once.
    assert re.search(r"double perfembed_reg8 = C\[\(2 \* c1\)\]\[c5\];", tuned)
    assert len(re.findall(r"perfembed_reg8 \+= ", tuned)) == 4
    assert len(re.findall(r"C\[\(2 \* c1\)\]\[c5\] = perfembed_reg8;", tuned)) == 1
    assert "C[(2 * c1)][c5] +=" not in tuned
    # The original's schedule, which runs where the arrays overlap, is printed as before.
    assert "perfembed_reg" not in original
    with Harness(scop, {"ni": 13, "nj": 11, "nk": 9}, reps=1, threads=2) as harness:  # remainders of both jams
        assert apply_and_verify(harness, GEMM_BLOCK)
        # A tuning trial times the same code as the drop-in code's tuned branch (the locals included).
        timed = (harness._dir() / f"variant_{GEMM_BLOCK.hash[:12]}.c").read_text()
        assert "const double perfembed_reg0 = perfembed_v_A[" in timed  # the driver prefixes the user's names


TWO_ELEMENTS = """
void twice(int n, double A[n][n], double B[n][n])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      A[i][j] += B[i][j];
      A[j][i] += B[j][i];
      A[i][j] *= 2.0;
    }
}
"""


def test_elements_that_may_be_one_element_stay_in_memory(tmp_path: Path) -> None:
    """``A[i][j]`` and ``A[j][i]`` are one element where ``i == j``: kept in two locals, the second store
    would undo the first there. Neither is merged, and the variant verifies."""
    path = tmp_path / "twice.c"
    path.write_text(TWO_ELEMENTS)
    scop = extract_scops(path).scops[0]
    recipe = Recipe.from_dict({"steps": [{"op": "unroll", "loop": 1, "factor": 2}]})
    tuned, _ = _branches(guarded_c(scop, apply_recipe(scop, recipe)))
    assert "perfembed_reg" not in tuned
    with Harness(scop, {"n": 9}, reps=1, threads=1) as harness:
        assert apply_and_verify(harness, recipe)


def test_a_nest_without_a_run_time_check_keeps_the_original_schedule_unchanged() -> None:
    """The original's own schedule (no recipe step changes it) is the original's code: no locals."""
    scop = extract_scops(ROOT / "corpus/kernels/blas3/gemm_ijk.c").scops[0]
    assert "perfembed_reg" not in guarded_c(scop, scop)


def test_an_element_one_statement_updates_stays_in_memory() -> None:
    """Reproduction (peak benchmark, 2026-11-29): conv2d's tuned recipe (eight copies of ``out[k][y][x] +=``
    jammed into a 3-iteration loop, each element updated by one statement) ran 2.0x over the original with
    each element in a local, 9.9x without. Only an element two statements reach gets a local; a read-only
    element the loop does not vary is still loaded once before it."""
    scop = extract_scops(ROOT / "corpus/kernels/blas3/gemm_ijk.c").scops[0]
    ikj = Recipe.from_dict({"steps": [{"op": "interchange", "order": [0, 2, 1]}]})
    tuned, _ = _branches(guarded_c(scop, apply_recipe(scop, ikj)))
    assert re.search(r"const double perfembed_reg0 = A\[c1\]\[c3\];", tuned)
    assert not re.search(r"perfembed_reg\d+ = C\[", tuned)


# Review of dc3afa6: three nests where a local would have changed the result or read outside an array.
GATHER = """
void gather(int n, int m, double y[n][m], double A[n][m], int idx[m])
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      int k = idx[j];
      y[i][j] += A[i][k];
    }
}
"""
HALVES = """
void halves(int n, double y[n], double a[n], double b[n], double c[n])
{
  for (int j = 0; j < n - 1; j++) {
    y[j / 2] += a[j];
    y[j / 2] += b[j];
    y[(j + 1) / 2] += c[j];
  }
}
"""
PICK = """
void pick(int n, int m, double y[m], double A[n])
{
  for (int i = 0; i <= n; i++)
    for (int j = 0; j < m; j++)
      y[j] += (i < n ? A[i] : 0.0);
}
"""


def _tuned_branch(tmp_path: Path, source: str, steps: list[dict], params: dict[str, int] | None = None) -> str:
    """The tuned branch of the drop-in code for ``steps``; with ``params``, the variant is also run and
    verified against the original."""
    path = tmp_path / "kernel.c"
    path.write_text(source)
    scop = extract_scops(path).scops[0]
    recipe = Recipe.from_dict({"steps": steps})
    if params is not None:
        with Harness(scop, params, reps=1, threads=1) as harness:
            assert apply_and_verify(harness, recipe)
    return _branches(guarded_c(scop, apply_recipe(scop, recipe)))[0]


def test_an_element_whose_subscript_is_a_scalar_the_body_writes_stays_in_memory(tmp_path: Path) -> None:
    """``A[i][k]`` with ``k = idx[j]`` written in the body: before the loop, ``k`` is not yet that value."""
    tuned = _tuned_branch(tmp_path, GATHER, [{"op": "unroll", "loop": 1, "factor": 2}], {"n": 7, "m": 9})
    assert "perfembed_reg" not in tuned


def test_elements_with_c_division_in_their_subscripts_are_not_merged(tmp_path: Path) -> None:
    """isl reads ``j / 2`` as an exact fraction, so ``y[j / 2]`` and ``y[(j + 1) / 2]`` looked distinct: one
    local for ``y[j / 2]``, stored last, undid the third update for every even ``j``."""
    tuned = _tuned_branch(tmp_path, HALVES, [{"op": "unroll", "loop": 0, "factor": 2}], {"n": 21})
    assert "perfembed_reg" not in tuned


def test_an_element_read_under_a_condition_is_not_loaded_before_the_loop(tmp_path: Path) -> None:
    """``i < n ? A[i] : 0.0`` at ``i == n``: the original never reads ``A[n]``, one past the end."""
    tuned = _tuned_branch(tmp_path, PICK, [{"op": "unroll", "loop": 1, "factor": 2}])
    assert not re.search(r"perfembed_reg\d+ = A\[", tuned)
