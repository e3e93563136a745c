"""Arithmetic in statement values: an op histogram, flops and integer ops, and accumulation patterns.

Operations are counted in the value a statement assigns, not in subscripts (address arithmetic,
not work on the data). ``x += a*b`` and ``a*b + c`` count as one fused multiply-add of 2 flops,
math calls as 1 flop; comparisons and selections enter the histogram only. :func:`accumulation`
recognises ``x op= v`` and ``x = max(x, v)``, which the dependence features need to tell reductions
apart.
"""

from __future__ import annotations

from collections import Counter, defaultdict

from embeddings.features.nest import Nest
from embeddings.features.static_schema import OP_KINDS
from embeddings.features.vector import signed_log2
from loopnest.ir import ArrayRef, Binary, Call, Cast, Const, Expr, Iter, Scop, Statement, Ternary, Unary, Var

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
            case Ternary(_, then, otherwise) if (minmax := _ternary_minmax(e)) is not None:
                self.add(minmax, self.is_float(then) or self.is_float(otherwise))
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


def accumulation(stmt: Statement) -> str | None:
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


def operation_features(nest: Nest, values: dict[str, float | None]) -> float:
    """Op histogram and flops per statement instance; returns the total flops."""
    total_iters = sum(n or 0.0 for n in nest.instances)
    kinds: dict[str, float] = defaultdict(float)
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
