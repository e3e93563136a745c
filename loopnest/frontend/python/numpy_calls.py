"""The NumPy functions and array methods the frontend lowers: element-wise ufuncs, ``np.where``, reductions
(``np.sum``/``np.max``/``np.min``/``np.mean`` with ``axis``), ``np.dot``/``np.matmul``/``@``, ``.T`` and
``np.transpose``, ``np.copy``. ``np.maximum``/``np.minimum`` propagate NaNs as NumPy does (C's
``fmax``/``fmin`` are ``np.fmax``/``np.fmin``)."""

from __future__ import annotations

import ast
from collections.abc import Callable

from loopnest.frontend.python.expressions import ExpressionLowering, arithmetic, extent_expr, is_numpy, ufunc
from loopnest.frontend.python.lazy import (
    Indexed,
    Lazy,
    ShapeError,
    View,
    combine,
    is_float,
    matmul,
    promote,
    reduce,
    scalar,
    transposed,
)
from loopnest.ir import Binary, Cast, Expr, Ternary, Unary

# np.NAME -> C function (float results)
FLOAT_FUNCTIONS = {
    "exp": "exp", "log": "log", "sqrt": "sqrt", "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh",
    "sinh": "sinh", "cosh": "cosh", "arctan": "atan", "arcsin": "asin", "arccos": "acos", "exp2": "exp2",
    "log2": "log2", "log10": "log10", "floor": "floor", "ceil": "ceil", "cbrt": "cbrt", "trunc": "trunc",
    "arctan2": "atan2", "power": "pow", "hypot": "hypot", "fmax": "fmax", "fmin": "fmin", "fmod": "fmod",
}
ARITHMETIC = {"add": "+", "subtract": "-", "multiply": "*", "divide": "/", "true_divide": "/"}
REDUCTIONS = {"sum": "sum", "max": "max", "amax": "max", "min": "min", "amin": "min", "mean": "mean"}
_COMPARE = {ast.Gt: ">", ast.GtE: ">=", ast.Lt: "<", ast.LtE: "<=", ast.Eq: "==", ast.NotEq: "!="}


def select(kind: str, a: Expr, b: Expr, floating: bool) -> Expr:
    """NumPy's ``maximum``/``minimum`` of two elements: the first where it compares greater (less), or where
    it is NaN; else the second (NaN too where the second is)."""
    test: Expr = Binary(">" if kind == "max" else "<", a, b)
    if floating:
        test = Binary("||", test, Binary("!=", a, a))
    return Ternary(test, a, b)


class CallLowering(ExpressionLowering):
    def call(self, node: ast.Call) -> Lazy:
        func = node.func
        if any(isinstance(k.value, ast.Starred) for k in node.keywords) or \
                any(isinstance(a, ast.Starred) for a in node.args):
            raise self.reject(node, "starred argument")
        if isinstance(func, ast.Attribute) and is_numpy(func.value):
            return self.numpy_call(node, func.attr, node.args)
        if isinstance(func, ast.Attribute):  # a method: x.sum(axis=0), x.dot(y), x.copy()
            return self.numpy_call(node, func.attr, [func.value, *node.args], method=True)
        if isinstance(func, ast.Name) and func.id == "abs" and len(node.args) == 1:
            return self.numpy_call(node, "abs", node.args)
        if isinstance(func, ast.Name) and func.id == "float" and len(node.args) == 1:
            value = self.operand(node.args[0])
            return combine([value], "double", lambda e: Cast("double", e[0]))
        name = ast.unparse(func)[:60]
        raise self.reject(node, "unsupported call", f"{name}() is not a supported NumPy function")

    def numpy_call(self, node: ast.Call, name: str, args: list[ast.expr], *, method: bool = False) -> Lazy:
        if name in REDUCTIONS:
            return self.reduction(node, REDUCTIONS[name], args)
        if node.keywords:
            raise self.reject(node, "keyword argument", f"{node.keywords[0].arg}= of np.{name}")
        handler = self._handlers().get(name)
        if handler is None or method and name not in ("dot", "copy"):
            kind = "method" if method else "NumPy function"
            raise self.reject(node, "unsupported call", f"{kind} {name}() is not supported")
        arity = {"where": 3, "dot": 2, "matmul": 2, "arctan2": 2, "power": 2, "hypot": 2, "fmax": 2, "fmin": 2,
                 "fmod": 2, "maximum": 2, "minimum": 2, **dict.fromkeys(ARITHMETIC, 2)}.get(name, 1)
        if len(args) != arity:
            raise self.reject(node, "unsupported call", f"np.{name} with {len(args)} arguments ({arity} expected)")
        try:
            return handler(node, args)
        except ShapeError as exc:
            raise self.reject(node, "shape mismatch", f"{ast.unparse(node)[:80]}: {exc}") from None

    def _handlers(self) -> dict[str, Callable[[ast.Call, list[ast.expr]], Lazy]]:
        out: dict[str, Callable[[ast.Call, list[ast.expr]], Lazy]] = {
            name: self._math(fn) for name, fn in FLOAT_FUNCTIONS.items()}
        out.update({name: self._arithmetic(op) for name, op in ARITHMETIC.items()})
        out.update({"abs": self._abs, "absolute": self._abs, "fabs": self._abs, "square": self._square,
                    "negative": self._negative, "maximum": self._extreme, "minimum": self._extreme,
                    "dot": self._dot, "matmul": self._dot, "transpose": lambda n, a: transposed(self.operand(a[0])),
                    "copy": self._copy, "where": self._where})
        return out

    def _math(self, function: str) -> Callable[[ast.Call, list[ast.expr]], Lazy]:
        return lambda node, args: ufunc(function, [self.operand(a) for a in args])

    def _arithmetic(self, op: str) -> Callable[[ast.Call, list[ast.expr]], Lazy]:
        return lambda node, args: arithmetic(op, self.operand(args[0]), self.operand(args[1]))

    def _abs(self, node: ast.Call, args: list[ast.expr]) -> Lazy:
        value = self.operand(args[0])
        if not is_float(value.dtype):
            return combine([value], value.dtype, lambda e: Ternary(Binary("<", e[0], Unary("-", e[0])),
                                                                     Unary("-", e[0]), e[0]))
        return ufunc("fabs", [value])

    def _square(self, node: ast.Call, args: list[ast.expr]) -> Lazy:
        value = self.operand(args[0])
        return combine([value], value.dtype, lambda e: Binary("*", e[0], e[0]), weak=value.weak)

    def _negative(self, node: ast.Call, args: list[ast.expr]) -> Lazy:
        value = self.operand(args[0])
        return combine([value], value.dtype, lambda e: Unary("-", e[0]), weak=value.weak)

    def _extreme(self, node: ast.Call, args: list[ast.expr]) -> Lazy:
        kind = "max" if isinstance(node.func, ast.Attribute) and node.func.attr == "maximum" else "min"
        a, b = self.operand(args[0]), self.operand(args[1])
        dtype = promote(a, b)
        return combine([a, b], dtype, lambda e: select(kind, e[0], e[1], is_float(dtype)), weak=a.weak and b.weak)

    def _dot(self, node: ast.Call, args: list[ast.expr]) -> Lazy:
        a, b = self.operand(args[0]), self.operand(args[1])
        if a.ndim == 0 or b.ndim == 0:
            return arithmetic("*", a, b)
        return matmul(a, b, promote(a, b))

    def _copy(self, node: ast.Call, args: list[ast.expr]) -> Lazy:
        value = self.operand(args[0])
        if isinstance(value, View):  # a copy is not a view: assigned to a name, it is a new array
            return Indexed(value.shape, value.dtype, element=value.at, operands=(value,))
        return value

    def _where(self, node: ast.Call, args: list[ast.expr]) -> Lazy:
        cond = args[0]
        if not isinstance(cond, ast.Compare) or len(cond.ops) != 1 or type(cond.ops[0]) not in _COMPARE:
            raise self.reject(cond, "condition", "np.where takes one comparison (a > b) as its condition")
        op = _COMPARE[type(cond.ops[0])]
        parts = [self.operand(x) for x in (cond.left, cond.comparators[0], args[1], args[2])]
        dtype = promote(parts[2], parts[3])
        return combine(parts, dtype, lambda e: Ternary(Binary(op, e[0], e[1]), e[2], e[3]),
                       weak=parts[2].weak and parts[3].weak)

    def reduction(self, node: ast.Call, kind: str, args: list[ast.expr]) -> Lazy:
        keywords = {k.arg: k.value for k in node.keywords}
        if set(keywords) - {"axis"} or len(args) > 2 or len(args) == 2 and "axis" in keywords:
            raise self.reject(node, "unsupported call", f"np.{kind} takes the array and axis= only")
        value = self.operand(args[0])
        axis_node = keywords.get("axis", args[1] if len(args) == 2 else None)
        axes = None if axis_node is None or isinstance(axis_node, ast.Constant) and axis_node.value is None \
            else self._axes(axis_node, value.ndim)
        if kind != "mean":
            return reduce(kind, value, axes)
        total = reduce("sum", value, axes)
        total = self.materialize(total, node) if total is not value else total
        count: Expr | None = None
        for k in range(value.ndim) if axes is None else axes:
            e = extent_expr(value.shape[k])
            count = e if count is None else Binary("*", count, e)
        divisor = scalar(count, "long", weak=True) if count is not None else self.number(node, 1)
        return arithmetic("/", total, divisor)

    def _axes(self, node: ast.expr, ndim: int) -> tuple[int, ...]:
        items = node.elts if isinstance(node, ast.Tuple) else [node]
        out: list[int] = []
        for item in items:
            k = self.constant(item)
            if k is None or not -ndim <= k < ndim:
                raise self.reject(node, "axis", f"axis {ast.unparse(item)} of a {ndim}-d array")
            out.append(k % ndim)
        return tuple(sorted(set(out)))
