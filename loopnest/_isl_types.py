"""Typed access to islpy's enumerations, for code that walks isl's schedule trees and ASTs.

islpy (2026.2) ships stubs that declare ``get_type()`` and ``get_op_type()`` as ``int`` and leave
out some members that exist at run time (``ast_node_type.for_`` and ``if_``, ``ast_expr_op_type.and_``
and ``or_``). The functions here return the enumeration members the calls really return, and the
missing members are looked up by name, so callers type-check without ``# type: ignore``.
"""

from __future__ import annotations

import islpy as isl

AST_FOR = isl.ast_node_type["for_"]
AST_IF = isl.ast_node_type["if_"]
OP_AND = isl.ast_expr_op_type["and_"]
OP_OR = isl.ast_expr_op_type["or_"]


def node_type(node: isl.AstNode) -> isl.ast_node_type:
    """The kind of an AST node (block, for, if, user, mark)."""
    return isl.ast_node_type(node.get_type())


def expr_type(expr: isl.AstExpr) -> isl.ast_expr_type:
    """The kind of an AST expression (op, id, int)."""
    return isl.ast_expr_type(expr.get_type())


def op_type(expr: isl.AstExpr) -> isl.ast_expr_op_type:
    """The operation of an operation expression (add, min, fdiv_q, ...)."""
    return isl.ast_expr_op_type(expr.get_op_type())


def schedule_node_type(node: isl.ScheduleNode) -> isl.schedule_node_type:
    """The kind of a schedule tree node (band, filter, sequence, ...)."""
    return isl.schedule_node_type(node.get_type())
