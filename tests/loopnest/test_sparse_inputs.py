"""Index structures for sparse nests: every generated pattern is a valid CSR structure of the kind
asked for, the same seed gives the same matrix, and a Matrix Market file is read or refused in one line."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.io
import scipy.sparse
from hypothesis import given, settings
from hypothesis import strategies as st

from loopnest.errors import InputError, ParameterError
from loopnest.harness.sparse_inputs import (
    SPARSITY_KINDS,
    CsrPattern,
    generate_pattern,
    index_violation,
    read_matrix_market,
)


def assert_valid_csr(p: CsrPattern) -> None:
    assert p.pointers.shape == (p.n_rows + 1,) and p.pointers[0] == 0 and p.pointers[-1] == p.nnz
    assert np.all(np.diff(p.pointers) >= 0)
    assert index_violation(p.indices, 0, p.n_cols) is None
    for r in range(p.n_rows):
        row = p.indices[p.pointers[r]:p.pointers[r + 1]]
        assert np.all(np.diff(row) > 0), f"row {r} not sorted and distinct: {row}"


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(SPARSITY_KINDS), n_rows=st.integers(0, 60), n_cols=st.integers(1, 60),
       density=st.floats(0.001, 1.0), cap=st.none() | st.integers(0, 500), seed=st.integers(0, 3))
def test_generated_patterns_are_valid_csr_of_the_asked_size(kind: str, n_rows: int, n_cols: int, density: float,
                                                            cap: int | None, seed: int) -> None:
    p = generate_pattern(n_rows, n_cols, sparsity=kind, density=density, max_nnz=cap, seed=seed)
    assert (p.n_rows, p.n_cols) == (n_rows, n_cols)
    assert_valid_csr(p)
    target = min(round(density * n_rows * n_cols), cap if cap is not None else n_rows * n_cols)
    if kind == "banded":  # whole rows of equal width: at least the target, less than a row more
        assert p.nnz == 0 if target == 0 else target <= p.nnz < target + n_rows
    else:
        assert p.nnz == target
    again = generate_pattern(n_rows, n_cols, sparsity=kind, density=density, max_nnz=cap, seed=seed)
    assert np.array_equal(p.pointers, again.pointers) and np.array_equal(p.indices, again.indices)


def test_kinds_differ_in_the_shape_a_tuner_cares_about() -> None:
    uniform = generate_pattern(4000, 4000, sparsity="uniform", density=0.005)
    banded = generate_pattern(4000, 4000, sparsity="banded", density=0.005)
    powerlaw = generate_pattern(4000, 4000, sparsity="powerlaw", density=0.005)
    # Balanced rows versus a few rows holding a large share: what makes a static schedule lose.
    assert uniform.row_lengths.max() < 3 * uniform.row_lengths.mean()
    assert powerlaw.row_lengths.max() > 50 * powerlaw.row_lengths.mean()
    # A band: every row's columns are contiguous and near the diagonal.
    starts = banded.indices[banded.pointers[:-1]]
    assert np.all(np.abs(starts - np.arange(4000)) <= banded.row_lengths.max())
    assert np.all(np.diff(banded.indices.reshape(4000, -1), axis=1) == 1)


def test_seed_changes_the_pattern_and_transpose_is_the_csc_structure() -> None:
    a, b = (generate_pattern(50, 40, density=0.1, seed=s) for s in (0, 1))
    assert not np.array_equal(a.indices, b.indices)
    t = a.transposed()
    assert (t.n_rows, t.n_cols, t.nnz) == (40, 50, a.nnz)
    assert_valid_csr(t)
    assert (t.to_scipy() != a.to_scipy().T).nnz == 0


@pytest.mark.parametrize(("args", "message"), [
    ({"sparsity": "diagonal"}, "--sparsity 'diagonal': one of uniform, banded, powerlaw"),
    ({"density": 0.0}, "--density 0.0"),
    ({"density": 1.5}, "--density 1.5"),
])
def test_bad_choices_are_parameter_errors(args: dict[str, object], message: str) -> None:
    with pytest.raises(ParameterError, match=message.replace("(", r"\(").replace(")", r"\)")):
        generate_pattern(10, 10, **args)  # type: ignore[arg-type]


def test_matrix_market_file_round_trips_with_values(tmp_path: Path) -> None:
    matrix = scipy.sparse.random(30, 20, density=0.2, random_state=1, format="csr")
    scipy.io.mmwrite(tmp_path / "m.mtx", matrix)
    p = read_matrix_market(tmp_path / "m.mtx")
    assert (p.n_rows, p.n_cols, p.nnz) == (30, 20, matrix.nnz)
    assert_valid_csr(p)
    assert p.values is not None
    assert abs(p.to_scipy() - matrix).max() < 1e-12


def test_symmetric_matrix_market_file_is_expanded(tmp_path: Path) -> None:
    (tmp_path / "s.mtx").write_text("%%MatrixMarket matrix coordinate real symmetric\n3 3 2\n1 1 4.0\n3 1 2.0\n")
    p = read_matrix_market(tmp_path / "s.mtx")
    assert p.to_scipy().toarray().tolist() == [[4.0, 0, 2.0], [0, 0, 0], [2.0, 0, 0]]


@pytest.mark.parametrize(("text", "message"), [
    ("this is not a matrix\n", "bad.mtx: not a Matrix Market file"),
    ("%%MatrixMarket matrix coordinate complex general\n1 1 1\n1 1 1.0 2.0\n", "bad.mtx: complex matrices"),
    ("%%MatrixMarket matrix coordinate real general\n2 2 3\n1 1 1.0\n", "bad.mtx: malformed coordinate"),
])
def test_bad_matrix_files_are_one_line_input_errors(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "bad.mtx").write_text(text)
    with pytest.raises(InputError) as info:
        read_matrix_market(tmp_path / "bad.mtx")
    assert str(info.value).startswith(message) and "\n" not in str(info.value)


def test_missing_and_oversized_matrix_files_are_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="none.mtx: cannot read the matrix file"):
        read_matrix_market(tmp_path / "none.mtx")
    scipy.io.mmwrite(tmp_path / "big.mtx", scipy.sparse.eye(10, format="csr"))
    with pytest.raises(InputError, match="big.mtx: 10 entries, over the limit of 5"):
        read_matrix_market(tmp_path / "big.mtx", max_nnz=5)


def test_index_violation_names_the_first_bad_position() -> None:
    assert index_violation(np.array([0, 3, 2]), 0, 4) is None
    assert index_violation(np.array([0, 4, -1]), 0, 4) == (1, 4)
    assert index_violation(np.array([[0, 1], [-2, 0]]), 0, 4) == (2, -2)
