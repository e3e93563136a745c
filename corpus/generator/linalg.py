"""Dense linear algebra: gemm in every loop order, gemv-like kernels, batched products (triangular and
symmetric kernels: :mod:`corpus.generator.triangular`)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable

from corpus.generator.core import TAG, Kernel, Scaled, fp_type, loop, zero

SQ = {"n": Scaled()}  # the size of a square-matrix kernel


# -- gemm_orders ------------------------------------------------------------------------------------------
_BOUND = {"i": "ni", "j": "nj", "k": "nk"}


def _gemm_refs(ta: bool, tb: bool, tc: bool = False) -> tuple[str, str, str, tuple, tuple, tuple]:
    a, adims = ("A[k][i]", ("nk", "ni")) if ta else ("A[i][k]", ("ni", "nk"))
    b, bdims = ("B[j][k]", ("nj", "nk")) if tb else ("B[k][j]", ("nk", "nj"))
    c, cdims = ("C[j][i]", ("nj", "ni")) if tc else ("C[i][j]", ("ni", "nj"))
    return a, b, c, adims, bdims, cdims


def _gemm_sizes() -> dict[str, Scaled]:
    return {"ni": Scaled(), "nj": Scaled(), "nk": Scaled()}


def gemm_orders(rng: random.Random) -> list[Kernel]:
    return _gemm_plain(rng) + _gemm_alpha_beta(rng) + _gemm_dot_products(rng) + _gemm_column_major(rng)


def _gemm_plain(rng: random.Random) -> list[Kernel]:
    out: list[Kernel] = []
    fam = "gemm_orders"
    for order in ("ijk", "ikj", "jik", "jki", "kij", "kji"):
        for ta, tb in itertools.product((False, True), repeat=2):
            t = fp_type(rng)
            alpha = rng.random() < 0.5
            a, b, c, adims, bdims, cdims = _gemm_refs(ta, tb)
            rhs = f"alpha * {a} * {b}" if alpha else f"{a} * {b}"
            body = loop([(v, 0, _BOUND[v]) for v in order], f"{c} += {rhs}")
            tr = ("t" if ta else "n") + ("t" if tb else "n")
            desc = (f"gemm in {order} loop order, C += {'alpha * ' if alpha else ''}op(A) op(B) with "
                    f"A {'transposed' if ta else 'plain'} and B {'transposed' if tb else 'plain'} ({t}).")
            out.append(Kernel(fam, f"gemm_{order}_{tr}{'_alpha' if alpha else ''}_{TAG[t]}", desc, t,
                              ["ni", "nj", "nk"], [(t, "C", cdims), (t, "A", adims), (t, "B", bdims)], body,
                              _gemm_sizes(), scalars=[(t, "alpha")] if alpha else []))
    return out


def _gemm_alpha_beta(rng: random.Random) -> list[Kernel]:
    out: list[Kernel] = []
    fam = "gemm_orders"
    # alpha/beta: C = beta C + alpha op(A) op(B), with the beta scaling placed as the order allows
    for order in ("ijk", "ikj", "jik", "jki", "kij", "kji"):
        t = fp_type(rng)
        ta, tb = rng.random() < 0.4, rng.random() < 0.4
        a, b, c, adims, bdims, cdims = _gemm_refs(ta, tb)
        upd = f"{c} += alpha * {a} * {b}"
        o0, o1, o2 = order
        pragma = False
        if o2 == "k":
            body = loop([(o0, 0, _BOUND[o0]), (o1, 0, _BOUND[o1])],
                        [f"{c} *= beta", *loop([("k", 0, "nk")], upd)])
        elif o0 != "k":
            body = loop([(o0, 0, _BOUND[o0])],
                        [*loop([(o2, 0, _BOUND[o2])], f"{c} *= beta"),
                         *loop([("k", 0, "nk"), (o2, 0, _BOUND[o2])], upd)])
        else:
            pragma = True
            body = [*loop([("i", 0, "ni"), ("j", 0, "nj")], f"{c} *= beta"),
                    *loop([(v, 0, _BOUND[v]) for v in order], upd)]
        tr = ("t" if ta else "n") + ("t" if tb else "n")
        desc = (f"gemm with alpha and beta, {order} loop order: C = beta C + alpha op(A) op(B), "
                f"A {'transposed' if ta else 'plain'}, B {'transposed' if tb else 'plain'}; the beta scaling "
                f"sits {'in its own nest' if pragma else 'inside the outer loops'} ({t}).")
        out.append(Kernel(fam, f"gemm_{order}_{tr}_ab_{TAG[t]}", desc, t, ["ni", "nj", "nk"],
                          [(t, "C", cdims), (t, "A", adims), (t, "B", bdims)], body, _gemm_sizes(),
                          scalars=[(t, "alpha"), (t, "beta")], pragma=pragma))
    return out


def _gemm_dot_products(rng: random.Random) -> list[Kernel]:
    out: list[Kernel] = []
    fam = "gemm_orders"
    # dot-product form with a local accumulator, k innermost
    for order in ("ij", "ji"):
        for ta, tb in itertools.product((False, True), repeat=2):
            t = fp_type(rng)
            a, b, c, adims, bdims, cdims = _gemm_refs(ta, tb)
            body = loop([(v, 0, _BOUND[v]) for v in order], [
                f"{t} acc = {zero(t)}",
                *loop([("k", 0, "nk")], f"acc += {a} * {b}"),
                f"{c} = beta * {c} + alpha * acc"])
            tr = ("t" if ta else "n") + ("t" if tb else "n")
            desc = (f"gemm as dot products through a local accumulator, {order}k order, "
                    f"C = beta C + alpha op(A) op(B) (op: {tr}) ({t}).")
            out.append(Kernel(fam, f"gemm_{order}k_acc_{tr}_{TAG[t]}", desc, t, ["ni", "nj", "nk"],
                              [(t, "C", cdims), (t, "A", adims), (t, "B", bdims)], body, _gemm_sizes(),
                              scalars=[(t, "alpha"), (t, "beta")]))
    return out


def _gemm_column_major(rng: random.Random) -> list[Kernel]:
    out: list[Kernel] = []
    fam = "gemm_orders"
    # C stored transposed (column-major result)
    for order in ("ijk", "kij", "jki"):
        t = fp_type(rng)
        a, b, c, adims, bdims, cdims = _gemm_refs(False, False, tc=True)
        body = loop([(v, 0, _BOUND[v]) for v in order], f"{c} += {a} * {b}")
        desc = f"gemm writing a column-major result Ct[j][i] += A[i][k] B[k][j], {order} order ({t})."
        out.append(Kernel(fam, f"gemm_{order}_ct_{TAG[t]}", desc, t, ["ni", "nj", "nk"],
                          [(t, "C", cdims), (t, "A", adims), (t, "B", bdims)], body, _gemm_sizes()))
    return out


# -- gemv_like --------------------------------------------------------------------------------------------
_NM = {"n": Scaled(), "m": Scaled()}  # an n x m matrix


def _gv(name: str, desc: str, t: str, ints: list[str], arrays: list, body: list, sizes: dict,
        scalars: list | None = None, pragma: bool = False) -> Kernel:
    """The gemv_like kernel NAME_TAG described "DESC (t)."."""
    return Kernel("gemv_like", f"{name}_{TAG[t]}", desc + f" ({t}).", t, ints, arrays, body, sizes,
                  scalars=scalars or [], pragma=pragma)


def gemv_like(rng: random.Random) -> list[Kernel]:
    out: list[Kernel] = []
    for build in [*_gemv_and_ger(), *_fused_and_banded(rng)]:
        t = fp_type(rng)
        out.append(build(t))
        if rng.random() < 0.3:
            out.append(build("double" if t == "float" else "float"))
    return out


def _gemv_and_ger() -> list[Callable[[str], Kernel]]:
    """Builders, by element type, of gemv in both orders and transposed, with accumulators, and ger."""
    return [
        lambda t: _gv("gemv_ij", "gemv y += A x, row-major traversal (i outer)", t, ["n", "m"],
                      [(t, "A", ("n", "m")), (t, "x", ("m",)), (t, "y", ("n",))],
                      loop([("i", 0, "n"), ("j", 0, "m")], "y[i] += A[i][j] * x[j]"), _NM),
        lambda t: _gv("gemv_ji", "gemv y += A x with the column loop outside (j outer)", t, ["n", "m"],
                      [(t, "A", ("n", "m")), (t, "x", ("m",)), (t, "y", ("n",))],
                      loop([("j", 0, "m"), ("i", 0, "n")], "y[i] += A[i][j] * x[j]"), _NM),
        lambda t: _gv("gemv_t_ij", "transposed gemv y += A^T x, i outer", t, ["n", "m"],
                      [(t, "A", ("n", "m")), (t, "x", ("n",)), (t, "y", ("m",))],
                      loop([("i", 0, "n"), ("j", 0, "m")], "y[j] += A[i][j] * x[i]"), _NM),
        lambda t: _gv("gemv_t_ji", "transposed gemv y += A^T x, j outer (strided column walk)", t, ["n", "m"],
                      [(t, "A", ("n", "m")), (t, "x", ("n",)), (t, "y", ("m",))],
                      loop([("j", 0, "m"), ("i", 0, "n")], "y[j] += A[i][j] * x[i]"), _NM),
        lambda t: _gv("gemv_acc_ab", "gemv y = beta y + alpha A x through a local accumulator", t, ["n", "m"],
                      [(t, "A", ("n", "m")), (t, "x", ("m",)), (t, "y", ("n",))],
                      loop([("i", 0, "n")], [f"{t} acc = {zero(t)}", *loop([("j", 0, "m")], "acc += A[i][j] * x[j]"),
                                             "y[i] = beta * y[i] + alpha * acc"]), _NM,
                      scalars=[(t, "alpha"), (t, "beta")]),
        lambda t: _gv("gemv_t_acc_ab", "transposed gemv y = beta y + alpha A^T x with an accumulator per column",
                      t, ["n", "m"], [(t, "A", ("n", "m")), (t, "x", ("n",)), (t, "y", ("m",))],
                      loop([("j", 0, "m")], [f"{t} acc = {zero(t)}", *loop([("i", 0, "n")], "acc += A[i][j] * x[i]"),
                                             "y[j] = beta * y[j] + alpha * acc"]), _NM,
                      scalars=[(t, "alpha"), (t, "beta")]),
        lambda t: _gv("ger_ij", "rank-1 update A += alpha x y^T, i outer", t, ["n", "m"],
                      [(t, "A", ("n", "m")), (t, "x", ("n",)), (t, "y", ("m",))],
                      loop([("i", 0, "n"), ("j", 0, "m")], "A[i][j] += alpha * x[i] * y[j]"), _NM,
                      scalars=[(t, "alpha")]),
        lambda t: _gv("ger_ji", "rank-1 update A += x y^T, column loop outside", t, ["n", "m"],
                      [(t, "A", ("n", "m")), (t, "x", ("n",)), (t, "y", ("m",))],
                      loop([("j", 0, "m"), ("i", 0, "n")], "A[i][j] += x[i] * y[j]"), _NM),
    ]


def _fused_and_banded(rng: random.Random) -> list[Callable[[str], Kernel]]:
    """Builders of fused products (BiCG, mvt, atax, gesummv), syr2, banded and blocked variants."""
    return [
        lambda t: _gv("bicg_ij", "BiCG sub-kernel: s += A^T r and q += A p in one sweep", t, ["n", "m"],
                      [(t, "A", ("n", "m")), (t, "r", ("n",)), (t, "p", ("m",)), (t, "s", ("m",)),
                       (t, "q", ("n",))],
                      loop([("i", 0, "n"), ("j", 0, "m")], ["s[j] += r[i] * A[i][j]", "q[i] += A[i][j] * p[j]"]),
                      _NM),
        lambda t: _gv("bicg_ji", "BiCG sub-kernel with the column loop outside", t, ["n", "m"],
                      [(t, "A", ("n", "m")), (t, "r", ("n",)), (t, "p", ("m",)), (t, "s", ("m",)),
                       (t, "q", ("n",))],
                      loop([("j", 0, "m"), ("i", 0, "n")], ["s[j] += r[i] * A[i][j]", "q[i] += A[i][j] * p[j]"]),
                      _NM),
        lambda t: _gv("mvt", "matrix-vector and transposed matrix-vector products fused: x1 += A v1, x2 += A^T v2",
                      t, ["n"], [(t, "A", ("n", "n")), (t, "x1", ("n",)), (t, "x2", ("n",)), (t, "v1", ("n",)),
                                 (t, "v2", ("n",))],
                      loop([("i", 0, "n"), ("j", 0, "n")], ["x1[i] += A[i][j] * v1[j]", "x2[i] += A[j][i] * v2[j]"]),
                      SQ),
        lambda t: _gv("atax", "y = A^T (A x) row by row: tmp[i] = A[i] . x, then y += tmp[i] A[i]", t, ["n", "m"],
                      [(t, "A", ("n", "m")), (t, "x", ("m",)), (t, "y", ("m",)), (t, "tmp", ("n",))],
                      loop([("i", 0, "n")], [f"tmp[i] = {zero(t)}", *loop([("j", 0, "m")], "tmp[i] += A[i][j] * x[j]"),
                                             *loop([("j", 0, "m")], "y[j] += A[i][j] * tmp[i]")]), _NM),
        lambda t: _gv("gesummv", "y = alpha A x + beta B x with two accumulator arrays", t, ["n"],
                      [(t, "A", ("n", "n")), (t, "B", ("n", "n")), (t, "x", ("n",)), (t, "y", ("n",)),
                       (t, "tmp", ("n",))],
                      loop([("i", 0, "n")], [f"tmp[i] = {zero(t)}", f"y[i] = {zero(t)}",
                                             *loop([("j", 0, "n")], ["tmp[i] += A[i][j] * x[j]",
                                                                     "y[i] += B[i][j] * x[j]"]),
                                             "y[i] = alpha * tmp[i] + beta * y[i]"]), SQ,
                      scalars=[(t, "alpha"), (t, "beta")]),
        lambda t: _gv("syr2_full", "symmetric rank-2 update on the full matrix: A += alpha (x y^T + y x^T)", t,
                      ["n"], [(t, "A", ("n", "n")), (t, "x", ("n",)), (t, "y", ("n",))],
                      loop([("i", 0, "n"), ("j", 0, "n")], "A[i][j] += alpha * (x[i] * y[j] + y[i] * x[j])"), SQ,
                      scalars=[(t, "alpha")]),
        lambda t: _gv("band_gemv", "banded matrix-vector product with the band stored by diagonals: "
                      "y[i] += A[i][d] x[i + d]", t, ["n", "w"],
                      [(t, "A", ("n", "w")), (t, "x", ("n + w",)), (t, "y", ("n",))],
                      loop([("i", 0, "n"), ("d", 0, "w")], "y[i] += A[i][d] * x[i + d]"),
                      {"n": Scaled(), "w": rng.choice([3, 5, 9, 17, 33])}),
        lambda t: _gv("gemv2", "two matrix-vector products summed: y += A x + B z", t, ["n", "m"],
                      [(t, "A", ("n", "m")), (t, "B", ("n", "m")), (t, "x", ("m",)), (t, "z", ("m",)),
                       (t, "y", ("n",))],
                      loop([("i", 0, "n"), ("j", 0, "m")], "y[i] += A[i][j] * x[j] + B[i][j] * z[j]"), _NM),
        lambda t: _gv("gemv_t_init", "y = A^T x with the output cleared in its own loop, then rows streamed "
                      "(marked region, two nests)", t, ["n", "m"],
                      [(t, "A", ("n", "m")), (t, "x", ("n",)), (t, "y", ("m",))],
                      [*loop([("j", 0, "m")], f"y[j] = {zero(t)}"),
                       *loop([("i", 0, "n"), ("j", 0, "m")], "y[j] += A[i][j] * x[i]")], _NM, pragma=True),
        lambda t: _gv("gemv_sub", "gemv on a sub-block: y[i] += A[i + r0][j + c0] x[j] with offsets 1 and 2", t,
                      ["n", "m"], [(t, "A", ("n + 1", "m + 2")), (t, "x", ("m",)), (t, "y", ("n",))],
                      loop([("i", 0, "n"), ("j", 0, "m")], "y[i] += A[i + 1][j + 2] * x[j]"), _NM),
        lambda t: _gv("gemv_rows2", "gemv computing two output rows per outer iteration (manually unrolled by 2)",
                      t, ["n", "m"], [(t, "A", ("2 * n", "m")), (t, "x", ("m",)), (t, "y", ("2 * n",))],
                      loop([("i", 0, "n"), ("j", 0, "m")],
                           ["y[2 * i] += A[2 * i][j] * x[j]", "y[2 * i + 1] += A[2 * i + 1][j] * x[j]"]), _NM),
    ]


# -- batched ----------------------------------------------------------------------------------------------
def batched(rng: random.Random) -> list[Kernel]:
    return _batched_gemms(rng) + _batched_vector_kernels(rng)


def _batched_gemms(rng: random.Random) -> list[Kernel]:
    fam = "batched"
    out: list[Kernel] = []
    bnd = {"b": "nb", "i": "ni", "j": "nj", "k": "nk"}

    def sizes(batch: float) -> dict[str, Scaled]:
        return {"nb": Scaled(batch, 2), "ni": Scaled(), "nj": Scaled(), "nk": Scaled()}

    def bg(name: str, desc: str, order: str, a: str, b: str, c: str, adims: tuple, bdims: tuple, cdims: tuple,
           extra: dict | None = None) -> None:
        t = fp_type(rng)
        body = loop([(v, 0, bnd[v]) for v in order], f"{c} += {a} * {b}")
        out.append(Kernel(fam, f"{name}_{TAG[t]}", desc + f" ({t}).", t, ["nb", "ni", "nj", "nk"],
                          [(t, "C", cdims), (t, "A", adims), (t, "B", bdims)], body,
                          sizes(rng.uniform(0.2, 1.0)), **(extra or {})))

    std = ("A[b][i][k]", "B[b][k][j]", "C[b][i][j]", ("nb", "ni", "nk"), ("nb", "nk", "nj"), ("nb", "ni", "nj"))
    for order in ("bijk", "bikj", "bkij", "bjki"):
        bg(f"bgemm_{order}", f"batched gemm C[b] += A[b] B[b], loop order {order}", order, *std)
    bg("bgemm_bijk_tb", "batched gemm with B transposed, C[b] += A[b] B[b]^T, bijk order", "bijk",
       "A[b][i][k]", "B[b][j][k]", "C[b][i][j]", ("nb", "ni", "nk"), ("nb", "nj", "nk"), ("nb", "ni", "nj"))
    bg("bgemm_bkij_ta", "batched gemm with A transposed, C[b] += A[b]^T B[b], bkij order", "bkij",
       "A[b][k][i]", "B[b][k][j]", "C[b][i][j]", ("nb", "nk", "ni"), ("nb", "nk", "nj"), ("nb", "ni", "nj"))
    last = ("A[i][k][b]", "B[k][j][b]", "C[i][j][b]", ("ni", "nk", "nb"), ("nk", "nj", "nb"), ("ni", "nj", "nb"))
    bg("bgemm_last_ijkb", "batch-last layout (batch index innermost and contiguous), ijkb order", "ijkb", *last)
    bg("bgemm_last_bikj", "batch-last layout traversed with the batch loop outermost (strided)", "bikj", *last)
    for order in ("bikj", "ibkj"):
        t = fp_type(rng)
        body = loop([(v, 0, bnd[v]) for v in order], "Y[b][i][j] += X[b][i][k] * W[k][j]")
        out.append(Kernel(fam, f"bgemm_shared_{order}_{TAG[t]}", f"batched product with a shared weight matrix, "
                          f"Y[b] += X[b] W, loop order {order} ({t})", t, ["nb", "ni", "nj", "nk"],
                          [(t, "Y", ("nb", "ni", "nj")), (t, "X", ("nb", "ni", "nk")), (t, "W", ("nk", "nj"))],
                          body, sizes(rng.uniform(0.3, 1.5))))
    t = fp_type(rng)
    out.append(Kernel(fam, f"bgemm_ab_{TAG[t]}", f"batched gemm with alpha and beta: C[b] = beta C[b] + alpha "
                      f"A[b] B[b] ({t})", t, ["nb", "ni", "nj", "nk"],
                      [(t, "C", ("nb", "ni", "nj")), (t, "A", ("nb", "ni", "nk")), (t, "B", ("nb", "nk", "nj"))],
                      loop([("b", 0, "nb"), ("i", 0, "ni")], [
                          *loop([("j", 0, "nj")], "C[b][i][j] *= beta"),
                          *loop([("k", 0, "nk"), ("j", 0, "nj")], "C[b][i][j] += alpha * A[b][i][k] * B[b][k][j]")]),
                      sizes(rng.uniform(0.2, 1.0)), scalars=[(t, "alpha"), (t, "beta")]))
    t = fp_type(rng)
    out.append(Kernel(fam, f"bgemm_acc_{TAG[t]}", f"batched gemm overwriting C through a local accumulator ({t})",
                      t, ["nb", "ni", "nj", "nk"],
                      [(t, "C", ("nb", "ni", "nj")), (t, "A", ("nb", "ni", "nk")), (t, "B", ("nb", "nk", "nj"))],
                      loop([("b", 0, "nb"), ("i", 0, "ni"), ("j", 0, "nj")], [
                          f"{t} acc = {zero(t)}", *loop([("k", 0, "nk")], "acc += A[b][i][k] * B[b][k][j]"),
                          "C[b][i][j] = acc"]), sizes(rng.uniform(0.2, 1.0))))
    return out


def _batched_vector_kernels(rng: random.Random) -> list[Kernel]:
    fam = "batched"
    out: list[Kernel] = []
    # batched gemv and friends
    gv = {"nb": Scaled(1.0, 2), "n": Scaled(), "m": Scaled()}

    def bv(name: str, desc: str, ints: list[str], arrays: list, body: list, sz: dict, t: str) -> None:
        out.append(Kernel(fam, f"{name}_{TAG[t]}", desc + f" ({t}).", t, ints, arrays, body, sz))

    for order in ("bij", "bji"):
        t = fp_type(rng)
        bv(f"bgemv_{order}", f"batched gemv y[b] += A[b] x[b], loop order {order}", ["nb", "n", "m"],
           [(t, "A", ("nb", "n", "m")), (t, "x", ("nb", "m")), (t, "y", ("nb", "n"))],
           loop([(v, 0, {"b": "nb", "i": "n", "j": "m"}[v]) for v in order], "y[b][i] += A[b][i][j] * x[b][j]"), gv, t)
    t = fp_type(rng)
    bv("bgemv_t", "batched transposed gemv y[b] += A[b]^T x[b]", ["nb", "n", "m"],
       [(t, "A", ("nb", "n", "m")), (t, "x", ("nb", "n")), (t, "y", ("nb", "m"))],
       loop([("b", 0, "nb"), ("i", 0, "n"), ("j", 0, "m")], "y[b][j] += A[b][i][j] * x[b][i]"), gv, t)
    for order in ("bij", "ibj"):
        t = fp_type(rng)
        bv(f"bgemv_shared_{order}", f"one matrix applied to a batch of vectors, Y[b] += A X[b], order {order}",
           ["nb", "n", "m"], [(t, "A", ("n", "m")), (t, "X", ("nb", "m")), (t, "Y", ("nb", "n"))],
           loop([(v, 0, {"b": "nb", "i": "n", "j": "m"}[v]) for v in order], "Y[b][i] += A[i][j] * X[b][j]"), gv, t)
    t = fp_type(rng)
    bv("bgemv_last", "batch-last batched gemv y[i][b] += A[i][j][b] x[j][b], batch innermost", ["nb", "n", "m"],
       [(t, "A", ("n", "m", "nb")), (t, "x", ("m", "nb")), (t, "y", ("n", "nb"))],
       loop([("i", 0, "n"), ("j", 0, "m"), ("b", 0, "nb")], "y[i][b] += A[i][j][b] * x[j][b]"), gv, t)
    dsz = {"nb": Scaled(1.0, 2), "n": Scaled()}
    t = fp_type(rng)
    bv("bdot_bi", "batched dot products d[b] += x[b][i] y[b][i], batch outer", ["nb", "n"],
       [(t, "x", ("nb", "n")), (t, "y", ("nb", "n")), (t, "d", ("nb",))],
       loop([("b", 0, "nb"), ("i", 0, "n")], "d[b] += x[b][i] * y[b][i]"), dsz, t)
    t = fp_type(rng)
    bv("bdot_ib", "batched dot products with the element loop outside and the batch inside", ["nb", "n"],
       [(t, "x", ("nb", "n")), (t, "y", ("nb", "n")), (t, "d", ("nb",))],
       loop([("i", 0, "n"), ("b", 0, "nb")], "d[b] += x[b][i] * y[b][i]"), dsz, t)
    t = fp_type(rng)
    bv("bger", "batched rank-1 updates A[b] += x[b] y[b]^T", ["nb", "n", "m"],
       [(t, "A", ("nb", "n", "m")), (t, "x", ("nb", "n")), (t, "y", ("nb", "m"))],
       loop([("b", 0, "nb"), ("i", 0, "n"), ("j", 0, "m")], "A[b][i][j] += x[b][i] * y[b][j]"), gv, t)
    t = fp_type(rng)
    bv("btrsv_lower", "batched forward substitution L[b] x[b] = b[b] in place (diagonal shifted by n)",
       ["nb", "n"], [(t, "L", ("nb", "n", "n")), (t, "x", ("nb", "n"))],
       loop([("b", 0, "nb"), ("i", 0, "n")], [*loop([("j", 0, "i")], "x[b][i] -= L[b][i][j] * x[b][j]"),
                                              "x[b][i] /= L[b][i][i] + n"]), dsz, t)
    t = fp_type(rng)
    bv("bgram", "batched Gram matrices G[b] += X[b]^T X[b] (full, not exploiting symmetry)", ["nb", "n", "m"],
       [(t, "G", ("nb", "m", "m")), (t, "X", ("nb", "n", "m"))],
       loop([("b", 0, "nb"), ("k", 0, "n"), ("i", 0, "m"), ("j", 0, "m")], "G[b][i][j] += X[b][k][i] * X[b][k][j]"),
       gv, t)
    t = fp_type(rng)
    bv("baxpy_2d", "batched axpy with one scale per batch entry, Y[b][i] += s[b] X[b][i]", ["nb", "n"],
       [(t, "s", ("nb",)), (t, "X", ("nb", "n")), (t, "Y", ("nb", "n"))],
       loop([("b", 0, "nb"), ("i", 0, "n")], "Y[b][i] += s[b] * X[b][i]"), dsz, t)
    return out
