"""Sparse and data-dependent nests: CSR/CSC/COO/ELL products, SDDMM, gathers and scatters, histograms,
masked updates.

Index arrays are ``int``; a CSR matrix is ``rowptr[n + 1]``, ``col[nnz]``, ``val[nnz]``. Every array an
index reads has a declared extent (``x[m]``), which is what bounds the analysis' over-approximation of
an indirect access. ``nnz`` grows with ``n`` at a drawn average row length, so fitting the size keeps
the density of the matrix.
"""

from __future__ import annotations

import random

from corpus.generator.core import FP, Add, If, Kernel, Scaled, Stmt, family_of, fn, lit, loop

ROW_LENGTHS = (4, 8, 16, 32, 64)  # average entries per row: graph-like to FEM-like


def _rows(ptr: str = "rowptr", it: str = "i", var: str = "j", outer: str = "n") -> tuple:
    """The loop over the entries of row ``it``: bounds read from the pointer array."""
    return (var, f"{ptr}[{it}]", f"{ptr}[{it} + 1]", {"est": ("0", f"nnz / {outer}")})


def _csr(t: str, rows: str = "n") -> list[tuple]:
    return [("int", "rowptr", (f"{rows} + 1",)), ("int", "col", ("nnz",)), (t, "val", ("nnz",))]


def _sizes(rng: random.Random, **fixed: int | Scaled) -> dict:
    per_row = rng.choice(ROW_LENGTHS)
    return {"n": Scaled(1.0, 8), "m": Scaled(rng.choice((0.5, 1.0, 2.0)), 8), "nnz": Scaled(float(per_row), 8),
            **fixed}


def _without_columns(sizes: dict) -> dict:
    """Sizes of a kernel that never reads a column index (drawn all the same: the stream stays put)."""
    return {k: v for k, v in sizes.items() if k != "m"}


def sparse(rng: random.Random) -> list[Kernel]:
    return family_of("sparse", rng, _spmv, _spmm, _gather_scatter, _masked)


def _spmv(rng: random.Random, add: Add) -> None:
    ints = ["n", "m", "nnz"]
    for t in FP:
        add("spmv_csr", "CSR sparse matrix-vector product y[i] += val[j] * x[col[j]]", t, ints,
            [*_csr(t), (t, "x", ("m",)), (t, "y", ("n",))],
            loop([("i", 0, "n"), _rows()], "y[i] += val[j] * x[col[j]]"), _sizes(rng))
    t = rng.choice(FP)
    add("spmv_csr_acc", "CSR sparse matrix-vector product through a row accumulator", t, ints,
        [*_csr(t), (t, "x", ("m",)), (t, "y", ("n",))],
        loop([("i", 0, "n")], [f"{t} s = {lit(0.0, t)}", *loop([_rows()], "s += val[j] * x[col[j]]"), "y[i] = s"]),
        _sizes(rng))
    t = rng.choice(FP)
    add("spmv_csr_axpby", "CSR y = alpha A x + beta y (row accumulator)", t, ints,
        [*_csr(t), (t, "x", ("m",)), (t, "y", ("n",))],
        loop([("i", 0, "n")], [f"{t} s = {lit(0.0, t)}", *loop([_rows()], "s += val[j] * x[col[j]]"),
                               "y[i] = alpha * s + beta * y[i]"]),
        _sizes(rng), scalars=[(t, "alpha"), (t, "beta")])
    t = rng.choice(FP)
    add("spmv_csc", "CSC sparse matrix-vector product: a scatter y[row[j]] += val[j] * x[c] per column", t, ints,
        [("int", "colptr", ("m + 1",)), ("int", "row", ("nnz",)), (t, "val", ("nnz",)), (t, "x", ("m",)),
         (t, "y", ("n",))],
        loop([("c", 0, "m"), _rows("colptr", "c", "j", "m")], "y[row[j]] += val[j] * x[c]"), _sizes(rng))
    t = rng.choice(FP)
    add("spmv_csr_t", "transposed CSR product y[col[j]] += val[j] * x[i] (a scatter per row)", t, ints,
        [*_csr(t), (t, "x", ("n",)), (t, "y", ("m",))],
        loop([("i", 0, "n"), _rows()], "y[col[j]] += val[j] * x[i]"), _sizes(rng))
    t = rng.choice(FP)
    add("spmv_coo", "COO sparse matrix-vector product y[row[e]] += val[e] * x[col[e]]", t, ints,
        [("int", "row", ("nnz",)), ("int", "col", ("nnz",)), (t, "val", ("nnz",)), (t, "x", ("m",)),
         (t, "y", ("n",))],
        loop([("e", 0, "nnz")], "y[row[e]] += val[e] * x[col[e]]"), _sizes(rng))
    t = rng.choice(FP)
    add("spmv_ell", "ELLPACK product: w entries per row, y[i] += val[i][k] * x[col[i][k]]", t, ["n", "m", "w"],
        [("int", "col", ("n", "w")), (t, "val", ("n", "w")), (t, "x", ("m",)), (t, "y", ("n",))],
        loop([("i", 0, "n"), ("k", 0, "w")], "y[i] += val[i][k] * x[col[i][k]]"),
        {"n": Scaled(1.0, 8), "m": Scaled(1.0, 8), "w": rng.choice((8, 16, 27))})
    t = rng.choice(FP)
    add("csr_row_norms", "squared norm of every CSR row", t, ["n", "nnz"], [*_csr(t), (t, "r", ("n",))],
        loop([("i", 0, "n"), _rows()], "r[i] += val[j] * val[j]"), _without_columns(_sizes(rng)))
    t = rng.choice(FP)
    add("csr_row_scale", "row scaling of a CSR matrix in place, val[j] *= d[i]", t, ["n", "nnz"],
        [*_csr(t), (t, "d", ("n",))], loop([("i", 0, "n"), _rows()], "val[j] *= d[i]"), _without_columns(_sizes(rng)))


def _spmm(rng: random.Random, add: Add) -> None:
    ints = ["n", "m", "nnz", "k"]
    # Same loops, several dense widths; the widest is written out as C = C + ... (a distinct text, so
    # the corpus keeps it: identical code at another width would be dropped as a duplicate).
    for width, t, update in ((4, "float", "+="), (16, "double", "+="), (64, "float", "= C[i][p] +")):
        add(f"spmm_csr_ijk_w{width}", f"CSR times a dense matrix of {width} columns, "
            "C[i][p] += val[j] * B[col[j]][p], entries outside the dense loop", t, ints,
            [*_csr(t), (t, "B", ("m", "k")), (t, "C", ("n", "k"))],
            loop([("i", 0, "n"), _rows(), ("p", 0, "k")], f"C[i][p] {update} val[j] * B[col[j]][p]"),
            _sizes(rng, k=width))
    t = rng.choice(FP)
    add("spmm_csr_ikj", "CSR times a dense matrix, the dense loop outside the row's entries", t, ints,
        [*_csr(t), (t, "B", ("m", "k")), (t, "C", ("n", "k"))],
        loop([("i", 0, "n"), ("p", 0, "k"), _rows()], "C[i][p] += val[j] * B[col[j]][p]"),
        _sizes(rng, k=rng.choice((8, 32))))
    t = rng.choice(FP)
    add("spmm_csr_alpha", "CSR times a dense matrix scaled by alpha, scaled-by-beta result first", t, ints,
        [*_csr(t), (t, "B", ("m", "k")), (t, "C", ("n", "k"))],
        loop([("i", 0, "n")], [*loop([("p", 0, "k")], "C[i][p] *= beta"),
                               *loop([_rows(), ("p", 0, "k")], "C[i][p] += alpha * val[j] * B[col[j]][p]")]),
        _sizes(rng, k=rng.choice((16, 48))), scalars=[(t, "alpha"), (t, "beta")])
    t = rng.choice(FP)
    add("sddmm", "sampled dense-dense product: out[j] = val[j] * (A[i] . B[col[j]]) for every entry", t, ints,
        [*_csr(t), (t, "A", ("n", "k")), (t, "B", ("m", "k")), (t, "out", ("nnz",))],
        loop([("i", 0, "n"), _rows()], [f"{t} s = {lit(0.0, t)}", *loop([("p", 0, "k")], "s += A[i][p] * B[col[j]][p]"),
                                          "out[j] = val[j] * s"]),
        _sizes(rng, k=rng.choice((16, 32, 64))))
    t = rng.choice(FP)
    add("sddmm_direct", "sampled dense-dense product accumulated in place, out[j] += A[i][p] * B[col[j]][p]", t, ints,
        [*_csr(t), (t, "A", ("n", "k")), (t, "B", ("m", "k")), (t, "out", ("nnz",))],
        loop([("i", 0, "n"), _rows(), ("p", 0, "k")], "out[j] += A[i][p] * B[col[j]][p]"),
        _sizes(rng, k=rng.choice((8, 24))))


def _gather_scatter(rng: random.Random, add: Add) -> None:
    t = rng.choice(FP)
    add("gather", "gather y[i] = x[idx[i]]", t, ["n", "m"],
        [("int", "idx", ("n",)), (t, "x", ("m",)), (t, "y", ("n",))],
        loop([("i", 0, "n")], "y[i] = x[idx[i]]"), {"n": Scaled(1.0, 8), "m": Scaled(2.0, 8)})
    t = rng.choice(FP)
    add("gather_axpy", "indexed axpy y[i] += a * x[idx[i]]", t, ["n", "m"],
        [("int", "idx", ("n",)), (t, "x", ("m",)), (t, "y", ("n",))],
        loop([("i", 0, "n")], "y[i] += a * x[idx[i]]"), {"n": Scaled(1.0, 8), "m": Scaled(0.5, 8)}, scalars=[(t, "a")])
    t = rng.choice(FP)
    add("embedding_lookup", "embedding lookup: rows of a table gathered by token, out[i][p] = table[tok[i]][p]", t,
        ["n", "v", "d"], [("int", "tok", ("n",)), (t, "table", ("v", "d")), (t, "out", ("n", "d"))],
        loop([("i", 0, "n"), ("p", 0, "d")], "out[i][p] = table[tok[i]][p]"),
        {"n": Scaled(1.0, 8), "v": Scaled(0.5, 8), "d": rng.choice((32, 64, 128))})
    t = rng.choice(FP)
    add("embedding_backward", "embedding gradient: rows scattered by token, grad[tok[i]][p] += g[i][p]", t,
        ["n", "v", "d"], [("int", "tok", ("n",)), (t, "g", ("n", "d")), (t, "grad", ("v", "d"))],
        loop([("i", 0, "n"), ("p", 0, "d")], "grad[tok[i]][p] += g[i][p]"),
        {"n": Scaled(1.0, 8), "v": Scaled(0.25, 8), "d": rng.choice((16, 64))})
    t = rng.choice(FP)
    add("scatter", "scatter y[idx[i]] = x[i]", t, ["n", "m"],
        [("int", "idx", ("n",)), (t, "x", ("n",)), (t, "y", ("m",))],
        loop([("i", 0, "n")], "y[idx[i]] = x[i]"), {"n": Scaled(1.0, 8), "m": Scaled(1.5, 8)})
    t = rng.choice(FP)
    add("scatter_add", "scatter-add y[idx[i]] += x[i]", t, ["n", "m"],
        [("int", "idx", ("n",)), (t, "x", ("n",)), (t, "y", ("m",))],
        loop([("i", 0, "n")], "y[idx[i]] += x[i]"), {"n": Scaled(1.0, 8), "m": Scaled(0.1, 8)})
    add("histogram", "histogram of bin numbers, hist[bin[i]] += 1", "int", ["n", "b"],
        [("int", "bin", ("n",)), ("int", "hist", ("b",))], loop([("i", 0, "n")], "hist[bin[i]] += 1"),
        {"n": Scaled(1.0, 8), "b": rng.choice((16, 256, 4096))})
    t = rng.choice(FP)
    add("weighted_histogram", "weighted histogram hist[bin[i]] += w[i]", t, ["n", "b"],
        [("int", "bin", ("n",)), (t, "w", ("n",)), (t, "hist", ("b",))], loop([("i", 0, "n")], "hist[bin[i]] += w[i]"),
        {"n": Scaled(1.0, 8), "b": rng.choice((64, 1024))})
    add("histogram2d", "2-D histogram of pairs of bin numbers, hist[bx[i]][by[i]] += 1", "int", ["n", "b"],
        [("int", "bx", ("n",)), ("int", "by", ("n",)), ("int", "hist", ("b", "b"))],
        loop([("i", 0, "n")], "hist[bx[i]][by[i]] += 1"), {"n": Scaled(1.0, 8), "b": rng.choice((32, 128))})


def _masked(rng: random.Random, add: Add) -> None:
    t = rng.choice(FP)
    add("masked_axpy", "axpy where a mask is set, if (mask[i] != 0) y[i] += a * x[i]", t, ["n"],
        [("int", "mask", ("n",)), (t, "x", ("n",)), (t, "y", ("n",))],
        loop([("i", 0, "n")], [_if("mask[i] != 0", "y[i] += a * x[i]")]), {"n": Scaled(1.0, 8)}, scalars=[(t, "a")])
    t = rng.choice(FP)
    add("relu_backward", "ReLU gradient: gin[i] = gout[i] where the input was positive", t, ["n", "m"],
        [(t, "act", ("n", "m")), (t, "gout", ("n", "m")), (t, "gin", ("n", "m"))],
        loop([("i", 0, "n"), ("j", 0, "m")], [f"gin[i][j] = {lit(0.0, t)}", _if(f"act[i][j] > {lit(0.0, t)}",
                                                                                "gin[i][j] = gout[i][j]")]),
        {"n": Scaled(1.0, 8), "m": Scaled(1.0, 8)})
    t = rng.choice(FP)
    add("threshold_2d", "entries below a threshold set to zero, in place", t, ["n", "m"], [(t, "A", ("n", "m"))],
        loop([("i", 0, "n"), ("j", 0, "m")], [_if(f"{fn('fabs', t)}(A[i][j]) < eps", f"A[i][j] = {lit(0.0, t)}")]),
        {"n": Scaled(1.0, 8), "m": Scaled(1.0, 8)}, scalars=[(t, "eps")])
    t = rng.choice(FP)
    add("masked_row_sums", "row sums over the entries a mask selects", t, ["n", "m"],
        [("int", "mask", ("n", "m")), (t, "A", ("n", "m")), (t, "r", ("n",))],
        loop([("i", 0, "n"), ("j", 0, "m")], [_if("mask[i][j] > 0", "r[i] += A[i][j]")]),
        {"n": Scaled(1.0, 8), "m": Scaled(1.0, 8)})
    t = rng.choice(FP)
    add("count_positive", "count of positive entries per column", t, ["n", "m"],
        [(t, "A", ("n", "m")), ("int", "cnt", ("m",))],
        loop([("i", 0, "n"), ("j", 0, "m")], [_if(f"A[i][j] > {lit(0.0, t)}", "cnt[j] += 1")]),
        {"n": Scaled(1.0, 8), "m": Scaled(1.0, 8)})


def _if(cond: str, body: str) -> If:
    return If(cond, [Stmt(body)])
