"""Per-access strides: how far each array access moves in memory when one schedule level steps.

For an array access and a loop level, the stride is the change of its row-major element address
when that schedule dimension steps by one with the others fixed: the access's address is affine in
the iterators, the schedule maps iterators to levels, and solving one through the other gives the
address per level. Tile loops (``floor((i)/T)``) step T times the stride of the loop they tile.
Strides are classed zero / unit / small (< a cache line) / large (also non-affine), and feed the
stride counts and the temporal / spatial reuse fractions per level.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field

import islpy as isl
import numpy as np

from embeddings.features.nest import Nest
from embeddings.features.static_schema import MAX_DEPTH, STRIDE_CLASSES
from embeddings.features.vector import signed_log2
from loopnest.ir import Access

CACHE_LINE_BYTES = 64  # a stride below one line still shares lines between neighbouring iterations
_FLOOR = re.compile(r"^floor\(\((.*)\)/(\d+)\)$")

# One array access: (array, is_write, level -> stride in elements; None where not affine).
AccessStrides = tuple[str, bool, dict[int, float | None]]


def address_coefficients(nest: Nest, access_relation: str, depth: int, array: str) -> np.ndarray | None:
    """Per iterator, the change of the row-major element address; None when not affine."""
    lay = nest.layouts.get(array)
    extents = lay.extents if lay is not None else ()
    pieces: list[isl.MultiAff] = []
    isl.PwMultiAff.from_map(isl.Map(access_relation)).foreach_piece(lambda _s, ma: pieces.append(ma))
    coefs = None
    for ma in pieces:
        rank = ma.dim(isl.dim_type.out)
        mat = np.zeros((rank, depth))
        for k in range(rank):
            aff = ma.get_at(k)
            if any(not aff.get_coefficient_val(isl.dim_type.div, j).is_zero()
                   for j in range(aff.dim(isl.dim_type.div))):
                return None
            for j in range(depth):
                mat[k, j] = float(aff.get_coefficient_val(isl.dim_type.in_, j).to_python())
        if coefs is not None and not np.array_equal(coefs, mat):
            return None
        coefs = mat
    if coefs is None:
        return None
    rank = coefs.shape[0]
    if len(extents) != rank:
        extents = tuple([1] * rank)
    strides = np.array([math.prod(extents[k + 1:]) for k in range(rank)], dtype=float)
    return strides @ coefs if rank else np.zeros(depth)


def level_strides(nest: Nest, s: int, address: np.ndarray | None) -> dict[int, float | None]:
    """Address change (elements) per step of each loop level the statement has."""
    row = nest.rows[s]
    depth = nest.scop.statements[s].depth
    levels = [lv for lv in range(nest.n_levels) if isinstance(row[2 * lv + 1], str)]
    out: dict[int, float | None] = dict.fromkeys(levels)
    if address is None:
        return out
    its = ", ".join(f"i{d}" for d in range(depth))
    plain: dict[int, np.ndarray] = {}
    text: dict[int, str] = {lv: str(row[2 * lv + 1]).strip() for lv in levels}
    for lv in levels:
        if _FLOOR.match(text[lv]):
            continue
        aff = isl.Aff(f"[{nest.ptxt}] -> {{ [{its}] -> [({text[lv]})] }}")
        if aff.dim(isl.dim_type.div):
            continue
        plain[lv] = np.array([float(aff.get_coefficient_val(isl.dim_type.in_, j).to_python())
                              for j in range(depth)])
    if len(plain) == depth and depth > 0:
        order = sorted(plain)
        t = np.vstack([plain[lv] for lv in order])
        if abs(np.linalg.det(t)) > 1e-9:
            x = np.linalg.solve(t.T, address)
            for lv, v in zip(order, x, strict=True):
                out[lv] = float(round(v)) if abs(v - round(v)) < 1e-9 else float(v)
    by_text = {text[lv]: lv for lv in levels}
    for lv in levels:
        out[lv] = _tile_stride(lv, text, by_text, out, 0)
    return out


def _tile_stride(lv: int, text: dict[int, str], by_text: dict[str, int],
                 known: dict[int, float | None], guard: int) -> float | None:
    """A tile loop ``floor((e)/T)`` steps T times the stride of the loop over ``e``; others keep theirs."""
    m = _FLOOR.match(text[lv])
    if m is None:
        return known[lv]
    inner = by_text.get(m.group(1).strip())
    if inner is None or guard > MAX_DEPTH * 4:
        return None
    base = _tile_stride(inner, text, by_text, known, guard + 1)
    return None if base is None else base * int(m.group(2))


def access_strides(nest: Nest) -> list[list[AccessStrides]]:
    """Per statement, per array access: (array, is_write, level -> stride in elements)."""
    out: list[list[AccessStrides]] = []
    for s, stmt in enumerate(nest.scop.statements):
        accs: list[AccessStrides] = []
        for acc in stmt.accesses:
            if not nest.is_array(acc.array):
                continue
            if acc.approximated:
                accs.append((acc.array, acc.is_write, _approximated_strides(nest, s, acc)))
                continue
            address = address_coefficients(nest, acc.relation, stmt.depth, acc.array)
            accs.append((acc.array, acc.is_write, level_strides(nest, s, address)))
        out.append(accs)
    return out


def _approximated_strides(nest: Nest, s: int, acc: Access) -> dict[int, float | None]:
    """The strides of an access with non-affine subscripts (``B[col[j]][k]``): those of its affine
    dimensions, and none (not affine) for the loops whose iterators a non-affine subscript reads."""
    stmt = nest.scop.statements[s]
    its = ", ".join(f"i{d}" for d in range(stmt.depth))
    subs, unknown = [], set()
    for sub in acc.subscripts:
        try:
            isl.PwAff(f"[{nest.ptxt}] -> {{ [{its}] -> [({sub})] }}")
            subs.append(sub)
        except isl.Error:
            subs.append("0")
            unknown |= set(re.findall(r"\bi(\d+)\b", sub))
    relation = f"[{nest.ptxt}] -> {{ {stmt.name}[{its}] -> {acc.array}[{', '.join(subs)}] }}"
    strides = level_strides(nest, s, address_coefficients(nest, relation, stmt.depth, acc.array))
    row = nest.rows[s]
    for lv in strides:
        if any(re.search(rf"\bi{d}\b", str(row[2 * lv + 1])) for d in unknown):
            strides[lv] = None
    return strides


def stride_class(stride: float | None, elem_bytes: int) -> str:
    """One of :data:`STRIDE_CLASSES`; a non-affine access (no stride) counts as large."""
    if stride is None:
        return "large"
    s = abs(stride)
    if s == 0:
        return "zero"
    if s == 1:
        return "unit"
    return "small" if s * elem_bytes < CACHE_LINE_BYTES else "large"


@dataclass
class _StrideCounts:
    """Stride classes of every access, counted per level and at each access's innermost loop; per level
    also the largest stride in bytes and the instance-weighted temporal and spatial reuse."""

    inner: Counter[str] = field(default_factory=Counter)
    per_level: dict[int, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    max_bytes: dict[int, float] = field(default_factory=dict)
    temporal: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    spatial: dict[int, float] = field(default_factory=lambda: defaultdict(float))
    weight: dict[int, float] = field(default_factory=lambda: defaultdict(float))

    def add(self, strides: dict[int, float | None], is_write: bool, elem_bytes: int, instances: float) -> None:
        if strides:
            innermost = strides[max(strides)]
            self.inner[f"{'write' if is_write else 'read'}_{stride_class(innermost, elem_bytes)}"] += 1
        for lv, st in strides.items():
            if lv >= MAX_DEPTH:
                continue
            cls = stride_class(st, elem_bytes)
            self.per_level[lv][cls] += 1
            if st is not None:
                self.max_bytes[lv] = max(self.max_bytes.get(lv, 0.0), abs(st) * elem_bytes)
            self.weight[lv] += instances
            self.temporal[lv] += instances * (cls == "zero")
            self.spatial[lv] += instances * (cls in ("unit", "small"))


def stride_features(nest: Nest, values: dict[str, float | None]) -> None:
    """Stride classes per level and at each statement's innermost loop, the largest stride, reuse fractions."""
    counts = _StrideCounts()
    for s, accs in enumerate(access_strides(nest)):
        for array, is_write, strides in accs:
            counts.add(strides, is_write, nest.elem_bytes(array), nest.instances[s] or 0.0)
    for rw in ("read", "write"):
        for c in STRIDE_CLASSES:
            values[f"inner_{rw}_stride_{c}"] = counts.inner[f"{rw}_{c}"]
    for lv in range(min(nest.n_levels, MAX_DEPTH)):
        if not nest.stmts_at(lv):
            continue
        for c in STRIDE_CLASSES:
            values[f"stride_{c}_l{lv}"] = counts.per_level[lv][c]
        if lv in counts.max_bytes:
            values[f"log2_max_stride_l{lv}"] = signed_log2(counts.max_bytes[lv])
        if counts.weight[lv] > 0:
            values[f"reuse_temporal_l{lv}"] = counts.temporal[lv] / counts.weight[lv]
            values[f"reuse_spatial_l{lv}"] = counts.spatial[lv] / counts.weight[lv]
