# ruff: noqa: F821, B007 - the hints are perfembed's shape strings ("float64[N, M]"), not names
# mypy: disable-error-code="name-defined, valid-type"
"""NumPy kernels in the style of the public NumPy benchmark suites of scientific kernels (dense linear algebra,
stencils with time loops, data mining, solvers, reductions; slices only, scalar loops, and mixes), written as
a NumPy user writes them rather than translated from the C corpus. Each takes its sizes from its arguments'
shapes; :data:`SIZES` gives the sizes the benchmark runs them at."""

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
    "gesummv": {"N": 4000},
    "mvt": {"N": 4000},
    "syrk": {"N": 600, "M": 500},
    "trmm": {"M": 300, "N": 350},
    "doitgen": {"NR": 60, "NQ": 64, "NP": 128},
    "fdtd_2d": {"NX": 1000, "NY": 1200, "TSTEPS": 100},
    "correlation": {"M": 1000, "N": 1200},
    "pairwise_distances": {"N": 400, "M": 300, "D": 64},
    "gramschmidt": {"M": 700, "N": 600},
    "layernorm": {"N": 4000, "M": 1024},
    "floyd_warshall": {"N": 400},
}

# The loops a Numba user would mark ``prange`` for @njit(parallel=True): those whose iterations are
# independent (the benchmark rewrites ``range`` to ``numba.prange`` there); the others stay sequential.
PRANGE = {
    "covariance": ("i",), "softmax_rows": ("i",), "syrk": ("i",), "trmm": ("j",), "doitgen": ("r",),
    "pairwise_distances": ("i",), "gramschmidt": ("j",), "layernorm": ("i",), "floyd_warshall": ("i",),
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


def gesummv(alpha: float, beta: float, A: "float64[N, N]", B: "float64[N, N]", x: "float64[N]"):
    return alpha * A @ x + beta * B @ x


def mvt(x1: "float64[N]", x2: "float64[N]", y1: "float64[N]", y2: "float64[N]", A: "float64[N, N]"):
    x1 += A @ y1
    x2 += y2 @ A


def syrk(alpha: float, beta: float, C: "float64[N, N]", A: "float64[N, M]"):
    for i in range(A.shape[0]):
        C[i, :i + 1] *= beta
        for k in range(A.shape[1]):
            C[i, :i + 1] += alpha * A[i, k] * A[:i + 1, k]


def trmm(alpha: float, A: "float64[M, M]", B: "float64[M, N]"):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            B[i, j] += A[i + 1:, i] @ B[i + 1:, j]
    B *= alpha


def doitgen(A: "float64[NR, NQ, NP]", C4: "float64[NP, NP]"):
    NR, NQ, NP = A.shape
    for r in range(NR):
        for q in range(NQ):
            A[r, q, :] = A[r, q, :] @ C4


def fdtd_2d(TSTEPS: int, ex: "float64[NX, NY]", ey: "float64[NX, NY]", hz: "float64[NX, NY]",
            fict: "float64[TSTEPS]"):
    for t in range(TSTEPS):
        ey[0, :] = fict[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def correlation(data: "float64[N, M]"):
    N, M = data.shape
    mean = np.mean(data, axis=0)
    data -= mean
    stddev = np.sqrt(np.sum(data * data, axis=0) / N)
    data /= np.sqrt(N) * stddev
    return data.T @ data


def pairwise_distances(X: "float64[N, D]", Y: "float64[M, D]"):
    N, D = X.shape
    M = Y.shape[0]
    out = np.empty((N, M))
    for i in range(N):
        for j in range(M):
            out[i, j] = np.sqrt(np.sum((X[i, :] - Y[j, :]) ** 2))
    return out


def gramschmidt(A: "float64[M, N]"):
    M, N = A.shape
    Q = np.zeros((M, N))
    R = np.zeros((N, N))
    for k in range(N):
        R[k, k] = np.sqrt(A[:, k] @ A[:, k])
        Q[:, k] = A[:, k] / R[k, k]
        for j in range(k + 1, N):
            R[k, j] = Q[:, k] @ A[:, j]
            A[:, j] -= Q[:, k] * R[k, j]
    return Q, R


def layernorm(x: "float64[N, M]", gamma: "float64[M]", beta: "float64[M]"):
    N, M = x.shape
    for i in range(N):
        mu = np.mean(x[i, :])
        var = np.mean((x[i, :] - mu) ** 2)
        x[i, :] = (x[i, :] - mu) / np.sqrt(var + 1e-5) * gamma + beta


def floyd_warshall(path: "float64[N, N]"):
    N = path.shape[0]
    for k in range(N):
        for i in range(N):
            path[i, :] = np.minimum(path[i, :], path[i, k] + path[k, :])
