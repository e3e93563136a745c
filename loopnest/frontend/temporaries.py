"""Scalars declared at the top of a function (C89 style) that are a nest's own temporaries.

``double s;`` declared with the function's other variables and used in a nest as ``s = 0.0; for (k ...)
s += ...; c[i][j] = s;`` is, to the compiler, a temporary of each iteration of the loop whose body sets
it first. Read as a variable of the function, it would outlive the nest: every loop around it would carry
a dependence on it, and none could run in parallel. Where the function proves that nothing reads it
after the nest, the nest is read as if the first assignment declared it (``double s = 0.0;``), and it
becomes the nest's private temporary, as the same code written with a block-scope declaration is.

A function-scope scalar is a nest's temporary when:

- it is a plain automatic scalar (not static, not volatile, its address never taken, declared once);
- in the nest, all its uses sit in one block, and the first of them is an unconditional assignment
  ``s = e;`` of that block (``e`` not reading ``s``): each run of the block sets it before reading it;
- outside the nest, the function only sets it the same way: in its declaration, in assignments
  ``s = e;``, or in other loops whose bodies set it first. Nothing else reads it, so its value after
  the nest is never used.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping

from pycparser import c_ast

from loopnest.frontend.symbols import Symbol


def declare_temporaries(items: list[c_ast.Node], function: c_ast.FuncDef,
                        symbols: Mapping[str, Symbol]) -> list[c_ast.Node]:
    """``items`` (a region of ``function``) with each function-scope temporary declared at its first
    assignment in the region; ``items`` itself when there is none."""
    region_ids = {id(node) for item in items for node in _walk(item)}
    out = copy.deepcopy(items)  # the search gives one-statement loop bodies a block: on the copy only
    kills = {name: spot for name in sorted(_mentioned(items))
             if _plain_scalar(name, function, symbols) and (spot := _killed_first(out, name)) is not None
             and _sets_only(function.body, region_ids, name)}
    if not kills:
        return items
    for name, (block, index) in kills.items():  # each a different assignment: no spot moves another
        kill = block[index]
        ctype = symbols[name].scalar_type or symbols[name].base_type
        block[index] = c_ast.Decl(name, [], [], [], [], c_ast.TypeDecl(name, [], None, c_ast.IdentifierType(
            ctype.split()), coord=kill.coord), kill.rvalue, None, coord=kill.coord)
    return out


def _walk(node: c_ast.Node) -> Iterator[c_ast.Node]:
    yield node
    for _, child in node.children():
        yield from _walk(child)


def _ids(node: c_ast.Node) -> Iterator[str]:
    """Names of the variables ``node`` mentions (a struct's field names are not variables)."""
    if isinstance(node, c_ast.ID):
        yield node.name
    for name, child in node.children():
        if not (isinstance(node, c_ast.StructRef) and name == "field"):
            yield from _ids(child)


def _mentioned(items: list[c_ast.Node]) -> set[str]:
    return {name for item in items for name in _ids(item)}


def _plain_scalar(name: str, function: c_ast.FuncDef, symbols: Mapping[str, Symbol]) -> bool:
    sym = symbols.get(name)
    if sym is None or sym.storage != "local" or sym.dims or sym.addressed or sym.volatile or sym.scalar_type is None:
        return False
    decls = [n for n in _walk(function.body) if isinstance(n, c_ast.Decl) and n.name == name]
    return len(decls) == 1 and not set(decls[0].storage) & {"static", "extern"}


def _is_kill(node: c_ast.Node, name: str) -> bool:
    """``name = e;`` with ``e`` not reading ``name``."""
    return (isinstance(node, c_ast.Assignment) and node.op == "=" and isinstance(node.lvalue, c_ast.ID)
            and node.lvalue.name == name and name not in set(_ids(node.rvalue)))


def _killed_first(items: list[c_ast.Node], name: str) -> tuple[list[c_ast.Node], int] | None:
    """The block holding every mention of ``name`` in ``items`` and the index of its first statement
    mentioning it, when that statement is an unconditional ``name = e;``; else None."""
    block = items
    while True:
        holders = [i for i, item in enumerate(block) if name in set(_ids(item))]
        if not holders:
            return None
        first = holders[0]
        if _is_kill(block[first], name):
            return block, first
        inner = _only_body(block[first], name) if len(holders) == 1 else None
        if inner is None:
            return None
        block = inner


def _only_body(node: c_ast.Node, name: str) -> list[c_ast.Node] | None:
    """The statements of ``node``'s body when ``node`` is a loop or block that mentions ``name`` only there."""
    if isinstance(node, c_ast.Compound):
        return list(node.block_items or [])
    if isinstance(node, c_ast.For | c_ast.While | c_ast.DoWhile):
        heads = [n for n in (getattr(node, "init", None), node.cond, getattr(node, "next", None)) if n is not None]
        if any(name in set(_ids(h)) for h in heads):
            return None
        body = node.stmt
        if not isinstance(body, c_ast.Compound):  # a one-statement body as a block of its own
            body = node.stmt = c_ast.Compound([body], coord=body.coord)
        statements: list[c_ast.Node] = body.block_items  # the list itself: a rewrite of the copy lands in the tree
        return statements
    return None


def _sets_only(node: c_ast.Node, region_ids: set[int], name: str) -> bool:
    """Whether, outside the region, ``node`` only sets ``name`` (see the module's docstring)."""
    if id(node) in region_ids or name not in set(_ids(node)) and not isinstance(node, c_ast.Decl):
        return True
    if isinstance(node, c_ast.Decl):
        return node.init is None or name not in set(_ids(node.init))
    if _is_kill(node, name):
        return True
    if isinstance(node, c_ast.For | c_ast.While | c_ast.DoWhile):
        return _killed_first([copy.deepcopy(node)], name) is not None
    if isinstance(node, c_ast.Compound | c_ast.If):  # an if's condition reads it unless it does not mention it
        return all(_sets_only(child, region_ids, name) for _, child in node.children())
    return False
