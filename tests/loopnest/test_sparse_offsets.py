"""Index arrays in the measurement driver: those that subscript through a constant scale or offset
(``x[col[j] + 1]``, ``x[2 * idx[i]]``) get a range that keeps those accesses in bounds; one used in a form
no range keeps in bounds is a one-line user error naming file:line, never a crash of the baseline; and
the driver's copies of them count in its static-size limit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from loopnest import extract_scops
from loopnest.errors import ParameterError
from loopnest.harness import Harness, array_layouts, synthesize_driver
from loopnest.harness.index_data import SparseChoice, index_contents
from loopnest.ir import Scop
from tests.security.cli import run_perfembed

CSR_SHIFTED = """\
void spmv_shifted(int n, int m, int nnz, const int rowptr[n + 1], const int col[nnz], const double val[nnz],
                  const double x[m], double y[n])
{
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = rowptr[i]; j < rowptr[i + 1]; j++)
            s += val[j] * x[col[j] - 1];
        y[i] = s;
    }
}
"""
GATHER_SCALED = """\
void gather_pairs(int n, int m, const int idx[n], const double x[m], double y[n])
{
    for (int i = 0; i < n; i++)
        y[i] = x[2 * idx[i] + 1] - x[idx[i]];
}
"""
GATHER_UNBOUNDED = """\
void gather_skewed(int n, int m, const int idx[n], const double x[m], double y[n])
{
    for (int i = 0; i < n; i++)
        y[i] = x[idx[i] + i];
}
"""


def nest(tmp_path: Path, name: str, text: str) -> Scop:
    path = tmp_path / name
    path.write_text(text)
    (scop,) = extract_scops(path).scops
    return scop


def test_an_offset_index_of_a_csr_structure_is_shifted_into_range(tmp_path: Path) -> None:
    scop = nest(tmp_path, "shifted.c", CSR_SHIFTED)
    (col,) = [r for r in scop.index_arrays if r.name == "col"]
    assert col.role == "indices" and col.forms == (("m", 1, -1),) and col.targets == ("x[0] as v-1",)
    assert scop.index_structures[0].indices == ("col",)  # part of the CSR structure, not random integers
    params = {"n": 60, "m": 50, "nnz": 600}
    values = index_contents(scop, params, array_layouts(scop, params), SparseChoice(density=0.2))
    used = values["col"][: values["rowptr"][60]]
    assert used.min() >= 1 and used.max() <= 50  # x[col[j] - 1] in [0, 50)
    assert len(np.unique(used)) > 40  # the pattern's 50 columns, shifted by one
    with Harness(scop, params, reps=1, threads=1) as harness:
        assert harness.baseline().ok


def test_a_scaled_index_gets_the_values_that_keep_every_use_in_bounds(tmp_path: Path) -> None:
    scop = nest(tmp_path, "pairs.c", GATHER_SCALED)
    (idx,) = scop.index_arrays
    assert idx.extents == ("m",) and idx.forms == (("m", 2, 1),)
    params = {"n": 2000, "m": 9}
    values = index_contents(scop, params, array_layouts(scop, params))["idx"]
    assert values.min() == 0 and values.max() == 3  # 2*3 + 1 = 7 < 9, and x[idx] too
    with Harness(scop, params, reps=1, threads=1) as harness:
        assert harness.baseline().ok
    with pytest.raises(ParameterError, match=r"no value of the index array idx keeps .* in bounds"):
        index_contents(scop, {"n": 10, "m": 1}, array_layouts(scop, {"n": 10, "m": 1}))


def test_an_index_in_a_form_no_range_keeps_in_bounds_is_a_user_error_naming_file_and_line(tmp_path: Path) -> None:
    """Before: idx got no role, the driver's random integers (4..11), and x[idx[i] + i] ran past x."""
    scop = nest(tmp_path, "skewed.c", GATHER_UNBOUNDED)
    (idx,) = scop.index_arrays
    assert idx.unbounded == (f"{tmp_path / 'skewed.c'}:4: x[(idx[i] + i)]",)
    with pytest.raises(ParameterError) as err:
        Harness(scop, {"n": 100, "m": 50}, reps=1)
    assert str(err.value).startswith(f"{tmp_path / 'skewed.c'}:4: x[(idx[i] + i)]: the index array idx subscripts in")
    proc = run_perfembed("measure", "skewed.c", "--param", "n=100", "--param", "m=50", cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert "skewed.c:4:" in line and "idx" in line and "Traceback" not in proc.stderr


def test_the_drivers_copies_of_the_index_arrays_count_in_its_static_size_limit() -> None:
    """Reproduction: the driver holds a static copy of every index array it reads in, which the 2 GiB
    check left out; 1.6 GiB of arrays and 0.5 GiB of copies passed it and could not link."""
    (scop,) = extract_scops(Path(__file__).parent / "sparse_kernels/spmv_csr.c").scops
    params = {"n": 1000, "m": 1000, "nnz": 140_000_000}  # col 534 MiB, val 1068 MiB, a copy of col
    layouts = array_layouts(scop, params)  # the arrays alone fit
    with pytest.raises(ParameterError, match=r"need 2136 MiB \(534 MiB of them copies of the index arrays"):
        Harness(scop, params, reps=1)  # refused before 140 million indices are generated
    with pytest.raises(ParameterError, match="copies of the index arrays"):
        synthesize_driver(scop, "", params, layouts, inputs=("rowptr", "col"))
