"""Measurements that cannot lie: baseline and variants from the same IR (item 6), parameter values
that make no sense refused with a reason (item 7), typedefs in casts (item 8)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopnest import extract_scops
from loopnest.errors import ParameterError
from loopnest.harness import Harness
from loopnest.transform.recipe import Recipe

PRAGMA_IN_BODY = """
void f(int n, int m, double A[n][m], double B[n][m]) {
  for (int i = 0; i < n; i++) {
#pragma omp parallel for
    for (int j = 0; j < m; j++)
      A[i][j] = B[i][j] * 2.0 + 1.0;
  }
}
"""
TYPEDEF = """
typedef double real;
typedef real realer;
void f(int n, real A[n], realer B[n]) {
  for (int i = 0; i < n; i++)
    A[i] = (realer)B[i] * (real)2 + sizeof(real);
}
"""


def nest(tmp_path: Path, text: str):  # noqa: ANN201
    path = tmp_path / "k.c"
    path.write_text(text)
    return extract_scops(path).scops[0]


def test_no_recipe_builds_the_very_program_of_the_baseline(tmp_path: Path) -> None:
    """With no recipe the variant is the baseline, byte for byte: the pragma of the source that made
    the baseline 35x slower (a parallel region per row) is in neither, so no speedup can be faked."""
    with Harness(nest(tmp_path, PRAGMA_IN_BODY), {"n": 400, "m": 8}, reps=1, threads=2) as harness:
        evaluation = harness.evaluate(Recipe())
        assert evaluation.verified
        baseline = (harness.workdir / "baseline.c").read_text()
        variant = (harness.workdir / f"variant_{Recipe().hash[:12]}.c").read_text()
    assert baseline == variant and "pragma" not in baseline


@pytest.mark.parametrize("params, reason", [
    ({"n": 0, "m": 8}, "executes no iteration"),
    ({"n": 8, "m": 0}, "executes no iteration"),
    ({"n": -5, "m": 8}, "must be >= 0"),
    ({"n": 2**31, "m": 8}, "does not fit its type int"),
    ({"n": 40000, "m": 40000}, "the measurement driver holds at most"),
])
def test_nonsense_parameter_values_are_refused_with_a_reason(tmp_path: Path, params: dict[str, int],
                                                             reason: str) -> None:
    with pytest.raises(ParameterError, match=reason):
        Harness(nest(tmp_path, PRAGMA_IN_BODY), params, reps=1)


def test_a_typedef_in_a_cast_compiles_and_verifies(tmp_path: Path) -> None:
    with Harness(nest(tmp_path, TYPEDEF), {"n": 64}, reps=1, threads=1) as harness:
        assert harness.baseline().ok, harness.baseline().message
        assert harness.evaluate(Recipe()).verified
