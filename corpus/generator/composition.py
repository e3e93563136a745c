"""Data-mining kernels (means, then centred products: covariance, correlation, distances) and multi-statement
compositions (chains of two or three products, products followed by elementwise work, attention)."""

from __future__ import annotations

import random

from corpus.generator.core import FP, Add, Kernel, Scaled, family_of, fn, lit, loop, zero

_GEMM_SIZES = {"ni": Scaled(), "nj": Scaled(), "nk": Scaled()}
_GEMM_ARRAYS = [(None, "C", ("ni", "nj")), (None, "A", ("ni", "nk")), (None, "B", ("nk", "nj"))]


def _typed(t: str, arrays: list) -> list:
    """``arrays`` with their element type None replaced by ``t``."""
    return [(t if a is None else a, n, d) for a, n, d in arrays]

def _means(t: str, X: str = "X", mu: str = "mean", n: str = "n", m: str = "m") -> list:
    return loop([("j", 0, m)], [f"{mu}[j] = {lit(0.0, t)}", *loop([("i", 0, n)], f"{mu}[j] += {X}[i][j]"),
                                f"{mu}[j] = {mu}[j] / {n}"])


# -- datamining --------------------------------------------------------------------------------------------
_NM = {"n": Scaled(1.0, 4), "m": Scaled(0.6, 4)}  # n samples of m features


def datamining(rng: random.Random) -> list[Kernel]:
    return family_of("datamining", rng, _covariances, _standardising_and_distances, _similarities_and_scaling,
                     _time_series)


def _covariances(rng: random.Random, add: Add) -> None:
    t = rng.choice(FP)
    add("covariance_sym", "covariance: column means, centring in place, then the upper triangle of X^T X / (n - 1) "
        "mirrored into the lower one (marked region, three nests)", t, ["n", "m"],
        [(t, "X", ("n", "m")), (t, "mean", ("m",)), (t, "cov", ("m", "m"))],
        [*_means(t), *loop([("i", 0, "n"), ("j", 0, "m")], "X[i][j] -= mean[j]"),
         *loop([("a", 0, "m"), ("b", "a", "m")], [
             f"cov[a][b] = {lit(0.0, t)}", *loop([("i", 0, "n")], "cov[a][b] += X[i][a] * X[i][b]"),
             "cov[a][b] = cov[a][b] / (n - 1)", "cov[b][a] = cov[a][b]"])], _NM, pragma=True)
    t = rng.choice(FP)
    add("covariance_rank1", "covariance as a sum of rank-1 updates: means, a centred copy D, then "
        "cov += D[i]^T D[i] row by row and a final scaling (marked region)", t, ["n", "m"],
        [(t, "X", ("n", "m")), (t, "D", ("n", "m")), (t, "mean", ("m",)), (t, "cov", ("m", "m"))],
        [*_means(t), *loop([("i", 0, "n"), ("j", 0, "m")], "D[i][j] = X[i][j] - mean[j]"),
         *loop([("i", 0, "n"), ("a", 0, "m"), ("b", 0, "m")], "cov[a][b] += D[i][a] * D[i][b]"),
         *loop([("a", 0, "m"), ("b", 0, "m")], "cov[a][b] = cov[a][b] / (n - 1)")], _NM, pragma=True)
    t = rng.choice(FP)
    add("covariance_acc", "covariance with the centring folded into the product, through a local accumulator "
        "(means precomputed in the same region)", t, ["n", "m"],
        [(t, "X", ("n", "m")), (t, "mean", ("m",)), (t, "cov", ("m", "m"))],
        [*_means(t), *loop([("a", 0, "m"), ("b", 0, "m")], [
            f"{t} acc = {lit(0.0, t)}", *loop([("i", 0, "n")], "acc += (X[i][a] - mean[a]) * (X[i][b] - mean[b])"),
            "cov[a][b] = acc / (n - 1)"])], _NM, pragma=True)
    t = rng.choice(FP)
    add("correlation", "correlation matrix: means, standard deviations (sqrt, floored by fmax), standardisation "
        "in place, then the symmetric product with a unit diagonal (marked region)", t, ["n", "m"],
        [(t, "X", ("n", "m")), (t, "mean", ("m",)), (t, "sd", ("m",)), (t, "corr", ("m", "m"))],
        [*_means(t),
         *loop([("j", 0, "m")], [f"sd[j] = {lit(0.0, t)}",
                                 *loop([("i", 0, "n")], "sd[j] += (X[i][j] - mean[j]) * (X[i][j] - mean[j])"),
                                 f"sd[j] = {fn('fmax', t)}({fn('sqrt', t)}(sd[j] / n), {lit(0.1, t)})"]),
         *loop([("i", 0, "n"), ("j", 0, "m")], "X[i][j] = (X[i][j] - mean[j]) / (sd[j] * n)"),
         *loop([("a", 0, "m")], [f"corr[a][a] = {lit(1.0, t)}",
                                 *loop([("b", "a + 1", "m")], [
                                     f"corr[a][b] = {lit(0.0, t)}",
                                     *loop([("i", 0, "n")], "corr[a][b] += X[i][a] * X[i][b]"),
                                     "corr[b][a] = corr[a][b]"])])], _NM, pragma=True)


def _standardising_and_distances(rng: random.Random, add: Add) -> None:
    t = rng.choice(FP)
    add("mean_variance", "column means and variances, two passes (marked region)", t, ["n", "m"],
        [(t, "X", ("n", "m")), (t, "mean", ("m",)), (t, "var", ("m",))],
        [*loop([("i", 0, "n"), ("j", 0, "m")], "mean[j] += X[i][j]"),
         *loop([("j", 0, "m")], "mean[j] = mean[j] / n"),
         *loop([("i", 0, "n"), ("j", 0, "m")], "var[j] += (X[i][j] - mean[j]) * (X[i][j] - mean[j])"),
         *loop([("j", 0, "m")], "var[j] = var[j] / (n - 1)")], _NM, pragma=True)
    t = rng.choice(FP)
    add("zscore_rows", "per-row standardisation: row mean and deviation in local scalars, then the scaled row", t,
        ["n", "m"], [(t, "X", ("n", "m")), (t, "Z", ("n", "m"))],
        loop([("i", 0, "n")], [
            f"{t} mu = {lit(0.0, t)}", *loop([("j", 0, "m")], "mu += X[i][j]"), "mu = mu / m",
            f"{t} var = {lit(0.0, t)}", *loop([("j", 0, "m")], "var += (X[i][j] - mu) * (X[i][j] - mu)"),
            f"{t} sd = {fn('sqrt', t)}(var / m) + {lit(0.001, t)}",
            *loop([("j", 0, "m")], "Z[i][j] = (X[i][j] - mu) / sd")]), _NM)
    t = rng.choice(FP)
    add("gram_samples", "sample Gram matrix G = X X^T / m through a local accumulator", t, ["n", "m"],
        [(t, "X", ("n", "m")), (t, "G", ("n", "n"))],
        loop([("i", 0, "n"), ("j", 0, "n")], [f"{t} acc = {lit(0.0, t)}",
                                              *loop([("k", 0, "m")], "acc += X[i][k] * X[j][k]"), "G[i][j] = acc / m"]),
        {"n": Scaled(1.0, 4), "m": Scaled(0.5, 4)})
    for order in ("ijk", "ikj"):
        t = rng.choice(FP)
        b = {"i": ("i", 0, "n"), "j": ("j", 0, "n"), "k": ("k", 0, "m")}
        add(f"sqdist_{order}", f"pairwise squared Euclidean distances between rows, loop order {order}", t,
            ["n", "m"], [(t, "X", ("n", "m")), (t, "D", ("n", "n"))],
            loop([b[v] for v in order], [f"{t} d = X[i][k] - X[j][k]", "D[i][j] += d * d"]),
            {"n": Scaled(1.0, 4), "m": Scaled(0.3, 2)})
    t = rng.choice(FP)
    add("manhattan_upper", "pairwise Manhattan distances on the upper triangle (j > i)", t, ["n", "m"],
        [(t, "X", ("n", "m")), (t, "D", ("n", "n"))],
        loop([("i", 0, "n"), ("j", "i + 1", "n"), ("k", 0, "m")], f"D[i][j] += {fn('fabs', t)}(X[i][k] - X[j][k])"),
        {"n": Scaled(1.0, 4), "m": Scaled(0.3, 2)})
    t = rng.choice(FP)
    add("rbf_kernel", "RBF kernel matrix: squared distances, then K = exp(-g D) (marked region)", t, ["n", "m"],
        [(t, "X", ("n", "m")), (t, "K", ("n", "n"))],
        [*loop([("i", 0, "n"), ("j", 0, "n")], [f"{t} acc = {lit(0.0, t)}",
                                                *loop([("k", 0, "m")],
                                                      "acc += (X[i][k] - X[j][k]) * (X[i][k] - X[j][k])"),
                                                "K[i][j] = acc"]),
         *loop([("i", 0, "n"), ("j", 0, "n")], f"K[i][j] = {fn('exp', t)}(-g * K[i][j])")],
        {"n": Scaled(1.0, 4), "m": Scaled(0.3, 2)}, scalars=[(t, "g")], pragma=True)


def _similarities_and_scaling(rng: random.Random, add: Add) -> None:
    t = rng.choice(FP)
    add("cosine_similarity", "cosine similarities between rows: row norms, then normalised dot products "
        "(marked region)", t, ["n", "m"], [(t, "X", ("n", "m")), (t, "nrm", ("n",)), (t, "S", ("n", "n"))],
        [*loop([("i", 0, "n")], [f"nrm[i] = {lit(0.0, t)}", *loop([("k", 0, "m")], "nrm[i] += X[i][k] * X[i][k]"),
                                 f"nrm[i] = {fn('sqrt', t)}(nrm[i])"]),
         *loop([("i", 0, "n"), ("j", 0, "n")], [f"{t} dot = {lit(0.0, t)}",
                                                *loop([("k", 0, "m")], "dot += X[i][k] * X[j][k]"),
                                                "S[i][j] = dot / (nrm[i] * nrm[j])"])],
        {"n": Scaled(1.0, 4), "m": Scaled(0.5, 2)}, pragma=True)
    t = rng.choice(FP)
    add("weighted_covariance", "weighted scatter matrix of centred data, C[a][b] += w[i] Xc[i][a] Xc[i][b]", t,
        ["n", "m"], [(t, "Xc", ("n", "m")), (t, "w", ("n",)), (t, "C", ("m", "m"))],
        loop([("a", 0, "m"), ("b", 0, "m"), ("i", 0, "n")], "C[a][b] += w[i] * Xc[i][a] * Xc[i][b]"), _NM)
    t = rng.choice(FP)
    add("cross_covariance", "cross-covariance of two data sets with given means, samples outermost", t,
        ["n", "p", "q"], [(t, "X", ("n", "p")), (t, "Y", ("n", "q")), (t, "mx", ("p",)), (t, "my", ("q",)),
                          (t, "C", ("p", "q"))],
        loop([("i", 0, "n"), ("a", 0, "p"), ("b", 0, "q")], "C[a][b] += (X[i][a] - mx[a]) * (Y[i][b] - my[b])"),
        {"n": Scaled(1.0, 4), "p": Scaled(0.5, 4), "q": Scaled(0.5, 4)})
    t = rng.choice(FP)
    add("centroid_distances", "k-means distance step: squared distances of every sample to every centroid", t,
        ["n", "nc", "m"], [(t, "X", ("n", "m")), (t, "M", ("nc", "m")), (t, "D", ("n", "nc"))],
        loop([("i", 0, "n"), ("c", 0, "nc"), ("k", 0, "m")], "D[i][c] += (X[i][k] - M[c][k]) * (X[i][k] - M[c][k])"),
        {"n": Scaled(1.0, 4), "nc": Scaled(0.05, 2), "m": Scaled(0.1, 2)})
    t = rng.choice(FP)
    add("naive_bayes_loglik", "naive Bayes log-likelihoods L[i][c] += X[i][f] logp[c][f]", t, ["n", "nc", "nf"],
        [(t, "X", ("n", "nf")), (t, "logp", ("nc", "nf")), (t, "L", ("n", "nc"))],
        loop([("i", 0, "n"), ("c", 0, "nc"), ("f", 0, "nf")], "L[i][c] += X[i][f] * logp[c][f]"),
        {"n": Scaled(1.0, 4), "nc": Scaled(0.1, 2), "nf": Scaled(0.5, 2)})
    t = rng.choice(FP)
    add("minmax_scale", "min-max scaling of columns: column minima and maxima (fmin/fmax), then rescaling "
        "(marked region)", t, ["n", "m"], [(t, "X", ("n", "m")), (t, "lo", ("m",)), (t, "hi", ("m",))],
        [*loop([("i", 0, "n"), ("j", 0, "m")], [f"lo[j] = {fn('fmin', t)}(lo[j], X[i][j])",
                                                f"hi[j] = {fn('fmax', t)}(hi[j], X[i][j])"]),
         *loop([("i", 0, "n"), ("j", 0, "m")], f"X[i][j] = (X[i][j] - lo[j]) / (hi[j] - lo[j] + {lit(0.001, t)})")],
        _NM, pragma=True)


def _time_series(rng: random.Random, add: Add) -> None:
    t = rng.choice(FP)
    add("moving_average", "moving average over a window of w samples for m series", t, ["n", "m", "w"],
        [(t, "X", ("n + w", "m")), (t, "Y", ("n", "m"))],
        loop([("i", 0, "n"), ("j", 0, "m")], [f"{t} acc = {lit(0.0, t)}",
                                              *loop([("k", 0, "w")], "acc += X[i + k][j]"), "Y[i][j] = acc / w"]),
        {"n": Scaled(1.0, 4), "m": Scaled(0.3, 2), "w": rng.choice([4, 8, 16, 30])})
    t = rng.choice(FP)
    add("autocorrelation", "autocorrelation r[lag] += x[t] x[t + lag] for lags below nl", t, ["n", "nl"],
        [(t, "x", ("n + nl",)), (t, "r", ("nl",))],
        loop([("l", 0, "nl"), ("i", 0, "n")], "r[l] += x[i] * x[i + l]"),
        {"n": Scaled(1.0, 8), "nl": Scaled(0.05, 2)})


# -- composition -------------------------------------------------------------------------------------------
def composition(rng: random.Random) -> list[Kernel]:
    return family_of("composition", rng, _multi_gemm, _layers, _vector_and_attention_chains, _product_chains)


def _multi_gemm(rng: random.Random, add: Add) -> None:
    t = rng.choice(FP)
    add("two_mm_ijk", "2mm: tmp = alpha A B, then D = beta D + tmp C, both in ijk order with in-body "
        "initialisation (marked region)", t, ["ni", "nj", "nk", "nl"],
        [(t, "tmp", ("ni", "nj")), (t, "A", ("ni", "nk")), (t, "B", ("nk", "nj")), (t, "C", ("nj", "nl")),
         (t, "D", ("ni", "nl"))],
        [*loop([("i", 0, "ni"), ("j", 0, "nj")],
               [f"tmp[i][j] = {zero(t)}", *loop([("k", 0, "nk")], "tmp[i][j] += alpha * A[i][k] * B[k][j]")]),
         *loop([("i", 0, "ni"), ("j", 0, "nl")], ["D[i][j] *= beta", *loop([("k", 0, "nj")],
                                                                           "D[i][j] += tmp[i][k] * C[k][j]")])],
        scalars=[(t, "alpha"), (t, "beta")], pragma=True)
    t = rng.choice(FP)
    add("two_mm_ikj", "2mm in ikj order: tmp = A B, D = D + tmp C, initialisation loops inside the row loop "
        "(marked region)", t, ["ni", "nj", "nk", "nl"],
        [(t, "tmp", ("ni", "nj")), (t, "A", ("ni", "nk")), (t, "B", ("nk", "nj")), (t, "C", ("nj", "nl")),
         (t, "D", ("ni", "nl"))],
        [*loop([("i", 0, "ni")], [*loop([("j", 0, "nj")], f"tmp[i][j] = {zero(t)}"),
                                  *loop([("k", 0, "nk"), ("j", 0, "nj")], "tmp[i][j] += A[i][k] * B[k][j]")]),
         *loop([("i", 0, "ni"), ("k", 0, "nj"), ("j", 0, "nl")], "D[i][j] += tmp[i][k] * C[k][j]")], pragma=True)
    t = rng.choice(FP)
    add("two_mm_fused_rows", "2mm with both products inside one row loop: the row of tmp is finished before it "
        "feeds D", t, ["ni", "nj", "nk", "nl"],
        [(t, "tmp", ("ni", "nj")), (t, "A", ("ni", "nk")), (t, "B", ("nk", "nj")), (t, "C", ("nj", "nl")),
         (t, "D", ("ni", "nl"))],
        loop([("i", 0, "ni")], [*loop([("k", 0, "nk"), ("j", 0, "nj")], "tmp[i][j] += A[i][k] * B[k][j]"),
                                *loop([("k", 0, "nj"), ("j", 0, "nl")], "D[i][j] += tmp[i][k] * C[k][j]")]))
    for order in ("ijk", "ikj"):
        t = rng.choice(FP)
        ints = ["ni", "nj", "nk", "nl", "nm"]
        arrays = [(t, "E", ("ni", "nj")), (t, "A", ("ni", "nk")), (t, "B", ("nk", "nj")), (t, "F", ("nj", "nl")),
                  (t, "C", ("nj", "nm")), (t, "D", ("nm", "nl")), (t, "G", ("ni", "nl"))]

        def mm(o: str, d: str, a: str, b: str, ni: str, nj: str, nk: str, order: str = order) -> list:
            bnd = {"i": ("i", 0, ni), "j": ("j", 0, nj), "k": ("k", 0, nk)}
            if order == "ijk":
                return loop([bnd["i"], bnd["j"]], [f"{d}[i][j] = {zero(o)}",
                                                   *loop([bnd["k"]], f"{d}[i][j] += {a}[i][k] * {b}[k][j]")])
            return loop([bnd["i"]], [*loop([bnd["j"]], f"{d}[i][j] = {zero(o)}"),
                                     *loop([bnd["k"], bnd["j"]], f"{d}[i][j] += {a}[i][k] * {b}[k][j]")])
        add(f"three_mm_{order}", f"3mm: E = A B, F = C D, G = E F, each product in {order} form (marked region)", t,
            ints, arrays, [*mm(t, "E", "A", "B", "ni", "nj", "nk"), *mm(t, "F", "C", "D", "nj", "nl", "nm"),
                           *mm(t, "G", "E", "F", "ni", "nl", "nj")], pragma=True)


def _layers(rng: random.Random, add: Add) -> None:
    t = rng.choice(FP)
    add("gemm_relu_fused", "gemm with ReLU applied to each finished dot product", t, ["ni", "nj", "nk"],
        _typed(t, _GEMM_ARRAYS), loop([("i", 0, "ni"), ("j", 0, "nj")], [
            f"{t} acc = {zero(t)}", *loop([("k", 0, "nk")], "acc += A[i][k] * B[k][j]"),
            f"C[i][j] = {fn('fmax', t)}(acc, {zero(t)})"]), _GEMM_SIZES)
    t = rng.choice(FP)
    add("gemm_then_relu", "gemm (ikj) followed by a separate ReLU sweep (marked region)", t, ["ni", "nj", "nk"],
        _typed(t, _GEMM_ARRAYS),
        [*loop([("i", 0, "ni"), ("k", 0, "nk"), ("j", 0, "nj")], "C[i][j] += A[i][k] * B[k][j]"),
         *loop([("i", 0, "ni"), ("j", 0, "nj")], f"C[i][j] = {fn('fmax', t)}(C[i][j], {zero(t)})")],
        _GEMM_SIZES, pragma=True)
    t = rng.choice(FP)
    add("dense_tanh", "dense layer Y = tanh(X W + b) with an accumulator per output", t, ["ni", "nj", "nk"],
        [(t, "Y", ("ni", "nj")), (t, "X", ("ni", "nk")), (t, "W", ("nk", "nj")), (t, "b", ("nj",))],
        loop([("i", 0, "ni"), ("j", 0, "nj")], [
            f"{t} acc = b[j]", *loop([("k", 0, "nk")], "acc += X[i][k] * W[k][j]"), f"Y[i][j] = {fn('tanh', t)}(acc)"]),
        _GEMM_SIZES)
    t = rng.choice(FP)
    add("dense_bias_relu", "dense layer: bias broadcast, X W accumulated in ikj order, ReLU (marked region)", t,
        ["ni", "nj", "nk"], [(t, "Y", ("ni", "nj")), (t, "X", ("ni", "nk")), (t, "W", ("nk", "nj")), (t, "b", ("nj",))],
        [*loop([("i", 0, "ni"), ("j", 0, "nj")], "Y[i][j] = b[j]"),
         *loop([("i", 0, "ni"), ("k", 0, "nk"), ("j", 0, "nj")], "Y[i][j] += X[i][k] * W[k][j]"),
         *loop([("i", 0, "ni"), ("j", 0, "nj")], f"Y[i][j] = {fn('fmax', t)}(Y[i][j], {zero(t)})")],
        _GEMM_SIZES, pragma=True)
    t = rng.choice(FP)
    add("mlp2", "two-layer perceptron: H = relu(X W1 + b1), Y = H W2 + b2 (marked region)", t,
        ["n", "din", "dh", "dout"],
        [(t, "X", ("n", "din")), (t, "W1", ("din", "dh")), (t, "b1", ("dh",)), (t, "H", ("n", "dh")),
         (t, "W2", ("dh", "dout")), (t, "b2", ("dout",)), (t, "Y", ("n", "dout"))],
        [*loop([("i", 0, "n"), ("j", 0, "dh")], [f"{t} acc = b1[j]",
                                                 *loop([("k", 0, "din")], "acc += X[i][k] * W1[k][j]"),
                                                 f"H[i][j] = {fn('fmax', t)}(acc, {zero(t)})"]),
         *loop([("i", 0, "n"), ("j", 0, "dout")], [f"{t} acc2 = b2[j]",
                                                   *loop([("k", 0, "dh")], "acc2 += H[i][k] * W2[k][j]"),
                                                   "Y[i][j] = acc2"])], pragma=True)


def _vector_and_attention_chains(rng: random.Random, add: Add) -> None:
    t = rng.choice(FP)
    add("gemm_gemv", "T = A B followed by y = T x (marked region)", t, ["ni", "nj", "nk"],
        [(t, "T", ("ni", "nj")), (t, "A", ("ni", "nk")), (t, "B", ("nk", "nj")), (t, "x", ("nj",)), (t, "y", ("ni",))],
        [*loop([("i", 0, "ni"), ("k", 0, "nk"), ("j", 0, "nj")], "T[i][j] += A[i][k] * B[k][j]"),
         *loop([("i", 0, "ni"), ("j", 0, "nj")], "y[i] += T[i][j] * x[j]")], _GEMM_SIZES, pragma=True)
    t = rng.choice(FP)
    add("two_gemv", "y = A (B x) through an intermediate vector (marked region)", t, ["n", "m", "p"],
        [(t, "A", ("n", "m")), (t, "B", ("m", "p")), (t, "x", ("p",)), (t, "tv", ("m",)), (t, "y", ("n",))],
        [*loop([("i", 0, "m"), ("j", 0, "p")], "tv[i] += B[i][j] * x[j]"),
         *loop([("i", 0, "n"), ("j", 0, "m")], "y[i] += A[i][j] * tv[j]")], pragma=True)
    t = rng.choice(FP)
    add("attention", "attention without normalisation: S = Q K^T / d, P = exp(S), O = P V (marked region)", t,
        ["n", "d"], [(t, "Q", ("n", "d")), (t, "K", ("n", "d")), (t, "V", ("n", "d")), (t, "S", ("n", "n")),
                     (t, "O", ("n", "d"))],
        [*loop([("i", 0, "n"), ("j", 0, "n")], [f"{t} acc = {zero(t)}",
                                                *loop([("k", 0, "d")], "acc += Q[i][k] * K[j][k]"),
                                                "S[i][j] = acc / d"]),
         *loop([("i", 0, "n"), ("j", 0, "n")], f"S[i][j] = {fn('exp', t)}(S[i][j])"),
         *loop([("i", 0, "n"), ("j", 0, "n"), ("k", 0, "d")], "O[i][k] += S[i][j] * V[j][k]")],
        {"n": Scaled(), "d": Scaled(0.2, 4)}, pragma=True)
    t = rng.choice(FP)
    add("attention_softmax", "attention with row-wise softmax normalisation: scores, exponentials, row sums, "
        "normalisation, then P V (marked region)", t, ["n", "d"],
        [(t, "Q", ("n", "d")), (t, "K", ("n", "d")), (t, "V", ("n", "d")), (t, "S", ("n", "n")), (t, "z", ("n",)),
         (t, "O", ("n", "d"))],
        [*loop([("i", 0, "n"), ("j", 0, "n")], [f"S[i][j] = {zero(t)}",
                                                *loop([("k", 0, "d")], "S[i][j] += Q[i][k] * K[j][k] / d")]),
         *loop([("i", 0, "n")], [f"z[i] = {zero(t)}", *loop([("j", 0, "n")], [f"S[i][j] = {fn('exp', t)}(S[i][j])",
                                                                           "z[i] += S[i][j]"])]),
         *loop([("i", 0, "n"), ("j", 0, "n")], "S[i][j] = S[i][j] / z[i]"),
         *loop([("i", 0, "n"), ("k", 0, "d")], [f"O[i][k] = {zero(t)}",
                                                *loop([("j", 0, "n")], "O[i][k] += S[i][j] * V[j][k]")])],
        {"n": Scaled(), "d": Scaled(0.2, 4)}, pragma=True)
    t = rng.choice(FP)
    add("gemm_symmetrize", "C = A B, then S = C + C^T (marked region)", t, ["n", "nk"],
        [(t, "C", ("n", "n")), (t, "A", ("n", "nk")), (t, "B", ("nk", "n")), (t, "S", ("n", "n"))],
        [*loop([("i", 0, "n"), ("k", 0, "nk"), ("j", 0, "n")], "C[i][j] += A[i][k] * B[k][j]"),
         *loop([("i", 0, "n"), ("j", 0, "n")], "S[i][j] = C[i][j] + C[j][i]")], pragma=True)
    t = rng.choice(FP)
    add("atb_sqrt", "C = A^T B (k outermost), then an elementwise square root (marked region)", t,
        ["ni", "nj", "nk"], [(t, "C", ("ni", "nj")), (t, "A", ("nk", "ni")), (t, "B", ("nk", "nj"))],
        [*loop([("k", 0, "nk"), ("i", 0, "ni"), ("j", 0, "nj")], "C[i][j] += A[k][i] * B[k][j]"),
         *loop([("i", 0, "ni"), ("j", 0, "nj")], f"C[i][j] = {fn('sqrt', t)}(C[i][j])")], _GEMM_SIZES, pragma=True)


def _product_chains(rng: random.Random, add: Add) -> None:
    t = rng.choice(FP)
    add("abct", "D = (A B) C^T through an intermediate (marked region)", t, ["ni", "nj", "nk", "nl"],
        [(t, "T", ("ni", "nj")), (t, "A", ("ni", "nk")), (t, "B", ("nk", "nj")), (t, "C", ("nl", "nj")),
         (t, "D", ("ni", "nl"))],
        [*loop([("i", 0, "ni"), ("k", 0, "nk"), ("j", 0, "nj")], "T[i][j] += A[i][k] * B[k][j]"),
         *loop([("i", 0, "ni"), ("l", 0, "nl"), ("j", 0, "nj")], "D[i][l] += T[i][j] * C[l][j]")], pragma=True)
    t = rng.choice(FP)
    add("gram_scaled", "G = X^T X accumulated by rank-1 updates, then divided by n (marked region)", t, ["n", "m"],
        [(t, "X", ("n", "m")), (t, "G", ("m", "m"))],
        [*loop([("k", 0, "n"), ("i", 0, "m"), ("j", 0, "m")], "G[i][j] += X[k][i] * X[k][j]"),
         *loop([("i", 0, "m"), ("j", 0, "m")], "G[i][j] = G[i][j] / n")], pragma=True)
    t = rng.choice(FP)
    add("add_then_gemm", "S = A + B, then C += S D (marked region)", t, ["ni", "nj", "nk"],
        [(t, "A", ("ni", "nk")), (t, "B", ("ni", "nk")), (t, "S", ("ni", "nk")), (t, "D", ("nk", "nj")),
         (t, "C", ("ni", "nj"))],
        [*loop([("i", 0, "ni"), ("k", 0, "nk")], "S[i][k] = A[i][k] + B[i][k]"),
         *loop([("i", 0, "ni"), ("k", 0, "nk"), ("j", 0, "nj")], "C[i][j] += S[i][k] * D[k][j]")],
        _GEMM_SIZES, pragma=True)
    t = rng.choice(FP)
    add("residual_block", "residual block Y = X + relu(X W) with a square weight matrix", t, ["n", "m"],
        [(t, "X", ("n", "m")), (t, "W", ("m", "m")), (t, "Y", ("n", "m"))],
        loop([("i", 0, "n"), ("j", 0, "m")], [f"{t} acc = {zero(t)}",
                                              *loop([("k", 0, "m")], "acc += X[i][k] * W[k][j]"),
                                              f"Y[i][j] = X[i][j] + {fn('fmax', t)}(acc, {zero(t)})"]))
    t = rng.choice(FP)
    add("gemm_rowsum", "row i of C = A B is computed (ikj) and immediately summed into r[i]", t, ["ni", "nj", "nk"],
        [*_typed(t, _GEMM_ARRAYS), (t, "r", ("ni",))],
        loop([("i", 0, "ni")], [*loop([("k", 0, "nk"), ("j", 0, "nj")], "C[i][j] += A[i][k] * B[k][j]"),
                                *loop([("j", 0, "nj")], "r[i] += C[i][j]")]), _GEMM_SIZES)
    t = rng.choice(FP)
    add("trmm_then_gemm", "T = L B with L lower triangular, then C = T D (marked region)", t, ["n", "m", "p"],
        [(t, "L", ("n", "n")), (t, "B", ("n", "m")), (t, "T", ("n", "m")), (t, "D", ("m", "p")), (t, "C", ("n", "p"))],
        [*loop([("i", 0, "n"), ("k", 0, "i", {"incl": True}), ("j", 0, "m")], "T[i][j] += L[i][k] * B[k][j]"),
         *loop([("i", 0, "n"), ("k", 0, "m"), ("j", 0, "p")], "C[i][j] += T[i][k] * D[k][j]")], pragma=True)
    t = rng.choice(FP)
    add("conv1d_then_pool", "1-D multi-channel convolution followed by max pooling by 2 (fmax) (marked region)", t,
        ["no", "nc", "n", "kw"],
        [(t, "x", ("nc", "2 * n + kw")), (t, "w", ("no", "nc", "kw")), (t, "y", ("no", "2 * n")),
         (t, "p", ("no", "n"))],
        [*loop([("o", 0, "no"), ("c", 0, "nc"), ("i", 0, "2 * n"), ("k", 0, "kw")],
               "y[o][i] += w[o][c][k] * x[c][i + k]"),
         *loop([("o", 0, "no"), ("i", 0, "n")], f"p[o][i] = {fn('fmax', t)}(y[o][2 * i], y[o][2 * i + 1])")],
        {"no": Scaled(0.3, 2), "nc": Scaled(0.3, 2), "n": Scaled(), "kw": rng.choice([3, 5, 7])}, pragma=True)
    t = rng.choice(FP)
    add("gemm_scale_cols", "C = A B (jki order), then every column scaled by s[j] (marked region)", t,
        ["ni", "nj", "nk"], [*_typed(t, _GEMM_ARRAYS), (t, "s", ("nj",))],
        [*loop([("j", 0, "nj"), ("k", 0, "nk"), ("i", 0, "ni")], "C[i][j] += A[i][k] * B[k][j]"),
         *loop([("i", 0, "ni"), ("j", 0, "nj")], "C[i][j] *= s[j]")], _GEMM_SIZES, pragma=True)
