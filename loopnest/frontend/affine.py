"""C expressions to isl affine syntax, with errors that name the construct that is not affine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pycparser import c_ast

from loopnest.errors import SourceLocation, UnsupportedConstructError
from loopnest.frontend.symbols import c_text

# What a non-affine expression is called, by where it occurs.
_ROLE_CONSTRUCT = {
    "bound": "data-dependent bound",
    "subscript": "non-affine subscript",
    "condition": "non-affine condition",
}
_INDIRECT = {"bound": "data-dependent bound", "subscript": "indirect subscript",
             "condition": "non-affine condition"}
_CMP = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "="}
_NEGATED = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_MINMAX_CALLS = {"min", "max", "MIN", "MAX", "fmin_int", "imin", "imax"}


@dataclass(frozen=True)
class Affine:
    """An isl affine expression; ``value`` is set when it folds to an integer constant."""

    text: str
    value: int | None = None


def parse_int_constant(text: str) -> int | None:
    t = text.rstrip("uUlL")
    try:
        return int(t, 0) if not (t.startswith("0") and len(t) > 1 and t[1].isdigit()) else int(t, 8)
    except ValueError:
        return None


class AffineConverter:
    """Converts C expressions to isl syntax.

    ``resolve(name)`` returns the isl text of an identifier (an iterator ``i0`` or a parameter name)
    or raises :class:`UnsupportedConstructError` itself when the identifier may not appear.
    """

    def __init__(self, resolve: Callable[[c_ast.ID, str], str], locate: Callable[[c_ast.Node], SourceLocation]):
        self._resolve = resolve
        self._locate = locate

    def _fail(self, node: c_ast.Node, role: str, what: str, indirect: bool = False) -> UnsupportedConstructError:
        construct = (_INDIRECT if indirect else _ROLE_CONSTRUCT)[role]
        return UnsupportedConstructError(construct, f"{construct}: {what}", self._locate(node))

    def affine(self, node: c_ast.Node, role: str) -> Affine:
        match node:
            case c_ast.Constant():
                return self._constant(node, role)
            case c_ast.ID():
                return Affine(self._resolve(node, role))
            case c_ast.Cast(expr=inner):
                return self.affine(inner, role)
            case c_ast.UnaryOp(op="-", expr=inner):
                a = self.affine(inner, role)
                return Affine(f"-({a.text})", -a.value if a.value is not None else None)
            case c_ast.UnaryOp(op="+", expr=inner):
                return self.affine(inner, role)
            case c_ast.BinaryOp(op=op, left=left, right=right) if op in "+-*/%":
                return self._binary(node, op, self.affine(left, role), self.affine(right, role), role)
            case c_ast.TernaryOp():
                return self._ternary(node, role)
            case c_ast.FuncCall(name=c_ast.ID(name=fn), args=args) if fn in _MINMAX_CALLS | {"floord", "ceild"}:
                return self._call(node, fn, [self.affine(a, role) for a in (args.exprs if args else [])], role)
            case c_ast.ArrayRef():
                raise self._fail(node, role, "an array element is used as an index or bound", indirect=True)
            case c_ast.FuncCall():
                raise self._fail(node, role, "a function call is not affine")
        raise self._fail(node, role, f"{type(node).__name__} is not affine")

    def _constant(self, node: c_ast.Constant, role: str) -> Affine:
        if node.type not in ("int", "long", "unsigned int", "long int", "unsigned long", "long long", "char"):
            raise self._fail(node, role, f"non-integer constant {node.value}")
        value = parse_int_constant(node.value)
        if value is None:
            raise self._fail(node, role, f"constant {node.value!r}")
        return Affine(str(value), value)

    def _call(self, node: c_ast.FuncCall, fn: str, exprs: list[Affine], role: str) -> Affine:
        """``floord``/``ceild`` by a positive constant, or a min/max macro or function of two arguments."""
        if len(exprs) != 2:
            raise self._fail(node, role, f"{fn} needs two arguments")
        if fn in ("floord", "ceild"):
            if exprs[1].value is None or exprs[1].value <= 0:
                raise self._fail(node, role, f"{fn} by a non-constant")
            op = "floor" if fn == "floord" else "ceil"
            return Affine(f"{op}(({exprs[0].text})/{exprs[1].value})")
        kind = "min" if fn.lower().endswith("min") else "max"
        return Affine(f"{kind}({exprs[0].text}, {exprs[1].text})")

    def _binary(self, node: c_ast.Node, op: str, a: Affine, b: Affine, role: str) -> Affine:
        if op in "+-":
            value = None if a.value is None or b.value is None else (a.value + b.value if op == "+"
                                                                   else a.value - b.value)
            return Affine(f"({a.text}) {op} ({b.text})", value)
        if op == "*":
            if a.value is not None and b.value is not None:
                return Affine(str(a.value * b.value), a.value * b.value)
            if a.value is None and b.value is None:
                raise self._fail(node, role, "product of two variables")
            const, var = (a.value, b.text) if a.value is not None else (b.value, a.text)
            return Affine(f"{const}*({var})")
        if b.value is None or b.value <= 0:
            raise self._fail(node, role, f"'{op}' by a non-constant or non-positive divisor")
        if a.value is not None and a.value >= 0:
            v = a.value // b.value if op == "/" else a.value % b.value
            return Affine(str(v), v)
        # C truncates; for the non-negative values of bounds and subscripts this is floor.
        if op == "/":
            return Affine(f"floor(({a.text})/{b.value})")
        return Affine(f"({a.text}) mod {b.value}")

    def _ternary(self, node: c_ast.TernaryOp, role: str) -> Affine:
        cond = node.cond
        if isinstance(cond, c_ast.BinaryOp) and cond.op in ("<", "<=", ">", ">="):
            left, right = c_text_key(cond.left), c_text_key(cond.right)
            then, other = c_text_key(node.iftrue), c_text_key(node.iffalse)
            a, b = self.affine(node.iftrue, role), self.affine(node.iffalse, role)
            smaller_first = cond.op in ("<", "<=")
            if (left, right) == (then, other):
                return Affine(f"{'min' if smaller_first else 'max'}({a.text}, {b.text})")
            if (left, right) == (other, then):
                return Affine(f"{'max' if smaller_first else 'min'}({a.text}, {b.text})")
        raise self._fail(node, role, "a conditional expression that is not a min or max")

    def condition(self, node: c_ast.Node, *, negate: bool = False, role: str = "condition") -> str:
        """An isl formula for a C condition of affine comparisons joined by &&, ||, !."""
        match node:
            case c_ast.UnaryOp(op="!", expr=inner):
                return self.condition(inner, negate=not negate, role=role)
            case c_ast.BinaryOp(op="&&" | "||", left=left, right=right):
                conj = (node.op == "&&") != negate
                joiner = " and " if conj else " or "
                lhs = self.condition(left, negate=negate, role=role)
                rhs = self.condition(right, negate=negate, role=role)
                return f"(({lhs}){joiner}({rhs}))"
            case c_ast.BinaryOp(op=op, left=left, right=right) if op in _NEGATED:
                if negate:
                    op = _NEGATED[op]
                a, b = self.affine(left, role), self.affine(right, role)
                if op == "!=":
                    return f"(({a.text}) < ({b.text}) or ({a.text}) > ({b.text}))"
                return f"({a.text}) {_CMP[op]} ({b.text})"
        raise self._fail(node, role, "only comparisons of affine expressions are supported")


def c_text_key(node: c_ast.Node) -> str:
    return c_text(node).replace(" ", "").strip("()")
