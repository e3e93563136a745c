"""C expressions of a region to IR expressions and the accesses they make (the base of
:class:`~loopnest.frontend.build.ScopBuilder`).

A subscript is affine isl text where it can be. One that is not (``x[col[j]]``, ``a[i*j]``) but is
a side-effect-free integer expression is kept as an IR expression, and the access's relation spans
the array's declared extent in that dimension; an array without a declared extent there is refused,
naming it. Every error names the construct and its line.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
from pycparser import c_ast

from loopnest.errors import SourceLocation, UnsupportedConstructError
from loopnest.frontend.affine import AffineConverter, parse_int_constant
from loopnest.frontend.delinearize import CONSTRUCT as ROWS
from loopnest.frontend.delinearize import RowLayout, RowsRefused, declaration_hint, fit_rows, row_condition
from loopnest.frontend.literals import numeric_literal, shorten
from loopnest.frontend.polynomial import Poly, polynomial
from loopnest.frontend.preprocess import location_of
from loopnest.frontend.symbols import INTEGER_TYPES, SCALAR_TYPES, Symbol, c_text, canonical_scalar, resolve_type
from loopnest.ir import (
    ArrayRef,
    Binary,
    Call,
    Cast,
    Const,
    Expr,
    Iter,
    SourceRegion,
    Ternary,
    Unary,
    Var,
    print_expr,
)

MATH_FUNCTIONS = frozenset(
    f + suffix
    for f in ("sqrt", "exp", "exp2", "log", "log2", "log10", "pow", "fabs", "fmin", "fmax", "sin", "cos",
              "tan", "tanh", "sinh", "cosh", "atan", "atan2", "asin", "acos", "floor", "ceil", "round",
              "fma", "cbrt", "erf", "hypot", "fmod", "trunc")
    for suffix in ("", "f")
) | {"abs", "labs"}
_INT_RESULT_OPS = frozenset({"<", "<=", ">", ">=", "==", "!=", "&&", "||"})
# Iterator types whose arithmetic wraps where the generated code's signed iterators would not (i - 1 at 0).
_WRAPPING = frozenset({"unsigned int", "unsigned long", "unsigned long long"})


@dataclass
class Loop:
    name: str
    depth: int
    negative: bool
    ctype: str = "int"  # the counter's type in the source


@dataclass(frozen=True)
class RawAccess:
    """An access as the walk collects it: subscripts as isl text (the real subscript, printed with
    iterators ``i0``.., in an approximated dimension) and ``approximated``: the dimensions whose
    subscript is not affine, each with the isl text of its declared extent."""

    array: str
    subscripts: tuple[str, ...]
    is_write: bool
    approximated: tuple[tuple[int, str], ...] = ()
    reason: str = ""

    def with_mode(self, *, write: bool) -> RawAccess:
        return RawAccess(self.array, self.subscripts, write, self.approximated, self.reason)


Accesses = list[RawAccess]


def iterator_text(expr: Expr) -> str:
    """``expr`` as C text with the iterators named ``i0``, ``i1``.. (for reports and access texts)."""
    return print_expr(expr, lambda d: f"i{d}")


class ExpressionBuilder:
    """Symbols, parameters and expressions of one region; :class:`ScopBuilder` adds the statements."""

    def __init__(self, *, region: SourceRegion, symbols: dict[str, Symbol], typedefs: dict[str, str],
                 written: set[str]) -> None:
        self._region = region
        self._symbols = dict(symbols)
        self._typedefs = typedefs
        self._written = written
        self._loops: list[Loop] = []
        self._params: dict[str, None] = {}
        self._locals: dict[str, Symbol] = {}
        self._used: dict[str, None] = {}
        self._conv = AffineConverter(self._resolve_affine, self._loc)
        self._layouts: dict[str, RowLayout] = {}
        self._subscripting = 0  # > 0 while building a subscript or a bound (iterators stay uncast there)
        self._assumed: list[isl.Set] = []  # what splitting flat arrays into rows assumes of the parameters

    def _use_rows(self, layouts: dict[str, RowLayout]) -> None:
        """Read the flat arrays of ``layouts`` as their rows (:mod:`loopnest.frontend.delinearize`)."""
        self._layouts = layouts
        for name, layout in layouts.items():
            self._symbols[name] = layout.symbol(self._symbols[name])

    def _domain_constraints(self) -> list[str]:
        """The isl constraints of the loops and conditions around the expression being built."""
        return []

    # -- helpers ---------------------------------------------------------------------------------
    def _loc(self, node: c_ast.Node | None) -> SourceLocation:
        return location_of(getattr(node, "coord", None), self._region.file)

    def _reject(self, node: c_ast.Node, construct: str, detail: str = "") -> UnsupportedConstructError:
        msg = f"unsupported construct: {construct}" + (f" ({detail})" if detail else "")
        return UnsupportedConstructError(construct, msg, self._loc(node))

    def _lookup(self, name: str) -> Symbol | None:
        return self._locals.get(name) or self._symbols.get(name)

    def _resolve_affine(self, node: c_ast.ID, role: str) -> str:
        for loop in self._loops:
            if loop.name == node.name:
                return f"i{loop.depth}"
        sym = self._lookup(node.name)
        kind = {"bound": "data-dependent bound", "subscript": "non-affine subscript",
                "condition": "non-affine condition"}[role]
        if sym is None:
            raise self._reject(node, kind, f"{node.name!r} is not declared")
        self._check_volatile(node, sym)
        if node.name in self._written:
            raise self._reject(node, kind, f"{node.name!r} is assigned inside the nest")
        if not sym.is_integer:
            raise self._reject(node, kind, f"{node.name!r} is not an integer scalar")
        self._params.setdefault(node.name)
        return str(node.name)

    def _data_expr(self, node: c_ast.Node, refused: UnsupportedConstructError, accesses: Accesses, *,
                   integer: bool) -> Expr:
        """``node``, which is not affine (``refused`` says why), as an IR expression reading data;
        ``integer``: it must have an integer type (a subscript, a bound)."""
        expr = self._expr(node, accesses)
        if integer and not self._is_integer(expr):
            raise self._reject(node, refused.construct, f"{shorten(c_text(node))} is not an integer expression")
        return expr

    def _is_integer(self, expr: Expr) -> bool:
        """Whether ``expr`` has an integer type in C."""
        match expr:
            case Iter():
                return True
            case Const(text):
                return parse_int_constant(text) is not None
            case Var(name) | ArrayRef(name, _):
                sym = self._lookup(name)
                return sym is not None and sym.scalar_type in INTEGER_TYPES
            case Cast(ctype, _):
                return ctype in INTEGER_TYPES
            case Unary(op, operand):
                return op == "!" or self._is_integer(operand)
            case Binary(op, left, right):
                return op in _INT_RESULT_OPS or (self._is_integer(left) and self._is_integer(right))
            case Ternary(_, then, otherwise):
                return self._is_integer(then) and self._is_integer(otherwise)
            case Call(fn, args):
                return fn in ("abs", "labs") and all(self._is_integer(a) for a in args)
        return False

    def _declared_extent(self, sym: Symbol, dim: int) -> str | None:
        """The isl text of ``sym``'s declared extent in ``dim``, or None when there is none (a pointer,
        ``[]``) or it is not affine in the parameters."""
        node = sym.dim_nodes[dim] if dim < len(sym.dim_nodes) else None
        if node is None:
            return None
        try:
            return self._conv.affine(node, "bound").text
        except UnsupportedConstructError:
            return None

    def _no_extent(self, node: c_ast.Node, construct: str, sym: Symbol, dim: int) -> UnsupportedConstructError:
        dims = "".join(f"[{d or 'm'}]" if k != dim else "[m]" for k, d in enumerate(sym.dims))
        return self._reject(node, construct, f"{shorten(c_text(node))}: {sym.name} has no declared extent in "
                                             f"dimension {dim} to bound it by; declare its extent, e.g. "
                                             f"{sym.scalar_type} {sym.name}{dims}")

    # -- expressions -----------------------------------------------------------------------------
    def _expr(self, node: c_ast.Node, accesses: Accesses) -> Expr:
        match node:
            case c_ast.Constant():
                return Const(self._literal(node))
            case c_ast.ID(name=name):
                return self._identifier(node, name, accesses)
            case c_ast.ArrayRef():
                return self._array_ref(node, accesses)
            case c_ast.BinaryOp(op=op, left=left, right=right):
                return Binary(op, self._expr(left, accesses), self._expr(right, accesses))
            case c_ast.UnaryOp(op="sizeof", expr=operand):
                return Const(f"{self._sizeof(operand)}UL")  # size_t, as C's sizeof
            case c_ast.UnaryOp(op=op, expr=inner) if op in ("-", "+", "!", "~"):
                return Unary(op, self._expr(inner, accesses))
            case c_ast.Cast(to_type=t, expr=inner):
                return Cast(self._type_name(t), self._expr(inner, accesses))
            case c_ast.TernaryOp(cond=c, iftrue=a, iffalse=b):
                return Ternary(self._expr(c, accesses), self._expr(a, accesses), self._expr(b, accesses))
            case c_ast.FuncCall(name=c_ast.ID(name=fn), args=args) if fn in MATH_FUNCTIONS:
                return Call(fn, tuple(self._expr(a, accesses) for a in (args.exprs if args else [])))
        raise self._refused_expr(node)

    def _refused_expr(self, node: c_ast.Node) -> UnsupportedConstructError:
        """Why an expression is outside the supported subset, naming the construct."""
        match node:
            case c_ast.UnaryOp(op="*" | "&"):
                return self._reject(node, "pointer arithmetic", c_text(node))
            case c_ast.UnaryOp():
                return self._reject(node, "side effect in expression", c_text(node))
            case c_ast.FuncCall():
                return self._reject(node, "unknown function call",
                                    f"{c_text(node.name)}() is not a known math function, nor defined in this file")
            case c_ast.StructRef():
                return self._reject(node, "struct member access", c_text(node))
            case c_ast.Assignment():
                return self._reject(node, "side effect in expression", "assignment inside an expression")
        return self._reject(node, type(node).__name__.lower(), c_text(node))

    def _identifier(self, node: c_ast.ID, name: str, accesses: Accesses) -> Expr:
        for loop in self._loops:
            if loop.name == name:  # an unsigned counter's value wraps as in the source (the loop's is signed)
                wraps = loop.ctype in _WRAPPING and not self._subscripting
                return Cast(loop.ctype, Iter(loop.depth)) if wraps else Iter(loop.depth)
        sym = self._lookup(name)
        if sym is None:
            raise self._reject(node, "undeclared identifier", name)
        self._check_type(node, sym)
        if sym.is_array:
            raise self._reject(node, "pointer arithmetic", f"array {name!r} used without subscripts")
        if name in self._written or name in self._locals:
            self._used.setdefault(name)
            accesses.append(RawAccess(name, (), False))
        elif name not in self._params:
            self._used.setdefault(name)
        return Var(name)

    def _array_ref(self, node: c_ast.ArrayRef, accesses: Accesses) -> Expr:
        subs_nodes: list[c_ast.Node] = []
        base: c_ast.Node = node
        while isinstance(base, c_ast.ArrayRef):
            subs_nodes.append(base.subscript)
            base = base.name
        subs_nodes.reverse()
        if not isinstance(base, c_ast.ID):
            raise self._reject(node, "pointer arithmetic", c_text(node))
        sym = self._lookup(base.name)
        if sym is None or not sym.is_array:
            raise self._reject(node, "pointer arithmetic", f"{base.name!r} is not an array")
        self._check_type(node, sym)
        layout = self._layouts.get(base.name)
        if layout is not None and len(subs_nodes) == 1:
            subs_nodes = self._rows(node, layout, sym, subs_nodes[0])
        if len(subs_nodes) != len(sym.dims):
            raise self._reject(node, "partial array reference",
                               f"{base.name} has {len(sym.dims)} dimensions, {len(subs_nodes)} subscripts given")
        self._subscripting += 1
        try:
            return self._subscripted(node, base.name, sym, subs_nodes, accesses)
        finally:
            self._subscripting -= 1

    def _rows(self, node: c_ast.ArrayRef, layout: RowLayout, sym: Symbol, subscript: c_ast.Node) -> list[c_ast.Node]:
        """The subscripts of the element of the rows of ``layout`` that ``node`` reaches, each inner one proven
        to lie in its row from the loop bounds, or :class:`RowsRefused`."""
        poly = polynomial(subscript)
        parts = None if poly is None else layout.split(poly)
        if parts is None:  # plan_rows split every access of the region
            raise AssertionError(f"{c_text(node)}: not split into rows")
        bad, assumed = fit_rows(parts, layout.sizes, lambda sub, size: self._in_row(sub, size, subscript.coord))
        self._assumed += assumed
        if bad is not None:
            size = layout.sizes[bad - 1].text()
            hint = declaration_hint(sym, [s.text() for s in layout.sizes])
            message = (f"unsupported construct: {ROWS} ({shorten(c_text(node))}: the loop bounds do not keep "
                       f"{parts[bad].text()} in [0, {size}) for any value of the sizes, so the rows of {size} "
                       f"elements it would be read as overlap; {hint})")
            raise RowsRefused(ROWS, message, self._loc(node), array=layout.array, fallback=layout.fallback)
        return [part.node(subscript.coord) for part in parts]

    def _in_row(self, subscript: Poly, extent: Poly, coord: object) -> tuple[bool, isl.Set | None]:
        low = self._conv.affine(subscript.node(coord), "subscript").text
        high = self._conv.affine(extent.node(coord), "bound").text
        return row_condition(self._domain_constraints(), len(self._loops), tuple(self._params), low, high)

    def _subscripted(self, node: c_ast.ArrayRef, name: str, sym: Symbol, subs_nodes: list[c_ast.Node],
                     accesses: Accesses) -> Expr:
        """The element of array ``name`` at ``subs_nodes``, its access recorded in ``accesses``."""
        texts: list[str] = []
        exprs: list[Expr] = []
        approximated: list[tuple[int, str]] = []
        for dim, sub in enumerate(subs_nodes):
            try:
                texts.append(self._conv.affine(sub, "subscript").text)
            except UnsupportedConstructError as refused:
                expr = self._data_expr(sub, refused, accesses, integer=True)
                extent = self._declared_extent(sym, dim)
                if extent is None:
                    indirect = any(isinstance(e, ArrayRef) for e in expr.walk())
                    raise self._no_extent(node, "indirect subscript" if indirect else refused.construct,
                                          sym, dim) from None
                texts.append(iterator_text(expr))
                exprs.append(expr)
                approximated.append((dim, extent))
                continue
            exprs.append(self._expr(sub, []))
        self._used.setdefault(name)
        ref = ArrayRef(name, tuple(exprs))
        reason = "; ".join(f"subscript {texts[d]} is not affine: dimension {d} spans the extent {e}"
                           for d, e in approximated)
        accesses.append(RawAccess(name, tuple(texts), False, tuple(approximated), reason))
        return ref

    # -- types and literals: the only source text that reaches generated C, rebuilt from values ---
    def _scalar_type(self, text: str, node: c_ast.Node) -> str:
        canonical = canonical_scalar(resolve_type(text, self._typedefs))
        if canonical is None:
            raise self._reject(node, "unsupported type", f"{shorten(text)!r} is not a scalar C type")
        return canonical

    def _type_name(self, node: c_ast.Node) -> str:
        """A cast's or sizeof's type, resolved to a scalar type (typedefs followed), or rejected."""
        t = node.type if isinstance(node, c_ast.Typename) else None
        if not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.IdentifierType):
            raise self._reject(node, "unsupported type", f"{shorten(c_text(node))!r} is not a scalar C type")
        return self._scalar_type(" ".join(t.type.names), node)

    def _check_volatile(self, node: c_ast.Node, sym: Symbol) -> None:
        if sym.volatile:
            raise self._reject(node, "volatile object", f"{sym.name!r} is declared volatile: its accesses must "
                               "happen as written, so the nest is not transformed")

    def _check_type(self, node: c_ast.Node, sym: Symbol) -> None:
        self._check_volatile(node, sym)
        if sym.scalar_type is None:
            raise self._reject(node, "unsupported type", f"{sym.name!r} has type {shorten(sym.base_type)!r}")

    def _sizeof(self, operand: c_ast.Node) -> int:
        if isinstance(operand, c_ast.Typename):
            return SCALAR_TYPES[self._type_name(operand)]
        value = self._expr(operand, [])
        name = value.name if isinstance(value, ArrayRef | Var) else None
        sym = self._lookup(name) if name is not None else None
        if sym is None or sym.scalar_type is None or (isinstance(value, Var) and sym.is_array):
            raise self._reject(operand, "sizeof", "only sizeof of a scalar type, variable or array element")
        return SCALAR_TYPES[sym.scalar_type]

    def _literal(self, node: c_ast.Constant) -> str:
        """A numeric literal as validated text; a character constant as its value; nothing else."""
        text = numeric_literal(node.type, node.value)
        if text is None:
            raise self._reject(node, "unsupported constant", shorten(node.value))
        return text
