"""Intel MKL for the benchmarks' MKL columns: where it is, why it is missing, and its calls through ctypes.

MKL comes from the optional extra ``pip install -e '.[mkl]'`` (the ``mkl`` wheel and ``sparse_dot_mkl``).
The wheel puts ``libmkl_rt.so.N`` in the environment's ``lib`` folder, where ``sparse_dot_mkl`` does
not look: ``MKL_RT`` must name the file before ``sparse_dot_mkl`` is imported (:func:`load_mkl`).

The benchmark's own process never loads MKL: its OpenMP threads busy-wait after each call
(``KMP_BLOCKTIME``, 200 ms by default) and would share the cores with the next variant. It only asks
:func:`mkl_problem` why the column would be empty; the calls run in a fresh process per round
(``benchmarks/lib_run.py``), which loads MKL with :func:`load_mkl` at the benchmark's thread count.

Sparse: MKL's inspector-executor API, as its documentation advises for repeated products (the handle
made once, ``mkl_sparse_set_mm_hint`` / ``set_mv_hint`` and ``mkl_sparse_optimize`` before the
warm-up call, all outside the timed calls): ``C += A B`` with ``mkl_sparse_d_mm`` (row-major, beta 1)
and ``y = A x`` with ``mkl_sparse_d_mv``. Dense: ``cblas_dgemm`` and ``cblas_dsyrk``, in place.
"""

from __future__ import annotations

import ctypes
import importlib.metadata
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

Arrays = dict[str, np.ndarray]
INSTALL = "pip install -e '.[mkl]'"
ROW_MAJOR, NO_TRANS, TRANS, LOWER = 101, 111, 112, 122  # CBLAS enums
SPARSE_NON_TRANSPOSE, SPARSE_GENERAL, SPARSE_ROW_MAJOR = 10, 20, 101  # MKL sparse enums
EXPECTED_CALLS = 1000  # the inspector's hint: many calls with the same matrix

_INT, _DBL, _PTR = ctypes.c_int, ctypes.c_double, ctypes.c_void_p


class MatrixDescr(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("mode", ctypes.c_int), ("diag", ctypes.c_int)]


GENERAL = MatrixDescr(SPARSE_GENERAL, 0, 0)

_PROTOTYPES: dict[str, list[type]] = {
    "mkl_sparse_d_create_csr": [ctypes.POINTER(_PTR), _INT, _INT, _INT, _PTR, _PTR, _PTR, _PTR],
    "mkl_sparse_set_mv_hint": [_PTR, _INT, MatrixDescr, _INT],
    "mkl_sparse_set_mm_hint": [_PTR, _INT, MatrixDescr, _INT, _INT, _INT],
    "mkl_sparse_optimize": [_PTR],
    "mkl_sparse_d_mv": [_INT, _DBL, _PTR, MatrixDescr, _PTR, _DBL, _PTR],
    "mkl_sparse_d_mm": [_INT, _DBL, _PTR, MatrixDescr, _INT, _PTR, _INT, _INT, _DBL, _PTR, _INT],
    "mkl_sparse_destroy": [_PTR],
    "cblas_dgemm": [_INT, _INT, _INT, _INT, _INT, _INT, _DBL, _PTR, _INT, _PTR, _INT, _DBL, _PTR, _INT],
    "cblas_dsyrk": [_INT, _INT, _INT, _INT, _INT, _DBL, _PTR, _INT, _DBL, _PTR, _INT],
}


def find_mkl_rt() -> Path | None:
    """``libmkl_rt.so.*``: ``MKL_RT`` when it names a file, else the ``mkl`` wheel's (in ``sys.prefix/lib``)."""
    named = os.environ.get("MKL_RT")
    if named and Path(named).is_file():
        return Path(named)
    found: list[Path] = []
    try:
        dist = importlib.metadata.distribution("mkl")
        found = [Path(str(dist.locate_file(f))).resolve() for f in dist.files or []
                 if Path(str(f)).name.startswith("libmkl_rt.so")]
    except importlib.metadata.PackageNotFoundError:
        pass
    found = [p for p in found if p.is_file()] + sorted(Path(sys.prefix, "lib").glob("libmkl_rt.so.*"))
    return found[0] if found else None


def mkl_problem() -> str | None:
    """Why MKL cannot be used here, in one line (None when it can); MKL is not loaded."""
    missing = [name for name in ("mkl", "sparse_dot_mkl") if not _installed(name)]
    if missing:
        return f"not installed ({', '.join(missing)} missing): {INSTALL}"
    if find_mkl_rt() is None:
        return f"the mkl wheel's libmkl_rt.so.* was not found in {sys.prefix}/lib (set MKL_RT to it)"
    return None


def _installed(name: str) -> bool:
    try:
        importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


def mkl_environment(threads: int) -> dict[str, str]:
    """What a process that loads MKL needs in its environment (before ``sparse_dot_mkl`` is imported)."""
    env = {"MKL_NUM_THREADS": str(threads), "MKL_INTERFACE_LAYER": "LP64"}  # LP64: the drivers' 32-bit indices
    path = find_mkl_rt()
    if path is not None:
        env["MKL_RT"] = str(path)
    return env


@dataclass(frozen=True)
class Mkl:
    """libmkl_rt loaded, with the prototypes of the calls the benchmarks make."""

    lib: ctypes.CDLL
    path: str
    version: str
    threads: int

    def sparse(self, rowptr: np.ndarray, col: np.ndarray, val: np.ndarray, n: int, m: int) -> MklCsr:
        return MklCsr(self, rowptr, col, val, n, m)

    def dgemm(self, a: np.ndarray, b: np.ndarray, c: np.ndarray, *, alpha: float = 1.0, beta: float = 1.0,
              trans_b: bool = False) -> None:
        """``c = alpha a b + beta c`` (``b`` transposed when ``trans_b``), row-major, in place."""
        m, k = a.shape
        n = b.shape[0] if trans_b else b.shape[1]
        _check(c, (m, n))
        self.lib.cblas_dgemm(ROW_MAJOR, NO_TRANS, TRANS if trans_b else NO_TRANS, m, n, k, alpha, _p(a), k, _p(b),
                             b.shape[1], beta, _p(c), n)

    def dsyrk_lower(self, a: np.ndarray, c: np.ndarray, *, alpha: float, beta: float) -> None:
        """The lower triangle of ``c = alpha a a^T + beta c``, in place."""
        n, k = a.shape
        _check(c, (n, n))
        self.lib.cblas_dsyrk(ROW_MAJOR, LOWER, NO_TRANS, n, k, alpha, _p(a), k, beta, _p(c), n)


class MklCsr:
    """An MKL CSR handle on the driver's arrays (kept alive here), hinted and optimized for ``dense_cols``."""

    def __init__(self, mkl: Mkl, rowptr: np.ndarray, col: np.ndarray, val: np.ndarray, n: int, m: int) -> None:
        self.mkl, self.n, self.m = mkl, n, m
        rows, cols = np.ascontiguousarray(rowptr, dtype=np.int32), np.ascontiguousarray(col, dtype=np.int32)
        vals = np.ascontiguousarray(val, dtype=np.float64)
        self.arrays = (rows, cols, vals)  # MKL keeps pointers into them
        self.handle = _PTR()
        _status(mkl.lib.mkl_sparse_d_create_csr(ctypes.byref(self.handle), 0, n, m, _p(rows), _p(rows[1:]),
                                                _p(cols), _p(vals)), "mkl_sparse_d_create_csr")

    def optimize(self, dense_cols: int) -> None:
        """The inspector: hints for ``dense_cols`` columns (1: SpMV), then ``mkl_sparse_optimize``."""
        lib = self.mkl.lib
        if dense_cols == 1:
            _status(lib.mkl_sparse_set_mv_hint(self.handle, SPARSE_NON_TRANSPOSE, GENERAL, EXPECTED_CALLS), "mv hint")
        else:
            _status(lib.mkl_sparse_set_mm_hint(self.handle, SPARSE_NON_TRANSPOSE, GENERAL, SPARSE_ROW_MAJOR,
                                               dense_cols, EXPECTED_CALLS), "mm hint")
        _status(lib.mkl_sparse_optimize(self.handle), "mkl_sparse_optimize")

    def mv(self, x: np.ndarray, y: np.ndarray) -> None:
        """``y = A x``."""
        _check(x, (self.m,))
        _check(y, (self.n,))
        _status(self.mkl.lib.mkl_sparse_d_mv(SPARSE_NON_TRANSPOSE, 1.0, self.handle, GENERAL, _p(x), 0.0, _p(y)),
                "mkl_sparse_d_mv")

    def mm_add(self, b: np.ndarray, c: np.ndarray) -> None:
        """``C += A B``, B (m x k) and C (n x k) row-major."""
        k = b.shape[1]
        _check(b, (self.m, k))
        _check(c, (self.n, k))
        _status(self.mkl.lib.mkl_sparse_d_mm(SPARSE_NON_TRANSPOSE, 1.0, self.handle, GENERAL, SPARSE_ROW_MAJOR,
                                             _p(b), k, k, 1.0, _p(c), k), "mkl_sparse_d_mm")

    def close(self) -> None:
        if self.handle:
            self.mkl.lib.mkl_sparse_destroy(self.handle)
            self.handle = _PTR()


def load_mkl(threads: int) -> Mkl:
    """MKL in this process at ``threads`` threads: ``MKL_RT`` set, ``sparse_dot_mkl`` imported (it loads
    libmkl_rt and checks the integer interface), the prototypes set. RuntimeError with the reason."""
    problem = mkl_problem()
    if problem is not None:
        raise RuntimeError(problem)
    os.environ.update(mkl_environment(threads))
    try:
        import sparse_dot_mkl  # noqa: PLC0415 (only after MKL_RT is set)
    except (ImportError, OSError) as exc:
        raise RuntimeError(f"sparse_dot_mkl could not load MKL from {os.environ['MKL_RT']}: {exc}") from exc
    sparse_dot_mkl.mkl_set_num_threads(threads)
    lib = ctypes.CDLL(os.environ["MKL_RT"])  # the library sparse_dot_mkl loaded (dlopen: the same handle)
    for name, args in _PROTOTYPES.items():
        func = getattr(lib, name)
        func.argtypes, func.restype = args, ctypes.c_int
    return Mkl(lib, os.environ["MKL_RT"], str(sparse_dot_mkl.mkl_get_version_string()),
               int(sparse_dot_mkl.mkl_get_max_threads()))


# The peak kernels' MKL twins: the same computation as their numpy twins (benchmarks/peak_kernels.py), in place.
def _gemm(mkl: Mkl, v: Arrays) -> None:
    mkl.dgemm(v["A"], v["B"], v["C"], alpha=float(v["alpha"]), beta=1.0)


def _two_mm(mkl: Mkl, v: Arrays) -> None:
    mkl.dgemm(v["A"], v["B"], v["T"], alpha=float(v["alpha"]), beta=0.0)
    mkl.dgemm(v["T"], v["C"], v["D"], alpha=1.0, beta=float(v["beta"]))


def _syrk(mkl: Mkl, v: Arrays) -> None:
    mkl.dsyrk_lower(v["A"], v["C"], alpha=float(v["alpha"]), beta=float(v["beta"]))


def _batched(mkl: Mkl, v: Arrays) -> None:
    for a, b, c in zip(v["A"], v["B"], v["C"], strict=True):
        mkl.dgemm(a, b, c, trans_b=True)


PEAK_TWINS: dict[str, Callable[[Mkl, Arrays], None]] = {"gemm": _gemm, "2mm": _two_mm, "syrk": _syrk,
                                                        "batched": _batched}


def _p(a: np.ndarray) -> int:
    if not a.flags.c_contiguous:
        raise ValueError("MKL is given a non-contiguous array")
    return int(a.ctypes.data)


def _check(a: np.ndarray, shape: tuple[int, ...]) -> None:
    if a.shape != shape or a.dtype != np.float64 or not a.flags.c_contiguous:
        raise ValueError(f"MKL expected a contiguous float64 array of shape {shape}, got {a.dtype} {a.shape}")


def _status(code: int, call: str) -> None:
    if code != 0:
        raise RuntimeError(f"{call} failed with MKL sparse status {code}")
