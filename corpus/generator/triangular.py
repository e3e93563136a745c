"""Triangular and symmetric dense kernels: trmm and trmv, triangular solves, syrk and syr2k, symm and
LU-style factorisations."""

from __future__ import annotations

import random

from corpus.generator.core import Add, For, Kernel, Scaled, Stmt, family_of, fp_type, loop, zero

SQ = {"n": Scaled()}  # the size of a square-matrix kernel


def triangular(rng: random.Random) -> list[Kernel]:
    return family_of("triangular", rng, _trmm_trmv, _trsv_trsm, _syrk, _symm_lu)


def _trmm_trmv(rng: random.Random, add: Add) -> None:
    nm = {"n": Scaled(), "m": Scaled()}
    abc = lambda t: [(t, "A", ("n", "n")), (t, "B", ("n", "m")), (t, "C", ("n", "m"))]  # noqa: E731
    upd = "C[i][j] += A[i][k] * B[k][j]"
    t = fp_type(rng)
    add("trmm_lower_ijk", "lower-triangular times general, C += L B with k <= i, ijk order", t, ["n", "m"],
        abc(t), loop([("i", 0, "n"), ("j", 0, "m"), ("k", 0, "i", {"incl": True})], upd), nm)
    t = fp_type(rng)
    add("trmm_lower_ikj", "lower-triangular times general, C += L B with k <= i, ikj order", t, ["n", "m"], abc(t),
        loop([("i", 0, "n"), ("k", 0, "i", {"incl": True}), ("j", 0, "m")], upd), nm)
    t = fp_type(rng)
    add("trmm_upper_ijk", "upper-triangular times general, C += U B with k >= i, ijk order", t, ["n", "m"], abc(t),
        loop([("i", 0, "n"), ("j", 0, "m"), ("k", "i", "n")], upd), nm)
    t = fp_type(rng)
    add("trmm_upper_kij", "upper-triangular times general, C += U B, kij order (k outer, i <= k)", t, ["n", "m"],
        abc(t), loop([("k", 0, "n"), ("i", 0, "k", {"incl": True}), ("j", 0, "m")], upd), nm)
    t = fp_type(rng)
    add("trmm_inplace", "in-place trmm B = alpha A^T B with A unit lower triangular (k > i accumulate "
        "into B[i][j], then scale)", t, ["n", "m"], [(t, "A", ("n", "n")), (t, "B", ("n", "m"))],
        loop([("i", 0, "n"), ("j", 0, "m")],
             [*loop([("k", "i + 1", "n")], "B[i][j] += A[k][i] * B[k][j]"), "B[i][j] = alpha * B[i][j]"]), nm,
        scalars=[(t, "alpha")])
    t = fp_type(rng)
    add("trmm_right_upper", "general times upper-triangular from the right, C += B U with k <= j", t,
        ["n", "m"], [(t, "U", ("m", "m")), (t, "B", ("n", "m")), (t, "C", ("n", "m"))],
        loop([("i", 0, "n"), ("j", 0, "m"), ("k", 0, "j", {"incl": True})], "C[i][j] += B[i][k] * U[k][j]"), nm)
    for lower in (True, False):
        for order in ("ij", "ji"):
            t = fp_type(rng)
            rng_j = ("j", 0, "i", {"incl": True}) if lower else ("j", "i", "n")
            rng_i = ("i", "j", "n") if lower else ("i", 0, "j", {"incl": True})
            spec = [("i", 0, "n"), rng_j] if order == "ij" else [("j", 0, "n"), rng_i]
            kind = "lower" if lower else "upper"
            add(f"trmv_{kind}_{order}", f"{kind}-triangular matrix-vector product y += T x, {order} order", t, ["n"],
                [(t, "T", ("n", "n")), (t, "x", ("n",)), (t, "y", ("n",))], loop(spec, "y[i] += T[i][j] * x[j]"),
                SQ)


def _trsv_trsm(rng: random.Random, add: Add) -> None:
    nm = {"n": Scaled(), "m": Scaled()}
    t = fp_type(rng)
    add("trsv_lower_dot", "forward substitution (dot form) for L x = b, diagonal shifted by n to keep the "
        "solve well conditioned", t, ["n"], [(t, "L", ("n", "n")), (t, "b", ("n",)), (t, "x", ("n",))],
        loop([("i", 0, "n")], [f"{t} s = b[i]", *loop([("j", 0, "i")], "s -= L[i][j] * x[j]"),
                               "x[i] = s / (L[i][i] + n)"]), SQ)
    t = fp_type(rng)
    add("trsv_lower_axpy", "forward substitution (column/axpy form), x overwritten in place, diagonal "
        "shifted by n", t, ["n"], [(t, "L", ("n", "n")), (t, "x", ("n",))],
        loop([("j", 0, "n")], ["x[j] = x[j] / (L[j][j] + n)", *loop([("i", "j + 1", "n")], "x[i] -= L[i][j] * x[j]")]),
        SQ)
    t = fp_type(rng)
    add("trsv_upper_dot", "back substitution (dot form) for U x = b walking rows from the bottom, diagonal "
        "shifted by n", t, ["n"], [(t, "U", ("n", "n")), (t, "b", ("n",)), (t, "x", ("n",))],
        [For("i", "0", "n", [Stmt(f"{t} s = b[i]"), *loop([("j", "i + 1", "n")], "s -= U[i][j] * x[j]"),
                             Stmt("x[i] = s / (U[i][i] + n)")], down=True)], SQ)
    t = fp_type(rng)
    add("trsv_upper_axpy", "back substitution (column form), walking columns from the right, in place", t, ["n"],
        [(t, "U", ("n", "n")), (t, "x", ("n",))],
        [For("j", "0", "n", [Stmt("x[j] = x[j] / (U[j][j] + n)"), *loop([("i", 0, "j")], "x[i] -= U[i][j] * x[j]")],
             down=True)], SQ)
    t = fp_type(rng)
    add("trsm_lower", "triangular solve with many right-hand sides, L X = B in place (row form, diagonal "
        "shifted by n)", t, ["n", "m"], [(t, "L", ("n", "n")), (t, "X", ("n", "m"))],
        loop([("i", 0, "n")], [*loop([("k", 0, "i"), ("j", 0, "m")], "X[i][j] -= L[i][k] * X[k][j]"),
                               *loop([("j", 0, "m")], "X[i][j] /= L[i][i] + n")]), nm)
    t = fp_type(rng)
    add("trsm_upper", "triangular solve U X = B in place from the last row up (diagonal shifted by n)", t,
        ["n", "m"], [(t, "U", ("n", "n")), (t, "X", ("n", "m"))],
        [For("i", "0", "n", [*loop([("k", "i + 1", "n"), ("j", 0, "m")], "X[i][j] -= U[i][k] * X[k][j]"),
                             *loop([("j", 0, "m")], "X[i][j] /= U[i][i] + n")], down=True)], nm)


def _syrk(rng: random.Random, add: Add) -> None:
    # symmetric rank-k updates
    syrk_sizes = {"n": Scaled(), "m": Scaled()}
    t = fp_type(rng)
    add("syrk_lower_ikj", "syrk C = beta C + alpha A A^T on the lower triangle, k loop between i and j", t,
        ["n", "m"], [(t, "C", ("n", "n")), (t, "A", ("n", "m"))],
        loop([("i", 0, "n")], [*loop([("j", 0, "i", {"incl": True})], "C[i][j] *= beta"),
                               *loop([("k", 0, "m"), ("j", 0, "i", {"incl": True})],
                                     "C[i][j] += alpha * A[i][k] * A[j][k]")]), syrk_sizes,
        scalars=[(t, "alpha"), (t, "beta")])
    t = fp_type(rng)
    add("syrk_upper_ijk", "syrk on the upper triangle (j >= i), beta scaling then dot products over k", t,
        ["n", "m"], [(t, "C", ("n", "n")), (t, "A", ("n", "m"))],
        loop([("i", 0, "n"), ("j", "i", "n")], ["C[i][j] *= beta",
                                                  *loop([("k", 0, "m")], "C[i][j] += alpha * A[i][k] * A[j][k]")]),
        syrk_sizes, scalars=[(t, "alpha"), (t, "beta")])
    t = fp_type(rng)
    add("syrk_lower_trans", "syrk with A transposed: C += A^T A on the lower triangle, k innermost", t,
        ["n", "m"], [(t, "C", ("n", "n")), (t, "A", ("m", "n"))],
        loop([("i", 0, "n"), ("j", 0, "i", {"incl": True}), ("k", 0, "m")], "C[i][j] += A[k][i] * A[k][j]"),
        syrk_sizes)
    t = fp_type(rng)
    add("syrk_upper_kij", "syrk C += A A^T on the upper triangle with the k loop outermost", t, ["n", "m"],
        [(t, "C", ("n", "n")), (t, "A", ("n", "m"))],
        loop([("k", 0, "m"), ("i", 0, "n"), ("j", "i", "n")], "C[i][j] += A[i][k] * A[j][k]"), syrk_sizes)
    t = fp_type(rng)
    add("syrk_lower_trans_kij", "syrk C += A^T A on the lower triangle, k outermost (rank-1 updates)", t,
        ["n", "m"], [(t, "C", ("n", "n")), (t, "A", ("m", "n"))],
        loop([("k", 0, "m"), ("i", 0, "n"), ("j", 0, "i", {"incl": True})], "C[i][j] += A[k][i] * A[k][j]"),
        syrk_sizes)
    t = fp_type(rng)
    add("syr2k_lower", "syr2k C = beta C + alpha (A B^T + B A^T) on the lower triangle", t, ["n", "m"],
        [(t, "C", ("n", "n")), (t, "A", ("n", "m")), (t, "B", ("n", "m"))],
        loop([("i", 0, "n")], [*loop([("j", 0, "i", {"incl": True})], "C[i][j] *= beta"),
                               *loop([("k", 0, "m"), ("j", 0, "i", {"incl": True})],
                                     "C[i][j] += A[j][k] * alpha * B[i][k] + B[j][k] * alpha * A[i][k]")]),
        syrk_sizes, scalars=[(t, "alpha"), (t, "beta")])
    t = fp_type(rng)
    add("syr2k_upper_ijk", "syr2k C += A B^T + B A^T on the upper triangle, k innermost", t, ["n", "m"],
        [(t, "C", ("n", "n")), (t, "A", ("n", "m")), (t, "B", ("n", "m"))],
        loop([("i", 0, "n"), ("j", "i", "n"), ("k", 0, "m")], "C[i][j] += A[i][k] * B[j][k] + B[i][k] * A[j][k]"),
        syrk_sizes)


def _symm_lu(rng: random.Random, add: Add) -> None:
    t = fp_type(rng)
    add("symm_lower", "symm C = alpha A B + beta C with A symmetric, only its lower triangle read", t,
        ["m", "n"], [(t, "C", ("m", "n")), (t, "A", ("m", "m")), (t, "B", ("m", "n"))],
        loop([("i", 0, "m"), ("j", 0, "n")], [
            f"{t} t2 = {zero(t)}",
            *loop([("k", 0, "i")], ["C[k][j] += alpha * B[i][j] * A[i][k]", "t2 += B[k][j] * A[i][k]"]),
            "C[i][j] = beta * C[i][j] + alpha * B[i][j] * A[i][i] + alpha * t2"]),
        {"m": Scaled(), "n": Scaled()}, scalars=[(t, "alpha"), (t, "beta")])
    t = fp_type(rng)
    add("symm_upper_full", "symmetric matrix times general with the upper triangle mirrored on the fly: "
        "C[i][j] += A[min(i,k)][max(i,k)] B[k][j] split into two k ranges", t, ["m", "n"],
        [(t, "C", ("m", "n")), (t, "A", ("m", "m")), (t, "B", ("m", "n"))],
        loop([("i", 0, "m")], [*loop([("k", 0, "i"), ("j", 0, "n")], "C[i][j] += A[k][i] * B[k][j]"),
                               *loop([("k", "i", "m"), ("j", 0, "n")], "C[i][j] += A[i][k] * B[k][j]")]),
        {"m": Scaled(), "n": Scaled()})
    t = fp_type(rng)
    add("symv_lower", "symv y += A x reading only the lower triangle (each off-diagonal entry used twice)", t,
        ["n"], [(t, "A", ("n", "n")), (t, "x", ("n",)), (t, "y", ("n",))],
        loop([("i", 0, "n")], [*loop([("j", 0, "i")], ["y[i] += A[i][j] * x[j]", "y[j] += A[i][j] * x[i]"]),
                               "y[i] += A[i][i] * x[i]"]), SQ)
    t = fp_type(rng)
    add("lu_product", "reconstruct A = L U from triangular factors: k runs to min(i, j)", t, ["n"],
        [(t, "A", ("n", "n")), (t, "L", ("n", "n")), (t, "U", ("n", "n"))],
        loop([("i", 0, "n"), ("j", 0, "n")],
             [For("k", "0", "min(i, j) + 1", [Stmt("A[i][j] += L[i][k] * U[k][j]")], cond="k <= i && k <= j")]),
        SQ)
    add("lu_kij", "LU factorisation without pivoting, right-looking (kij) form, in place", "double", ["n"],
        [("double", "A", ("n", "n"))],
        loop([("k", 0, "n")], [*loop([("i", "k + 1", "n")], "A[i][k] /= A[k][k]"),
                               *loop([("i", "k + 1", "n"), ("j", "k + 1", "n")], "A[i][j] -= A[i][k] * A[k][j]")]),
        SQ)
    add("lu_doolittle", "LU factorisation without pivoting, row-by-row (Doolittle) form, in place", "double",
        ["n"], [("double", "A", ("n", "n"))],
        loop([("i", 0, "n")], [
            *loop([("j", 0, "i")], [*loop([("k", 0, "j")], "A[i][j] -= A[i][k] * A[k][j]"), "A[i][j] /= A[j][j]"]),
            *loop([("j", "i", "n"), ("k", 0, "i")], "A[i][j] -= A[i][k] * A[k][j]")]), SQ)
    t = fp_type(rng)
    add("tri_lower_scale", "scale the strictly lower triangle by a row factor and add the transposed upper "
        "triangle", t, ["n"], [(t, "A", ("n", "n")), (t, "d", ("n",))],
        loop([("i", 1, "n"), ("j", 0, "i")], "A[i][j] = d[i] * A[i][j] + A[j][i]"), SQ)
