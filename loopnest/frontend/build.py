"""One region of C statements to a :class:`~loopnest.ir.Scop`.

The walk keeps a stack of enclosing loops, affine conditions and guards on data, and a 2d+1 position
vector, and emits one :class:`Statement` per assignment. A condition on data becomes a guard of the
statements under it; a loop whose bounds read data gets a :class:`DynamicBound` and a domain bounded
by the extents of the arrays it subscripts (:mod:`loopnest.frontend.data_dependent`). Anything else
outside the static control part raises :class:`UnsupportedConstructError` naming the construct and
its line.
"""

from __future__ import annotations

from collections.abc import Mapping

from pycparser import c_ast

from loopnest.errors import SourceLocation, UnsupportedConstructError
from loopnest.frontend.assemble import RawStatement, ScopParts, assemble
from loopnest.frontend.data_dependent import conjunction, extent_constraints, iterator_bounded
from loopnest.frontend.delinearize import plan_rows
from loopnest.frontend.expressions import MATH_FUNCTIONS, Accesses, ExpressionBuilder, Loop
from loopnest.frontend.inline import Inliner
from loopnest.frontend.literals import shorten
from loopnest.frontend.preprocess import location_of
from loopnest.frontend.symbols import Symbol, c_text, declared_volatile, resolve_type, symbol_from_decl
from loopnest.ir import ArrayRef, Binary, Const, DynamicBound, Expr, Iter, LoopInfo, Scop, SourceRegion, Unary, Var

_COMPOUND_OPS = {"=", "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^=", "<<=", ">>="}
_REJECTED_STATEMENTS = {
    c_ast.While: "while loop", c_ast.DoWhile: "while loop", c_ast.Goto: "goto", c_ast.Label: "goto",
    c_ast.Break: "break", c_ast.Continue: "continue", c_ast.Return: "return", c_ast.Switch: "switch",
}


class _WrittenNames(c_ast.NodeVisitor):
    """Names assigned anywhere in the region, which therefore cannot be parameters."""

    def __init__(self) -> None:
        self.names: set[str] = set()

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
        self.generic_visit(node)


class ScopBuilder(ExpressionBuilder):
    """``items``: the region's statements, helper calls inlined (:func:`inline_helpers`); ``keep_flat``: flat
    arrays to analyse as written, not as rows (:mod:`.delinearize`)."""

    def __init__(self, *, items: list[c_ast.Node], region: SourceRegion, symbols: dict[str, Symbol],
                 typedefs: dict[str, str], name: str, keep_flat: frozenset[str] = frozenset()) -> None:
        written = _WrittenNames()
        for item in items:
            written.visit(item)
        super().__init__(region=region, symbols=symbols, typedefs=typedefs, written=written.names)
        self._use_rows(plan_rows(items, self._symbols, self._loc, keep_flat))
        self._items = items
        self._name = name
        self._conds: list[str] = []
        self._guards: list[tuple[Expr, Accesses]] = []
        self._beta: list[int] = [0]
        self._raw: list[RawStatement] = []
        self._loop_vars: dict[str, None] = {}
        self._for_declared: set[str] = set()
        self._loop_infos: list[LoopInfo] = []
        self._loop_types: dict[str, None] = {}

    def _domain_constraints(self) -> list[str]:
        return list(self._conds)

    # -- entry -----------------------------------------------------------------------------------
    def build(self) -> Scop:
        for item in self._items:
            self._statement(item)
        if not self._raw:
            raise UnsupportedConstructError("empty nest", "the region contains no assignment",
                                            SourceLocation(self._region.file, self._region.first_line))
        iterators = tuple(n for n in self._loop_vars if n not in self._for_declared)
        parts = ScopParts(self._name, self._region, tuple(self._params), {**self._symbols, **self._locals},
                          frozenset(self._locals), tuple(self._used), iterators, tuple(self._loop_infos),
                          tuple(self._loop_types), tuple(str(a) for a in self._assumed))
        return assemble(self._raw, parts)

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
        names = " ".join(t.type.names)
        base = self._scalar_type(names, node)
        local = Symbol(node.name, base, (), "region",
                       volatile=declared_volatile(t.quals, resolve_type(names, self._typedefs)))
        self._check_volatile(node, local)
        if node.storage:
            raise self._reject(node, "storage class inside the nest", f"{' '.join(node.storage)} {node.name}")
        self._locals[node.name] = local
        if node.init is not None:
            self._assignment(node, c_ast.ID(node.name, coord=node.coord), "=", node.init, declares=base)

    def _if(self, node: c_ast.If) -> None:
        affine: list[str] = []
        data: list[tuple[c_ast.Node, UnsupportedConstructError]] = []
        for part in _conjuncts(node.cond):
            try:
                affine.append(self._conv.condition(part))
            except UnsupportedConstructError as refused:
                data.append((part, refused))
        first = len(self._raw)
        reads: Accesses = []
        guard = conjunction([self._data_expr(p, r, reads, integer=False) for p, r in data]) if data else None
        self._branch(node.iftrue, affine, guard, reads)
        if node.iffalse is not None:
            if guard is None:
                self._branch(node.iffalse, [self._conv.condition(node.cond, negate=True)], None, [])
            else:  # not (affine and data): one guard, evaluated as C evaluates the condition
                negated: Accesses = []
                self._branch(node.iffalse, [], Unary("!", self._expr(node.cond, negated)), negated)
        if guard is not None:
            self._check_guarded_writes(node, first, {a.array for a in reads})

    def _branch(self, body: c_ast.Node, affine: list[str], guard: Expr | None, reads: Accesses) -> None:
        self._conds.extend(affine)
        if guard is not None:
            self._guards.append((guard, reads))
        self._statement(body)
        if guard is not None:
            self._guards.pop()
        del self._conds[len(self._conds) - len(affine):]

    def _check_guarded_writes(self, node: c_ast.If, first: int, read: set[str]) -> None:
        """A guard is evaluated at each statement it covers: refuse a statement under it writing what it
        reads, unless that statement is the only one under it (it then runs after the test, as in C)."""
        inside = self._raw[first:]
        for raw in inside:
            hit = next((a.array for a in raw.accesses if a.is_write and a.array in read), None)
            if hit is not None and (len(inside) > 1 or len(raw.iterators) > len(self._loops)):
                raise self._reject(node, "non-affine condition",
                                   f"the condition reads {hit}, which the statements under it write; only a "
                                   "single statement may update what its condition on data reads")

    def _for(self, node: c_ast.For) -> None:
        name, lower, ctype = self._loop_init(node)
        self._loop_types.setdefault(ctype)
        if any(loop.name == name for loop in self._loops):  # its bounds would constrain the outer one
            raise self._reject(node, "shadowed loop iterator", f"{name!r} is the iterator of an enclosing loop")
        step = self._loop_step(node, name)
        depth = len(self._loops)
        it = f"i{depth}"
        # The bound expressions see outer iterators only; the condition sees this one too.
        reads: Accesses = []
        lb, dyn_lower = self._lower_bound(lower, reads)
        self._loops.append(Loop(name, depth, step < 0, ctype))
        upper, dyn_upper = self._loop_condition(node, name, step, reads)
        dynamic = dyn_lower is not None or dyn_upper is not None
        if dynamic and step != 1:
            raise self._reject(node, "data-dependent bound", f"loop {name!r} steps by {step}; only a loop stepping "
                                                             "by +1 may have bounds read from data")
        cons = [c for c in (None if lb is None else f"{it} {'>=' if step > 0 else '<='} {lb}", upper) if c]
        if abs(step) != 1:
            cons.append(f"exists (e{depth}: {it} = {lb} {'+' if step > 0 else '-'} {abs(step)}*e{depth})")
        self._conds.extend(cons)
        self._beta.append(0)
        first = len(self._raw)
        self._statement(node.stmt)
        if dynamic:
            reason = f"{name} from {shorten(c_text(lower))} while {shorten(c_text(node.cond))}"
            self._bound_by_extents(node, first, DynamicBound(depth, dyn_lower, dyn_upper, reason), reads,
                                   len(self._conds) + len(self._guards))
        self._loop_infos.append(LoopInfo(depth, name, c_text(lower), c_text(node.cond), step,
                                         tuple(range(first, len(self._raw)))))
        self._beta.pop()
        del self._conds[len(self._conds) - len(cons):]
        self._loops.pop()
        self._next_position()

    def _lower_bound(self, lower: c_ast.Node, reads: Accesses) -> tuple[str | None, Expr | None]:
        try:
            return self._conv.affine(lower, "bound").text, None
        except UnsupportedConstructError as refused:
            return None, self._bound_expr(lower, refused, reads, None)

    def _bound_expr(self, node: c_ast.Node, refused: UnsupportedConstructError, reads: Accesses,
                    own: int | None) -> Expr:
        """A loop bound read from data: an integer expression of outer iterators and data the nest
        never writes (it is evaluated once per loop, not once per statement)."""
        mine: Accesses = []
        self._subscripting += 1  # a bound compares with the generated loop's own (signed) iterator
        try:
            expr = self._data_expr(node, refused, mine, integer=True)
        finally:
            self._subscripting -= 1
        written = next((a.array for a in mine if a.array in self._written), None)
        if written is not None:
            raise self._reject(node, "data-dependent bound",
                               f"{shorten(c_text(node))} reads {written}, which the nest writes")
        if own is not None and Iter(own) in expr.walk():
            raise self._reject(node, "data-dependent bound",
                               f"the bound {shorten(c_text(node))} reads the loop's own iterator")
        reads.extend(mine)
        return expr

    def _bound_by_extents(self, node: c_ast.For, first: int, bound: DynamicBound, reads: Accesses,
                          conditions: int) -> None:
        """Bound the iterator of a loop with bounds on data, in each statement under it, by the extents
        of the arrays it subscripts: those of the statement itself, and those of the statements that run
        at every iteration (directly in the body, under no condition of their own). Refuse, naming the
        arrays, when that does not bound it."""
        name = self._loops[-1].name
        inside = self._raw[first:]
        every = [r for r in inside if len(r.iterators) == bound.depth + 1 and r.conditions == conditions]
        shared = [c for r in every for c in extent_constraints(r.accesses, bound.depth, self._extent_of)[0]]
        for raw in inside:
            cons, missing = extent_constraints(raw.accesses, bound.depth, self._extent_of)
            raw.constraints = [*raw.constraints, *dict.fromkeys([*cons, *shared])]
            if not iterator_bounded(raw.domain_text(tuple(self._params)), bound.depth):
                sym = self._lookup(missing[0][0]) if missing else None
                if sym is not None:
                    raise self._no_extent(node, "data-dependent bound", sym, missing[0][1])
                raise self._reject(node, "data-dependent bound",
                                   f"loop {name!r} has bounds read from data and subscripts no array with a "
                                   "declared extent to bound it by; declare the extents, e.g. double val[nnz]")
            raw.dynamic_bounds.append(bound)
            raw.accesses.extend(reads)

    def _extent_of(self, array: str, dim: int) -> str | None:
        sym = self._lookup(array)
        return None if sym is None else self._declared_extent(sym, dim)

    def _loop_init(self, node: c_ast.For) -> tuple[str, c_ast.Node, str]:
        """The loop's iterator, its initial value and its type in the source."""
        init = node.init
        if isinstance(init, c_ast.DeclList) and len(init.decls) == 1 and init.decls[0].init is not None:
            decl = init.decls[0]
            declared = symbol_from_decl(decl, "local", self._typedefs) or Symbol(decl.name, "int", (), "local")
            self._check_volatile(decl, declared)
            if not declared.is_integer:
                raise self._reject(node, "non-integer loop iterator", decl.name)
            self._for_declared.add(decl.name)
            self._symbols.setdefault(decl.name, declared)
            self._loop_vars.setdefault(decl.name)
            return decl.name, decl.init, declared.scalar_type or "int"
        if isinstance(init, c_ast.Assignment) and init.op == "=" and isinstance(init.lvalue, c_ast.ID):
            sym = self._lookup(init.lvalue.name)
            if sym is not None:
                self._check_volatile(init.lvalue, sym)
                if not sym.is_integer:
                    raise self._reject(node, "non-integer loop iterator", init.lvalue.name)
            self._loop_vars.setdefault(init.lvalue.name)
            return init.lvalue.name, init.rvalue, (sym.scalar_type if sym is not None else None) or "int"
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

    def _loop_condition(self, node: c_ast.For, name: str, step: int,
                        reads: Accesses) -> tuple[str | None, Expr | None]:
        """The exit test must bound the iterator in the direction it moves (``i < ub`` for i++): the
        affine conjuncts as isl text, and at most one bound read from data (exclusive) as an expression."""
        if node.cond is None:
            raise self._reject(node, "non-canonical loop", f"loop {name!r} has no condition")
        affine: list[str] = []
        dynamic: list[Expr] = []
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
            try:
                affine.append(self._conv.condition(part, role="bound"))
            except UnsupportedConstructError as refused:
                bound = self._bound_expr(part.right if left_is else part.left, refused, reads, len(self._loops) - 1)
                dynamic.append(Binary("+", bound, Const("1")) if part.op in ("<=", ">=") else bound)
        if len(dynamic) > 1:
            raise self._reject(node, "data-dependent bound",
                               f"loop {name!r} has {len(dynamic)} bounds read from data; one is supported")
        return " and ".join(affine) or None, dynamic[0] if dynamic else None

    # -- assignments -----------------------------------------------------------------------------
    def _assignment(self, node: c_ast.Node, lvalue: c_ast.Node, op: str, rvalue: c_ast.Node,
                    declares: str | None = None) -> None:
        if op not in _COMPOUND_OPS:
            raise self._reject(node, "assignment operator", op)
        accesses: Accesses = []
        value = self._expr(rvalue, accesses)
        target_access: Accesses = []
        target = self._expr(lvalue, target_access)
        if not isinstance(target, ArrayRef | Var) or not target_access or target_access[-1].array != target.name:
            raise self._reject(lvalue, "assignment target", "only scalars and array elements can be assigned")
        *subscript_reads, own = target_access
        accesses += subscript_reads
        if op != "=":
            accesses.append(own)  # x op= v reads x first
        accesses.append(own.with_mode(write=True))
        for _, reads in self._guards:
            accesses += reads
        its = tuple(loop.name for loop in self._loops)
        row: list[int | str] = []
        for d, loop in enumerate(self._loops):
            row += [self._beta[d], f"-i{d}" if loop.negative else f"i{d}"]
        row.append(self._next_position())
        guard = conjunction([g for g, _ in self._guards]) if self._guards else None
        self._raw.append(RawStatement(its, list(self._conds), row, target, op, value, accesses, self._loc(node),
                                      declares, guard, len(self._conds) + len(self._guards)))

def inline_helpers(items: list[c_ast.Node], region: SourceRegion, symbols: dict[str, Symbol], typedefs: dict[str, str],
                   helpers: Mapping[str, c_ast.FuncDef]) -> list[c_ast.Node]:
    """The region's statements with the calls of the translation unit's small functions inlined
    (:mod:`loopnest.frontend.inline`); :class:`UnsupportedConstructError` for a call that cannot be."""
    return Inliner(helpers, typedefs, lambda n: location_of(getattr(n, "coord", None), region.file),
                   MATH_FUNCTIONS, symbols).expand(items)


def _conjuncts(node: c_ast.Node) -> list[c_ast.Node]:
    if isinstance(node, c_ast.BinaryOp) and node.op == "&&":
        return _conjuncts(node.left) + _conjuncts(node.right)
    return [node]
