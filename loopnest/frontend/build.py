"""One region of C statements to a :class:`~loopnest.ir.Scop`.

The walk keeps a stack of enclosing loops and affine conditions and a 2d+1 position vector, and
emits one :class:`Statement` per assignment. Anything outside the static control part raises
:class:`UnsupportedConstructError` naming the construct and its line.
"""

from __future__ import annotations

from dataclasses import dataclass

from pycparser import c_ast

from loopnest.errors import SourceLocation, UnsupportedConstructError
from loopnest.frontend.affine import Affine, AffineConverter
from loopnest.frontend.literals import numeric_literal, shorten
from loopnest.frontend.preprocess import location_of
from loopnest.frontend.symbols import SCALAR_TYPES, Symbol, c_text, canonical_scalar, resolve_type
from loopnest.ir import (
    Access,
    ArrayInfo,
    ArrayRef,
    Binary,
    Call,
    Cast,
    Const,
    Expr,
    Iter,
    LoopInfo,
    Schedule,
    Scop,
    SourceRegion,
    Statement,
    Ternary,
    Unary,
    Var,
)

MATH_FUNCTIONS = frozenset(
    f + suffix
    for f in ("sqrt", "exp", "exp2", "log", "log2", "log10", "pow", "fabs", "fmin", "fmax", "sin", "cos",
              "tan", "tanh", "sinh", "cosh", "atan", "atan2", "asin", "acos", "floor", "ceil", "round",
              "fma", "cbrt", "erf", "hypot", "fmod", "trunc")
    for suffix in ("", "f")
) | {"abs", "labs"}

_COMPOUND_OPS = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
_REJECTED_STATEMENTS = {
    c_ast.While: "while loop", c_ast.DoWhile: "while loop", c_ast.Goto: "goto", c_ast.Label: "goto",
    c_ast.Break: "break", c_ast.Continue: "continue", c_ast.Return: "return", c_ast.Switch: "switch",
}


@dataclass
class _Loop:
    name: str
    depth: int
    negative: bool


# What a statement reads and writes, as collected: (array or scalar, subscripts, is a write).
_Accesses = list[tuple[str, tuple[str, ...], bool]]


@dataclass
class _RawStatement:
    iterators: tuple[str, ...]
    constraints: tuple[str, ...]
    row: list[int | str]  # 2d+1 for its own depth
    target: ArrayRef | Var
    op: str
    value: Expr
    accesses: _Accesses
    location: SourceLocation
    declares: str | None


class _WrittenNames(c_ast.NodeVisitor):
    """Names assigned anywhere in the region, which therefore cannot be parameters."""

    def __init__(self) -> None:
        self.names: set[str] = set()
        self.declared: set[str] = set()

    @staticmethod
    def _base(node: c_ast.Node) -> str | None:
        while isinstance(node, c_ast.ArrayRef):
            node = node.name
        return node.name if isinstance(node, c_ast.ID) else None

    def visit_Assignment(self, node: c_ast.Assignment) -> None:
        if (name := self._base(node.lvalue)) is not None:
            self.names.add(name)
        self.generic_visit(node)

    def visit_UnaryOp(self, node: c_ast.UnaryOp) -> None:
        if node.op in ("p++", "p--", "++", "--") and (name := self._base(node.expr)) is not None:
            self.names.add(name)
        self.generic_visit(node)

    def visit_Decl(self, node: c_ast.Decl) -> None:
        self.names.add(node.name)
        self.declared.add(node.name)
        self.generic_visit(node)


class ScopBuilder:
    def __init__(self, *, items: list[c_ast.Node], region: SourceRegion, symbols: dict[str, Symbol],
                 typedefs: dict[str, str], name: str) -> None:
        self._items = items
        self._region = region
        self._symbols = dict(symbols)
        self._typedefs = typedefs
        self._name = name
        self._loops: list[_Loop] = []
        self._conds: list[str] = []
        self._beta: list[int] = [0]
        self._raw: list[_RawStatement] = []
        self._params: dict[str, None] = {}
        self._locals: dict[str, Symbol] = {}
        self._used: dict[str, None] = {}
        self._loop_vars: dict[str, None] = {}
        self._for_declared: set[str] = set()
        self._loop_infos: list[LoopInfo] = []
        written = _WrittenNames()
        for item in items:
            written.visit(item)
        self._written = written.names
        self._conv = AffineConverter(self._resolve_affine, self._loc)

    # -- entry -----------------------------------------------------------------------------------
    def build(self) -> Scop:
        for item in self._items:
            self._statement(item)
        if not self._raw:
            raise UnsupportedConstructError("empty nest", "the region contains no assignment",
                                            SourceLocation(self._region.file, self._region.first_line))
        params = tuple(self._params)
        ptxt = ", ".join(params)
        depth = max(len(r.iterators) for r in self._raw)
        statements = []
        for index, raw in enumerate(self._raw):
            its = ", ".join(f"i{d}" for d in range(len(raw.iterators)))
            cons = " and ".join(raw.constraints) or "true"
            domain = f"[{ptxt}] -> {{ S{index}[{its}] : {cons} }}"
            accesses = tuple(
                Access(arr, subs, is_write,
                       f"[{ptxt}] -> {{ S{index}[{its}] -> {arr}[{', '.join(subs)}] : {cons} }}")
                for arr, subs, is_write in raw.accesses
            )
            statements.append(Statement(index, raw.iterators, domain, raw.target, raw.op, raw.value, accesses,
                                        raw.location, raw.declares))
        rows = tuple(tuple(r.row + [0] * (2 * depth + 1 - len(r.row))) for r in self._raw)
        arrays = self._arrays(statements)
        context = f"[{ptxt}] -> {{ : {' and '.join(f'{p} >= 0' for p in params) or 'true'} }}"
        iterators = tuple(n for n in self._loop_vars if n not in self._for_declared)
        param_types = {p: self._symbols[p].scalar_type or "int" if p in self._symbols else "int" for p in params}
        return Scop(self._name, params, context, tuple(statements), arrays, Schedule(rows), self._region,
                    iterators, param_types,
                    tuple(sorted(self._loop_infos, key=lambda lp: (lp.statements[:1], lp.depth))))

    def _arrays(self, statements: list[Statement]) -> dict[str, ArrayInfo]:
        written = {a.array for s in statements for a in s.writes}
        out: dict[str, ArrayInfo] = {}
        for name in self._used:
            sym = self._locals.get(name) or self._symbols.get(name)
            assert sym is not None
            storage = "region" if name in self._locals else sym.storage
            out[name] = ArrayInfo(name, sym.scalar_type or sym.base_type, sym.dims, storage, name in written)
        return out

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
        if node.name in self._written:
            raise self._reject(node, kind, f"{node.name!r} is assigned inside the nest")
        if not sym.is_integer:
            raise self._reject(node, kind, f"{node.name!r} is not an integer scalar")
        self._params.setdefault(node.name)
        return str(node.name)

    # -- statements ------------------------------------------------------------------------------
    def _next_position(self) -> int:
        pos = self._beta[-1]
        self._beta[-1] += 1
        return pos

    def _statement(self, node: c_ast.Node) -> None:
        rejected = next((construct for cls, construct in _REJECTED_STATEMENTS.items() if isinstance(node, cls)), None)
        if rejected is not None:
            raise self._reject(node, rejected)
        match node:
            case c_ast.Compound():
                for item in node.block_items or []:
                    self._statement(item)
            case c_ast.For():
                self._for(node)
            case c_ast.If():
                self._if(node)
            case c_ast.Assignment():
                self._assignment(node, node.lvalue, node.op, node.rvalue)
            case c_ast.UnaryOp(op="p++" | "++" | "p--" | "--"):
                op = "+=" if "+" in node.op else "-="
                self._assignment(node, node.expr, op, c_ast.Constant("int", "1"))
            case c_ast.Decl() | c_ast.DeclList():
                for decl in node.decls if isinstance(node, c_ast.DeclList) else [node]:
                    self._decl(decl)
            case c_ast.Pragma() | c_ast.EmptyStatement():
                pass
            case c_ast.FuncCall():
                raise self._reject(node, "unknown function call", f"{c_text(node.name)}() as a statement")
            case _:
                raise self._reject(node, type(node).__name__.lower())

    def _decl(self, node: c_ast.Decl) -> None:
        t = node.type
        if not isinstance(t, c_ast.TypeDecl) or not isinstance(t.type, c_ast.IdentifierType):
            raise self._reject(node, "local array or pointer declaration", node.name)
        base = self._scalar_type(" ".join(t.type.names), node)
        if node.storage:
            raise self._reject(node, "storage class inside the nest", f"{' '.join(node.storage)} {node.name}")
        self._locals[node.name] = Symbol(node.name, base, (), "region")
        if node.init is not None:
            self._assignment(node, c_ast.ID(node.name, coord=node.coord), "=", node.init, declares=base)

    def _if(self, node: c_ast.If) -> None:
        cond = self._conv.condition(node.cond)
        self._conds.append(cond)
        self._statement(node.iftrue)
        self._conds.pop()
        if node.iffalse is not None:
            self._conds.append(self._conv.condition(node.cond, negate=True))
            self._statement(node.iffalse)
            self._conds.pop()

    def _for(self, node: c_ast.For) -> None:
        name, lower = self._loop_init(node)
        if any(loop.name == name for loop in self._loops):  # its bounds would constrain the outer one
            raise self._reject(node, "shadowed loop iterator", f"{name!r} is the iterator of an enclosing loop")
        step = self._loop_step(node, name)
        depth = len(self._loops)
        it = f"i{depth}"
        loop = _Loop(name, depth, step < 0)
        # The bound expressions see outer iterators only; the condition sees this one too.
        lb = self._conv.affine(lower, "bound")
        self._loops.append(loop)
        upper = self._loop_condition(node, name, step)
        cons = [f"{it} {'>=' if step > 0 else '<='} {lb.text}", upper]
        if abs(step) != 1:
            cons.append(f"exists (e{depth}: {it} = {lb.text} {'+' if step > 0 else '-'} {abs(step)}*e{depth})")
        self._conds.extend(cons)
        self._beta.append(0)
        first = len(self._raw)
        self._statement(node.stmt)
        self._loop_infos.append(LoopInfo(depth, name, c_text(lower), c_text(node.cond), step,
                                         tuple(range(first, len(self._raw)))))
        self._beta.pop()
        del self._conds[-len(cons):]
        self._loops.pop()
        self._next_position()

    def _loop_init(self, node: c_ast.For) -> tuple[str, c_ast.Node]:
        init = node.init
        if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None:
            decl = init.decls[0]
            self._for_declared.add(decl.name)
            self._symbols.setdefault(decl.name, Symbol(decl.name, "int", (), "local"))
            self._loop_vars.setdefault(decl.name)
            return decl.name, decl.init
        if isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
            sym = self._lookup(init.lvalue.name)
            if sym is not None and not sym.is_integer:
                raise self._reject(node, "non-integer loop iterator", init.lvalue.name)
            self._loop_vars.setdefault(init.lvalue.name)
            return init.lvalue.name, init.rvalue
        raise self._reject(node, "non-canonical loop", "the loop must start with 'i = expr' or 'int i = expr'")

    def _loop_step(self, node: c_ast.For, name: str) -> int:
        nxt = node.next
        match nxt:
            case c_ast.UnaryOp(op="p++" | "++", expr=c_ast.ID(name=n)) if n == name:
                return 1
            case c_ast.UnaryOp(op="p--" | "--", expr=c_ast.ID(name=n)) if n == name:
                return -1
            case c_ast.Assignment(op="+=" | "-=", lvalue=c_ast.ID(name=n), rvalue=r) if n == name:
                c = self._constant(r)
                if c is not None and c != 0:
                    return c if nxt.op == "+=" else -c
            case c_ast.Assignment(op="=", lvalue=c_ast.ID(name=n),
                                  rvalue=c_ast.BinaryOp(op="+" | "-", left=c_ast.ID(name=n2), right=r)) \
                    if n == name and n2 == name:
                c = self._constant(r)
                if c is not None and c != 0:
                    return c if nxt.rvalue.op == "+" else -c
        raise self._reject(nxt if nxt is not None else node, "non-constant step",
                           f"the step of loop {name!r} must be a constant")

    def _constant(self, node: c_ast.Node) -> int | None:
        try:
            return self._conv.affine(node, "bound").value
        except UnsupportedConstructError:
            return None

    def _loop_condition(self, node: c_ast.For, name: str, step: int) -> str:
        """The exit test must bound the iterator in the direction it moves (``i < ub`` for i++)."""
        if node.cond is None:
            raise self._reject(node, "non-canonical loop", f"loop {name!r} has no condition")
        for part in _conjuncts(node.cond):
            if not isinstance(part, c_ast.BinaryOp) or part.op not in ("<", "<=", ">", ">="):
                raise self._reject(part, "non-canonical loop", "the condition must compare the iterator")
            left_is = isinstance(part.left, c_ast.ID) and part.left.name == name
            right_is = isinstance(part.right, c_ast.ID) and part.right.name == name
            if left_is == right_is:
                raise self._reject(part, "non-canonical loop", f"the condition must compare {name!r} to a bound")
            upper = (part.op in ("<", "<=")) == left_is
            if upper != (step > 0):
                raise self._reject(part, "non-canonical loop", f"the condition does not bound {name!r}")
        return self._conv.condition(node.cond, role="bound")

    # -- assignments and expressions -------------------------------------------------------------
    def _assignment(self, node: c_ast.Node, lvalue: c_ast.Node, op: str, rvalue: c_ast.Node,
                    declares: str | None = None) -> None:
        if op not in _COMPOUND_OPS:
            raise self._reject(node, "assignment operator", op)
        accesses: _Accesses = []
        value = self._expr(rvalue, accesses)
        target_access: list[tuple[str, tuple[str, ...], bool]] = []
        target = self._expr(lvalue, target_access)
        if not isinstance(target, ArrayRef | Var) or len(target_access) != 1:
            raise self._reject(lvalue, "assignment target", "only scalars and array elements can be assigned")
        array, subs, _ = target_access[0]
        if op != "=":
            accesses.append((array, subs, False))  # x op= v reads x first
        accesses.append((array, subs, True))
        its = tuple(loop.name for loop in self._loops)
        row: list[int | str] = []
        for d, loop in enumerate(self._loops):
            row += [self._beta[d], f"-i{d}" if loop.negative else f"i{d}"]
        row.append(self._next_position())
        self._raw.append(_RawStatement(its, tuple(self._conds), row, target, op, value, accesses,
                                       self._loc(node), declares))

    def _expr(self, node: c_ast.Node, accesses: _Accesses) -> Expr:
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
                                    f"{c_text(node.name)}() is not a known math function")
            case c_ast.StructRef():
                return self._reject(node, "struct member access", c_text(node))
            case c_ast.Assignment():
                return self._reject(node, "side effect in expression", "assignment inside an expression")
        return self._reject(node, type(node).__name__.lower(), c_text(node))

    def _identifier(self, node: c_ast.ID, name: str, accesses: _Accesses) -> Expr:
        for loop in self._loops:
            if loop.name == name:
                return Iter(loop.depth)
        sym = self._lookup(name)
        if sym is None:
            raise self._reject(node, "undeclared identifier", name)
        self._check_type(node, sym)
        if sym.is_array:
            raise self._reject(node, "pointer arithmetic", f"array {name!r} used without subscripts")
        if name in self._written or name in self._locals:
            self._used.setdefault(name)
            accesses.append((name, (), False))
        elif name not in self._params:
            self._used.setdefault(name)
        return Var(name)

    def _array_ref(self, node: c_ast.ArrayRef, accesses: _Accesses) -> Expr:
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
        if len(subs_nodes) != len(sym.dims):
            raise self._reject(node, "partial array reference",
                               f"{base.name} has {len(sym.dims)} dimensions, {len(subs_nodes)} subscripts given")
        affs: list[Affine] = [self._conv.affine(s, "subscript") for s in subs_nodes]
        exprs = tuple(self._expr(s, []) for s in subs_nodes)
        self._used.setdefault(base.name)
        accesses.append((base.name, tuple(a.text for a in affs), False))
        return ArrayRef(base.name, exprs)

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

    def _check_type(self, node: c_ast.Node, sym: Symbol) -> None:
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


def _conjuncts(node: c_ast.Node) -> list[c_ast.Node]:
    if isinstance(node, c_ast.BinaryOp) and node.op == "&&":
        return _conjuncts(node.left) + _conjuncts(node.right)
    return [node]
