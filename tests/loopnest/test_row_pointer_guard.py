"""Drop-in code for a nest that reaches an array of pointers (``double **a``): the tuned code runs where
no row overlaps another row or array (loopnest/codegen/overlap_guard.py, ``_span_check``).

Found 2026-11-27: such a nest kept the original's schedule in its drop-in code (the rows are separate
objects, so no one address range covers them), while ``perfembed measure`` reported the tuned variant's
speedup (20.1x for an interchange, verified): a figure the user's file could never have. The drop-in code
now checks every row's span at run time and runs the tuned code where none overlaps a written one.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loopnest import Harness, Recipe, apply_recipe, extract_scops, replace_regions
from loopnest.harness.compare import AcceptancePolicy
from tests.helpers.dropin import reports_its_choice

# a[i][j + 1] is read before a[i][j] is written: interchanged, rows that overlap (a[i + 1] == a[i] + 1)
# would read elements the original had already overwritten.
KERNEL = """void f(int n, int m, double **a, double **b)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      a[i][j] = 0.5 * b[i][j] + a[i][j + 1];
}
"""
# argv: n m, then n row offsets of a and n of b into one pool; prints a checksum of the pool (every
# element weighs alike: a running 0.75 * s + x would only see the last few dozen).
MAIN = """
int main(int argc, char **argv)
{
  static double pool[4096];
  double *a[16], *b[16];
  int n = atoi(argv[1]), m = atoi(argv[2]);
  for (int k = 0; k < 4096; k++) pool[k] = k % 13;
  for (int i = 0; i < n; i++) { a[i] = pool + atoi(argv[3 + i]); b[i] = pool + atoi(argv[3 + n + i]); }
  void (*volatile call)(int, int, double **, double **) = f;  /* not inlined: gcc sees no more than perfembed */
  call(n, m, a, b);
  double s = 0;
  for (int k = 0; k < 4096; k++) s += pool[k] * (1 + k % 11);
  printf("%.17g\\n", s);
  return 0;
}
"""
INTERCHANGE = Recipe.from_dict({"steps": [{"op": "interchange", "order": [1, 0]}]})


def _build(tmp_path: Path, name: str, text: str) -> Path:
    src, exe = tmp_path / f"{name}.c", tmp_path / name
    src.write_text(text)
    subprocess.run(["gcc", "-O3", "-march=native", "-fopenmp", "-o", str(exe), str(src), "-lm"], check=True,
                   capture_output=True, text=True)
    return exe


def _guarded(tmp_path: Path, kernel: str, recipe: Recipe = INTERCHANGE) -> str:
    path = tmp_path / "k.c"
    path.write_text(kernel)
    scops = extract_scops(path).scops
    return replace_regions(path, {0: apply_recipe(scops[0], recipe)}, scops)


def _original_and_drop_in(tmp_path: Path, kernel: str, main: str) -> str:
    """Build ``kernel`` with ``main`` as written and as drop-in code (interchanged), check that both print
    the same, and return which schedule the drop-in code reported running."""
    header = "#include <stdio.h>\n#include <stdlib.h>\n"
    want = subprocess.run([str(_build(tmp_path, "original", header + kernel + main))], check=True,
                          capture_output=True, text=True).stdout
    dropin = reports_its_choice(_guarded(tmp_path, kernel))
    got = subprocess.run([str(_build(tmp_path, "tuned", header + dropin + main))], check=True,
                         capture_output=True, text=True)
    assert got.stdout == want
    return got.stderr


def _overlap(n: int, m: int, rows_a: list[int], rows_b: list[int]) -> bool:
    """Whether a row of ``a`` (m + 1 elements, written) shares an element with another row of a or b."""
    spans_a = [(o, o + m + 1) for o in rows_a]
    others = [(o, o + m) for o in rows_b]
    return any(lo < hi2 and lo2 < hi for k, (lo, hi) in enumerate(spans_a)
               for lo2, hi2 in [*spans_a[:k], *spans_a[k + 1:], *others])


def test_an_interchange_over_row_pointers_gives_the_original_answer_and_runs_where_rows_are_apart(
        tmp_path_factory: object) -> None:
    tmp_path = tmp_path_factory.mktemp("rows")  # type: ignore[attr-defined]
    guarded = _guarded(tmp_path, KERNEL)
    assert "#pragma GCC ivdep" in guarded and "holds pointers to rows" not in guarded
    header = "#include <stdio.h>\n#include <stdlib.h>\n"
    original = _build(tmp_path, "original", header + KERNEL + MAIN)
    tuned = _build(tmp_path, "tuned", header + reports_its_choice(guarded) + MAIN)
    unchecked = _build(tmp_path, "unchecked", header + guarded.replace("if (perfembed_check_ok)\n", "if (1)\n") + MAIN)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def check(data: st.DataObject) -> None:
        n, m = data.draw(st.integers(1, 6)), data.draw(st.integers(1, 8))
        if data.draw(st.booleans()):  # every row in a slot of its own, in any order
            slots = data.draw(st.permutations(range(2 * n)))
            offsets = [s * (m + 1) for s in slots]
        else:
            offsets = data.draw(st.lists(st.integers(0, 4 * (m + 1)), min_size=2 * n, max_size=2 * n))
        args = [str(n), str(m), *map(str, offsets)]
        want = subprocess.run([str(original), *args], check=True, capture_output=True, text=True).stdout
        got = subprocess.run([str(tuned), *args], check=True, capture_output=True, text=True)
        assert got.stdout == want
        assert got.stderr == f"tuned={int(not _overlap(n, m, offsets[:n], offsets[n:]))}\n"

    check()
    # The check is what keeps the answer: without it, rows one element apart (a[i + 1] == a[i] + 1) give
    # another sum (the interchanged loop reads a[2][0] after writing it, the original before).
    args = ["4", "4", "0", "1", "2", "3", "40", "50", "60", "70"]
    want = subprocess.run([str(original), *args], check=True, capture_output=True, text=True).stdout
    assert subprocess.run([str(tuned), *args], check=True, capture_output=True, text=True).stdout == want
    assert subprocess.run([str(unchecked), *args], check=True, capture_output=True, text=True).stdout != want


TRIANGLE = """void f(int n, double **a, double **b)
{
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++)
      a[i][j] = 0.5 * b[i][j] + a[i][j];
}
"""
# Rows of 1, 2, .. n elements packed one after another, as a triangular matrix is stored.
PACKED = """
int main(void)
{
  static double pa[64 * 65 / 2], pb[64 * 65 / 2];
  double *a[64], *b[64];
  for (int i = 0, at = 0; i < 64; at += ++i) { a[i] = pa + at; b[i] = pb + at; }
  for (int k = 0; k < 64 * 65 / 2; k++) { pa[k] = k % 7; pb[k] = k % 5; }
  void (*volatile call)(int, double **, double **) = f;
  call(64, a, b);
  double s = 0;
  for (int k = 0; k < 64 * 65 / 2; k++) s += pa[k] * (1 + k % 11);
  printf("%.17g\\n", s);
  return 0;
}
"""


def test_rows_of_unequal_length_packed_together_are_apart(tmp_path: Path) -> None:
    """Each row's own columns are checked (0..i for row i), not the longest row's for every row, which
    would take these packed rows to overlap."""
    assert _original_and_drop_in(tmp_path, TRIANGLE, PACKED) == "tuned=1\n"


def test_rows_the_check_cannot_walk_keep_the_original_schedule(tmp_path: Path) -> None:
    """Every other row (``a[2 * i]``): walking the rows between would read pointers the nest never reads."""
    code = _guarded(tmp_path, KERNEL.replace("a[i][j] =", "a[2 * i][j] =").replace("a[i][j + 1]", "a[2 * i][j + 1]"))
    assert "holds pointers to rows" in code and "perfembed_check_ok" not in code


UNSIGNED = """void f(int n, unsigned k, double **a, double **b)
{
  for (int i = k; i < n; i++)
    for (int j = i - k; j < i; j++)
      a[i][j] = 0.5 * b[i][j] + a[i][j + 1];
}
"""
# Rows of a one element apart: they overlap, so only the original's schedule gives the original's answer.
ONE_APART = """
int main(void)
{
  static double pa[64], pb[64];
  double *a[8], *b[8];
  for (int k = 0; k < 64; k++) { pa[k] = k % 13; pb[k] = k % 7; }
  for (int i = 0; i < 8; i++) { a[i] = pa + i; b[i] = pb + 8 * i; }
  void (*volatile call)(int, unsigned, double **, double **) = f;
  call(6, 2, a, b);
  double s = 0;
  for (int k = 0; k < 64; k++) s += pa[k] * (1 + k % 11);
  printf("%.17g\\n", s);
  return 0;
}
"""


def test_an_unsigned_size_in_a_rows_bounds_is_computed_in_long(tmp_path: Path) -> None:
    """Review of eb11ade (reproduced): row i's first column is i - k, which C computed in unsigned int
    (2^32 - k + i): the span started 32 GiB past its row, the sweep saw no overlap, and the tuned code ran
    on rows one element apart, printing another sum."""
    assert "((long)k)" in _guarded(tmp_path, UNSIGNED)
    assert _original_and_drop_in(tmp_path, UNSIGNED, ONE_APART) == "tuned=0\n"


def test_rows_the_original_may_never_load_are_not_walked(tmp_path: Path) -> None:
    """Review of eb11ade (reproduced): under a data guard, or through a subscript the analysis
    over-approximates, the nest may not load every row pointer in its footprint; the check loaded them all
    and crashed past the end of a one-row table that the original ran on. Such nests keep the original's
    schedule."""
    guarded = KERNEL.replace("a[i][j] = ", "if (b[i][j] > 0) a[i][j] = ")
    indirect = (KERNEL.replace("int m,", "int m, int *row,").replace("double **b", "double *b[n]")
                .replace("b[i][j]", "b[row[i]][j]"))
    for source in (guarded, indirect):
        code = _guarded(tmp_path, source)
        assert "holds pointers to rows" in code and "perfembed_check_ok" not in code


def test_the_paired_comparison_times_the_drop_in_code(tmp_path: Path) -> None:
    """The figure that accepts a recipe is the drop-in code's, its check included: ``measure`` reported
    20.1x for an interchange over row pointers whose drop-in code ran the original's schedule."""
    path = tmp_path / "k.c"
    path.write_text(KERNEL)
    scop = extract_scops(path).scops[0]
    with Harness(scop, {"n": 64, "m": 48}, reps=1, threads=1) as h:
        comparison = h.compare(INTERCHANGE, policy=AcceptancePolicy(min_runs=1, max_pairs=5))
        pair = next(h.workdir.glob("pair_*.c")).read_text()
    assert comparison.status == "ok"
    assert "if (perfembed_check_ok)" in pair and "static double *perfembed_v_a[64];" in pair  # the driver's name of a
