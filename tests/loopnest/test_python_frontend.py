"""The Python frontend lowers NumPy kernels to the IR the C frontend builds, with NumPy's semantics: each
kernel's IR, run statement instance by statement instance (:mod:`tests.loopnest.scop_interpreter`),
computes what NumPy computes on the same arrays; what it cannot lower is refused with file:line."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from loopnest.errors import ParameterError, SourceError
from loopnest.frontend.preprocess import PreprocessOptions
from loopnest.frontend.program import local_program
from loopnest.frontend.python.extract import extract_python, lower_python
from loopnest.frontend.python.kernel import PythonKernel
from loopnest.polyhedral import ScheduleSpace, compute_dependences
from loopnest.transform.parallel import blocking_dependences
from tests.loopnest.scop_interpreter import run_scop

KERNELS = '''
import numpy as np

def shift(A: "float64[N, M]"):
    for i in range(A.shape[0]):
        A[i, 1:-1] += A[i, 2:]

def shift_back(A: "float64[N, M]"):
    N, M = A.shape
    for i in range(N):
        A[i, 2:] += A[i, 1:-1]

def reverse(x: "float64[N]"):
    x[:] = x[::-1] * 2.0

def gemm(alpha: float, beta: float, C: "float64[NI, NJ]", A: "float64[NI, NK]", B: "float64[NK, NJ]"):
    C[:] = alpha * A @ B + beta * C

def loops(C: "float64[N, N]", A: "float64[N, N]"):
    N = len(C)
    for i in range(1, N):
        for j in range(i):
            C[i, j] = C[i - 1, j] * 0.5 + np.sqrt(np.abs(A[j, i]))

def reductions(A: "float64[N, M]", y: "float64[N]"):
    y[:] = np.sum(A, axis=1)
    z = np.max(A, axis=0) - np.min(A.T, axis=1)
    return np.sum(y) + np.max(z) + np.mean(A)

def accumulate(x: "float64[N]", y: "float64[N]"):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * y[i]
    return s

def temporaries(A: "float64[N, M]", x: "float64[M]"):
    N = A.shape[0]
    t = np.zeros((N,))
    u = np.empty_like(x)
    u[:] = np.exp(-x)
    for i in range(N):
        t[i] = A[i, :] @ u
    r = A.T @ t
    return t, r

def dot_rows(A: "float64[N, N]"):
    for i in range(1, A.shape[0]):
        A[i, :i] -= A[:i, :i] @ A[i, :i] * 0.1
        A[i, i] = np.dot(A[i, :i], A[:i, i]) + np.maximum(A[i, i], 0.0)

def stencil(T: int, A: "float64[N, N]", B: "float64[N, N]"):
    for t in range(T):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = np.where(B[1:-1, 1:-1] > 0.5, B[1:-1, 1:-1], A[1:-1, 1:-1])

def rebind(A: "float64[N]"):
    A = A * 2.0
    n = A.shape[0]
    B = A[1:n - 1] + A[:n - 2]
    return B
'''


def _source(tmp_path: Path, text: str = KERNELS) -> Path:
    path = tmp_path / "kernels.py"
    path.write_text(textwrap.dedent(text))
    return path


def _numpy(path: Path, function: str, args: list[Any]) -> Any:
    namespace: dict[str, Any] = {}
    exec(compile(path.read_text(), str(path), "exec"), namespace)  # noqa: S102 - the test's own kernels
    return namespace[function](*args)


def _arguments(kernel: PythonKernel, sizes: dict[str, int], rng: np.random.Generator) -> list[Any]:
    out: list[Any] = []
    for arg in kernel.args:
        if arg.shape is None:
            out.append(sizes[arg.name] if arg.name in sizes else float(rng.uniform(0.5, 1.5)))
            continue
        shape = tuple(int(eval(a.c_text(), {}, dict(sizes))) for a in arg.shape)  # noqa: S307 - "N - 2"
        out.append(rng.uniform(0.0, 1.0, size=shape))
    return out


def _check(path: Path, function: str, sizes: dict[str, int], seed: int = 0) -> None:
    kernel = lower_python(path, function)
    rng = np.random.default_rng(seed)
    args = _arguments(kernel, sizes, rng)
    data: dict[str, Any] = {kernel.ir_names[a.name]: np.array(v, copy=True) if a.shape is not None else v
                            for a, v in zip(kernel.args, args, strict=True)}
    for temp in kernel.temps.values():
        shape = tuple(int(eval(e.c_text(), {}, dict(sizes))) for e in temp.shape)  # noqa: S307
        data[temp.name] = np.full(shape, np.nan)
    params = {p: sizes[p] for p in kernel.scop.params}
    run_scop(kernel.scop, params, data)
    expected = _numpy(path, function, [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args])
    after = _numpy_args_after(path, function, args)
    for arg, theirs in zip(kernel.args, after, strict=True):
        if arg.shape is not None:  # in place: each argument array as NumPy leaves it
            mine = data[kernel.ir_names[arg.name]]
            np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12, err_msg=f"{function}: {arg.name}")
    got = [data[r.name] for r in kernel.returns]
    want = list(expected) if kernel.returns_tuple else [] if expected is None else [expected]
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, err_msg=f"{function}: returned value")


def _numpy_args_after(path: Path, function: str, args: list[Any]) -> list[Any]:
    copies = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    _numpy(path, function, copies)
    return copies


@pytest.mark.parametrize(("function", "sizes"), [
    ("shift", {"N": 3, "M": 7}), ("shift_back", {"N": 3, "M": 7}), ("reverse", {"N": 6}),
    ("gemm", {"NI": 4, "NJ": 5, "NK": 3}), ("loops", {"N": 5}), ("reductions", {"N": 4, "M": 5}),
    ("accumulate", {"N": 6}), ("temporaries", {"N": 4, "M": 3}), ("dot_rows", {"N": 5}),
    ("stencil", {"N": 6, "T": 2}), ("rebind", {"N": 7}),
])  # covariance and softmax_rows: with the benchmark's kernels below
def test_the_ir_computes_what_numpy_computes(tmp_path: Path, function: str, sizes: dict[str, int]) -> None:
    _check(_source(tmp_path), function, sizes)


def test_slices_sweep_once_where_the_dependences_allow_it(tmp_path: Path) -> None:
    path = _source(tmp_path)
    forward = lower_python(path, "shift").scop
    assert len(forward.statements) == 1 and forward.schedule.rows[0][3] == "i1"
    backward = lower_python(path, "shift_back").scop  # a forward sweep would read what it wrote: it runs backwards
    assert len(backward.statements) == 1 and backward.schedule.rows[0][3] == "-i1"
    swap = lower_python(path, "reverse").scop  # neither direction: the right-hand side goes to a temporary first
    assert [s.target.name for s in swap.statements] == ["perfembed_tmp", "x"]


def test_reductions_accumulate_in_their_target(tmp_path: Path) -> None:
    scop = lower_python(_source(tmp_path), "reductions").scop
    first, second = scop.statements[:2]
    assert first.to_c(lambda d: f"i{d}") == "y[i0] = 0;"
    assert second.to_c(lambda d: f"i{d}") == "y[i0] += A[i0][i1];"
    gemm = lower_python(_source(tmp_path), "gemm").scop
    assert gemm.params == ("NI", "NJ", "NK") and gemm.depth == 3
    assert gemm.arrays["C"].written and gemm.arrays["C"].storage == "param" and not gemm.arrays["A"].written



VECTOR_MATRIX = '''
def vm(v: "float64[M]", A: "float64[M, N]"):
    return v @ A

def mv(A: "float64[M, N]", x: "float64[N]"):
    return A @ x

def column_sums(A: "float64[M, N]"):
    return np.sum(A, axis=0)
'''


@pytest.mark.parametrize(("function", "update"), [
    ("vm", "result[i1] += (v[i0] * A[i0][i1]);"),  # was result[i0] += v[i1] * A[i1][i0]: down a column
    ("mv", "result[i0] += (A[i0][i1] * x[i1]);"),  # a row's dot product: the reduction stays innermost
    ("column_sums", "result[i1] += A[i0][i1];"),
])
def test_a_reduction_sweeps_rows_where_its_accesses_run_along_them(tmp_path: Path, function: str,
                                                                   update: str) -> None:
    path = _source(tmp_path, "import numpy as np\n" + VECTOR_MATRIX)
    scop = lower_python(path, function).scop
    assert scop.statements[-1].to_c(lambda d: f"i{d}") == update
    _check(path, function, {"M": 5, "N": 7})


ROW_TEMPORARIES = '''
def rows(A: "float64[R, Q, P]", C: "float64[P, P]"):
    R, Q, P = A.shape
    for r in range(R):
        for q in range(Q):
            A[r, q, :] = A[r, q, :] @ C

def relax(path: "float64[N, N]"):
    N = path.shape[0]
    for k in range(N):
        for i in range(N):
            path[i, :] = np.minimum(path[i, :], path[i, k] + path[k, :])
'''


def test_a_temporary_alone_does_not_keep_the_outer_loop_from_running_in_parallel(tmp_path: Path) -> None:
    """The row A[r, q, :] @ C is computed into a temporary before it is written back: one buffer shared by
    all iterations of r was a false dependence that kept r sequential; it gets one slice per r. Where the
    outer loop carries a true dependence as well (k of Floyd-Warshall), the buffer stays one."""
    path = _source(tmp_path, "import numpy as np\n" + ROW_TEMPORARIES)
    scop = lower_python(path, "rows").scop
    assert scop.arrays["perfembed_tmp"].dims == ("R", "P")
    blocking, _ = blocking_dependences(scop, ScheduleSpace(scop, compute_dependences(scop)), 0)
    assert blocking == []
    _check(path, "rows", {"R": 3, "Q": 4, "P": 5})
    relax = lower_python(path, "relax").scop
    assert relax.arrays["perfembed_tmp"].dims == ("N",)
    _check(path, "relax", {"N": 6})

SHIFT = '''
def f(A: "float64[N]"):
    A[{target}] {op} A[{source}] * 0.5
'''


@settings(max_examples=40, deadline=None)
@given(n=st.integers(4, 9), lo=st.integers(0, 3), shift=st.integers(-3, 3), step=st.sampled_from([1, 2, -1, -2]),
       op=st.sampled_from(["=", "+=", "*="]))
def test_overlapping_slices_keep_numpy_semantics(tmp_path_factory: pytest.TempPathFactory, n: int, lo: int,
                                                 shift: int, step: int, op: str) -> None:
    """``A[a:b:s] op= A[c:d:s]`` for every overlap and direction: one sweep, a backward one, or a temporary."""
    length = (n - lo - abs(shift) - 1) // abs(step)
    if length <= 0:
        return
    start, other = (lo, lo + shift) if shift >= 0 else (lo - shift, lo)
    if step < 0:
        start, other = start + (length - 1) * -step, other + (length - 1) * -step
    target = f"{start}:{start + step * length if start + step * length >= 0 else ''}:{step}"
    source = f"{other}:{other + step * length if other + step * length >= 0 else ''}:{step}"
    path = _source(tmp_path_factory.mktemp("shift"), SHIFT.format(target=target, op=op, source=source))
    _check(path, "f", {"N": n})


def test_example_inputs_give_shapes_and_sizes(tmp_path: Path) -> None:
    path = _source(tmp_path, "def f(A, n, alpha):\n    for i in range(n):\n        A[i, :] *= alpha\n")
    np.savez(tmp_path / "in.npz", A=np.zeros((5, 3)), n=np.int64(4), alpha=np.float64(2.0))
    scop = extract_python(path, inputs=tmp_path / "in.npz").scops[0]
    assert scop.params == () and scop.arrays["A"].dims == ("5", "3") and scop.arrays["alpha"].element_type == "double"
    np.savez(tmp_path / "bad.npz", A=np.array([object()], dtype=object))
    with pytest.raises(ParameterError, match="Python objects"):
        extract_python(path, inputs=tmp_path / "bad.npz")


@pytest.mark.parametrize(("body", "line", "construct"), [
    ("    i = 0\n    while i < N:\n        i += 1\n", 6, "while loop"),
    ("    for i in range(N):\n        if A[i] > 0:\n            A[i] = 0.0\n", 6, "if statement"),
    ("    for i in range(N):\n        A[i] = A[i - 1]\n", 6, "negative index"),
    ("    idx = A > 0\n    A[idx] = 0.0\n", 5, "comparison"),
    ("    print(A)\n", 5, "call as a statement"),
    ("    A[:] = np.fft.fft(A)\n", 5, "unsupported call"),
    ("    A[:] = A[: N - 1]\n", 5, "shape mismatch"),
    ("    for i in range(M):\n        A[i] = 0.0\n", 5, "undefined name"),
])
def test_unsupported_constructs_are_refused_with_their_line(tmp_path: Path, body: str, line: int,
                                                            construct: str) -> None:
    path = _source(tmp_path, f'import numpy as np\nN = 10\n\ndef f(A: "float64[N]", B: "float64[M]"):\n{body}')
    extraction = extract_python(path)
    assert not extraction.scops
    (rejected,) = extraction.rejected
    assert (rejected.construct, rejected.location.line, rejected.location.file) == (construct, line, str(path))
    assert construct in rejected.message


def test_parameters_without_types_and_missing_functions_are_named(tmp_path: Path) -> None:
    path = _source(tmp_path, "def f(A):\n    A[0] = 1.0\n")
    (rejected,) = extract_python(path).rejected
    assert rejected.construct == "untyped parameter" and "'A'" in rejected.message
    with pytest.raises(SourceError, match="no function named 'g'"):
        extract_python(path, function="g")
    bad = _source(tmp_path, "def f(:\n")
    with pytest.raises(SourceError, match="kernels.py:1"):
        extract_python(bad)


BENCHMARK_KERNELS = Path(__file__).resolve().parents[2] / "benchmarks" / "python" / "kernels.py"


def _benchmark_functions() -> list[str]:
    """The suite's kernels, by :data:`SIZES` read from the file's AST (the file is not imported here)."""
    tree = ast.parse(BENCHMARK_KERNELS.read_text())
    sizes = next(n.value for n in tree.body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "SIZES")
    return sorted(ast.literal_eval(sizes))


def test_the_benchmark_suite_has_the_twenty_kernels_issue_61_asks_for() -> None:
    functions = _benchmark_functions()
    assert len(functions) >= 20
    defined = {n.name for n in ast.parse(BENCHMARK_KERNELS.read_text()).body if isinstance(n, ast.FunctionDef)}
    assert set(functions) == defined


@pytest.mark.parametrize("function", _benchmark_functions())
def test_the_benchmark_kernels_lower_to_what_numpy_computes(function: str) -> None:
    """The suite ``perfembed bench python`` runs: every kernel is in the subset, and its IR is NumPy's."""
    sizes = {"N": 5, "M": 6, "NI": 3, "NJ": 4, "NK": 5, "TSTEPS": 3, "NR": 3, "NQ": 4, "NP": 5, "NX": 4, "NY": 5,
             "D": 3}
    _check(BENCHMARK_KERNELS, function, sizes)


def test_a_kernel_file_is_never_read_by_the_c_preprocessor(tmp_path: Path) -> None:
    """``perfembed suggest kernel.py``: a first line ``# ruff: noqa`` is a comment, not a directive that
    the C preprocessor refuses (it was, when the CLI looked for the file's headers)."""
    path = _source(tmp_path, "# ruff: noqa: F821\n#include <stdio.h>\n" + KERNELS)
    program = local_program(path, PreprocessOptions(), function="shift", params={"N": 4, "M": 5})
    assert program.language == "python" and not program.headers and program.source == path.read_text()
