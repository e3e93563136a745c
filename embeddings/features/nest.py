"""One loop nest at fixed parameter values, as integer sets: point counts, schedule prefixes, footprints.

Every static feature group reads the nest through :class:`Nest`, so the parameter check, the isl
domains and the instance counts are computed once per call. Counting integer points is exact where
it is cheap (boxes, small sets) and otherwise a stratified estimate (exact innermost counts at evenly
spaced outer points), within a few percent; the features that use it are log-scaled, where that
error is below 0.05.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import islpy as isl

from loopnest.errors import ParameterError
from loopnest.harness.driver import ArrayLayout, array_layouts, numpy_dtype
from loopnest.ir import Scop
from loopnest.parameters import require_params

# Exact counting below this many bounding-box points (or outer points); a stratified estimate above.
_EXACT_POINTS = 200_000
_EXACT_OUTER = 20_000
_SAMPLES = 1024


def _val(v: isl.Val) -> int | None:
    if v.is_infty() or v.is_neginfty() or v.is_nan():
        return None
    return int(v.to_python())


def count_points(s: isl.Set) -> float | None:
    """Integer points of ``s`` (parameters fixed); None when unbounded.

    Exact for boxes and small sets, else a stratified estimate over the outer dimensions.
    """
    if s.is_empty():
        return 0.0
    n = s.dim(isl.dim_type.set)
    if n == 0:
        return 1.0
    lo, hi = [], []
    for k in range(n):
        a, b = _val(s.dim_min_val(k)), _val(s.dim_max_val(k))
        if a is None or b is None:
            return None
        lo.append(a)
        hi.append(b)
    extents = [b - a + 1 for a, b in zip(lo, hi, strict=True)]
    volume = math.prod(extents)
    if volume <= _EXACT_POINTS:
        return float(s.count_val().to_python())
    box = isl.Set.universe(s.get_space())
    for k in range(n):
        box = box.lower_bound_val(isl.dim_type.set, k, isl.Val(lo[k])).upper_bound_val(
            isl.dim_type.set, k, isl.Val(hi[k]))
    if box.is_equal(s):
        return float(volume)
    if math.prod(extents[:-1]) <= _EXACT_OUTER:
        return float(s.count_val().to_python())
    return _stratified(s, 0, n, _samples_per_dim(n))


def _samples_per_dim(n: int) -> list[int]:
    """Samples per outer dimension, at most :data:`_SAMPLES` in all: two per dimension in a deep set
    would be 2^(n-1) counts (exponential in the depth); past the budget a dimension gets one sample."""
    per_dim = max(2, int(_SAMPLES ** (1.0 / max(n - 1, 1))))
    out, budget = [], _SAMPLES
    for _ in range(n - 1):
        take = per_dim if budget >= per_dim else 1
        out.append(take)
        budget //= take
    return out


def _stratified(s: isl.Set, k: int, n: int, samples: list[int]) -> float:
    if k == n - 1:
        return float(s.count_val().to_python())
    per_dim = samples[k]
    a, b = _val(s.dim_min_val(k)), _val(s.dim_max_val(k))
    if a is None or b is None:
        return 0.0
    extent = b - a + 1
    if extent <= per_dim:
        points, weight = list(range(a, b + 1)), 1.0
    else:
        points = [a + int((j + 0.5) * extent / per_dim) for j in range(per_dim)]
        weight = extent / per_dim
    total = 0.0
    for v in points:
        sub = s.fix_val(isl.dim_type.set, k, isl.Val(v))
        if not sub.is_empty():
            total += weight * _stratified(sub, k + 1, n, samples)
    return total


def middle_point(s: isl.Set) -> isl.Set:
    """``s`` restricted to one point: dimension by dimension, the first member at or above the middle."""
    for k in range(s.dim(isl.dim_type.set)):
        a, b = _val(s.dim_min_val(k)), _val(s.dim_max_val(k))
        if a is None or b is None:
            return s
        v = (a + b) // 2
        upper = s.lower_bound_val(isl.dim_type.set, k, isl.Val(v))
        low = _val(upper.dim_min_val(k)) if not upper.is_empty() else a
        if low is None:
            return s
        s = s.fix_val(isl.dim_type.set, k, isl.Val(low))
    return s


def _element_bytes(ctype: str) -> int:
    try:
        return int(numpy_dtype(ctype).itemsize)
    except ParameterError:  # a type the harness cannot allocate: count it as a double
        return 8


class Nest:
    """The statements of one nest as isl sets and maps, with every parameter fixed to its value."""

    def __init__(self, scop: Scop, params: Mapping[str, int]) -> None:
        self.scop = scop
        self.params = require_params(scop.params, params, what=f"{scop.name} (static features)",
                                     hint="give --param {name}=N")
        self.ptxt = ", ".join(scop.params)
        fixed = " and ".join(f"{p} = {v}" for p, v in self.params.items()) or "true"
        self.fixed = isl.Set(f"[{self.ptxt}] -> {{ : {fixed} }}")
        self.rows = scop.schedule.rows
        self.n_levels = scop.schedule.n_levels
        self.layouts: dict[str, ArrayLayout] = {lay.info.name: lay for lay in array_layouts(scop, self.params)}
        self.domains = [isl.Set(s.domain).intersect_params(self.fixed) for s in scop.statements]
        self.instances = [count_points(d) for d in self.domains]

    # -- helpers ---------------------------------------------------------------------------------
    def elem_bytes(self, array: str) -> int:
        info = self.scop.arrays.get(array)
        return _element_bytes(info.element_type) if info is not None else 8

    def is_array(self, array: str) -> bool:
        info = self.scop.arrays.get(array)
        return info is not None and not info.is_scalar

    def stmts_at(self, level: int) -> list[int]:
        return self.scop.schedule.statements_at(level) if level < self.n_levels else []

    def prefix_map(self, s: int, upto: int) -> isl.Map:
        """``S_s[i] -> [row[0], ..., row[upto-1]]`` on the statement's domain."""
        stmt = self.scop.statements[s]
        its = ", ".join(f"i{d}" for d in range(stmt.depth))
        dims = ", ".join(str(x) for x in self.rows[s][:upto])
        m = isl.Map(f"[{self.ptxt}] -> {{ S{s}[{its}] -> [{dims}] }}")
        return m.intersect_domain(self.domains[s])

    def prefix_set(self, stmts: list[int], upto: int) -> isl.Set | None:
        out: isl.Set | None = None
        for s in stmts:
            r = self.prefix_map(s, upto).range()
            out = r if out is None else out.union(r)
        return out

    def relation(self, access_relation: str) -> isl.Map:
        return isl.Map(access_relation).intersect_params(self.fixed)

    # -- footprints ------------------------------------------------------------------------------
    def footprint(self, selections: Mapping[int, isl.Set]) -> tuple[float, float, float, float]:
        """(bytes touched, bytes written, array accesses executed, distinct elements touched) by the
        given statement instances."""
        reach: dict[str, isl.Set] = {}
        written: dict[str, isl.Set] = {}
        executed = 0.0
        for s, inst in selections.items():
            n_acc = 0
            for acc in self.scop.statements[s].accesses:
                if not self.is_array(acc.array):
                    continue
                n_acc += 1
                rng = self.relation(acc.relation).intersect_domain(inst).range()
                reach[acc.array] = reach[acc.array].union(rng) if acc.array in reach else rng
                if acc.is_write:
                    written[acc.array] = written[acc.array].union(rng) if acc.array in written else rng
            if n_acc:
                executed += n_acc * (count_points(inst) or 0.0)
        touched = elements = 0.0
        for a, st in reach.items():
            n = count_points(st.coalesce()) or 0.0
            elements += n
            touched += n * self.elem_bytes(a)
        out = sum((count_points(st.coalesce()) or 0.0) * self.elem_bytes(a) for a, st in written.items())
        return touched, out, executed, elements
