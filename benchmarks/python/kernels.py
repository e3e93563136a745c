# ruff: noqa: F821, B007 - the hints are perfembed's shape strings ("float64[N, M]"), not names
# mypy: disable-error-code="name-defined, valid-type"
"""NumPy kernels in the style of the public NumPy benchmark suites of scientific kernels (dense linear algebra,
stencils with time loops, data mining, a solver, reductions; slices only, scalar loops, and mixes). Each
takes its sizes from its arguments' shapes; :data:`SIZES` gives the sizes the benchmark runs them at."""

import numpy as np

SIZES = {
    "gemm": {"NI": 1000, "NJ": 1100, "NK": 1200},
    "atax": {"M": 1900, "N": 2100},
    "jacobi_1d": {"N": 40000, "TSTEPS": 500},
    "jacobi_2d": {"N": 1300, "TSTEPS": 100},
    "heat_3d": {"N": 120, "TSTEPS": 50},
    "covariance": {"M": 1200, "N": 1400},
    "trisolv": {"N": 2000},
    "softmax_rows": {"N": 2000, "M": 2000},
    "seidel_2d": {"N": 400, "TSTEPS": 20},
    "lu": {"N": 600},
}


def gemm(alpha: float, beta: float, C: "float64[NI, NJ]", A: "float64[NI, NK]", B: "float64[NK, NJ]"):
    C[:] = alpha * A @ B + beta * C


def atax(A: "float64[M, N]", x: "float64[N]"):
    return (A @ x) @ A


def jacobi_1d(TSTEPS: int, A: "float64[N]", B: "float64[N]"):
    for t in range(1, TSTEPS):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])


def jacobi_2d(TSTEPS: int, A: "float64[N, N]", B: "float64[N, N]"):
    for t in range(1, TSTEPS):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def heat_3d(TSTEPS: int, A: "float64[N, N, N]", B: "float64[N, N, N]"):
    for t in range(1, TSTEPS):
        B[1:-1, 1:-1, 1:-1] = (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1])
                               + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1])
                               + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, :-2])
                               + A[1:-1, 1:-1, 1:-1])
        A[1:-1, 1:-1, 1:-1] = (0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1])
                               + 0.125 * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1])
                               + 0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, :-2])
                               + B[1:-1, 1:-1, 1:-1])


def covariance(data: "float64[N, M]"):
    N, M = data.shape
    mean = np.mean(data, axis=0)
    data -= mean
    cov = np.zeros((M, M))
    for i in range(M):
        cov[i:, i] = cov[i, i:] = data[:, i] @ data[:, i:] / (N - 1.0)
    return cov


def trisolv(L: "float64[N, N]", x: "float64[N]", b: "float64[N]"):
    for i in range(x.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]


def softmax_rows(x: "float64[N, M]"):
    N, M = x.shape
    out = np.empty((N, M))
    for i in range(N):
        m = np.max(x[i, :])
        out[i, :] = np.exp(x[i, :] - m)
        out[i, :] /= np.sum(out[i, :])
    return out


def seidel_2d(TSTEPS: int, A: "float64[N, N]"):
    N = A.shape[0]
    for t in range(TSTEPS):
        for i in range(1, N - 1):
            A[i, 1:-1] += (A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:] + A[i, 2:] + A[i + 1, :-2]
                           + A[i + 1, 1:-1] + A[i + 1, 2:])
            for j in range(1, N - 1):
                A[i, j] += A[i, j - 1]
                A[i, j] /= 9.0


def lu(A: "float64[N, N]"):
    N = A.shape[0]
    for i in range(N):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
            A[i, j] /= A[j, j]
        for j in range(i, N):
            A[i, j] -= A[i, :i] @ A[:i, j]
