"""Tensor contractions over three and four index tensors in several loop orders: TTM, TTV, MTTKRP,
CCSD-like 4-index contractions, Kronecker-structured products and full contractions."""

from __future__ import annotations

import random
from collections.abc import Callable

from corpus.generator.core import TAG, Kernel, Scaled, lit, loop

FAM = "contraction"  # the family of every kernel here


def _ref(name: str, idx: str) -> str:
    return name + "".join(f"[{c}]" for c in idx)


def _dims(idx: str) -> tuple[str, ...]:
    return tuple(f"n{c}" for c in idx)


def contraction(rng: random.Random) -> list[Kernel]:
    out: list[Kernel] = []
    einsum = _einsum_adder(rng, out)
    _tensor_products(rng, out, einsum)
    _vectors_chains_and_scalars(rng, out, einsum)
    return out


def _einsum_adder(rng: random.Random, out: list[Kernel]) -> Callable[..., None]:
    """``einsum(name, desc, target, operands, order, weight=None, ratio=1.0)``: appends the contraction
    kernel ``C[target] += product of operands`` with loops in ``order`` to ``out`` (family contraction)."""

    def einsum(name: str, desc: str, target: str, operands: list[tuple[str, str]], order: str,
               weight: dict[str, float] | None = None, ratio: float = 1.0) -> None:
        t = rng.choice(("float", "double"))
        ints = [f"n{c}" for c in sorted(set(order))]
        arrays = [(t, "C", _dims(target))] + [(t, name_, _dims(idx)) for name_, idx in operands]
        rhs = " * ".join(_ref(n, idx) for n, idx in operands)
        body = loop([(c, 0, f"n{c}") for c in order], f"{_ref('C', target)} += {rhs}")
        sizes = {f"n{c}": Scaled((weight or {}).get(c, 1.0) * ratio, 2) for c in sorted(set(order))}
        spec = ",".join(idx for _, idx in operands) + "->" + target
        out.append(Kernel(FAM, f"{name}_{TAG[t]}", f"{desc}: {spec}, loop order {order} ({t}).", t, ints, arrays,
                          body, sizes))

    return einsum


def _tensor_products(rng: random.Random, out: list[Kernel], einsum: Callable[..., None]) -> None:
    for order in ("abcd", "acdb", "cdab"):
        einsum(f"tc_ab_acd_dcb_{order}", "two-index result from two contracted indices", "ab",
               [("A", "acd"), ("B", "dcb")], order)
    for order in ("abcd", "adbc"):
        einsum(f"ttm_mode1_{order}", "tensor-times-matrix on the first mode", "abc", [("A", "ad"), ("B", "dbc")], order)
    for order in ("abcd", "adbc"):
        einsum(f"ttm_mode3_{order}", "tensor-times-matrix on the last mode", "abc", [("A", "abd"), ("B", "dc")], order)
    for order in ("adbc", "dabc"):
        einsum(f"ttm_mode1_t_{order}", "tensor-times-matrix with the factor matrix applied from the left",
               "abc", [("X", "dbc"), ("U", "ad")], order)
    for order in ("abcdef", "aebfcd"):
        einsum(f"tc4_abcd_aebf_dfce_{order}", "four-index contraction over two indices", "abcd",
               [("A", "aebf"), ("B", "dfce")], order)
    for order in ("abcde", "aecbd"):
        einsum(f"tc4_abcd_aec_ebd_{order}", "four-index result from two three-index tensors", "abcd",
               [("A", "aec"), ("B", "ebd")], order)
    for order in ("abcd", "acdb"):
        einsum(f"tc_ab_acd_cdb_{order}", "matrix result contracting a pair of indices in the same order", "ab",
               [("A", "acd"), ("B", "cdb")], order)
    for order in ("ijkr", "rijk"):
        t = rng.choice(("float", "double"))
        b = {"i": ("i", 0, "ni"), "j": ("j", 0, "nj"), "k": ("k", 0, "nk"), "r": ("r", 0, "nr")}
        out.append(Kernel(FAM, f"mttkrp_{order}_{TAG[t]}", f"MTTKRP M[i][r] += X[i][j][k] B[j][r] C[k][r], loop order "
                          f"{order} ({t}).", t, ["ni", "nj", "nk", "nr"],
                          [(t, "M", ("ni", "nr")), (t, "X", ("ni", "nj", "nk")), (t, "B", ("nj", "nr")),
                           (t, "C", ("nk", "nr"))],
                          loop([b[v] for v in order], "M[i][r] += X[i][j][k] * B[j][r] * C[k][r]"),
                          {"ni": Scaled(), "nj": Scaled(), "nk": Scaled(), "nr": Scaled(0.3, 2)}))


def _vectors_chains_and_scalars(rng: random.Random, out: list[Kernel], einsum: Callable[..., None]) -> None:
    einsum("ttv_last", "tensor-times-vector on the last mode", "ab", [("X", "abc"), ("v", "c")], "abc")
    einsum("ttv_first", "tensor-times-vector on the first mode", "bc", [("X", "abc"), ("v", "a")], "abc")
    einsum("bilinear", "bilinear form of a three-index tensor with two vectors", "a",
           [("T", "abc"), ("x", "b"), ("z", "c")], "abc")
    for order in ("abijck", "acikbj"):
        einsum(f"ccsd_like_{order}", "CCSD-like particle-hole contraction", "abij",
               [("A", "acik"), ("B", "cbkj")], order)
    einsum("tc3_cba_adb_dc", "three-index result with permuted output", "cba", [("A", "adb"), ("B", "dc")], "adbc")
    einsum("chain3_no_temp", "three-matrix chain without an intermediate, O(n^4)", "ab",
           [("A", "ac"), ("B", "cd"), ("E", "db")], "acdb")
    einsum("kron_matvec", "Kronecker-structured product Y = A X B^T written as one 4-deep nest", "ab",
           [("A", "ac"), ("B", "bd"), ("X", "cd")], "abcd")
    einsum("batched_tc", "batched contraction C[z][a][b] += A[z][a][c][d] B[z][d][c][b]", "zab",
           [("A", "zacd"), ("B", "zdcb")], "zabcd", weight={"z": 0.5})
    t = rng.choice(("float", "double"))
    out.append(Kernel(FAM, f"full_contraction_{TAG[t]}", f"full contraction of two three-index tensors with "
                      f"a permutation, s += A[a][b][c] B[c][b][a], returned as a scalar ({t}).", t, ["na", "nb", "nc"],
                      [(t, "A", ("na", "nb", "nc")), (t, "B", ("nc", "nb", "na"))],
                      loop([("a", 0, "na"), ("b", 0, "nb"), ("c", 0, "nc")], "s += A[a][b][c] * B[c][b][a]"),
                      {"na": Scaled(), "nb": Scaled(), "nc": Scaled()}, pre=[f"{t} s = {lit(0.0, t)}"],
                      post=["return s"], ret=t))
    einsum("ttm_mode2_scaled", "tensor-times-matrix on the middle mode", "abc", [("X", "adc"), ("U", "bd")], "abdc")
