"""Static features of a loop nest, computed from the polyhedral IR at fixed parameter values.

Every feature is invariant to iterator, array and parameter names, to constant offsets of loop
bounds (``for (i = 1; i <= n; i++) A[i-1]`` equals ``for (i = 0; i < n; i++) A[i]``) and to the
textual order of independent statements: per-statement and per-access contributions are summed or
counted, never listed, and representative loop instances are chosen by position (the middle one),
not by name or text.

"Level" means a loop level of the schedule (``scop.schedule``): level ``k`` is schedule position
``2k + 1``. Per-level features exist for levels ``0 .. MAX_DEPTH - 1`` and are masked (None) where
the nest has no such level. Counts that span orders of magnitude pass through
:func:`~embeddings.features.vector.signed_log2` and say so in their name (``log2_...``).

Groups (schema :data:`STATIC_SCHEMA`, 164 entries; "instance" = one execution of one statement):

* shape: depth, schedule levels, statements, loops, perfect nest, triangular levels (bounds of the
  level's loop depend on enclosing iterators);
* work: statement instances and flops (log2), flops / integer ops / an op histogram per instance
  (``x += a*b`` and ``a*b + c`` count as one fused multiply-add of 2 flops; math calls 1 flop);
* memory: arrays, scalars, accesses, element size, distinct bytes touched and written (log2),
  arithmetic intensity = flops / bytes touched (log2);
* strides: per array access and loop level, the change of its row-major address when that
  schedule dimension steps by one with the others fixed, classed zero / unit / small (< a 64-byte
  line) / large (also non-affine); counted per level, and for each statement's innermost loop
  split into reads and writes; the largest stride in bytes per level (log2);
* reuse per level: temporal (stride 0) and spatial (unit/small) fractions of executed accesses;
  footprint = distinct bytes touched by one iteration of the level's loop (the middle iteration,
  largest over sibling loops) and reuse factor = accesses / distinct elements in that iteration;
* dependences: RAW/WAR/WAW counts, per level carried (all, RAW), parallel (no blocking dependence
  after privatizing scalars declared in the nest, as ``parallelize`` checks), reduction (every
  carried dependence joins accumulations ``x op= v`` / ``x = max(x, v)`` of one operator whose
  element no other access of that array meets in the same enclosing iteration), and the smallest
  constant distance and uniform fraction of carried RAW dependences.

Counting integer points is exact where it is cheap (boxes, small sets) and otherwise a stratified
estimate (exact innermost counts at evenly spaced outer points), within a few percent; the features
that use it are log-scaled, where that error is below 0.05.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import islpy as isl
import numpy as np

from embeddings.features.vector import FeatureVector, Schema, signed_log2
from loopnest.errors import ParameterError
from loopnest.harness.driver import ArrayLayout, array_layouts, numpy_dtype
from loopnest.ir import ArrayRef, Binary, Call, Cast, Const, Expr, Iter, Scop, Statement, Ternary, Unary, Var
from loopnest.polyhedral import ScheduleSpace, compute_dependences
from loopnest.transform.parallel import blocking_dependences

MAX_DEPTH = 6
CACHE_LINE_BYTES = 64  # a stride below one line still shares lines between neighbouring iterations
STRIDE_CLASSES = ("zero", "unit", "small", "large")
OP_KINDS = ("add", "sub", "mul", "div", "fma", "sqrt", "exp", "log", "pow", "tanh", "trig", "min", "max", "abs",
            "round", "cmp", "select", "other")
# Exact counting below this many bounding-box points (or outer points); a stratified estimate above.
_EXACT_POINTS = 200_000
_EXACT_OUTER = 20_000
_SAMPLES = 1024

_CALL_KIND = {
    "sqrt": "sqrt", "cbrt": "sqrt", "exp": "exp", "exp2": "exp", "log": "log", "log2": "log", "log10": "log",
    "pow": "pow", "hypot": "pow", "tanh": "tanh", "sinh": "tanh", "cosh": "tanh", "erf": "tanh",
    "sin": "trig", "cos": "trig", "tan": "trig", "atan": "trig", "atan2": "trig", "asin": "trig", "acos": "trig",
    "fmin": "min", "fmax": "max", "fabs": "abs", "abs": "abs", "labs": "abs", "floor": "round", "ceil": "round",
    "round": "round", "trunc": "round", "fmod": "div", "fma": "fma",
}
_BINARY_KIND = {"+": "add", "-": "sub", "*": "mul", "/": "div", "<": "cmp", ">": "cmp", "<=": "cmp", ">=": "cmp",
                "==": "cmp", "!=": "cmp", "&&": "cmp", "||": "cmp"}
_COMPOUND_KIND = {"+=": "add", "-=": "sub", "*=": "mul", "/=": "div"}
_FLOOR = re.compile(r"^floor\(\((.*)\)/(\d+)\)$")


# ---------------------------------------------------------------------------------------------
# Schema


def _build_schema() -> Schema:
    f: list[tuple[str, str]] = [
        ("depth", "loops"),
        ("schedule_levels", "levels"),
        ("n_statements", "statements"),
        ("n_loops", "loops"),
        ("mean_statement_depth", "loops"),
        ("perfect_nest", "bool"),
        ("n_triangular_levels", "levels"),
        ("log2_iterations", "log2(statement instances)"),
        ("log2_flops", "log2(flop)"),
        ("flops_per_iteration", "flop/instance"),
        ("intops_per_iteration", "op/instance"),
    ]
    f += [(f"op_{k}_per_iteration", "op/instance") for k in OP_KINDS]
    f += [
        ("n_arrays", "arrays"),
        ("n_arrays_written", "arrays"),
        ("n_scalars", "variables"),
        ("max_array_rank", "dims"),
        ("elem_bytes_mean", "bytes/access"),
        ("n_array_accesses", "accesses"),
        ("n_scalar_accesses", "accesses"),
        ("array_reads_per_iteration", "accesses/instance"),
        ("array_writes_per_iteration", "accesses/instance"),
        ("log2_bytes_touched", "log2(bytes)"),
        ("log2_bytes_written", "log2(bytes)"),
        ("log2_arith_intensity", "log2(flop/byte)"),
    ]
    f += [(f"inner_{rw}_stride_{c}", "accesses") for rw in ("read", "write") for c in STRIDE_CLASSES]
    f += [
        ("n_deps_raw", "dependences"),
        ("n_deps_war", "dependences"),
        ("n_deps_waw", "dependences"),
        ("n_parallel_levels", "levels"),
        ("outermost_parallel_level", "level"),
        ("n_reduction_levels", "levels"),
        ("n_reduction_statements", "statements"),
    ]
    for lv in range(MAX_DEPTH):
        f += [
            (f"log2_trip_count_l{lv}", "log2(iterations)"),
            (f"n_loops_l{lv}", "loops"),
            (f"triangular_l{lv}", "bool"),
            (f"log2_footprint_l{lv}", "log2(bytes)"),
            (f"log2_reuse_factor_l{lv}", "log2(accesses/element)"),
        ]
        f += [(f"stride_{c}_l{lv}", "accesses") for c in STRIDE_CLASSES]
        f += [
            (f"log2_max_stride_l{lv}", "log2(bytes)"),
            (f"reuse_temporal_l{lv}", "fraction"),
            (f"reuse_spatial_l{lv}", "fraction"),
            (f"carried_l{lv}", "dependences"),
            (f"carried_raw_l{lv}", "dependences"),
            (f"parallel_l{lv}", "bool"),
            (f"reduction_l{lv}", "bool"),
            (f"raw_min_distance_l{lv}", "iterations"),
            (f"raw_uniform_frac_l{lv}", "fraction"),
        ]
    return Schema(tuple(f))


STATIC_SCHEMA = _build_schema()


# ---------------------------------------------------------------------------------------------
# Counting integer points


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
    per_dim = max(2, int(_SAMPLES ** (1.0 / max(n - 1, 1))))
    return _stratified(s, 0, n, per_dim)


def _stratified(s: isl.Set, k: int, n: int, per_dim: int) -> float:
    if k == n - 1:
        return float(s.count_val().to_python())
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
            total += weight * _stratified(sub, k + 1, n, per_dim)
    return total


def _middle_point(s: isl.Set) -> isl.Set:
    """``s`` restricted to one point: dimension by dimension, the first member at or above the middle."""
    for k in range(s.dim(isl.dim_type.set)):
        a, b = _val(s.dim_min_val(k)), _val(s.dim_max_val(k))
        if a is None or b is None:
            return s
        v = (a + b) // 2
        upper = s.lower_bound_val(isl.dim_type.set, k, isl.Val(v))
        v = _val(upper.dim_min_val(k)) if not upper.is_empty() else a
        s = s.fix_val(isl.dim_type.set, k, isl.Val(v))
    return s


# ---------------------------------------------------------------------------------------------
# Operation counts


def _is_float_type(ctype: str) -> bool:
    return "float" in ctype or "double" in ctype


def _is_float_literal(text: str) -> bool:
    t = text.lower()
    if t.startswith("0x"):
        return "p" in t
    return "." in t or "e" in t or t.endswith("f")


class _OpCounter:
    """Arithmetic in a statement's value (not in subscripts): a histogram, flops and integer ops."""

    def __init__(self, scop: Scop) -> None:
        self.arrays = scop.arrays
        self.kinds: Counter[str] = Counter()
        self.flops = 0.0
        self.intops = 0.0

    def is_float(self, e: Expr) -> bool:
        match e:
            case Const(text):
                return _is_float_literal(text)
            case Var(name) | ArrayRef(name, _):
                info = self.arrays.get(name)
                return info is not None and _is_float_type(info.element_type)
            case Iter():
                return False
            case Unary(op, operand):
                return op in ("-", "+") and self.is_float(operand)
            case Binary(op, left, right):
                return _BINARY_KIND.get(op) != "cmp" and (self.is_float(left) or self.is_float(right))
            case Call(fn, args):
                return fn not in ("abs", "labs") or any(self.is_float(a) for a in args)
            case Cast(ctype, _):
                return _is_float_type(ctype)
            case Ternary(_, then, otherwise):
                return self.is_float(then) or self.is_float(otherwise)
        return False

    def add(self, kind: str, is_float: bool, weight: int = 1) -> None:
        """One operation; comparisons and selections go into the histogram only, not flops/intops."""
        self.kinds[kind] += 1
        if kind in ("cmp", "select"):
            return
        if is_float:
            self.flops += weight
        else:
            self.intops += weight

    def statement(self, stmt: Statement) -> None:
        target_float = self.is_float(stmt.target)
        value = stmt.value
        kind = _COMPOUND_KIND.get(stmt.op)
        if kind in ("add", "sub") and target_float and isinstance(value, Binary) and value.op == "*":
            self.add("fma", True, 2)  # x += a * b contracts to one fused multiply-add
            self.visit(value.left)
            self.visit(value.right)
            return
        if kind is not None:
            self.add(kind, target_float or self.is_float(value))
        elif stmt.op != "=":
            self.add("other", False)
        self.visit(value)

    def visit(self, e: Expr) -> None:
        match e:
            case Binary(op, left, right):
                fl = self.is_float(e)
                mul, other = (left, right) if isinstance(left, Binary) and left.op == "*" else (right, left)
                if fl and op in ("+", "-") and isinstance(mul, Binary) and mul.op == "*":
                    self.add("fma", True, 2)
                    self.visit(mul.left)
                    self.visit(mul.right)
                    self.visit(other)
                    return
                self.add(_BINARY_KIND.get(op, "other"), fl)
                self.visit(left)
                self.visit(right)
            case Unary(op, operand):
                if op == "-":
                    self.add("sub", self.is_float(operand))
                elif op in ("!", "~"):
                    self.add("cmp" if op == "!" else "other", False)
                self.visit(operand)
            case Call(fn, args):
                kind = _call_kind(fn)
                self.add(kind, self.is_float(e), 2 if kind == "fma" else 1)
                for a in args:
                    self.visit(a)
            case Ternary(_, then, otherwise) if (kind := _ternary_minmax(e)) is not None:
                self.add(kind, self.is_float(then) or self.is_float(otherwise))
                self.visit(then)
                self.visit(otherwise)
            case Ternary(cond, then, otherwise):
                self.add("select", self.is_float(e))
                for c in (cond, then, otherwise):
                    self.visit(c)
            case Cast(_, operand):
                self.visit(operand)
            case _:
                pass  # constants, variables, array elements: loads, not operations


def _accumulation(stmt: Statement) -> str | None:
    """The associative operator class when ``stmt`` accumulates into its target (x += v, x = max(x, v))."""
    cls = {"+=": "add", "-=": "add", "*=": "mul", "|=": "|", "&=": "&", "^=": "^"}.get(stmt.op)
    if cls is not None:
        return cls
    if stmt.op != "=":
        return None
    target, value = stmt.target, stmt.value
    match value:
        case Binary(op, left, right) if op in ("+", "-", "*", "|", "&", "^"):
            if left == target or (op != "-" and right == target):
                return "add" if op in ("+", "-") else ("mul" if op == "*" else op)
        case Call(fn, args) if _call_kind(fn) in ("min", "max") and target in args:
            return _call_kind(fn)
        case Ternary(Binary(_, a, b)) if target in (a, b):
            return _ternary_minmax(value)
    return None


def _call_kind(fn: str) -> str:
    """The op kind of a math function, single-precision variants (``sqrtf``) included."""
    if fn not in _CALL_KIND and fn.endswith("f"):
        fn = fn[:-1]
    return _CALL_KIND.get(fn, "other")


def _ternary_minmax(e: Ternary) -> str | None:
    """``a < b ? a : b`` is a min, ``a > b ? a : b`` a max (the MIN/MAX macros); else None."""
    cond = e.cond
    if not (isinstance(cond, Binary) and cond.op in ("<", ">", "<=", ">=")):
        return None
    if {e.then, e.otherwise} != {cond.left, cond.right} or cond.left == cond.right:
        return None
    smaller_first = (cond.op in ("<", "<=")) == (e.then == cond.left)
    return "min" if smaller_first else "max"


# ---------------------------------------------------------------------------------------------
# The analysis of one nest


def _element_bytes(ctype: str) -> int:
    try:
        return int(numpy_dtype(ctype).itemsize)
    except ParameterError:
        return 8


def _stride_class(stride: float | None, elem_bytes: int) -> str:
    if stride is None:
        return "large"
    s = abs(stride)
    if s == 0:
        return "zero"
    if s == 1:
        return "unit"
    return "small" if s * elem_bytes < CACHE_LINE_BYTES else "large"


@dataclass(frozen=True)
class StaticTotals:
    """Whole-nest totals at the parameter values, as plain numbers (for rates in dynamic features)."""

    iterations: float  # statement instances
    flops: float
    bytes_touched: float  # distinct array elements touched x element size (compulsory traffic)
    bytes_written: float


class _Nest:
    def __init__(self, scop: Scop, params: Mapping[str, int]) -> None:
        missing = [p for p in scop.params if p not in params]
        if missing:
            raise ParameterError(f"{scop.name}: static features need a value for parameter(s) "
                                 f"{', '.join(missing)} (give --param {missing[0]}=N)")
        self.scop = scop
        self.params = {p: int(params[p]) for p in scop.params}
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

    # -- strides ---------------------------------------------------------------------------------
    def address_coefficients(self, access_relation: str, depth: int, array: str) -> np.ndarray | None:
        """Per iterator, the change of the row-major element address; None when not affine."""
        lay = self.layouts.get(array)
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

    def level_strides(self, s: int, address: np.ndarray | None) -> dict[int, float | None]:
        """Address change (elements) per step of each loop level the statement has."""
        row = self.rows[s]
        depth = self.scop.statements[s].depth
        levels = [lv for lv in range(self.n_levels) if isinstance(row[2 * lv + 1], str)]
        out: dict[int, float | None] = dict.fromkeys(levels)
        if address is None:
            return out
        its = ", ".join(f"i{d}" for d in range(depth))
        plain: dict[int, np.ndarray] = {}
        text: dict[int, str] = {lv: str(row[2 * lv + 1]).strip() for lv in levels}
        for lv in levels:
            if _FLOOR.match(text[lv]):
                continue
            aff = isl.Aff(f"[{self.ptxt}] -> {{ [{its}] -> [({text[lv]})] }}")
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
            out[lv] = self._tile_stride(lv, text, by_text, out, 0)
        return out

    def _tile_stride(self, lv: int, text: dict[int, str], by_text: dict[str, int],
                     known: dict[int, float | None], guard: int) -> float | None:
        m = _FLOOR.match(text[lv])
        if m is None:
            return known[lv]
        inner = by_text.get(m.group(1).strip())
        if inner is None or guard > MAX_DEPTH * 4:
            return None
        base = self._tile_stride(inner, text, by_text, known, guard + 1)
        return None if base is None else base * int(m.group(2))

    @cached_property
    def strides(self) -> list[list[tuple[str, bool, dict[int, float | None]]]]:
        """Per statement, per array access: (array, is_write, level -> stride in elements)."""
        out = []
        for s, stmt in enumerate(self.scop.statements):
            accs = []
            for acc in stmt.accesses:
                if not self.is_array(acc.array):
                    continue
                address = self.address_coefficients(acc.relation, stmt.depth, acc.array)
                accs.append((acc.array, acc.is_write, self.level_strides(s, address)))
            out.append(accs)
        return out

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


def _group_key(row: tuple[int | str, ...], upto: int) -> tuple[object, ...]:
    return tuple(x if isinstance(x, int) else "*" for x in row[:upto])


def _is_triangular(nest: _Nest, s: int, lv: int) -> bool:
    """Whether the bounds of the statement's loop at ``lv`` depend on the enclosing loops."""
    p = nest.prefix_map(s, 2 * lv + 2).range()
    pos = 2 * lv + 1
    before = p.project_out(isl.dim_type.set, pos, 1)
    this = p.project_out(isl.dim_type.set, 0, pos)
    return not p.is_equal(before.flat_product(this))


def _level_structure(nest: _Nest, values: dict[str, float | None]) -> None:
    """Trip counts, loops, triangular bounds, footprints and reuse per level."""
    triangular = 0
    for lv in range(min(nest.n_levels, MAX_DEPTH)):
        stmts = nest.stmts_at(lv)
        if not stmts:
            continue
        values[f"n_loops_l{lv}"] = len({tuple(str(x) for x in nest.rows[s][:2 * lv + 2]) for s in stmts})
        inner, outer = nest.prefix_set(stmts, 2 * lv + 2), nest.prefix_set(stmts, 2 * lv + 1)
        n_in = count_points(inner) if inner is not None else None
        n_out = count_points(outer) if outer is not None else None
        if n_in is not None and n_out:
            values[f"log2_trip_count_l{lv}"] = signed_log2(n_in / n_out)
        tri = any(_is_triangular(nest, s, lv) for s in stmts)
        values[f"triangular_l{lv}"] = float(tri)
        triangular += tri
        # One iteration of the loop at this level: the middle iteration of each loop at the level
        # (loops told apart by their constant schedule positions); the largest working set wins.
        groups: dict[tuple[object, ...], list[int]] = {}
        for s in stmts:
            groups.setdefault(_group_key(nest.rows[s], 2 * lv + 2), []).append(s)
        best: tuple[float, float, float] | None = None
        for members in groups.values():
            prefixes = nest.prefix_set(members, 2 * lv + 2)
            if prefixes is None or prefixes.is_empty():
                continue
            point = _middle_point(prefixes)
            selections = {s: nest.prefix_map(s, 2 * lv + 2).intersect_range(point).domain() for s in members}
            touched, _, executed, elements = nest.footprint(selections)
            if best is None or (touched, executed, elements) > best:
                best = (touched, executed, elements)
        if best is not None and best[0] > 0:
            values[f"log2_footprint_l{lv}"] = signed_log2(best[0])
            values[f"log2_reuse_factor_l{lv}"] = signed_log2(best[1] / best[2])
    values["n_triangular_levels"] = float(triangular)


def _operations(nest: _Nest, values: dict[str, float | None]) -> float:
    """Op histogram and flops per statement instance; returns the total flops."""
    total_iters = sum(n or 0.0 for n in nest.instances)
    kinds: Counter[str] = Counter()
    flops = intops = 0.0
    for stmt, n in zip(nest.scop.statements, nest.instances, strict=True):
        counter = _OpCounter(nest.scop)
        counter.statement(stmt)
        w = n or 0.0
        for k, c in counter.kinds.items():
            kinds[k] += c * w
        flops += counter.flops * w
        intops += counter.intops * w
    values["log2_iterations"] = signed_log2(total_iters)
    values["log2_flops"] = signed_log2(flops)
    if total_iters > 0:
        values["flops_per_iteration"] = flops / total_iters
        values["intops_per_iteration"] = intops / total_iters
        for k in OP_KINDS:
            values[f"op_{k}_per_iteration"] = kinds[k] / total_iters
    return flops


def _memory(nest: _Nest, values: dict[str, float | None], flops: float) -> tuple[float, float]:
    scop = nest.scop
    used = {a.array for s in scop.statements for a in s.accesses} | {
        name for name, info in scop.arrays.items() if info.is_scalar and name not in scop.params}
    arrays = [scop.arrays[a] for a in used if a in scop.arrays and not scop.arrays[a].is_scalar]
    values["n_arrays"] = len(arrays)
    values["n_arrays_written"] = sum(a.written for a in arrays)
    values["n_scalars"] = sum(1 for a in used if a in scop.arrays and scop.arrays[a].is_scalar)
    values["max_array_rank"] = max((len(a.dims) for a in arrays), default=0)
    array_accs = [(a, s) for s, stmt in enumerate(scop.statements) for a in stmt.accesses if nest.is_array(a.array)]
    values["n_array_accesses"] = len(array_accs)
    values["n_scalar_accesses"] = sum(len(s.accesses) for s in scop.statements) - len(array_accs)
    if array_accs:
        values["elem_bytes_mean"] = sum(nest.elem_bytes(a.array) for a, _ in array_accs) / len(array_accs)
    total_iters = sum(n or 0.0 for n in nest.instances)
    if total_iters > 0:
        values["array_reads_per_iteration"] = sum(
            (nest.instances[s] or 0.0) for a, s in array_accs if not a.is_write) / total_iters
        values["array_writes_per_iteration"] = sum(
            (nest.instances[s] or 0.0) for a, s in array_accs if a.is_write) / total_iters
    touched, written, _, _ = nest.footprint(dict(enumerate(nest.domains)))
    values["log2_bytes_touched"] = signed_log2(touched)
    values["log2_bytes_written"] = signed_log2(written)
    if touched > 0:
        values["log2_arith_intensity"] = signed_log2(flops / touched)
    return touched, written


def _stride_features(nest: _Nest, values: dict[str, float | None]) -> None:
    inner: Counter[str] = Counter()
    per_level: dict[int, Counter[str]] = {lv: Counter() for lv in range(MAX_DEPTH)}
    max_bytes: dict[int, float] = {}
    temporal: Counter[int] = Counter()
    spatial: Counter[int] = Counter()
    weight: Counter[int] = Counter()
    for s, accs in enumerate(nest.strides):
        n = nest.instances[s] or 0.0
        for array, is_write, strides in accs:
            eb = nest.elem_bytes(array)
            if strides:
                innermost = max(strides)
                inner[f"{'write' if is_write else 'read'}_{_stride_class(strides[innermost], eb)}"] += 1
            for lv, st in strides.items():
                if lv >= MAX_DEPTH:
                    continue
                cls = _stride_class(st, eb)
                per_level[lv][cls] += 1
                if st is not None:
                    max_bytes[lv] = max(max_bytes.get(lv, 0.0), abs(st) * eb)
                weight[lv] += n
                temporal[lv] += n * (cls == "zero")
                spatial[lv] += n * (cls in ("unit", "small"))
    for rw in ("read", "write"):
        for c in STRIDE_CLASSES:
            values[f"inner_{rw}_stride_{c}"] = inner[f"{rw}_{c}"]
    for lv in range(min(nest.n_levels, MAX_DEPTH)):
        if not nest.stmts_at(lv):
            continue
        for c in STRIDE_CLASSES:
            values[f"stride_{c}_l{lv}"] = per_level[lv][c]
        if lv in max_bytes:
            values[f"log2_max_stride_l{lv}"] = signed_log2(max_bytes[lv])
        if weight[lv] > 0:
            values[f"reuse_temporal_l{lv}"] = temporal[lv] / weight[lv]
            values[f"reuse_spatial_l{lv}"] = spatial[lv] / weight[lv]


class _Reductions:
    """Which carried dependences are reductions: between accumulations of one operator into one
    array, with no other access of that array meeting an accumulated element in the same iteration
    of the enclosing loops."""

    def __init__(self, nest: _Nest) -> None:
        self.nest = nest
        self.kind = [_accumulation(s) for s in nest.scop.statements]
        self._cache: dict[tuple[int, int, str, int], bool] = {}

    def _accumulator_subs(self, s: int) -> tuple[str, tuple[str, ...]] | None:
        writes = self.nest.scop.statements[s].writes
        return (writes[0].array, writes[0].subscripts) if self.kind[s] and writes else None

    def is_reduction(self, source: int, sink: int, array: str, lv: int) -> bool:
        key = (source, sink, array, lv)
        if key not in self._cache:
            self._cache[key] = self._check(source, sink, array, lv)
        return self._cache[key]

    def _check(self, source: int, sink: int, array: str, lv: int) -> bool:
        if self.kind[source] is None or self.kind[source] != self.kind[sink]:
            return False
        accs = {s: self._accumulator_subs(s) for s in (source, sink)}
        if any(a is None or a[0] != array for a in accs.values()):
            return False
        upto = 2 * lv + 1
        acc_writes, others = [], []
        for s in {source, sink}:
            prefix = self.nest.prefix_map(s, upto)
            for a in self.nest.scop.statements[s].accesses:
                if a.array != array:
                    continue
                rel = self.nest.relation(a.relation).apply_domain(prefix)
                if a.subscripts == accs[s][1]:
                    if a.is_write:
                        acc_writes.append(rel)
                else:
                    others.append(rel)
        return all(w.intersect(o).is_empty() for w in acc_writes for o in others)


def _dependence_features(nest: _Nest, values: dict[str, float | None]) -> None:
    scop = nest.scop
    deps = compute_dependences(scop)
    space = ScheduleSpace(scop, deps)
    for kind in ("RAW", "WAR", "WAW"):
        values[f"n_deps_{kind.lower()}"] = sum(d.kind == kind for d in deps)
    reductions = _Reductions(nest)
    values["n_reduction_statements"] = sum(k is not None for k in reductions.kind)
    parallel, reducing = [], []
    for lv in range(nest.n_levels):
        if not nest.stmts_at(lv):
            continue
        blocking, _ = blocking_dependences(scop, space, lv)
        if not blocking:
            parallel.append(lv)
        carried = [i for i in range(len(deps)) if space.carried_at(lv, i)]
        is_red = bool(carried) and all(
            reductions.is_reduction(deps[i].source, deps[i].sink, deps[i].array, lv) for i in carried)
        if is_red:
            reducing.append(lv)
        if lv >= MAX_DEPTH:
            continue
        values[f"parallel_l{lv}"] = float(not blocking)
        values[f"reduction_l{lv}"] = float(is_red)
        values[f"carried_l{lv}"] = len(carried)
        values[f"carried_raw_l{lv}"] = sum(deps[i].kind == "RAW" for i in carried)
        # Distances of value-based (RAW) dependences; memory-based WAR/WAW relate every later
        # iteration and are never uniform.
        raw = [i for i in carried if deps[i].kind == "RAW"]
        if raw:
            distances = [abs(int(d)) for d in (space.distance(lv, i) for i in raw) if d.lstrip("-").isdigit()]
            values[f"raw_uniform_frac_l{lv}"] = len(distances) / len(raw)
            if distances:
                values[f"raw_min_distance_l{lv}"] = min(distances)
    values["n_parallel_levels"] = len(parallel)
    values["outermost_parallel_level"] = parallel[0] if parallel else None
    values["n_reduction_levels"] = len(reducing)


def _shape(nest: _Nest, values: dict[str, float | None]) -> None:
    scop = nest.scop
    values["depth"] = scop.depth
    values["schedule_levels"] = nest.n_levels
    values["n_statements"] = len(scop.statements)
    values["mean_statement_depth"] = sum(s.depth for s in scop.statements) / len(scop.statements)
    loops = {tuple(str(x) for x in row[:2 * lv + 2]) for row in nest.rows for lv in range(nest.n_levels)
             if isinstance(row[2 * lv + 1], str)}
    values["n_loops"] = len(loops)
    single = all(len({tuple(str(x) for x in nest.rows[s][:2 * lv + 2]) for s in nest.stmts_at(lv)}) == 1
                 for lv in range(nest.n_levels))
    full = all(all(isinstance(row[2 * lv + 1], str) for lv in range(nest.n_levels)) for row in nest.rows)
    values["perfect_nest"] = float(single and full)


# ---------------------------------------------------------------------------------------------
# Public API


def static_features(scop: Scop, params: Mapping[str, int]) -> FeatureVector:
    """The static feature vector of ``scop`` at these parameter values (schema :data:`STATIC_SCHEMA`).

    Raises :class:`~loopnest.errors.ParameterError` when a parameter value is missing or makes the
    nest access an element outside a declared array extent.
    """
    nest = _Nest(scop, params)
    values: dict[str, float | None] = {}
    _shape(nest, values)
    flops = _operations(nest, values)
    _memory(nest, values, flops)
    _stride_features(nest, values)
    _level_structure(nest, values)
    _dependence_features(nest, values)
    return STATIC_SCHEMA.fill(values)


def static_totals(scop: Scop, params: Mapping[str, int]) -> StaticTotals:
    """Statement instances, flops and compulsory bytes of the whole nest at these parameter values."""
    nest = _Nest(scop, params)
    values: dict[str, float | None] = {}
    flops = _operations(nest, values)
    touched, written, _, _ = nest.footprint(dict(enumerate(nest.domains)))
    return StaticTotals(sum(n or 0.0 for n in nest.instances), flops, touched, written)
