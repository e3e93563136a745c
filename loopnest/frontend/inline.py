"""Calls of the file's own small functions, inlined into the region before it is analysed.

A helper is a function defined in the translation unit whose body is local declarations and
assignments, then one ``return EXPR;`` (``static inline double sq(double x) { return x * x; }``). Its
call becomes the returned expression, with each parameter replaced by its argument converted to the
parameter's type and each local by its value, and the result converted to the return type: what C
computes, and what the user's compiler inlines. A helper reads nothing but its parameters and locals,
and arrays only through a parameter the call passes an array's name to, so the call has no effect on
memory and reads what the nest's analysis sees. Anything else is refused with the reason and the
helper's ``file:line``.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from pycparser import c_ast

from loopnest.errors import SourceLocation, UnsupportedConstructError
from loopnest.frontend.literals import shorten
from loopnest.frontend.symbols import Symbol, c_text, canonical_scalar, resolve_type

CONSTRUCT = "unknown function call"
_SHAPE = "only a function whose body is local declarations and assignments, then one return, is inlined"
_CHILD = re.compile(r"^(\w+)\[(\d+)\]$")
MAX_DEPTH = 16  # helpers calling helpers: deeper chains are refused (each level is a few Python frames)


class _Refused(Exception):
    """Why a helper is not inlined, and the node of the helper it is about."""

    def __init__(self, node: c_ast.Node, why: str) -> None:
        super().__init__(why)
        self.node = node
        self.why = why


@dataclass
class Inliner:
    """Expands the calls of ``helpers`` (functions of the translation unit, by name) in a region."""

    helpers: Mapping[str, c_ast.FuncDef]
    typedefs: dict[str, str]
    locate: Callable[[c_ast.Node], SourceLocation]
    keep: frozenset[str] = field(default_factory=frozenset)  # functions the analysis knows (math)
    symbols: Mapping[str, Symbol] = field(default_factory=dict)  # the caller's variables, for their types

    def expand(self, items: list[c_ast.Node]) -> list[c_ast.Node]:
        """Copies of ``items`` with every helper call inlined (the parsed tree itself is left as it is)."""
        if not any(self._calls_helper(item) for item in items):
            return items
        out = copy.deepcopy(items)
        return [self._visit(item) for item in out]

    def _calls_helper(self, node: c_ast.Node) -> bool:
        if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and self._is_helper(node.name.name):
            return True
        return any(self._calls_helper(child) for _, child in node.children())

    def _is_helper(self, name: str) -> bool:
        return name in self.helpers and name not in self.keep

    def _visit(self, node: c_ast.Node) -> c_ast.Node:
        _replace_children(node, self._visit)
        if isinstance(node, c_ast.FuncCall) and isinstance(node.name, c_ast.ID) and self._is_helper(node.name.name):
            try:
                return self._inline(node, ())
            except _Refused as refused:
                where = self.locate(refused.node)
                raise UnsupportedConstructError(
                    CONSTRUCT, f"unsupported construct: {CONSTRUCT} ({node.name.name}() at {where}: {refused.why})",
                    self.locate(node)) from None
        return node

    def _inline(self, call: c_ast.FuncCall, stack: tuple[str, ...]) -> c_ast.Node:
        """The expression ``call`` computes; ``stack``: the helpers being inlined around it."""
        name = call.name.name
        fdef = self.helpers[name]
        if name in stack:
            raise _Refused(fdef, f"{name}() calls itself ({' -> '.join([*stack, name])}); a recursive function is "
                                 "not inlined")
        if len(stack) >= MAX_DEPTH:
            raise _Refused(fdef, f"helpers call each other more than {MAX_DEPTH} deep ({stack[0]} -> ... -> {name})")
        params = self._parameters(fdef)
        args = call.args.exprs if call.args is not None else []
        if len(args) != len(params):
            raise _Refused(fdef, f"called with {len(args)} arguments for {len(params)} parameters")
        env: dict[str, tuple[c_ast.Node, str | None]] = {}
        for (pname, ctype), arg in zip(params, args, strict=True):
            if ctype is None and not isinstance(arg, c_ast.ID):
                raise _Refused(fdef, f"its pointer parameter {pname!r} is passed {shorten(c_text(arg))}; only an "
                                     "array's name is inlined")
            env[pname] = (arg if ctype is None or self._type_of(arg) == ctype else _converted(arg, ctype), ctype)
        body = fdef.body.block_items or []
        if not body or not isinstance(body[-1], c_ast.Return) or body[-1].expr is None:
            raise _Refused(fdef.body, f"it does not end in 'return EXPR;'; {_SHAPE}")
        for item in body[:-1]:
            self._local(item, env, (*stack, name))
        return _converted(self._value(body[-1].expr, env, (*stack, name)), self._return_type(fdef))

    def _type_of(self, node: c_ast.Node) -> str | None:
        """The type of a variable or array element of the caller, where it needs no conversion to say."""
        base = node
        while isinstance(base, c_ast.ArrayRef):
            base = base.name
        sym = self.symbols.get(base.name) if isinstance(base, c_ast.ID) else None
        if sym is None or (base is node) != (not sym.dims):
            return None
        return sym.scalar_type

    def _parameters(self, fdef: c_ast.FuncDef) -> list[tuple[str, str | None]]:
        """Each parameter's name and scalar type (None for a pointer or array parameter)."""
        ftype = fdef.decl.type
        params = ftype.args.params if isinstance(ftype, c_ast.FuncDecl) and ftype.args is not None else []
        out: list[tuple[str, str | None]] = []
        for param in params:
            if isinstance(param, c_ast.EllipsisParam):
                raise _Refused(param, "it takes variable arguments")
            if isinstance(param, c_ast.Typename) and self._scalar(param.type) == "void":
                continue  # f(void)
            if not isinstance(param, c_ast.Decl) or not param.name:
                raise _Refused(param, "a parameter has no name")
            if isinstance(param.type, c_ast.PtrDecl | c_ast.ArrayDecl) and self._scalar(param.type.type) is not None:
                out.append((param.name, None))
                continue
            ctype = self._scalar(param.type)
            if ctype is None or ctype == "void":
                raise _Refused(param, f"its parameter {param.name!r} is not a scalar or an array of scalars")
            out.append((param.name, ctype))
        return out

    def _return_type(self, fdef: c_ast.FuncDef) -> str:
        ctype = self._scalar(fdef.decl.type.type)
        if ctype is None or ctype == "void":
            raise _Refused(fdef, "it does not return a scalar")
        return ctype

    def _scalar(self, node: c_ast.Node) -> str | None:
        if isinstance(node, c_ast.TypeDecl) and isinstance(node.type, c_ast.IdentifierType):
            text = resolve_type(" ".join(node.type.names), self.typedefs)
            return "void" if text == "void" else canonical_scalar(text)
        return None

    def _local(self, item: c_ast.Node, env: dict[str, tuple[c_ast.Node, str | None]], stack: tuple[str, ...]) -> None:
        """A declaration or assignment of a local before the return: its value joins ``env``."""
        match item:
            case c_ast.Decl(init=init) if init is not None and not item.storage:
                ctype = self._scalar(item.type)
                if ctype is None or ctype == "void" or "volatile" in (item.type.quals or ()):
                    raise _Refused(item, f"its local {item.name!r} is not a scalar")
                env[item.name] = (_converted(self._value(init, env, stack), ctype), ctype)
            case c_ast.Assignment(lvalue=c_ast.ID(name=name), op=op, rvalue=value) if name in env \
                    and env[name][1] is not None:
                new = self._value(value, env, stack)
                if op != "=":
                    new = c_ast.BinaryOp(op[:-1], env[name][0], new, coord=item.coord)
                ctype = env[name][1]
                assert ctype is not None
                env[name] = (_converted(new, ctype), ctype)
            case c_ast.Assignment():
                raise _Refused(item, f"it assigns {shorten(c_text(item.lvalue))}, which is not one of its "
                                     "scalar locals")
            case _:
                kind = {c_ast.For: "a for loop", c_ast.While: "a while loop", c_ast.DoWhile: "a do loop",
                        c_ast.If: "an if", c_ast.FuncCall: "a call as a statement"}.get(type(item),
                                                                                           type(item).__name__)
                raise _Refused(item, f"its body has {kind}; {_SHAPE}")

    def _value(self, node: c_ast.Node, env: dict[str, tuple[c_ast.Node, str | None]],
               stack: tuple[str, ...]) -> c_ast.Node:
        """``node`` of the helper with its parameters and locals replaced by their values."""
        match node:
            case c_ast.Constant() | c_ast.UnaryOp(op="sizeof", expr=c_ast.Typename()):
                return node
            case c_ast.ID() | c_ast.ArrayRef() | c_ast.UnaryOp(op="*" | "&") | c_ast.StructRef():
                return self._reference(node, env, stack)
            case c_ast.FuncCall(name=c_ast.ID()):
                return self._call(node, env, stack)
            case c_ast.UnaryOp(op=op) if op in ("-", "+", "!", "~"):
                return c_ast.UnaryOp(op, self._value(node.expr, env, stack), coord=node.coord)
            case c_ast.BinaryOp(op=op, left=left, right=right):
                return c_ast.BinaryOp(op, self._value(left, env, stack), self._value(right, env, stack),
                                      coord=node.coord)
            case c_ast.TernaryOp(cond=c, iftrue=a, iffalse=b):
                return c_ast.TernaryOp(*(self._value(x, env, stack) for x in (c, a, b)), coord=node.coord)
            case c_ast.Cast(to_type=t, expr=inner):
                return c_ast.Cast(t, self._value(inner, env, stack), coord=node.coord)
        raise _Refused(node, f"it has {shorten(c_text(node))} (a side effect or a construct not inlined)")

    def _reference(self, node: c_ast.Node, env: dict[str, tuple[c_ast.Node, str | None]],
                   stack: tuple[str, ...]) -> c_ast.Node:
        """A parameter or local (its value), or an element of an array parameter (of the array passed)."""
        match node:
            case c_ast.ID(name=name) if name in env and env[name][1] is not None:
                return env[name][0]
            case c_ast.ID(name=name) if name in env:
                raise _Refused(node, f"it uses the pointer {name!r} other than by subscripting it")
            case c_ast.ID(name=name):
                raise _Refused(node, f"it reads {name!r}, which is not one of its parameters or locals")
            case c_ast.ArrayRef(name=c_ast.ID(name=name)) if name in env and env[name][1] is None:
                return c_ast.ArrayRef(env[name][0], self._value(node.subscript, env, stack), coord=node.coord)
        raise _Refused(node, f"it reads memory other than through its array parameters ({shorten(c_text(node))})")

    def _call(self, node: c_ast.FuncCall, env: dict[str, tuple[c_ast.Node, str | None]],
              stack: tuple[str, ...]) -> c_ast.Node:
        """A math function's call, kept; a helper's, inlined."""
        fn = node.name.name
        args = [self._value(a, env, stack) for a in (node.args.exprs if node.args else [])]
        call = c_ast.FuncCall(node.name, c_ast.ExprList(args), coord=node.coord)
        if fn in self.keep:
            return call
        if fn in self.helpers:
            return self._inline(call, stack)
        raise _Refused(node, f"it calls {fn}(), which is neither a math function nor defined in this file")


def _converted(node: c_ast.Node, ctype: str) -> c_ast.Node:
    """``(ctype)(node)``: C's conversion of an argument to its parameter's type, or of a value returned."""
    if isinstance(node, c_ast.Cast) and _cast_type(node) == ctype or \
            isinstance(node, c_ast.Constant) and node.type == ctype:
        return node
    typename = c_ast.Typename(None, [], None, c_ast.TypeDecl(None, [], None, c_ast.IdentifierType(ctype.split())))
    return c_ast.Cast(typename, node, coord=getattr(node, "coord", None))


def _cast_type(node: c_ast.Cast) -> str | None:
    t = node.to_type.type if isinstance(node.to_type, c_ast.Typename) else None
    if isinstance(t, c_ast.TypeDecl) and isinstance(t.type, c_ast.IdentifierType):
        return " ".join(t.type.names)
    return None


def _replace_children(node: c_ast.Node, fn: Callable[[c_ast.Node], c_ast.Node]) -> None:
    """Replace each child of ``node`` by ``fn(child)`` (pycparser names a list's children ``exprs[0]``)."""
    for name, child in node.children():
        new = fn(child)
        if new is child:
            continue
        match = _CHILD.match(name)
        if match:
            getattr(node, match.group(1))[int(match.group(2))] = new
        else:
            setattr(node, name, new)
