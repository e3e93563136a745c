"""Index structures for sparse nests: generated CSR patterns and Matrix Market files.

A nest that reads ``x[col[j]]`` inside ``for (j = rowptr[i]; j < rowptr[i+1]; j++)`` only means
something on a valid structure (pointers non-decreasing, indices in range), so the measurement
driver fills such arrays from a :class:`CsrPattern`: generated here (``--sparsity``,
``--density``) or read from the user's matrix (``--matrix FILE.mtx``). A CSC nest takes the
pattern of the transpose (:meth:`CsrPattern.transposed`).

The generated kinds, after the matrices sparse kernels are usually tuned on:

- ``uniform``: every entry present with the same probability (Erdős–Rényi); rows are balanced.
- ``banded``: a dense band around the diagonal, as from finite-difference and FEM meshes.
- ``powerlaw``: row lengths follow a Zipf law (a few rows hold most entries, as in web and social
  graphs), the case where a static schedule of the row loop is imbalanced.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.io
import scipy.sparse

from loopnest.errors import InputError, ParameterError

SPARSITY_KINDS = ("uniform", "banded", "powerlaw")
# Exponent of the Zipf law of powerlaw row lengths: at 1.0 the longest row of a 10,000-row matrix
# holds about 10% of the entries.
POWERLAW_EXPONENT = 1.0
# A matrix file larger than this is refused before it is read (the measurement driver holds its
# arrays in memory, and the file is parsed in the request's time budget).
MAX_FILE_NNZ = 50_000_000
# Rows or columns of a matrix file past this are refused from its header, before anything is allocated
# (2 x 10^8 rows cost 2.3 GB of row pointers; 10^19 overflowed int64).
MAX_FILE_DIM = 10_000_000


@dataclass(frozen=True, eq=False)
class CsrPattern:
    """A sparse matrix's structure in compressed rows; ``values`` only when read from a file."""

    n_rows: int
    n_cols: int
    pointers: np.ndarray  # int64, n_rows + 1; pointers[0] == 0, non-decreasing, pointers[-1] == nnz
    indices: np.ndarray  # int64, nnz; each in [0, n_cols), sorted and distinct within a row
    values: np.ndarray | None = None  # float64, nnz

    @property
    def nnz(self) -> int:
        return int(self.indices.size)

    @property
    def row_lengths(self) -> np.ndarray:
        return np.diff(self.pointers)

    def to_scipy(self) -> scipy.sparse.csr_matrix:
        data = self.values if self.values is not None else np.ones(self.nnz)
        return scipy.sparse.csr_matrix((data, self.indices, self.pointers), shape=(self.n_rows, self.n_cols))

    def transposed(self) -> CsrPattern:
        """The pattern of the transpose: the CSC arrays of this matrix."""
        return _from_scipy(self.to_scipy().T.tocsr(), self.values is not None)


def _check_shape(n_rows: int, n_cols: int, sparsity: str, density: float) -> None:
    if n_rows < 0 or n_cols < 0:
        raise ParameterError(f"a sparse matrix of {n_rows} x {n_cols}: extents must be >= 0")
    if sparsity not in SPARSITY_KINDS:
        raise ParameterError(f"--sparsity {sparsity!r}: one of {', '.join(SPARSITY_KINDS)}")
    if not 0.0 < density <= 1.0:
        raise ParameterError(f"--density {density}: a fraction of the entries, in (0, 1]")


def generate_pattern(n_rows: int, n_cols: int, *, sparsity: str = "uniform", density: float = 0.01,
                     max_nnz: int | None = None, seed: int = 0) -> CsrPattern:
    """A random pattern of ``sparsity`` kind with about ``density * n_rows * n_cols`` entries, at
    most ``max_nnz`` (the capacity of the nest's index arrays). The same arguments give the same
    pattern (``seed``), so a baseline and its variants run on the same matrix."""
    _check_shape(n_rows, n_cols, sparsity, density)
    target = int(round(density * n_rows * n_cols))
    if max_nnz is not None:
        target = min(target, max(int(max_nnz), 0))
    if target == 0 or n_rows == 0 or n_cols == 0:
        return CsrPattern(n_rows, n_cols, np.zeros(n_rows + 1, np.int64), np.zeros(0, np.int64))
    if sparsity == "banded":
        return _banded(n_rows, n_cols, target)
    rng = np.random.default_rng(seed)
    weights = np.full(n_rows, 1.0 / n_rows)
    if sparsity == "powerlaw":
        weights = 1.0 / np.arange(1, n_rows + 1, dtype=np.float64) ** POWERLAW_EXPONENT
        weights = rng.permutation(weights / weights.sum())  # long rows anywhere, not only first
    counts = _row_counts(rng, min(target, n_rows * n_cols), weights, n_cols)
    return _with_columns(rng, counts, n_cols)


def _row_counts(rng: np.random.Generator, total: int, weights: np.ndarray, n_cols: int) -> np.ndarray:
    """Row lengths summing to ``total`` drawn by ``weights``, none over ``n_cols``: what a full row
    cannot hold is drawn again over the rows with room."""
    counts = np.zeros(weights.size, np.int64)
    left = total
    while left > 0:
        w = np.where(counts < n_cols, weights, 0.0)
        counts += rng.multinomial(left, w / w.sum())
        left = int(np.maximum(counts - n_cols, 0).sum())
        counts = np.minimum(counts, n_cols)
    return counts


def _with_columns(rng: np.random.Generator, counts: np.ndarray, n_cols: int) -> CsrPattern:
    """Distinct uniform columns for each row: duplicates of a vectorized draw are drawn again; a
    row over half full is drawn as a prefix of a permutation instead (redrawing would crawl)."""
    rows = np.arange(counts.size, dtype=np.int64)
    dense = counts > n_cols // 2
    keys = np.zeros(0, np.int64)
    parts = [r * n_cols + (np.arange(n_cols) if counts[r] == n_cols else rng.choice(n_cols, counts[r], replace=False))
             for r in rows[dense]]
    keys = _sorted_distinct(np.concatenate([keys, *parts]))
    need = np.where(dense, 0, counts)
    while need.sum() > 0:
        drawn = np.repeat(rows, need) * n_cols + rng.integers(0, n_cols, int(need.sum()))
        keys = _sorted_distinct(np.concatenate([keys, drawn]))
        need = np.where(dense, 0, counts - np.bincount(keys // n_cols, minlength=counts.size))
    return _from_keys(counts.size, n_cols, keys)


def _sorted_distinct(keys: np.ndarray) -> np.ndarray:
    # np.unique's hash path is ten times slower than a sort on millions of int64 keys.
    keys = np.sort(keys)
    return keys[np.concatenate([[True], keys[1:] != keys[:-1]])] if keys.size else keys


def _banded(n_rows: int, n_cols: int, target: int) -> CsrPattern:
    """Rows of equal length ``width`` centred on the (scaled) diagonal."""
    width = max(1, min(n_cols, -(-target // n_rows)))
    centre = (np.arange(n_rows, dtype=np.int64) * n_cols) // max(n_rows, 1)
    first = np.clip(centre - width // 2, 0, n_cols - width)
    cols = (first[:, None] + np.arange(width, dtype=np.int64)[None, :]).ravel()
    return CsrPattern(n_rows, n_cols, np.arange(n_rows + 1, dtype=np.int64) * width, cols)


def _from_keys(n_rows: int, n_cols: int, keys: np.ndarray) -> CsrPattern:
    rows, cols = np.divmod(keys, n_cols)
    pointers = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=n_rows))]).astype(np.int64)
    return CsrPattern(n_rows, n_cols, pointers, cols.astype(np.int64))


def _from_scipy(matrix: scipy.sparse.csr_matrix, keep_values: bool) -> CsrPattern:
    matrix.sum_duplicates()
    matrix.sort_indices()
    values = np.asarray(matrix.data, dtype=np.float64) if keep_values else None
    return CsrPattern(int(matrix.shape[0]), int(matrix.shape[1]), np.asarray(matrix.indptr, np.int64),
                      np.asarray(matrix.indices, np.int64), values)


def read_matrix_market(path: str | Path, *, max_nnz: int = MAX_FILE_NNZ, max_dim: int = MAX_FILE_DIM) -> CsrPattern:
    """The matrix of a Matrix Market file (coordinate or array, real, integer or pattern; symmetric
    ones expanded), with its values. Every fault of the file is one :class:`InputError` line; its header's
    sizes are checked against ``max_dim`` rows and columns and ``max_nnz`` entries before the data is read."""
    name = Path(path).name
    try:
        rows, cols, entries, fmt, field, _symmetry = scipy.io.mminfo(path)
    except OSError as exc:
        raise InputError(f"{name}: cannot read the matrix file: {exc.strerror or exc}") from None
    except (ValueError, IndexError, UnicodeDecodeError) as exc:
        raise InputError(f"{name}: not a Matrix Market file ({_first_line(exc)})") from None
    except OverflowError:  # a size past int64 (10^19 rows)
        raise InputError(f"{name}: a size in the header is over the limits ({max_dim:,} rows or columns, "
                         f"{max_nnz:,} entries)") from None
    if field == "complex":
        raise InputError(f"{name}: complex matrices are not supported (real, integer or pattern only)")
    _check_header(name, rows, cols, entries, max_nnz=max_nnz, max_dim=max_dim)
    try:
        matrix = scipy.io.mmread(path)
    except (ValueError, IndexError, OverflowError, UnicodeDecodeError) as exc:
        raise InputError(f"{name}: malformed {fmt} Matrix Market data ({_first_line(exc)})") from None
    sparse = scipy.sparse.csr_matrix(matrix, dtype=np.float64)
    if sparse.shape != (rows, cols):
        raise InputError(f"{name}: the header says {rows} x {cols}, the data is {sparse.shape[0]} x {sparse.shape[1]}")
    return _from_scipy(sparse, keep_values=True)


def _check_header(name: str, rows: int, cols: int, entries: int, *, max_nnz: int, max_dim: int) -> None:
    """Refuse sizes that are not positive or over the limits, from the header alone."""
    for count, what in ((rows, "rows"), (cols, "columns")):
        if count < 1:
            raise InputError(f"{name}: the header declares {count} {what}; a matrix has at least one")
        if count > max_dim:
            raise InputError(f"{name}: {count:,} {what}, over the limit of {max_dim:,}")
    if entries < 0 or entries > max_nnz:
        raise InputError(f"{name}: {entries:,} entries, over the limit of {max_nnz:,}" if entries > 0 else
                         f"{name}: the header declares {entries} entries")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:200] if text else type(exc).__name__


def index_violation(values: np.ndarray, low: int, high: int) -> tuple[int, int] | None:
    """The first ``(position, value)`` of ``values`` outside ``[low, high)``, or None."""
    flat = np.asarray(values).ravel()
    bad = np.flatnonzero((flat < low) | (flat >= high))
    return (int(bad[0]), int(flat[bad[0]])) if bad.size else None
