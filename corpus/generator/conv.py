"""Convolutions: 1-D and 2-D filters, CNN layers (NCHW and NHWC, several loop orders, strides, dilation,
batches, bias + ReLU, padding), depthwise and pointwise layers, pooling and the two backward passes."""

from __future__ import annotations

import random

from corpus.generator.core import Add, If, Kernel, Scaled, Stmt, family_of, fn, lit, loop


def _t(rng: random.Random) -> str:
    return rng.choice(("float", "float", "double"))


def _ksize(rng: random.Random) -> int:
    return rng.choice([3, 3, 3, 5, 5, 7])


def conv(rng: random.Random) -> list[Kernel]:
    return family_of("conv", rng, _conv_1d, _conv_2d, _cnn_layers, _cnn_fused_and_separable, _pooling, _cnn_backward)


def _conv_1d(rng: random.Random, add: Add) -> None:
    # -- 1-D
    for order in ("ik", "ki"):
        t = _t(rng)
        b = {"i": ("i", 0, "n"), "k": ("k", 0, "kw")}
        add(f"conv1d_{order}", f"1-D valid convolution y[i] += w[k] x[i + k], loop order {order}", t, ["n", "kw"],
            [(t, "x", ("n + kw",)), (t, "w", ("kw",)), (t, "y", ("n",))],
            loop([b[v] for v in order], "y[i] += w[k] * x[i + k]"), {"n": Scaled(), "kw": rng.choice([5, 9, 16, 33])})
    t = _t(rng)
    add("conv1d_stride2", "1-D convolution with stride 2, y[i] += w[k] x[2 i + k]", t, ["n", "kw"],
        [(t, "x", ("2 * n + kw",)), (t, "w", ("kw",)), (t, "y", ("n",))],
        loop([("i", 0, "n"), ("k", 0, "kw")], "y[i] += w[k] * x[2 * i + k]"), {"n": Scaled(), "kw": _ksize(rng)})
    t = _t(rng)
    add("conv1d_dilated", "1-D dilated convolution (dilation 2), y[i] += w[k] x[i + 2 k]", t, ["n", "kw"],
        [(t, "x", ("n + 2 * kw",)), (t, "w", ("kw",)), (t, "y", ("n",))],
        loop([("i", 0, "n"), ("k", 0, "kw")], "y[i] += w[k] * x[i + 2 * k]"), {"n": Scaled(), "kw": _ksize(rng)})
    for order in ("ocik", "oick"):
        t = _t(rng)
        b = {"o": ("o", 0, "no"), "c": ("c", 0, "nc"), "i": ("i", 0, "n"), "k": ("k", 0, "kw")}
        add(f"conv1d_channels_{order}", f"1-D convolution layer with input and output channels, order {order}", t,
            ["no", "nc", "n", "kw"], [(t, "x", ("nc", "n + kw")), (t, "w", ("no", "nc", "kw")), (t, "y", ("no", "n"))],
            loop([b[v] for v in order], "y[o][i] += w[o][c][k] * x[c][i + k]"),
            {"no": Scaled(0.3, 2), "nc": Scaled(0.3, 2), "n": Scaled(), "kw": _ksize(rng)})


def _conv_2d(rng: random.Random, add: Add) -> None:
    # -- 2-D single channel
    sz2 = {"ho": Scaled(), "wo": Scaled()}
    for order in ("yxrs", "rsyx"):
        t = _t(rng)
        b = {"y": ("y", 0, "ho"), "x": ("x", 0, "wo"), "r": ("r", 0, "kr"), "s": ("s", 0, "ks")}
        k = _ksize(rng)
        add(f"conv2d_{order}", f"2-D valid convolution (single channel), loop order {order}", t,
            ["ho", "wo", "kr", "ks"], [(t, "in", ("ho + kr", "wo + ks")), (t, "w", ("kr", "ks")),
                                       (t, "out", ("ho", "wo"))],
            loop([b[v] for v in order], "out[y][x] += w[r][s] * in[y + r][x + s]"), {**sz2, "kr": k, "ks": k})
    t = _t(rng)
    add("conv2d_stride2", "2-D convolution with stride 2 in both directions", t, ["ho", "wo", "kr", "ks"],
        [(t, "in", ("2 * ho + kr", "2 * wo + ks")), (t, "w", ("kr", "ks")), (t, "out", ("ho", "wo"))],
        loop([("y", 0, "ho"), ("x", 0, "wo"), ("r", 0, "kr"), ("s", 0, "ks")],
             "out[y][x] += w[r][s] * in[2 * y + r][2 * x + s]"), {**sz2, "kr": 3, "ks": 3})
    t = _t(rng)
    add("conv2d_dilated", "2-D dilated convolution (dilation 2)", t, ["ho", "wo", "kr", "ks"],
        [(t, "in", ("ho + 2 * kr", "wo + 2 * ks")), (t, "w", ("kr", "ks")), (t, "out", ("ho", "wo"))],
        loop([("y", 0, "ho"), ("x", 0, "wo"), ("r", 0, "kr"), ("s", 0, "ks")],
             "out[y][x] += w[r][s] * in[y + 2 * r][x + 2 * s]"), {**sz2, "kr": 3, "ks": 3})
    t = _t(rng)
    terms = [f"w[{r}][{s}] * in[y{'' if r == 0 else f' + {r}'}][x{'' if s == 0 else f' + {s}'}]"
             for r in range(3) for s in range(3)]
    add("conv2d_3x3_unrolled", "2-D 3x3 convolution with the filter taps written out", t, ["ho", "wo"],
        [(t, "in", ("ho + 2", "wo + 2")), (t, "w", ("3", "3")), (t, "out", ("ho", "wo"))],
        loop([("y", 0, "ho"), ("x", 0, "wo")],
             "out[y][x] = " + "\n+ ".join(" + ".join(terms[k:k + 3]) for k in range(0, 9, 3))), sz2)


# CNN layers (NCHW unless said otherwise): each loop variable's loop, and the integer parameters.
_CNN = {"k": ("k", 0, "nk"), "c": ("c", 0, "nc"), "y": ("y", 0, "ho"), "x": ("x", 0, "wo"),
        "r": ("r", 0, "kr"), "s": ("s", 0, "ks"), "b": ("b", 0, "nb")}
_CNN_INTS = ["nk", "nc", "ho", "wo", "kr", "ks"]


def _cnn_sizes(k: int, batch: bool = False) -> dict:
    s = {"nk": Scaled(0.5, 2), "nc": Scaled(0.5, 2), "ho": Scaled(), "wo": Scaled(), "kr": k, "ks": k}
    if batch:
        s["nb"] = Scaled(0.15, 1)
    return s


def _cnn_layers(rng: random.Random, add: Add) -> None:
    for order in ("kcyxrs", "kyxcrs", "ckyxrs", "kcrsyx", "yxkcrs"):
        t = _t(rng)
        add(f"cnn_nchw_{order}", f"CNN layer out[k][y][x] += w[k][c][r][s] in[c][y + r][x + s] (NCHW, stride 1), "
            f"loop order {order}", t, _CNN_INTS,
            [(t, "out", ("nk", "ho", "wo")), (t, "w", ("nk", "nc", "kr", "ks")),
             (t, "in", ("nc", "ho + kr", "wo + ks"))],
            loop([_CNN[v] for v in order], "out[k][y][x] += w[k][c][r][s] * in[c][y + r][x + s]"),
            _cnn_sizes(_ksize(rng)))
    for order in ("kcyxrs", "kyxcrs"):
        t = _t(rng)
        add(f"cnn_nchw_s2_{order}", f"CNN layer with stride 2 (NCHW), loop order {order}", t, _CNN_INTS,
            [(t, "out", ("nk", "ho", "wo")), (t, "w", ("nk", "nc", "kr", "ks")),
             (t, "in", ("nc", "2 * ho + kr", "2 * wo + ks"))],
            loop([_CNN[v] for v in order], "out[k][y][x] += w[k][c][r][s] * in[c][2 * y + r][2 * x + s]"),
            _cnn_sizes(rng.choice([3, 5])))
    for order in ("bkcyxrs", "bkyxcrs"):
        t = _t(rng)
        add(f"cnn_batch_{order}", f"CNN layer over a mini-batch, out[b][k][y][x], loop order {order}", t,
            ["nb", *_CNN_INTS],
            [(t, "out", ("nb", "nk", "ho", "wo")), (t, "w", ("nk", "nc", "kr", "ks")),
             (t, "in", ("nb", "nc", "ho + kr", "wo + ks"))],
            loop([_CNN[v] for v in order], "out[b][k][y][x] += w[k][c][r][s] * in[b][c][y + r][x + s]"),
            _cnn_sizes(3, batch=True))
    for order in ("yxrsck", "yxkrsc"):
        t = _t(rng)
        add(f"cnn_nhwc_{order}", f"CNN layer in NHWC layout, out[y][x][k] += w[r][s][c][k] in[y + r][x + s][c], "
            f"loop order {order}", t, _CNN_INTS,
            [(t, "out", ("ho", "wo", "nk")), (t, "w", ("kr", "ks", "nc", "nk")),
             (t, "in", ("ho + kr", "wo + ks", "nc"))],
            loop([_CNN[v] for v in order], "out[y][x][k] += w[r][s][c][k] * in[y + r][x + s][c]"),
            _cnn_sizes(_ksize(rng)))


def _cnn_fused_and_separable(rng: random.Random, add: Add) -> None:
    t = _t(rng)
    mx = fn("fmax", t)
    add("cnn_bias_relu_nchw", "CNN layer with bias and ReLU through a local accumulator (NCHW)", t, _CNN_INTS,
        [(t, "out", ("nk", "ho", "wo")), (t, "w", ("nk", "nc", "kr", "ks")), (t, "in", ("nc", "ho + kr", "wo + ks")),
         (t, "bias", ("nk",))],
        loop([_CNN[v] for v in "kyx"], [f"{t} acc = bias[k]",
                                        *loop([_CNN[v] for v in "crs"], "acc += w[k][c][r][s] * in[c][y + r][x + s]"),
                                        f"out[k][y][x] = {mx}(acc, {lit(0.0, t)})"]), _cnn_sizes(_ksize(rng)))
    t = _t(rng)
    mx = fn("fmax", t)
    add("cnn_bias_relu_nhwc", "CNN layer with bias and ReLU (NHWC), accumulator per output element", t, _CNN_INTS,
        [(t, "out", ("ho", "wo", "nk")), (t, "w", ("kr", "ks", "nc", "nk")), (t, "in", ("ho + kr", "wo + ks", "nc")),
         (t, "bias", ("nk",))],
        loop([_CNN[v] for v in "yxk"], [f"{t} acc = bias[k]",
                                        *loop([_CNN[v] for v in "rsc"], "acc += w[r][s][c][k] * in[y + r][x + s][c]"),
                                        f"out[y][x][k] = {mx}(acc, {lit(0.0, t)})"]), _cnn_sizes(_ksize(rng)))
    t = _t(rng)
    add("cnn_same_padding", "CNN layer with 'same' zero padding: taps outside the image are skipped by an affine "
        "guard (3x3 filter)", t, ["nk", "nc", "h", "w"],
        [(t, "out", ("nk", "h", "w")), (t, "wt", ("nk", "nc", "3", "3")), (t, "in", ("nc", "h", "w"))],
        loop([("k", 0, "nk"), ("c", 0, "nc"), ("y", 0, "h"), ("x", 0, "w"), ("r", 0, 3), ("s", 0, 3)],
             [If("y + r >= 1 && y + r <= h && x + s >= 1 && x + s <= w",
                 [Stmt("out[k][y][x] += wt[k][c][r][s] * in[c][y + r - 1][x + s - 1]")], frac=1.0)]),
        {"nk": Scaled(0.5, 2), "nc": Scaled(0.5, 2), "h": Scaled(), "w": Scaled()})
    t = _t(rng)
    add("cnn_dilated", "CNN layer with dilation 2 (NCHW)", t, _CNN_INTS,
        [(t, "out", ("nk", "ho", "wo")), (t, "w", ("nk", "nc", "kr", "ks")),
         (t, "in", ("nc", "ho + 2 * kr", "wo + 2 * ks"))],
        loop([_CNN[v] for v in "kcyxrs"], "out[k][y][x] += w[k][c][r][s] * in[c][y + 2 * r][x + 2 * s]"),
        _cnn_sizes(3))
    for order in ("cyxrs", "crsyx"):
        t = _t(rng)
        add(f"depthwise_{order}", f"depthwise convolution (one filter per channel), loop order {order}", t,
            ["nc", "ho", "wo", "kr", "ks"],
            [(t, "out", ("nc", "ho", "wo")), (t, "w", ("nc", "kr", "ks")), (t, "in", ("nc", "ho + kr", "wo + ks"))],
            loop([_CNN[v] for v in order], "out[c][y][x] += w[c][r][s] * in[c][y + r][x + s]"),
            {"nc": Scaled(0.5, 2), "ho": Scaled(), "wo": Scaled(), "kr": 3, "ks": 3})
    t = _t(rng)
    add("pointwise", "pointwise (1x1) convolution out[k][y][x] += w[k][c] in[c][y][x]", t, ["nk", "nc", "ho", "wo"],
        [(t, "out", ("nk", "ho", "wo")), (t, "w", ("nk", "nc")), (t, "in", ("nc", "ho", "wo"))],
        loop([_CNN[v] for v in "kcyx"], "out[k][y][x] += w[k][c] * in[c][y][x]"),
        {"nk": Scaled(0.5, 2), "nc": Scaled(0.5, 2), "ho": Scaled(), "wo": Scaled()})


def _pooling(rng: random.Random, add: Add) -> None:
    # -- pooling
    t = _t(rng)
    mx = fn("fmax", t)
    add("maxpool_2x2", "2x2 max pooling with stride 2 via fmax, per channel", t, ["nc", "ho", "wo"],
        [(t, "in", ("nc", "2 * ho", "2 * wo")), (t, "out", ("nc", "ho", "wo"))],
        loop([("c", 0, "nc"), ("y", 0, "ho"), ("x", 0, "wo")],
             f"out[c][y][x] = {mx}({mx}(in[c][2 * y][2 * x], in[c][2 * y][2 * x + 1]),\n"
             f"{mx}(in[c][2 * y + 1][2 * x], in[c][2 * y + 1][2 * x + 1]))"),
        {"nc": Scaled(0.3, 1), "ho": Scaled(), "wo": Scaled()})
    t = _t(rng)
    mx = fn("fmax", t)
    add("maxpool_k", "max pooling over a kr x ks window, stride 1, accumulated with fmax", t,
        ["nc", "ho", "wo", "kr", "ks"], [(t, "in", ("nc", "ho + kr", "wo + ks")), (t, "out", ("nc", "ho", "wo"))],
        loop([_CNN[v] for v in "cyxrs"], f"out[c][y][x] = {mx}(out[c][y][x], in[c][y + r][x + s])"),
        {"nc": Scaled(0.3, 1), "ho": Scaled(), "wo": Scaled(), "kr": 3, "ks": 3})
    t = _t(rng)
    add("avgpool", "average pooling over a kr x ks window through an accumulator", t, ["nc", "ho", "wo", "kr", "ks"],
        [(t, "in", ("nc", "ho + kr", "wo + ks")), (t, "out", ("nc", "ho", "wo"))],
        loop([_CNN[v] for v in "cyx"], [f"{t} acc = {lit(0.0, t)}",
                                        *loop([_CNN[v] for v in "rs"], "acc += in[c][y + r][x + s]"),
                                        "out[c][y][x] = acc / (kr * ks)"]),
        {"nc": Scaled(0.3, 1), "ho": Scaled(), "wo": Scaled(), "kr": rng.choice([2, 3]), "ks": rng.choice([2, 3])})
    t = _t(rng)
    add("global_avgpool", "global average pooling: mean over the image of each channel", t, ["nc", "h", "w"],
        [(t, "in", ("nc", "h", "w")), (t, "out", ("nc",))],
        loop([("c", 0, "nc")], [f"out[c] = {lit(0.0, t)}",
                                *loop([("y", 0, "h"), ("x", 0, "w")], "out[c] += in[c][y][x]"),
                                "out[c] = out[c] / (h * w)"]),
        {"nc": Scaled(0.3, 1), "h": Scaled(), "w": Scaled()})


def _cnn_backward(rng: random.Random, add: Add) -> None:
    # -- backward passes
    t = _t(rng)
    add("cnn_backward_data", "CNN backward pass for the input gradient (scatter form): "
        "din[c][y + r][x + s] += w[k][c][r][s] dout[k][y][x]", t, _CNN_INTS,
        [(t, "din", ("nc", "ho + kr", "wo + ks")), (t, "w", ("nk", "nc", "kr", "ks")), (t, "dout", ("nk", "ho", "wo"))],
        loop([_CNN[v] for v in "kcyxrs"], "din[c][y + r][x + s] += w[k][c][r][s] * dout[k][y][x]"),
        _cnn_sizes(3))
    t = _t(rng)
    add("cnn_backward_weights", "CNN backward pass for the weight gradient: dw[k][c][r][s] += dout[k][y][x] "
        "in[c][y + r][x + s]", t, _CNN_INTS,
        [(t, "dw", ("nk", "nc", "kr", "ks")), (t, "dout", ("nk", "ho", "wo")), (t, "in", ("nc", "ho + kr", "wo + ks"))],
        loop([_CNN[v] for v in "kcrsyx"], "dw[k][c][r][s] += dout[k][y][x] * in[c][y + r][x + s]"), _cnn_sizes(3))
    t = _t(rng)
    add("conv3d", "3-D (volumetric) single-channel convolution", t, ["nz", "ny", "nx", "kz", "ky", "kx"],
        [(t, "in", ("nz + kz", "ny + ky", "nx + kx")), (t, "w", ("kz", "ky", "kx")), (t, "out", ("nz", "ny", "nx"))],
        loop([("z", 0, "nz"), ("y", 0, "ny"), ("x", 0, "nx"), ("a", 0, "kz"), ("b", 0, "ky"), ("c", 0, "kx")],
             "out[z][y][x] += w[a][b][c] * in[z + a][y + b][x + c]"),
        {"nz": Scaled(), "ny": Scaled(), "nx": Scaled(), "kz": 3, "ky": 3, "kx": 3})
