"""Scalars declared at the top of a function, C89 style, that a nest uses as its own temporaries
(loopnest.frontend.temporaries): ``double s;`` set first in each run of a loop body and read nowhere
after the nest is private to that loop, so the loops around it can run in parallel. Before, it was read
as a variable that outlives the nest, and every loop around it carried a dependence on it (the suite's
covariance program: no parallel loop in its X^T X nest)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from loopnest import Recipe, apply_recipe, extract_scops, replace_regions

PROGRAM = """#include <stdio.h>
#define N 64
static double data[N][N], cov[N][N], mean[N];

void kernel(int n, double data[N][N], double cov[N][N], double mean[N])
{
    int i, j, k;
    double s;

    for (i = 0; i < n; i++) {
        s = 0.0;
        for (k = 0; k < n; k++)
            s += data[k][i];
        mean[i] = s / n;
    }
    for (i = 0; i < n; i++)
        for (j = i; j < n; j++) {
            s = 0.0;
            for (k = 0; k < n; k++)
                s += data[k][i] * data[k][j];
            cov[i][j] = s;
        }
    /*AFTER*/
}

int main(void)
{
    double sum = 0.0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            data[i][j] = (double)((i * 7 + j * 3) % 11) / 11.0;
    kernel(N, data, cov, mean);
    for (int i = 0; i < N; i++) {
        sum += mean[i];
        for (int j = 0; j < N; j++)
            sum += cov[i][j];
    }
    printf("%.12f\\n", sum);
    return 0;
}
"""


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "cov.c"
    path.write_text(text)
    return path


def _run(source: Path, exe: Path) -> str:
    subprocess.run(["gcc", "-O2", "-fopenmp", str(source), "-o", str(exe)], check=True)
    return subprocess.run([str(exe)], capture_output=True, text=True, check=True,
                          env={**os.environ, "OMP_NUM_THREADS": "2"}).stdout


def test_a_function_scope_temporary_is_private_and_its_loops_parallel(tmp_path: Path) -> None:
    path = _write(tmp_path, PROGRAM)
    scops = extract_scops(path, function="kernel").scops
    assert len(scops) == 2
    for scop in scops:
        assert [a.name for a in scop.local_scalars] == ["s"], scop.name
        assert "s" not in {a.name for a in scop.outputs}
    parallel = Recipe.from_dict({"steps": [{"op": "parallelize", "loop": 0}]})
    tuned = {n: apply_recipe(scop, parallel) for n, scop in enumerate(scops)}  # illegal before: raised
    new = tmp_path / "tuned.c"
    new.write_text(replace_regions(path, tuned, scops))
    assert "#pragma omp parallel for" in new.read_text()
    assert _run(new, tmp_path / "tuned") == _run(path, tmp_path / "original")


@pytest.mark.parametrize(("change", "why"), [
    (("/*AFTER*/", "mean[0] += s;"), "read after the nest"),
    (("/*AFTER*/", "if (s > 1.0) mean[0] = 0.0;"), "read in a condition after the nest"),
    (("/*AFTER*/", "{ double *p = &s; *p = 0.0; }"), "its address is taken"),
    (("    double s;", "    static double s;"), "static: it keeps its value between calls"),
    (("        s = 0.0;\n        for (k = 0; k < n; k++)\n            s += data[k][i];",
      "        for (k = 0; k < n; k++)\n            s += data[k][i];"), "read before it is set"),
])
def test_a_scalar_whose_value_may_be_used_stays_the_functions(tmp_path: Path, change: tuple[str, str],
                                                              why: str) -> None:
    old, new = change
    assert old in PROGRAM
    scop = extract_scops(_write(tmp_path, PROGRAM.replace(old, new, 1)), function="kernel").scops[0]
    assert scop.arrays["s"].storage == "local", why
    assert not scop.local_scalars
