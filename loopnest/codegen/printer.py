"""C code for a scheduled Scop: isl builds the loop AST, this module prints it.

Parameters stay symbolic, so the generated code is valid for every size. Loop iterators are
declared in each ``for``; helper macros are defined before the code and undefined after it, so
the text drops into the original function without touching the rest of the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import islpy as isl

from loopnest._isl_types import AST_FOR, AST_IF, OP_AND, OP_OR, expr_type, node_type, op_type
from loopnest.codegen.accumulate import Accumulators, accumulated_arrays
from loopnest.codegen.dynamic_bounds import DynamicLoops
from loopnest.codegen.isl_build import build_ast, build_options, jam_factors, separate_full_blocks
from loopnest.codegen.registers import Registers
from loopnest.codegen.simd_selects import SELECT_CALLS, SELECT_LOCAL_PREFIX, select_calls, select_helper
from loopnest.frontend.symbols import canonical_scalar
from loopnest.ir import Scop, Statement
from loopnest.ir_expr import print_expr
from loopnest.omp_clauses import checked_name, loop_clauses, omp_clauses, statement_names_under, statements_under
from loopnest.polyhedral import schedule_map
from loopnest.transform.pack import ALIGNMENT

_HELPERS = {
    "min": "#define perfembed_min(x, y) ((x) < (y) ? (x) : (y))",
    "max": "#define perfembed_max(x, y) ((x) > (y) ? (x) : (y))",
    "floord": "#define perfembed_floord(n, d) (((n) < 0) ? -((-(n) + (d) - 1) / (d)) : (n) / (d))",
    **{name: select_helper(name) for name in SELECT_CALLS},
}
_BINARY = {
    isl.ast_expr_op_type.add: "+", isl.ast_expr_op_type.sub: "-", isl.ast_expr_op_type.mul: "*",
    isl.ast_expr_op_type.div: "/", isl.ast_expr_op_type.pdiv_q: "/", isl.ast_expr_op_type.pdiv_r: "%",
    isl.ast_expr_op_type.zdiv_r: "%", isl.ast_expr_op_type.eq: "==", isl.ast_expr_op_type.le: "<=",
    isl.ast_expr_op_type.lt: "<", isl.ast_expr_op_type.ge: ">=", isl.ast_expr_op_type.gt: ">",
    OP_AND: "&&", isl.ast_expr_op_type.and_then: "&&",
    OP_OR: "||", isl.ast_expr_op_type.or_else: "||",
}


@dataclass
class CPrinter:
    scop: Scop
    prefix: str
    indent: str
    used_helpers: set[str] = field(default_factory=set)
    dynamic: DynamicLoops | None = None
    narrowed: list[int] = field(default_factory=list)  # levels of the enclosing loops with bounds on data
    jams: dict[int, int] = field(default_factory=dict)  # unroll-and-jam point level -> factor
    values: dict[str, str] = field(default_factory=dict)  # iterators of unrolled loops -> their value here
    simd_open: int = 0  # enclosing loops marked simd: their min/max calls print as selects (codegen.simd_selects)
    selects: bool = True  # False where a name of the nest would clash with the select helpers' locals
    # statement index -> its select form: a jammed or unrolled body prints one statement many times
    select_forms: dict[int, tuple[Statement, set[str]]] = field(default_factory=dict)
    accumulating: Accumulators | None = None  # the SIMD loop being printed keeps these elements in locals
    registers: bool = False  # keep innermost loops' elements in locals (codegen.registers): tuned code only
    promoting: Registers | None = None  # the innermost loop being printed, when it does

    def expr(self, e: isl.AstExpr) -> str:
        t = expr_type(e)
        if t == isl.ast_expr_type.id:
            name = e.get_id().get_name()
            return self.values.get(name, name)
        if t == isl.ast_expr_type.int:
            v = e.get_val().to_python()
            return str(v) if v >= 0 else f"({v})"
        op = op_type(e)
        args = [self.expr(e.get_op_arg(i)) for i in range(e.get_op_n_arg())]
        if op in _BINARY:
            return f"({args[0]} {_BINARY[op]} {args[1]})"
        if op == isl.ast_expr_op_type.minus:
            return f"(-{args[0]})"
        if op in (isl.ast_expr_op_type.min, isl.ast_expr_op_type.max):
            name = "min" if op == isl.ast_expr_op_type.min else "max"
            self.used_helpers.add(name)
            out = args[0]
            for a in args[1:]:
                out = f"perfembed_{name}({out}, {a})"
            return out
        if op == isl.ast_expr_op_type.fdiv_q:
            self.used_helpers.add("floord")
            return f"perfembed_floord({args[0]}, {args[1]})"
        if op in (isl.ast_expr_op_type.cond, isl.ast_expr_op_type.select):
            return f"({args[0]} ? {args[1]} : {args[2]})"
        raise NotImplementedError(f"isl AST operation {op} has no C form here")

    def _pragmas(self, level: int, n: isl.AstNode, locals_for: dict[str, list[str]] | None = None) -> list[str]:
        marks = self.scop.schedule.marks.get(level, ())
        omp = {"parallel", "simd"} & set(marks)
        clause = omp_clauses(self.scop, level, statements_under(n), self.expr, locals_for) if omp else ""
        out = []
        if "parallel" in marks and "simd" in marks:
            out.append(f"#pragma omp parallel for simd{clause}{loop_clauses(marks)}")
        elif "parallel" in marks:
            out.append(f"#pragma omp parallel for{clause}{loop_clauses(marks)}")
        elif "simd" in marks:
            out.append(f"#pragma omp simd{clause}{loop_clauses(marks)}")
        elif "ivdep" in marks:
            out.append("#pragma GCC ivdep")
        out += [f"#pragma GCC unroll {m.split(':')[1]}" for m in marks if m.startswith("unroll:")]
        return out

    def node(self, n: isl.AstNode, depth: int) -> list[str]:
        pad = self.indent * depth
        t = node_type(n)
        if t == isl.ast_node_type.block:
            children = n.block_get_children()
            return [line for i in range(children.n_ast_node()) for line in self.node(children.get_at(i), depth)]
        if t == AST_FOR:
            it = n.for_get_iterator().get_id().get_name()
            if self.accumulating is not None:  # a loop inside the one that keeps elements in locals
                self.accumulating.inner.add(it)
            init = self.expr(n.for_get_init())
            level = self._level(it)
            bounds = None if self.dynamic is None else self.dynamic.at(level, statements_under(n))
            if bounds is not None:
                return self._narrowed_for(n, it, init, level, bounds, depth)
            if n.for_is_degenerate():
                return [f"{pad}{{", f"{pad}{self.indent}const {self.scop.index_type} {it} = {init};",
                        *self.node(n.for_get_body(), depth + 1), f"{pad}}}"]
            if level in self.jams and (copies := self._jammed(n, it, init, self.jams[level], depth)) is not None:
                return copies
            # OpenMP wants a bare "var relop bound" as the loop test: no outer parentheses.
            cond, inc = _unparen(self.expr(n.for_get_cond())), self.expr(n.for_get_inc())
            return self._for(n, level, (it, init, cond, inc), depth)
        if t == AST_IF:
            out = [f"{pad}if ({self.expr(n.if_get_cond())}) {{", *self.node(n.if_get_then_node(), depth + 1)]
            if n.if_has_else_node():
                out += [f"{pad}}} else {{", *self.node(n.if_get_else_node(), depth + 1)]
            return [*out, f"{pad}}}"]
        if t == isl.ast_node_type.user:
            return [pad + self._statement(n)]
        if t == isl.ast_node_type.mark:
            return self.node(n.mark_get_node(), depth)
        raise NotImplementedError(f"isl AST node {t} has no C form here")

    def _statement(self, n: isl.AstNode) -> str:
        """The C text of the statement a user node runs (its data-dependent condition included)."""
        call = n.user_get_expr()
        name = call.get_op_arg(0).get_id().get_name()
        args = [self.expr(call.get_op_arg(i)) for i in range(1, call.get_op_n_arg())]
        stmt = original = self.scop.statements[int(name[1:].split("_")[0])]
        if self.simd_open and self.selects:
            if stmt.index not in self.select_forms:
                self.select_forms[stmt.index] = select_calls(stmt)
            stmt, used = self.select_forms[stmt.index]
            self.used_helpers |= used
        # Past the iterators come the statement's quasi-affine subscripts (codegen.isl_build._Subscripts).
        values = dict(zip(stmt.quasi_affine_texts(), args[stmt.depth:], strict=True))
        if self.accumulating is not None:
            stmt = self.accumulating.rewrite(original, stmt, lambda d: args[d], values.__getitem__)
        inside = None if self.dynamic is None else self.dynamic.condition(stmt.index, self.narrowed,
                                                                          lambda d: args[d])
        if self.promoting is not None:
            self.promoting.straight &= inside is None
            stmt = self.promoting.visit(stmt, lambda e: print_expr(e, lambda d: args[d], values.__getitem__))
        text = stmt.to_c(lambda d: args[d], values.__getitem__)
        return text if inside is None else f"if ({inside}) {{ {text} }}"

    def _for(self, n: isl.AstNode, level: int, loop: tuple[str, str, str, str], depth: int) -> list[str]:
        """The ``for`` node ``n`` at ``level`` (``loop``: iterator, start, test, step) under its pragmas;
        a SIMD loop's reductions into elements it does not index accumulated in locals (codegen.accumulate)."""
        it, init, cond, inc = loop
        pad = self.indent * depth
        arrays = {} if self.accumulating is not None else accumulated_arrays(self.scop, level, statements_under(n))
        if arrays:
            self.accumulating = locals_ = Accumulators(arrays, unused_prefix(self.scop, "perfembed_acc"), {it})
            try:
                body = self._loop_body(n, level, depth + 3)
            finally:
                self.accumulating = None
            if locals_.names and not locals_.failed:
                return locals_.wrap(self.scop, pad, self.indent, it, init, cond, inc,
                                    self._pragmas(level, n, locals_.clause_names()), body)
            # Not one local per element: the loop as written, without its SIMD pragma.
            return [f"{pad}for ({self.scop.index_type} {it} = {init}; {cond}; {it} += {inc}) {{",
                    *self._loop_body(n, level, depth + 1), f"{pad}}}"]
        if self.promoting is not None:  # a loop inside the body surveyed: not straight-line code
            self.promoting.straight = False
        elif self.registers and self.accumulating is None and self._straight(n.for_get_body()):
            return self._registers_for(n, level, loop, depth)
        return self._plain_for(n, level, loop, depth, self._loop_body(n, level, depth + 1))

    def _plain_for(self, n: isl.AstNode, level: int, loop: tuple[str, str, str, str], depth: int,
                   body: list[str]) -> list[str]:
        """The ``for`` node ``n`` under its pragmas, around the printed ``body``."""
        it, init, cond, inc = loop
        pad = self.indent * depth
        head = f"{pad}for ({self.scop.index_type} {it} = {init}; {cond}; {it} += {inc}) {{"
        return [*self._pragmas(level, n), head, *body, f"{pad}}}"]

    def _level(self, iterator: str) -> int:
        """The schedule level of the loop isl names ``iterator`` (``c1`` level 0, ``c3`` level 1, ...)."""
        return (int(iterator[len(self.prefix):]) - 1) // 2

    def _registers_for(self, n: isl.AstNode, level: int, loop: tuple[str, str, str, str], depth: int) -> list[str]:
        """An innermost loop with its elements in locals (codegen.registers): the body printed once to
        survey its elements, then again with the chosen ones replaced."""
        it, init, cond, inc = loop
        pad, inner = self.indent * depth, self.indent * (depth + 2)
        self.promoting = regs = Registers(self.scop, it, unused_prefix(self.scop, "perfembed_reg"))
        try:
            body = self._loop_body(n, level, depth + 1)
            if not regs.choose():
                return self._plain_for(n, level, loop, depth, body)
            shift = 2 if regs.hoisted else 0
            body = regs.body(self._loop_body(n, level, depth + 1 + shift), self.indent * (depth + 1 + shift))
        finally:
            self.promoting = None
        if not regs.hoisted:
            return self._plain_for(n, level, loop, depth, body)
        # Loaded only when the loop runs at least once: an empty loop's element may lie outside the array.
        return [f"{pad}{{", f"{pad}{self.indent}{self.scop.index_type} {it} = {init};",
                f"{pad}{self.indent}if ({cond}) {{",
                *regs.hoisted_loads(inner), *self._pragmas(level, n),
                f"{inner}for ({it} = {init}; {cond}; {it} += {inc}) {{", *body, f"{inner}}}",
                f"{pad}{self.indent}}}", f"{pad}}}"]

    def _straight(self, n: isl.AstNode) -> bool:
        """Whether ``n`` prints as straight-line statements (jammed loops unrolled), so its loop is innermost."""
        t = node_type(n)
        if t == isl.ast_node_type.user:
            return True
        if t == isl.ast_node_type.block:
            children = n.block_get_children()
            return all(self._straight(children.get_at(i)) for i in range(children.n_ast_node()))
        if t == isl.ast_node_type.mark:
            return self._straight(n.mark_get_node())
        if t == AST_FOR and not n.for_is_degenerate():
            level = self._level(n.for_get_iterator().get_id().get_name())
            return level in self.jams and self._straight(n.for_get_body())
        return False

    def _loop_body(self, n: isl.AstNode, level: int, depth: int) -> list[str]:
        """The body of the ``for`` node ``n`` at ``level``, with ``simd_open`` counting it if it is a SIMD loop."""
        simd = "simd" in self.scop.schedule.marks.get(level, ())
        self.simd_open += simd
        try:
            return self.node(n.for_get_body(), depth)
        finally:
            self.simd_open -= simd

    def _jammed(self, n: isl.AstNode, it: str, init: str, factor: int, depth: int) -> list[str] | None:
        """A full block of an unroll-and-jam point loop, unrolled: its body once per value of the
        iterator (``init``, ``init + 1``, ...), so the copies are jammed into the innermost body. None
        (the loop is printed as a loop, under its ``GCC unroll``) unless isl's loop is exactly
        ``for (it = init; it <= init + factor - 1; it += 1)`` over full-block statements. isl's own
        ``unroll`` option gave the same code but cost up to 44 s of AST generation per variant."""
        if not all(name.endswith("_full") for name in statement_names_under(n)):
            return None
        cond = n.for_get_cond()
        if (self.expr(n.for_get_inc()) != "1" or expr_type(cond) != isl.ast_expr_type.op
                or op_type(cond) != isl.ast_expr_op_type.le
                or self.expr(cond.get_op_arg(0)) != it
                or self.expr(cond.get_op_arg(1)) != _plus(init, factor - 1)):
            return None
        out = []
        for u in range(factor):
            self.values[it] = _plus(init, u)
            out += self.node(n.for_get_body(), depth)
        del self.values[it]
        return out

    def _narrowed_for(self, n: isl.AstNode, it: str, init: str, level: int, bounds: tuple[str | None, str | None],
                      depth: int) -> list[str]:
        """A loop with bounds on data: isl's range narrowed to ``lower <= it < upper``, the test kept in
        OpenMP's canonical form ``it < bound`` where isl's is ``it <= e`` or ``it < e``."""
        lower, upper = bounds
        if lower is not None:
            self.used_helpers.add("max")
            init = f"perfembed_max({init}, {lower})"
        if n.for_is_degenerate():
            limit: str | None = f"{self.expr(n.for_get_init())} + 1"
        else:
            limit = self._exclusive_limit(n.for_get_cond(), it)
        if limit is None:  # not "it <= e" nor "it < e": keep isl's test and add the bound
            cond = _unparen(self.expr(n.for_get_cond())) + (f" && {it} < {upper}" if upper else "")
        elif upper is None:
            cond = f"{it} < {limit}"
        else:
            self.used_helpers.add("min")
            cond = f"{it} < perfembed_min({limit}, {upper})"
        inc = "1" if n.for_is_degenerate() else self.expr(n.for_get_inc())
        self.narrowed.append(level)
        try:
            return self._for(n, level, (it, init, cond, inc), depth)
        finally:
            self.narrowed.pop()

    def _exclusive_limit(self, cond: isl.AstExpr, it: str) -> str | None:
        """``e + 1`` for an isl loop test ``it <= e``, ``e`` for ``it < e``, else None."""
        if expr_type(cond) != isl.ast_expr_type.op or cond.get_op_n_arg() != 2:
            return None
        op, first = op_type(cond), cond.get_op_arg(0)
        if op not in (isl.ast_expr_op_type.le, isl.ast_expr_op_type.lt) or self.expr(first) != it:
            return None
        limit = self.expr(cond.get_op_arg(1))
        return f"{limit} + 1" if op == isl.ast_expr_op_type.le else limit


def _plus(text: str, offset: int) -> str:
    """The C text of ``text + offset``, folded when ``text`` is an integer literal."""
    if re.fullmatch(r"\(?-?\d+\)?", text):
        value = int(text.strip("()")) + offset
        return str(value) if value >= 0 else f"({value})"
    return text if offset == 0 else f"({text} + {offset})"


def _unparen(text: str) -> str:
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for i, c in enumerate(text):
        depth += (c == "(") - (c == ")")
        if depth == 0 and i < len(text) - 1:
            return text
    return text[1:-1]


def _declared_names(scop: Scop) -> set[str]:
    """The nest's arrays, parameters and loop iterators (statement iterators included)."""
    names = set(scop.arrays) | set(scop.params) | set(scop.iterators)
    for stmt in scop.statements:
        names |= set(stmt.iterators)
    return names


def unused_prefix(scop: Scop, base: str) -> str:
    """``base``, lengthened with underscores until no name of the nest starts with it: local names of
    generated code that begin with it cannot shadow a variable the nest uses."""
    names = _declared_names(scop)
    while any(n.startswith(base) for n in names):
        base += "_"
    return base


def _fresh_prefix(scop: Scop) -> str:
    names = _declared_names(scop)
    prefix = "c"
    while any(re.fullmatch(rf"{prefix}\d+", n) for n in names):
        prefix += "_"
    return prefix


def _clashes_with_selects(scop: Scop) -> bool:
    """Whether a name of the nest is one of the select helpers' locals (then min/max calls stay calls)."""
    names = _declared_names(scop)
    for stmt in scop.statements:
        roots = (stmt.target, stmt.value) if stmt.guard is None else (stmt.guard, stmt.target, stmt.value)
        names |= {n for root in roots for n in root.names()}
    return any(n.startswith(SELECT_LOCAL_PREFIX) for n in names)


def _declarations(scop: Scop, indent: str) -> list[str]:
    """The variables declared inside the nest: scalar temporaries, and packed buffers (aligned to a
    cache line). Names, types and extents are checked, so only validated IR reaches the text."""
    out = []
    for a in scop.local_scalars:
        name, ctype = checked_name(scop, a.name), canonical_scalar(a.element_type)
        if ctype is None or not all(d is not None and d.isdigit() and int(d) > 0 for d in a.dims):
            raise ValueError(f"{a.name}: not a declarable local variable ({a.element_type}, {a.dims})")
        dims = "".join(f"[{int(d)}]" for d in a.dims if d is not None)
        align = f" __attribute__((aligned({ALIGNMENT})))" if dims else ""
        out.append(f"{indent}{ctype} {name}{dims}{align};")
    return out


def generate_c(scop: Scop, *, indent: str = "  ", registers: bool = False) -> str:
    """The C text of ``scop`` under its schedule: a braced block, ready to replace the region. With
    ``registers``, innermost loops keep array elements in locals (:mod:`loopnest.codegen.registers`): only
    for code that runs where no two arrays overlap."""
    prefix = _fresh_prefix(scop)
    jams = jam_factors(scop)
    sched = separate_full_blocks(scop, schedule_map(scop), jams)
    tree = build_ast(scop, sched, build_options(scop, jams), prefix)
    values = signed_parameters(scop)
    dynamic = DynamicLoops(scop, prefix, values) if any(s.dynamic_bounds for s in scop.statements) else None
    printer = CPrinter(scop, prefix, indent, dynamic=dynamic, jams=jams, values=values,
                       selects=not _clashes_with_selects(scop), registers=registers)
    body = printer.node(tree, 1)
    decls = _declarations(scop, indent)
    defines, undefs = helper_macros(printer.used_helpers)
    return "\n".join(["{", *defines, *decls, *body, *undefs, "}"])


def expression_printer(scop: Scop) -> CPrinter:
    """A printer of isl expressions over ``scop``'s names as the generated code prints them; the helper
    macros its output uses collect in ``used_helpers`` (:func:`helper_macros`)."""
    return CPrinter(scop, _fresh_prefix(scop), "  ", values=signed_parameters(scop))


def signed_parameters(scop: Scop) -> dict[str, str]:
    """How isl's expressions (bounds, conditions) read an unsigned size: as a ``long``, as isl computes (in C,
    ``n - 1`` of a ``size_t`` n = 0 is 2^64 - 1); the generated iterators are signed (``Scop.index_type``)."""
    return {p: f"((long){p})" for p in scop.params if scop.param_types.get(p, "int").startswith("unsigned")}


def helper_macros(names: set[str]) -> tuple[list[str], list[str]]:
    """The ``#define`` lines of the helper macros ``names``, and the ``#undef`` lines that close them."""
    return [_HELPERS[h] for h in sorted(names)], [f"#undef perfembed_{h}" for h in sorted(names)]
