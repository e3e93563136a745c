"""Python expressions of the kernel to :mod:`lazy <loopnest.frontend.python.lazy>` values, and integer
expressions (subscripts, bounds, sizes) to :class:`Affine`.

A name is bound (:data:`Binding`) to an affine integer (a loop iterator, a size, ``n = A.shape[0]``), a view
of an array (an argument, a temporary, ``row = A[i]``), or a scalar variable. Calls of NumPy are looked
up in :mod:`.numpy_calls`; anything else raises :class:`UnsupportedConstructError` at its line.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass

from loopnest.errors import SourceLocation, UnsupportedConstructError
from loopnest.frontend.python.affine import Affine, Extent
from loopnest.frontend.python.lazy import (
    Lazy,
    Reduce,
    Scalar,
    ShapeError,
    View,
    as_float,
    combine,
    promote,
    scalar,
    transposed,
)
from loopnest.frontend.python.views import Index, IndexingError, Item, Slice, index_view
from loopnest.ir import Binary, Call, Const, Expr, Unary, Var


@dataclass(frozen=True)
class ScalarName:
    """A scalar variable: a parameter of the function or a local (``s = 0.0``)."""

    var: str
    dtype: str


Binding = Affine | View | ScalarName
_ARITH = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
NUMPY_MODULES = ("np", "numpy")


def is_numpy(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id in NUMPY_MODULES


class ExpressionLowering:
    """The expressions of one function; :class:`~.builder.KernelBuilder` adds statements and names."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.env: dict[str, Binding] = {}
        self.stale: dict[str, int] = {}  # names bound inside a loop that has ended -> that loop's line
        self.hinted: set[str] = set()  # the sizes named in type hints

    # -- hooks of the builder ---------------------------------------------------------------------
    def materialize(self, value: Lazy, node: ast.AST) -> Lazy:
        """``value`` computed into a temporary (a reduction read as an operand)."""
        raise NotImplementedError

    def call(self, node: ast.Call) -> Lazy:
        raise NotImplementedError

    def reject(self, node: ast.AST, construct: str, message: str = "") -> UnsupportedConstructError:
        text = f"{construct}: {message}" if message else f"{construct}: {ast.unparse(node).splitlines()[0][:80]}"
        return UnsupportedConstructError(construct, text, self.loc(node))

    def loc(self, node: ast.AST) -> SourceLocation:
        return SourceLocation(self.file, getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1)

    # -- names ------------------------------------------------------------------------------------
    def lookup(self, node: ast.Name) -> Binding:
        bound = self.env.get(node.id)
        if bound is None:
            if node.id in self.stale:
                raise self.reject(node, "name used after its loop", f"{node.id!r} depends on the iterator of the "
                                  f"loop at line {self.stale[node.id]}, which has ended")
            if node.id in self.hinted:
                raise self.reject(node, "undefined name", f"{node.id!r} names a size in a type hint, but the "
                                  f"function does not bind it: pass it as a parameter, or {node.id} = A.shape[0]")
            raise self.reject(node, "undefined name", f"{node.id!r} is not a parameter nor assigned before")
        return bound

    # -- integers ---------------------------------------------------------------------------------
    def affine(self, node: ast.expr) -> Affine | None:
        """``node`` as an affine integer expression, or None where it is not one."""
        match node:
            case ast.Constant(value=int() as v) if not isinstance(v, bool):
                return Affine.of(v)
            case ast.Name(id=name):
                bound = self.env.get(name)
                return bound if isinstance(bound, Affine) else None
            case ast.UnaryOp(op=ast.USub(), operand=operand):
                inner = self.affine(operand)
                return None if inner is None else -inner
            case ast.BinOp(op=ast.Add() | ast.Sub() | ast.Mult() as op, left=left, right=right):
                a, b = self.affine(left), self.affine(right)
                if a is None or b is None:
                    return None
                return a + b if isinstance(op, ast.Add) else a - b if isinstance(op, ast.Sub) else a.times(b)
            case ast.Subscript(value=ast.Attribute(attr="shape", value=base), slice=index):
                return self._shape_of(base, index)
            case ast.Call(func=ast.Name(id="len"), args=[base]):
                return self._shape_of(base, ast.Constant(0))
        return None

    def require_affine(self, node: ast.expr, what: str) -> Affine:
        value = self.affine(node)
        if value is None:
            for name in ast.walk(node):
                if isinstance(name, ast.Name) and name.id not in NUMPY_MODULES and name.id != "len":
                    self.lookup(name)  # an unbound name is named as such
            raise self.reject(node, "non-affine expression", f"{what} {ast.unparse(node)[:80]} is not an affine "
                              "expression of the loop iterators and sizes")
        return value

    def _shape_of(self, base: ast.expr, index: ast.expr) -> Affine | None:
        if not isinstance(base, ast.Name) or not isinstance(index, ast.Constant) or not isinstance(index.value, int):
            return None
        view = self.env.get(base.id)
        if not isinstance(view, View) or not -view.ndim <= index.value < view.ndim:
            return None
        return view.shape[index.value].affine

    def constant(self, node: ast.expr) -> int | None:
        value = self.affine(node)
        return value.const if value is not None and value.is_const else None

    # -- values -----------------------------------------------------------------------------------
    def value(self, node: ast.expr) -> Lazy:
        try:
            return self._value(node)
        except ShapeError as exc:
            raise self.reject(node, "shape mismatch", f"{ast.unparse(node)[:80]}: {exc}") from None

    def operand(self, node: ast.expr) -> Lazy:
        """A value read element by element: a reduction is computed first."""
        out = self.value(node)
        return self.materialize(out, node) if isinstance(out, Reduce) else out

    def _value(self, node: ast.expr) -> Lazy:
        match node:
            case ast.Constant(value=bool()):
                raise self.reject(node, "boolean value")
            case ast.Constant(value=int() | float() as v):
                return self.number(node, v)
            case ast.Name():
                return self.named(node)
            case ast.Attribute(value=base, attr="T"):
                return transposed(self.operand(base))
            case ast.Attribute(value=module, attr="pi" | "e") if is_numpy(module) or \
                    (isinstance(module, ast.Name) and module.id == "math"):
                return self.number(node, math.pi if node.attr == "pi" else math.e)
            case ast.BinOp():
                return self.binary(node)
            case ast.UnaryOp(op=ast.USub() | ast.UAdd(), operand=inner):
                value = self.operand(inner)
                if isinstance(node.op, ast.UAdd):
                    return value
                return combine([value], value.dtype, lambda e: Unary("-", e[0]), weak=value.weak)
            case ast.Call():
                return self.call(node)
            case ast.Subscript():
                return self.subscript(node)
        raise self.reject(node, _construct(node))

    def number(self, node: ast.AST, v: int | float) -> Scalar:
        if isinstance(v, int):
            return scalar(Const(str(v)), "long", weak=True)
        if not math.isfinite(v):
            raise self.reject(node, "non-finite constant")
        return scalar(Const(repr(v)), "double", weak=True)

    def named(self, node: ast.Name) -> Lazy:
        bound = self.lookup(node)
        if isinstance(bound, Affine):
            return scalar(bound.expr(), "long", weak=True)
        if isinstance(bound, ScalarName):
            return scalar(Var(bound.var), bound.dtype)
        return bound

    def binary(self, node: ast.BinOp) -> Lazy:
        if isinstance(node.op, ast.MatMult):
            from loopnest.frontend.python.lazy import matmul
            a, b = self.operand(node.left), self.operand(node.right)
            try:
                return matmul(a, b, promote(a, b))
            except ShapeError as exc:
                raise self.reject(node, "shape mismatch", f"{ast.unparse(node)[:80]}: {exc}") from None
        left, right = self.operand(node.left), self.operand(node.right)
        if isinstance(node.op, ast.Pow):
            return self.power(node, left, right)
        op = _ARITH.get(type(node.op))
        if op is None:
            raise self.reject(node, "operator", f"{type(node.op).__name__} in {ast.unparse(node)[:80]}")
        return arithmetic(op, left, right)

    def power(self, node: ast.BinOp, base: Lazy, exponent: Lazy) -> Lazy:
        exp = exponent.at(()) if exponent.ndim == 0 else None
        if isinstance(exp, Const) and exp.text in ("2", "2.0"):
            return combine([base], promote(base, exponent), lambda e: Binary("*", e[0], e[0]), weak=base.weak)
        if isinstance(exp, Const) and exp.text == "0.5":
            return ufunc("sqrt", [base])
        if base.dtype in ("long", "int") and exponent.dtype in ("long", "int"):
            raise self.reject(node, "integer power", "** of integers (use a float operand)")
        return ufunc("pow", [base, exponent])

    def subscript(self, node: ast.Subscript) -> View:
        """A view of an array: ``A[i, 1:-1]``, ``A[:, j]``, ``A[::-1]``."""
        base = self.value(node.value)
        if not isinstance(base, View):
            raise self.reject(node, "subscript of a computed value", f"{ast.unparse(node)[:80]}: only arrays and "
                              "their views can be subscripted")
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        try:
            return index_view(base, [self.index_item(item) for item in items])
        except IndexingError as exc:
            raise self.reject(node, "subscript", f"{ast.unparse(node)[:80]}: {exc}") from None

    def index_item(self, node: ast.expr) -> Item:
        if isinstance(node, ast.Slice):
            step = 1 if node.step is None else self.constant(node.step)
            if step is None:
                raise self.reject(node, "non-constant slice step", ast.unparse(node))
            bounds = [None if b is None else self.require_affine(b, "slice bound") for b in (node.lower, node.upper)]
            return Slice(bounds[0], bounds[1], step)
        if isinstance(node, ast.Constant) and node.value is None or isinstance(node, ast.Attribute) and \
                node.attr == "newaxis":
            raise self.reject(node, "new axis", "np.newaxis/None in a subscript")
        if isinstance(node, ast.Constant) and node.value is Ellipsis:
            raise self.reject(node, "ellipsis", "... in a subscript")
        value = self.affine(node)
        if value is None:
            bound = self.env.get(node.id) if isinstance(node, ast.Name) else None
            construct = "fancy indexing" if isinstance(bound, View) or isinstance(node, ast.List | ast.Compare) \
                else "non-affine subscript"
            raise self.reject(node, construct, f"{ast.unparse(node)[:80]} is not an affine expression of the loop "
                              "iterators and sizes")
        return Index(value)


def arithmetic(op: str, left: Lazy, right: Lazy) -> Lazy:
    dtype = promote(left, right)
    weak = left.weak and right.weak
    if op == "/" and dtype in ("long", "int"):
        return combine([left, right], "double", lambda e: Binary("/", as_float(e[0], "long"), e[1]), weak=weak)
    return combine([left, right], dtype, lambda e: Binary(op, e[0], e[1]), weak=weak)


def ufunc(name: str, operands: list[Lazy]) -> Lazy:
    """A C math function element-wise: float operands (integers converted), the float32 variant for float32."""
    dtype = "float" if all(o.dtype == "float" or o.weak for o in operands) and \
        any(o.dtype == "float" for o in operands) else "double"
    function = name + "f" if dtype == "float" else name
    types = [o.dtype for o in operands]
    return combine(operands, dtype, lambda e: Call(function, tuple(as_float(x, t) for x, t in zip(e, types,
                                                                                                strict=True))))


def _construct(node: ast.AST) -> str:
    names = {ast.Lambda: "lambda", ast.IfExp: "conditional expression", ast.ListComp: "comprehension",
             ast.GeneratorExp: "generator expression", ast.Compare: "comparison", ast.BoolOp: "boolean operator",
             ast.List: "list", ast.Tuple: "tuple", ast.Dict: "dict", ast.Attribute: "attribute",
             ast.JoinedStr: "string", ast.Starred: "starred expression"}
    return next((text for cls, text in names.items() if isinstance(node, cls)), type(node).__name__.lower())


def extent_expr(extent: Extent) -> Expr:
    """An extent as a (long) IR expression, for ``np.mean``'s division."""
    exact = extent.affine
    if exact is None:
        return Binary("/", Binary("+", extent.num.expr(), Const(str(extent.den - 1))), Const(str(extent.den)))
    return exact.expr()
