"""Reductions and norms, elementwise kernels with math functions, copies, transposes and permutations."""

from __future__ import annotations

import itertools
import random

from corpus.generator.core import FP, Add, Kernel, Scaled, family_of, fn, lit, loop

V1 = [("i", 0, "n")]  # the loop of a vector kernel
M2 = [("i", 0, "n"), ("j", 0, "m")]  # the loops of a matrix kernel, rows outside

def _acc(t: str, name: str = "s", init: float = 0.0) -> dict:
    acc = "long" if t == "int" else t
    return {"pre": [f"{acc} {name} = {lit(init, acc)}"], "post": [f"return {name}"], "ret": acc}


# -- reduction ---------------------------------------------------------------------------------------------
def reduction(rng: random.Random) -> list[Kernel]:
    return family_of("reduction", rng, _sums, _norms_extrema, _dots_and_more)


def _sums(rng: random.Random, add: Add) -> None:
    for t in ("double", "float", "int"):
        add("sum1d", "sum of a vector into a scalar accumulator" + (" (int into long)" if t == "int" else ""), t, ["n"],
            [(t, "x", ("n",))], loop(V1, "s += x[i]"), **_acc(t))
    t = rng.choice(FP)
    add("sum2d_ij", "sum of all matrix entries, row by row", t, ["n", "m"], [(t, "A", ("n", "m"))],
        loop(M2, "s += A[i][j]"), **_acc(t))
    t = rng.choice(FP)
    add("sum2d_ji", "sum of all matrix entries walking columns (strided)", t, ["n", "m"], [(t, "A", ("n", "m"))],
        loop(M2[::-1], "s += A[i][j]"), **_acc(t))
    t = rng.choice(FP)
    add("sum3d", "sum of a 3-D array", t, ["n", "m", "p"], [(t, "A", ("n", "m", "p"))],
        loop([*M2, ("k", 0, "p")], "s += A[i][j][k]"), **_acc(t))
    t = rng.choice(FP)
    add("row_sums_ij", "row sums r[i] += A[i][j]", t, ["n", "m"], [(t, "A", ("n", "m")), (t, "r", ("n",))],
        loop(M2, "r[i] += A[i][j]"))
    t = rng.choice(FP)
    add("row_sums_acc", "row sums through a local accumulator, r[i] = sum_j A[i][j]", t, ["n", "m"],
        [(t, "A", ("n", "m")), (t, "r", ("n",))],
        loop(V1, [f"{t} acc = {lit(0.0, t)}", *loop([("j", 0, "m")], "acc += A[i][j]"), "r[i] = acc"]))
    t = rng.choice(FP)
    add("col_sums_ij", "column sums c[j] += A[i][j], rows outside", t, ["n", "m"],
        [(t, "A", ("n", "m")), (t, "c", ("m",))], loop(M2, "c[j] += A[i][j]"))
    add("col_sums_ji", "column sums c[j] += A[i][j], columns outside (strided)", "int", ["n", "m"],
        [("int", "A", ("n", "m")), ("long", "c", ("m",))], loop(M2[::-1], "c[j] += A[i][j]"))


def _norms_extrema(rng: random.Random, add: Add) -> None:
    t = rng.choice(FP)
    add("row_norms", "Euclidean norm of every row (local accumulator, sqrt)", t, ["n", "m"],
        [(t, "A", ("n", "m")), (t, "nrm", ("n",))],
        loop(V1, [f"{t} acc = {lit(0.0, t)}", *loop([("j", 0, "m")], "acc += A[i][j] * A[i][j]"),
                  f"nrm[i] = {fn('sqrt', t)}(acc)"]))
    t = rng.choice(FP)
    add("col_norms", "Euclidean norm of every column: squares accumulated row by row, then square roots "
        "(marked region, two nests)", t, ["n", "m"], [(t, "A", ("n", "m")), (t, "nrm", ("m",))],
        [*loop(M2, "nrm[j] += A[i][j] * A[i][j]"), *loop([("j", 0, "m")], f"nrm[j] = {fn('sqrt', t)}(nrm[j])")],
        pragma=True)
    t = rng.choice(FP)
    add("frobenius", "squared Frobenius norm of a matrix", t, ["n", "m"], [(t, "A", ("n", "m"))],
        loop(M2, "s += A[i][j] * A[i][j]"), **_acc(t))
    t = rng.choice(FP)
    add("l1norm2d", "entrywise 1-norm (sum of absolute values)", t, ["n", "m"], [(t, "A", ("n", "m"))],
        loop(M2, f"s += {fn('fabs', t)}(A[i][j])"), **_acc(t))
    t = rng.choice(FP)
    add("inf_norm", "infinity norm: largest absolute row sum (row accumulator, then fmax)", t, ["n", "m"],
        [(t, "A", ("n", "m"))],
        loop(V1, [f"{t} r = {lit(0.0, t)}", *loop([("j", 0, "m")], f"r += {fn('fabs', t)}(A[i][j])"),
                  f"best = {fn('fmax', t)}(best, r)"]), **_acc(t, "best"))
    t = rng.choice(FP)
    add("max_abs1d", "largest absolute value of a vector via fmax", t, ["n"], [(t, "x", ("n",))],
        loop(V1, f"best = {fn('fmax', t)}(best, {fn('fabs', t)}(x[i]))"), **_acc(t, "best"))
    t = rng.choice(FP)
    add("max2d", "largest entry of a matrix via fmax", t, ["n", "m"], [(t, "A", ("n", "m"))],
        loop(M2, f"best = {fn('fmax', t)}(best, A[i][j])"), **_acc(t, "best"))
    t = rng.choice(FP)
    add("col_min", "column minima via fmin, rows outside", t, ["n", "m"], [(t, "A", ("n", "m")), (t, "lo", ("m",))],
        loop(M2, f"lo[j] = {fn('fmin', t)}(lo[j], A[i][j])"))
    t = rng.choice(FP)
    add("row_max", "row maxima via fmax", t, ["n", "m"], [(t, "A", ("n", "m")), (t, "hi", ("n",))],
        loop(M2, f"hi[i] = {fn('fmax', t)}(hi[i], A[i][j])"))


def _dots_and_more(rng: random.Random, add: Add) -> None:
    for t in FP:
        add("dot", "dot product", t, ["n"], [(t, "x", ("n",)), (t, "y", ("n",))], loop(V1, "s += x[i] * y[i]"),
            **_acc(t))
    t = rng.choice(FP)
    add("wdot", "weighted dot product s += w[i] x[i] y[i]", t, ["n"], [(t, "w", ("n",)), (t, "x", ("n",)),
                                                                     (t, "y", ("n",))],
        loop(V1, "s += w[i] * x[i] * y[i]"), **_acc(t))
    t = rng.choice(FP)
    add("logsum", "sum of logarithms (log of a product without overflow)", t, ["n"], [(t, "x", ("n",))],
        loop(V1, f"s += {fn('log', t)}(x[i])"), **_acc(t))
    add("sumsq_int", "sum of squares of an int vector into a long", "int", ["n"], [("int", "x", ("n",))],
        loop(V1, "s += x[i] * x[i]"), **_acc("int"))
    t = rng.choice(FP)
    add("reduce3d_mid", "reduction of a 3-D array over its middle index, out[i][k] += A[i][j][k]", t,
        ["n", "m", "p"], [(t, "A", ("n", "m", "p")), (t, "R", ("n", "p"))],
        loop([*M2, ("k", 0, "p")], "R[i][k] += A[i][j][k]"))
    t = rng.choice(FP)
    add("reduce3d_last", "reduction of a 3-D array over its last index, out[i][j] += A[i][j][k]", t,
        ["n", "m", "p"], [(t, "A", ("n", "m", "p")), (t, "R", ("n", "m"))],
        loop([*M2, ("k", 0, "p")], "R[i][j] += A[i][j][k]"))
    t = rng.choice(FP)
    add("softmax_denominators", "row sums of exponentials (softmax denominators)", t, ["n", "m"],
        [(t, "A", ("n", "m")), (t, "z", ("n",))], loop(M2, f"z[i] += {fn('exp', t)}(A[i][j])"))
    t = rng.choice(FP)
    add("col_mean", "column means: sums, then one division per column (marked region, two nests)", t, ["n", "m"],
        [(t, "A", ("n", "m")), (t, "mu", ("m",))],
        [*loop([("j", 0, "m")], f"mu[j] = {lit(0.0, t)}"), *loop(M2, "mu[j] += A[i][j]"),
         *loop([("j", 0, "m")], "mu[j] = mu[j] / n")], pragma=True)
    t = rng.choice(FP)
    add("prefix_rows", "inclusive prefix sums along every row, in place (a scan)", t, ["n", "m"],
        [(t, "A", ("n", "m"))], loop([("i", 0, "n"), ("j", 1, "m")], "A[i][j] += A[i][j - 1]"))
    t = rng.choice(FP)
    add("l1_distance", "L1 distance between two vectors", t, ["n"], [(t, "x", ("n",)), (t, "y", ("n",))],
        loop(V1, f"s += {fn('fabs', t)}(x[i] - y[i])"), **_acc(t))
    t = rng.choice(FP)
    add("sum_even", "sum of the even-indexed elements, x[2 i]", t, ["n"], [(t, "x", ("2 * n",))],
        loop(V1, "s += x[2 * i]"), **_acc(t))
    t = rng.choice(FP)
    add("kahan_sum", "compensated (Kahan) summation: scalar recurrences through s and c", t, ["n"],
        [(t, "x", ("n",))],
        loop(V1, [f"{t} y = x[i] - c", f"{t} u = s + y", "c = (u - s) - y", "s = u"]),
        pre=[f"{t} s = {lit(0.0, t)}", f"{t} c = {lit(0.0, t)}"], post=["return s"], ret=t)
    t = rng.choice(FP)
    add("welford", "one-pass mean and variance (Welford): the update divides by the iteration count", t, ["n"],
        [(t, "x", ("n",)), (t, "out", ("2",))],
        loop(V1, [f"{t} d = x[i] - mean", "mean += d / (i + 1)", "m2 += d * (x[i] - mean)"]),
        pre=[f"{t} mean = {lit(0.0, t)}", f"{t} m2 = {lit(0.0, t)}"], post=["out[0] = mean", "out[1] = m2 / n"])
    t = rng.choice(FP)
    add("col_sums_strided3", "sums over a 3-D array's first index, R[j][k] += A[i][j][k] (i outermost)", t,
        ["n", "m", "p"], [(t, "A", ("n", "m", "p")), (t, "R", ("m", "p"))],
        loop([*M2, ("k", 0, "p")], "R[j][k] += A[i][j][k]"))


# -- elementwise -------------------------------------------------------------------------------------------
def elementwise(rng: random.Random) -> list[Kernel]:
    return family_of("elementwise", rng, _blas_like, _activations, _transcendental)


def _blas_like(rng: random.Random, add: Add) -> None:
    add("saxpy", "saxpy y += a x", "float", ["n"], [("float", "x", ("n",)), ("float", "y", ("n",))],
        loop(V1, "y[i] += a * x[i]"), scalars=[("float", "a")])
    add("daxpy", "daxpy y = y + a x (written out)", "double", ["n"], [("double", "x", ("n",)), ("double", "y", ("n",))],
        loop(V1, "y[i] = y[i] + a * x[i]"), scalars=[("double", "a")])
    t = rng.choice(FP)
    add("axpby", "axpby y = alpha x + beta y", t, ["n"], [(t, "x", ("n",)), (t, "y", ("n",))],
        loop(V1, "y[i] = alpha * x[i] + beta * y[i]"), scalars=[(t, "alpha"), (t, "beta")])
    t = rng.choice(FP)
    add("waxpby", "waxpby w = alpha x + beta y into a third vector", t, ["n"],
        [(t, "x", ("n",)), (t, "y", ("n",)), (t, "w", ("n",))],
        loop(V1, "w[i] = alpha * x[i] + beta * y[i]"), scalars=[(t, "alpha"), (t, "beta")])
    t = rng.choice(FP)
    add("axpby2d", "matrix axpby B = alpha A + beta B", t, ["n", "m"], [(t, "A", ("n", "m")), (t, "B", ("n", "m"))],
        loop(M2, "B[i][j] = alpha * A[i][j] + beta * B[i][j]"), scalars=[(t, "alpha"), (t, "beta")])
    t = rng.choice(FP)
    add("fma1d", "fused multiply-add z = fma(x, y, z)", t, ["n"], [(t, "x", ("n",)), (t, "y", ("n",)),
                                                                 (t, "z", ("n",))],
        loop(V1, f"z[i] = {fn('fma', t)}(x[i], y[i], z[i])"))
    t = rng.choice(FP)
    add("fmadd2d", "matrix multiply-add D = A .* B + C", t, ["n", "m"],
        [(t, n, ("n", "m")) for n in ("A", "B", "C", "D")], loop(M2, "D[i][j] = A[i][j] * B[i][j] + C[i][j]"))
    t = rng.choice(FP)
    add("triad", "STREAM triad a = b + s c", t, ["n"], [(t, "a", ("n",)), (t, "b", ("n",)), (t, "c", ("n",))],
        loop(V1, "a[i] = b[i] + s * c[i]"), scalars=[(t, "s")])
    t = rng.choice(FP)
    add("stream_scale", "STREAM scale b = s c", t, ["n"], [(t, "b", ("n",)), (t, "c", ("n",))],
        loop(V1, "b[i] = s * c[i]"), scalars=[(t, "s")])
    t = rng.choice(FP)
    add("stream_add", "STREAM add c = a + b", t, ["n"], [(t, "a", ("n",)), (t, "b", ("n",)), (t, "c", ("n",))],
        loop(V1, "c[i] = a[i] + b[i]"))
    t = rng.choice(FP)
    add("hypot2d", "elementwise magnitude R = sqrt(X^2 + Y^2)", t, ["n", "m"],
        [(t, "X", ("n", "m")), (t, "Y", ("n", "m")), (t, "R", ("n", "m"))],
        loop(M2, f"R[i][j] = {fn('sqrt', t)}(X[i][j] * X[i][j] + Y[i][j] * Y[i][j])"))


def _activations(rng: random.Random, add: Add) -> None:
    for name, spec in (("sigmoid1d", V1), ("sigmoid2d", M2)):
        t = rng.choice(FP)
        sub = "[i]" if spec is V1 else "[i][j]"
        dim = ("n",) if spec is V1 else ("n", "m")
        add(name, "logistic sigmoid y = 1 / (1 + exp(-x))", t, [v[2] for v in spec], [(t, "x", dim), (t, "y", dim)],
            loop(spec, f"y{sub} = {lit(1.0, t)} / ({lit(1.0, t)} + {fn('exp', t)}(-x{sub}))"))
    t = rng.choice(FP)
    add("softplus", "softplus y = log(1 + exp(x))", t, ["n"], [(t, "x", ("n",)), (t, "y", ("n",))],
        loop(V1, f"y[i] = {fn('log', t)}({lit(1.0, t)} + {fn('exp', t)}(x[i]))"))
    t = rng.choice(FP)
    add("tanh2d", "hyperbolic tangent of a matrix", t, ["n", "m"], [(t, "X", ("n", "m")), (t, "Y", ("n", "m"))],
        loop(M2, f"Y[i][j] = {fn('tanh', t)}(X[i][j])"))
    t = rng.choice(FP)
    add("gelu", "tanh-approximated GELU", t, ["n", "m"], [(t, "X", ("n", "m")), (t, "Y", ("n", "m"))],
        loop(M2, f"Y[i][j] = {lit(0.5, t)} * X[i][j] * ({lit(1.0, t)} + {fn('tanh', t)}({lit(0.7978845608, t)}"
                 f" * (X[i][j] + {lit(0.044715, t)} * X[i][j] * X[i][j] * X[i][j])))"))
    t = rng.choice(FP)
    add("pow_scalar", "power with a runtime exponent y = pow(x, p)", t, ["n"], [(t, "x", ("n",)), (t, "y", ("n",))],
        loop(V1, f"y[i] = {fn('pow', t)}(x[i], p)"), scalars=[(t, "p")])
    t = rng.choice(FP)
    add("pow_const2d", "power with a constant exponent Y = pow(X, 1.5)", t, ["n", "m"],
        [(t, "X", ("n", "m")), (t, "Y", ("n", "m"))], loop(M2, f"Y[i][j] = {fn('pow', t)}(X[i][j], {lit(1.5, t)})"))
    t = rng.choice(FP)
    add("relu", "ReLU y = fmax(x, 0), in place on a matrix", t, ["n", "m"], [(t, "X", ("n", "m"))],
        loop(M2, f"X[i][j] = {fn('fmax', t)}(X[i][j], {lit(0.0, t)})"))
    t = rng.choice(FP)
    add("leaky_relu", "leaky ReLU y = fmax(x, 0.01 x)", t, ["n"], [(t, "x", ("n",)), (t, "y", ("n",))],
        loop(V1, f"y[i] = {fn('fmax', t)}(x[i], {lit(0.01, t)} * x[i])"))
    t = rng.choice(FP)
    add("clamp", "clamp to [lo, hi] with fmin and fmax", t, ["n", "m"], [(t, "X", ("n", "m")), (t, "Y", ("n", "m"))],
        loop(M2, f"Y[i][j] = {fn('fmin', t)}({fn('fmax', t)}(X[i][j], lo), hi)"), scalars=[(t, "lo"), (t, "hi")])
    t = rng.choice(FP)
    add("swish", "swish y = x / (1 + exp(-x))", t, ["n"], [(t, "x", ("n",)), (t, "y", ("n",))],
        loop(V1, f"y[i] = x[i] / ({lit(1.0, t)} + {fn('exp', t)}(-x[i]))"))


def _transcendental(rng: random.Random, add: Add) -> None:
    t = "double"
    add("black_scholes", "Black-Scholes call prices through local temporaries (log, sqrt, exp, erf)", t, ["n"],
        [(t, "S", ("n",)), (t, "K", ("n",)), (t, "tau", ("n",)), (t, "call", ("n",))],
        loop(V1, ["double sq = sqrt(tau[i])",
                  "double d1 = (log(S[i] / K[i]) + (r + 0.5 * v * v) * tau[i]) / (v * sq)",
                  "double d2 = d1 - v * sq",
                  "call[i] = S[i] * 0.5 * (1.0 + erf(d1 * 0.7071067811865476))\n"
                  "- K[i] * exp(-r * tau[i]) * 0.5 * (1.0 + erf(d2 * 0.7071067811865476))"]),
        scalars=[(t, "r"), (t, "v")])
    t = rng.choice(FP)
    add("polar_to_xy", "polar to Cartesian coordinates (sin, cos)", t, ["n"],
        [(t, "rad", ("n",)), (t, "th", ("n",)), (t, "px", ("n",)), (t, "py", ("n",))],
        loop(V1, [f"px[i] = rad[i] * {fn('cos', t)}(th[i])", f"py[i] = rad[i] * {fn('sin', t)}(th[i])"]))
    t = rng.choice(FP)
    add("normalize_cols", "standardise columns with precomputed means and inverse deviations (column broadcast)",
        t, ["n", "m"], [(t, "X", ("n", "m")), (t, "mu", ("m",)), (t, "rs", ("m",)), (t, "Y", ("n", "m"))],
        loop(M2, "Y[i][j] = (X[i][j] - mu[j]) * rs[j]"))
    t = rng.choice(FP)
    add("normalize_rows", "standardise rows with precomputed means and inverse deviations (row broadcast)", t,
        ["n", "m"], [(t, "X", ("n", "m")), (t, "mu", ("n",)), (t, "rs", ("n",)), (t, "Y", ("n", "m"))],
        loop(M2, "Y[i][j] = (X[i][j] - mu[i]) * rs[i]"))
    t = rng.choice(FP)
    add("scale_shift", "layer-norm style affine map Y = g[j] X + b[j]", t, ["n", "m"],
        [(t, "X", ("n", "m")), (t, "g", ("m",)), (t, "b", ("m",)), (t, "Y", ("n", "m"))],
        loop(M2, "Y[i][j] = g[j] * X[i][j] + b[j]"))
    t = rng.choice(FP)
    add("complex_mul", "complex multiplication on split real/imaginary arrays", t, ["n"],
        [(t, n, ("n",)) for n in ("ar", "ai", "br", "bi", "cr", "ci")],
        loop(V1, ["cr[i] = ar[i] * br[i] - ai[i] * bi[i]", "ci[i] = ar[i] * bi[i] + ai[i] * br[i]"]))
    t = rng.choice(FP)
    add("hadamard_ji", "elementwise product C = A .* B traversed column by column", t, ["n", "m"],
        [(t, n, ("n", "m")) for n in ("A", "B", "C")], loop(M2[::-1], "C[i][j] = A[i][j] * B[i][j]"))
    t = rng.choice(FP)
    add("fmadd3d", "3-D multiply-add D = A .* B + C", t, ["n", "m", "p"],
        [(t, n, ("n", "m", "p")) for n in ("A", "B", "C", "D")],
        loop([*M2, ("k", 0, "p")], "D[i][j][k] = A[i][j][k] * B[i][j][k] + C[i][j][k]"))
    add("int_madd", "integer multiply-add c = a b + c", "int", ["n"], [("int", n, ("n",)) for n in ("a", "b", "c")],
        loop(V1, "c[i] = a[i] * b[i] + c[i]"))
    t = rng.choice(FP)
    add("distance_to_point", "distance of 2-D points to a fixed point (sqrt)", t, ["n"],
        [(t, "x", ("n",)), (t, "y", ("n",)), (t, "d", ("n",))],
        loop(V1, f"d[i] = {fn('sqrt', t)}((x[i] - cx) * (x[i] - cx) + (y[i] - cy) * (y[i] - cy))"),
        scalars=[(t, "cx"), (t, "cy")])
    t = rng.choice(FP)
    add("exp_decay", "exponential decay with a per-column time, Y = X exp(-lambda t[j])", t, ["n", "m"],
        [(t, "X", ("n", "m")), (t, "tt", ("m",)), (t, "Y", ("n", "m"))],
        loop(M2, f"Y[i][j] = X[i][j] * {fn('exp', t)}(-lam * tt[j])"), scalars=[(t, "lam")])


# -- copy_transpose ----------------------------------------------------------------------------------------
def copy_transpose(rng: random.Random) -> list[Kernel]:
    return family_of("copy_transpose", rng, _copies_and_transposes, _tensor_permutations, _strided_copies)


def _copies_and_transposes(rng: random.Random, add: Add) -> None:
    for t in ("int", "float", "double"):
        add("copy1d", "vector copy", t, ["n"], [(t, "x", ("n",)), (t, "y", ("n",))], loop(V1, "y[i] = x[i]"))
    for t in ("double", "int"):
        add("copy2d", "matrix copy", t, ["n", "m"], [(t, "A", ("n", "m")), (t, "B", ("n", "m"))],
            loop(M2, "B[i][j] = A[i][j]"))
    t = rng.choice(("int", "float", "double"))
    add("copy_interior", "copy of the interior of a padded matrix, B[i][j] = A[i + 1][j + 1]", t, ["n", "m"],
        [(t, "A", ("n + 2", "m + 2")), (t, "B", ("n", "m"))], loop(M2, "B[i][j] = A[i + 1][j + 1]"))
    t = rng.choice(FP)
    add("copy3d", "3-D array copy", t, ["n", "m", "p"], [(t, "A", ("n", "m", "p")), (t, "B", ("n", "m", "p"))],
        loop([*M2, ("k", 0, "p")], "B[i][j][k] = A[i][j][k]"))
    for t, order in (("double", "ij"), ("double", "ji"), ("float", "ij"), ("int", "ji")):
        spec = M2 if order == "ij" else M2[::-1]
        add(f"transpose_{order}", f"out-of-place transpose B[j][i] = A[i][j], loop order {order}", t, ["n", "m"],
            [(t, "A", ("n", "m")), (t, "B", ("m", "n"))], loop(spec, "B[j][i] = A[i][j]"))
    t = rng.choice(FP)
    add("transpose_inplace", "in-place transpose of a square matrix, swapping through a scalar temporary", t, ["n"],
        [(t, "A", ("n", "n"))], loop([("i", 0, "n"), ("j", "i + 1", "n")],
                                     [f"{t} tmp = A[i][j]", "A[i][j] = A[j][i]", "A[j][i] = tmp"]))
    t = rng.choice(FP)
    add("transpose_add", "symmetric part B = A + A^T", t, ["n"], [(t, "A", ("n", "n")), (t, "B", ("n", "n"))],
        loop([("i", 0, "n"), ("j", 0, "n")], "B[i][j] = A[i][j] + A[j][i]"))
    t = rng.choice(FP)
    add("transpose_plus", "C = A^T + B on rectangular matrices", t, ["n", "m"],
        [(t, "A", ("m", "n")), (t, "B", ("n", "m")), (t, "C", ("n", "m"))], loop(M2, "C[i][j] = A[j][i] + B[i][j]"))


def _tensor_permutations(rng: random.Random, add: Add) -> None:
    dim = {"i": "n", "j": "m", "k": "p"}
    perms = [p for p in itertools.permutations("ijk") if p != ("i", "j", "k")]
    for perm in perms:
        t = rng.choice(("int", "float", "double"))
        pname = "".join(perm)
        add(f"permute3d_{pname}", f"3-D permutation B[{']['.join(perm)}] = A[i][j][k], loops in read order", t,
            ["n", "m", "p"], [(t, "A", ("n", "m", "p")), (t, "B", tuple(dim[v] for v in perm))],
            loop([(v, 0, dim[v]) for v in "ijk"], f"B[{']['.join(perm)}] = A[i][j][k]"))
    for perm in (("k", "j", "i"), ("j", "k", "i"), ("k", "i", "j")):
        t = rng.choice(("int", "float", "double"))
        pname = "".join(perm)
        add(f"permute3d_{pname}_wo", f"3-D permutation B[{']['.join(perm)}] = A[i][j][k], loops in write order", t,
            ["n", "m", "p"], [(t, "A", ("n", "m", "p")), (t, "B", tuple(dim[v] for v in perm))],
            loop([(v, 0, dim[v]) for v in perm], f"B[{']['.join(perm)}] = A[i][j][k]"))
    t = rng.choice(FP)
    add("nchw_to_nhwc", "layout change of an activation tensor, NCHW to NHWC", t, ["nb", "nc", "h", "w"],
        [(t, "X", ("nb", "nc", "h", "w")), (t, "Y", ("nb", "h", "w", "nc"))],
        loop([("b", 0, "nb"), ("c", 0, "nc"), ("y", 0, "h"), ("x", 0, "w")], "Y[b][y][x][c] = X[b][c][y][x]"),
        {"nb": Scaled(0.1, 1), "nc": Scaled(0.5, 2), "h": Scaled(), "w": Scaled()})
    t = rng.choice(FP)
    add("nhwc_to_nchw", "layout change of an activation tensor, NHWC to NCHW, loops in write order", t,
        ["nb", "nc", "h", "w"], [(t, "X", ("nb", "h", "w", "nc")), (t, "Y", ("nb", "nc", "h", "w"))],
        loop([("b", 0, "nb"), ("c", 0, "nc"), ("y", 0, "h"), ("x", 0, "w")], "Y[b][c][y][x] = X[b][y][x][c]"),
        {"nb": Scaled(0.1, 1), "nc": Scaled(0.5, 2), "h": Scaled(), "w": Scaled()})


def _strided_copies(rng: random.Random, add: Add) -> None:
    t = rng.choice(("int", "float", "double"))
    add("gather_cols2", "every second column, B[i][j] = A[i][2 j]", t, ["n", "m"],
        [(t, "A", ("n", "2 * m")), (t, "B", ("n", "m"))], loop(M2, "B[i][j] = A[i][2 * j]"))
    t = rng.choice(FP)
    add("downsample2d", "2x downsampling by decimation, B[i][j] = A[2 i][2 j]", t, ["n", "m"],
        [(t, "A", ("2 * n", "2 * m")), (t, "B", ("n", "m"))], loop(M2, "B[i][j] = A[2 * i][2 * j]"))
    t = rng.choice(("int", "float", "double"))
    add("upsample_nearest", "2x nearest-neighbour upsampling: four writes per source element", t, ["n", "m"],
        [(t, "A", ("n", "m")), (t, "B", ("2 * n", "2 * m"))],
        loop(M2, ["B[2 * i][2 * j] = A[i][j]", "B[2 * i][2 * j + 1] = A[i][j]", "B[2 * i + 1][2 * j] = A[i][j]",
                  "B[2 * i + 1][2 * j + 1] = A[i][j]"]))
    add("convert_f32_f64", "matrix copy with widening conversion float -> double", "double", ["n", "m"],
        [("float", "A", ("n", "m")), ("double", "B", ("n", "m"))], loop(M2, "B[i][j] = (double)A[i][j]"))
    add("convert_i32_f32", "vector copy with conversion int -> float", "float", ["n"],
        [("int", "x", ("n",)), ("float", "y", ("n",))], loop(V1, "y[i] = (float)x[i]"))
    t = rng.choice(("int", "float", "double"))
    add("reverse1d", "reversed copy, y[i] = x[n - 1 - i]", t, ["n"], [(t, "x", ("n",)), (t, "y", ("n",))],
        loop(V1, "y[i] = x[n - 1 - i]"))
    t = rng.choice(("int", "float", "double"))
    add("flip_rows", "vertical flip of a matrix, B[i][j] = A[n - 1 - i][j]", t, ["n", "m"],
        [(t, "A", ("n", "m")), (t, "B", ("n", "m"))], loop(M2, "B[i][j] = A[n - 1 - i][j]"))
    t = rng.choice(FP)
    add("aos_to_soa", "array of 3-D points to three coordinate arrays", t, ["n"],
        [(t, "P", ("n", "3")), (t, "x", ("n",)), (t, "y", ("n",)), (t, "z", ("n",))],
        loop(V1, ["x[i] = P[i][0]", "y[i] = P[i][1]", "z[i] = P[i][2]"]))
    t = rng.choice(FP)
    add("soa_to_aos", "three coordinate arrays to an array of 3-D points", t, ["n"],
        [(t, "x", ("n",)), (t, "y", ("n",)), (t, "z", ("n",)), (t, "P", ("n", "3"))],
        loop(V1, ["P[i][0] = x[i]", "P[i][1] = y[i]", "P[i][2] = z[i]"]))
    t = rng.choice(("int", "float", "double"))
    add("broadcast_row", "fill every row of a matrix with a vector, B[i][j] = v[j]", t, ["n", "m"],
        [(t, "v", ("m",)), (t, "B", ("n", "m"))], loop(M2, "B[i][j] = v[j]"))
    t = rng.choice(FP)
    add("scaled_copy_t", "scaled transpose B[j][i] = s A[i][j]", t, ["n", "m"],
        [(t, "A", ("n", "m")), (t, "B", ("m", "n"))], loop(M2, "B[j][i] = s * A[i][j]"), scalars=[(t, "s")])
