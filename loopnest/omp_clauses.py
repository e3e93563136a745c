"""The data-sharing and scheduling clauses of an OpenMP loop, printed from the schedule's marks.

Every name is checked against the nest's variables and every operator and schedule kind against a
fixed list, so the clauses hold only text derived from the validated IR.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import islpy as isl

from loopnest._isl_types import AST_FOR, AST_IF, node_type
from loopnest.ir import Scop
from loopnest.transform.reduction import CLAUSE_MARK, statement_reduction

_SCHEDULE_MARK = re.compile(r"schedule:(static|dynamic|guided)(?::([1-9][0-9]{0,4}))?")
_SIMDLEN_MARK = re.compile(r"simdlen:(2|4|8|16)")


def checked_name(scop: Scop, name: str) -> str:
    if name not in scop.arrays or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f"{name!r} is not a variable of this nest")
    return name


def statement_names_under(node: isl.AstNode) -> set[str]:
    """The names (``S<i>``, ``S<i>_full``) of the statements an isl AST node executes."""
    t = node_type(node)
    if t == isl.ast_node_type.user:
        return {node.user_get_expr().get_op_arg(0).get_id().get_name()}
    if t == isl.ast_node_type.block:
        children = node.block_get_children()
        return set().union(*(statement_names_under(children.get_at(i)) for i in range(children.n_ast_node())))
    if t == AST_FOR:
        return statement_names_under(node.for_get_body())
    if t == AST_IF:
        out = statement_names_under(node.if_get_then_node())
        return out | statement_names_under(node.if_get_else_node()) if node.if_has_else_node() else out
    if t == isl.ast_node_type.mark:
        return statement_names_under(node.mark_get_node())
    return set()


def statements_under(node: isl.AstNode) -> set[int]:
    """The statements an isl AST node executes."""
    return {int(name[1:].split("_")[0]) for name in statement_names_under(node)}


def array_section(scop: Scop, name: str, statements: set[int], print_expr: Callable[[isl.AstExpr], str]) -> str:
    """``name[lo:len]...``: the bounding box of the elements ``statements`` write in ``name``, in the
    parameters only (array reductions are clauses of outermost loops), printed from isl's AST."""
    context = isl.Set(scop.context)
    written: isl.Set | None = None
    for s in statements:
        stmt = scop.statements[s]
        for access in stmt.writes:
            if access.array == name:
                part = isl.Map(access.relation).intersect_domain(isl.Set(stmt.domain)).range()
                written = part if written is None else written.union(part)
    if written is None:
        raise ValueError(f"no statement under this loop writes {name}")
    written = written.intersect_params(context).coalesce()
    build = isl.AstBuild.from_context(context)
    out = checked_name(scop, name)
    for d in range(written.dim(isl.dim_type.set)):
        low, high = written.dim_min(d).coalesce(), written.dim_max(d).coalesce()
        length = high.sub(low).add_constant_val(isl.Val.one(context.get_ctx()))
        out += f"[{print_expr(build.expr_from_pw_aff(low))}:{print_expr(build.expr_from_pw_aff(length))}]"
    return out


def omp_clauses(scop: Scop, level: int, statements: set[int],
                print_expr: Callable[[isl.AstExpr], str] | None = None,
                locals_for: Mapping[str, list[str]] | None = None) -> str:
    """`` private(...) reduction(op: ...)`` for a loop at ``level`` that runs ``statements`` (empty
    when it has none). A sibling loop at the same depth that does not reduce a variable gets no
    clause for it: a private copy would hide the reduced value from its reads. ``locals_for``: arrays
    whose elements the loop reduces in locals (:mod:`loopnest.codegen.accumulate`), named in its place."""
    reduced = {r.variable for s in statements if (r := statement_reduction(scop.statements[s])) is not None}
    private = [checked_name(scop, n) for n in scop.schedule.private.get(level, ())]
    out = f" private({', '.join(private)})" if private else ""
    by_op: dict[str, list[str]] = {}
    for mark in scop.schedule.marks.get(level, ()):
        if not mark.startswith("reduction:"):
            continue
        found = CLAUSE_MARK.fullmatch(mark)
        if found is None:
            raise ValueError(f"malformed reduction mark {mark!r}")
        name = found.group(2)
        if name not in reduced:
            continue
        if scop.arrays[name].is_scalar:
            by_op.setdefault(found.group(1), []).append(checked_name(scop, name))
        elif locals_for is not None and name in locals_for:
            by_op.setdefault(found.group(1), []).extend(locals_for[name])
        elif print_expr is not None:
            by_op.setdefault(found.group(1), []).append(array_section(scop, name, statements, print_expr))
        else:
            raise ValueError(f"an array reduction on {name} needs the AST printer")
    for op in sorted(by_op):
        out += f" reduction({op}: {', '.join(sorted(by_op[op]))})"
    return out


def schedule_clause(marks: tuple[str, ...]) -> str:
    """`` schedule(kind[, chunk])`` from a ``schedule:kind[:chunk]`` mark, or an empty string."""
    for mark in marks:
        found = _SCHEDULE_MARK.fullmatch(mark)
        if found is not None:
            kind, chunk = found.groups()
            return f" schedule({kind}, {int(chunk)})" if chunk else f" schedule({kind})"
    return ""


def simdlen_clause(marks: tuple[str, ...]) -> str:
    """`` simdlen(N)`` from a ``simdlen:N`` mark, or an empty string (why a loop asks for a length:
    :data:`loopnest.transform.parallel.SIMD_LENGTHS`)."""
    for mark in marks:
        found = _SIMDLEN_MARK.fullmatch(mark)
        if found is not None:
            return f" simdlen({int(found.group(1))})"
    return ""


def loop_clauses(marks: tuple[str, ...]) -> str:
    """The clauses of an OpenMP loop after its data-sharing ones: ``schedule`` (a parallel loop) and
    ``simdlen`` (a SIMD loop), each from its mark when there is one."""
    return schedule_clause(marks) + simdlen_clause(marks)


def reorders_reduction(scop: Scop) -> bool:
    """True when some loop of ``scop`` carries a reduction clause: floating-point sums are reordered."""
    return any(m.startswith("reduction:") for marks in scop.schedule.marks.values() for m in marks)
