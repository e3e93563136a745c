"""Size limits checked on the syntax tree before anything walks it recursively.

pycparser's generator and visitors, the :class:`~loopnest.frontend.build.ScopBuilder`, the IR's
``Expr.walk``/``print_expr`` and the feature extractors all recurse over expressions, and the
dependence analysis costs grow with the statements of a nest and the depth of its loops. So the
tree is measured here, iteratively, right after parsing: the nesting depth and the node count of
every statement, then per region the statements and the loop depth. Each limit is a setting
(``PERFEMBED_MAX_*``); going over one raises :class:`LimitExceededError` naming the limit, the
setting and the line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pycparser import c_ast

from loopnest.errors import LimitExceededError, SourceLocation
from loopnest.frontend.preprocess import location_of

# Nodes that hold statements rather than compute values: node counts restart below them.
_STATEMENT_NODES = (c_ast.FileAST, c_ast.FuncDef, c_ast.Compound, c_ast.For, c_ast.While, c_ast.DoWhile,
                    c_ast.If, c_ast.Switch, c_ast.Case, c_ast.Default, c_ast.Label, c_ast.DeclList)
_INC_DEC = ("p++", "++", "p--", "--")


@dataclass(frozen=True)
class AnalysisLimits:
    """The limits of one analysis; defaults equal :class:`loopnest.config.Settings`'s."""

    max_statements: int = 128
    max_loop_depth: int = 16
    max_expression_nodes: int = 10_000
    max_nesting_depth: int = 128
    max_nests: int = 256

    @classmethod
    def from_settings(cls, settings: object) -> AnalysisLimits:
        return cls(**{name: int(getattr(settings, name)) for name in cls.__dataclass_fields__})


def _error(construct: str, found: str, setting: str, limit: int, location: SourceLocation) -> LimitExceededError:
    message = (f"{construct}: {found}; the limit is {limit} (setting PERFEMBED_{setting.upper()})")
    return LimitExceededError(construct, message, location, setting=setting, limit=limit)


def check_tree(ast: c_ast.Node, path: str, limits: AnalysisLimits) -> None:
    """Nesting depth of the whole tree and node count of every statement, without recursion."""
    stack: list[tuple[c_ast.Node, int, c_ast.Node]] = [(ast, 1, ast)]
    while stack:
        node, depth, near = stack.pop()
        near = node if getattr(node, "coord", None) is not None else near
        if depth > limits.max_nesting_depth:
            raise _error("nesting too deep", f"the syntax tree is nested more than {limits.max_nesting_depth} "
                         "levels deep", "max_nesting_depth", limits.max_nesting_depth,
                         location_of(near.coord, path))
        for _, child in node.children():
            if isinstance(node, _STATEMENT_NODES) and not isinstance(child, _STATEMENT_NODES):
                _check_statement_size(child, path, limits)
            stack.append((child, depth + 1, near))


def _check_statement_size(root: c_ast.Node, path: str, limits: AnalysisLimits) -> None:
    count = 0
    stack = [root]
    while stack:
        node = stack.pop()
        count += 1
        if count > limits.max_expression_nodes:
            raise _error("expression too large", f"one statement has more than {limits.max_expression_nodes} "
                         "syntax-tree nodes", "max_expression_nodes", limits.max_expression_nodes,
                         location_of(getattr(root, "coord", None), path))
        stack.extend(child for _, child in node.children() if not isinstance(child, _STATEMENT_NODES))


def check_nest_count(count: int, path: str, limits: AnalysisLimits) -> None:
    """A file with more loop nests than ``max_nests`` (10,000 small nests kept ``suggest`` busy for minutes,
    silently) is refused in one line that says how to choose some (``--function``) or raise the limit."""
    if count > limits.max_nests:
        raise _error("too many loop nests", f"{count} loop nests in one file (choose a function with --function)",
                     "max_nests", limits.max_nests, SourceLocation(path, 1))


def check_region(items: Sequence[c_ast.Node], path: str, limits: AnalysisLimits) -> None:
    """Statements (assignments, declarations, ``x++``; loop headers aside) and loop depth of one region."""
    statements = 0
    stack: list[tuple[c_ast.Node, int]] = [(item, 0) for item in items]
    while stack:
        node, loops = stack.pop()
        if isinstance(node, c_ast.For):
            if loops + 1 > limits.max_loop_depth:
                raise _error("loops nested too deep", f"more than {limits.max_loop_depth} nested loops",
                             "max_loop_depth", limits.max_loop_depth, location_of(node.coord, path))
            if node.stmt is not None:
                stack.append((node.stmt, loops + 1))
            continue
        if isinstance(node, c_ast.Assignment | c_ast.Decl) or (
                isinstance(node, c_ast.UnaryOp) and node.op in _INC_DEC):
            statements += 1
        stack.extend((child, loops) for _, child in node.children())
    if statements > limits.max_statements:
        first = getattr(items[0], "coord", None) if items else None
        raise _error("too many statements", f"{statements} statements in one nest",
                     "max_statements", limits.max_statements, location_of(first, path))
