"""The data-sharing and scheduling clauses of an OpenMP loop, printed from the schedule's marks.

Every name is checked against the nest's variables and every operator and schedule kind against a
fixed list, so the clauses hold only text derived from the validated IR.
"""

from __future__ import annotations

import re

import islpy as isl

from loopnest.ir import Scop
from loopnest.transform.reduction import CLAUSE_MARK, statement_reduction

_SCHEDULE_MARK = re.compile(r"schedule:(static|dynamic|guided)(?::([1-9][0-9]{0,4}))?")


def checked_name(scop: Scop, name: str) -> str:
    if name not in scop.arrays or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError(f"{name!r} is not a variable of this nest")
    return name


def statements_under(node: isl.AstNode) -> set[int]:
    """The statements an isl AST node executes."""
    t = node.get_type()
    if t == isl.ast_node_type.user:
        return {int(node.user_get_expr().get_op_arg(0).get_id().get_name()[1:].split("_")[0])}
    if t == isl.ast_node_type.block:
        children = node.block_get_children()
        return set().union(*(statements_under(children.get_at(i)) for i in range(children.n_ast_node())))
    if t == isl.ast_node_type.for_:
        return statements_under(node.for_get_body())
    if t == isl.ast_node_type.if_:
        out = statements_under(node.if_get_then_node())
        return out | statements_under(node.if_get_else_node()) if node.if_has_else_node() else out
    if t == isl.ast_node_type.mark:
        return statements_under(node.mark_get_node())
    return set()


def omp_clauses(scop: Scop, level: int, statements: set[int]) -> str:
    """`` private(...) reduction(op: ...)`` for a loop at ``level`` that runs ``statements`` (empty
    when it has none). A sibling loop at the same depth that does not reduce a variable gets no
    clause for it: a private copy would hide the reduced value from its reads."""
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
        if found.group(2) in reduced:
            by_op.setdefault(found.group(1), []).append(checked_name(scop, found.group(2)))
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


def reorders_reduction(scop: Scop) -> bool:
    """True when some loop of ``scop`` carries a reduction clause: floating-point sums are reordered."""
    return any(m.startswith("reduction:") for marks in scop.schedule.marks.values() for m in marks)
