"""IR expressions: the trees of statement bodies, guards and data-dependent bounds, and their C text.
Re-exported by :mod:`loopnest.ir`."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass


@dataclass(frozen=True)
class Expr:
    def children(self) -> tuple[Expr, ...]:
        return ()

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        """This node with its children replaced (a leaf returns itself)."""
        return self

    def rewritten(self, fn: Callable[[Expr], Expr | None]) -> Expr:
        """This tree, top-down, with each node ``fn`` maps to an expression replaced (and not entered)."""
        if (new := fn(self)) is not None:
            return new
        kids = self.children()
        return self.with_children(tuple(k.rewritten(fn) for k in kids)) if kids else self

    def walk(self) -> Iterator[Expr]:
        yield self
        for child in self.children():
            yield from child.walk()

    def names(self) -> set[str]:
        """The scalars and arrays ``expr`` reads (by name), subscripts included."""
        return {e.name for e in self.walk() if isinstance(e, (Var, ArrayRef))}


@dataclass(frozen=True)
class Const(Expr):
    text: str


@dataclass(frozen=True)
class Iter(Expr):
    """The statement's loop iterator at this depth (0 = outermost)."""

    depth: int


@dataclass(frozen=True)
class Var(Expr):
    """A scalar read by name: a parameter, a read-only input, or a scalar variable."""

    name: str


@dataclass(frozen=True)
class QuasiAffine(Expr):
    """A piecewise quasi-affine function of the statement's iterators, as isl text
    ``[params] -> { S3[i0, i1] -> [(i1 - 32*floor((i1)/32))] }``: a subscript built by a
    transformation (a packed buffer's). The code generator prints it through isl's AST builder, in
    terms of the loop iterators around the statement."""

    text: str


@dataclass(frozen=True)
class ArrayRef(Expr):
    name: str
    subscripts: tuple[Expr, ...]

    def children(self) -> tuple[Expr, ...]:
        return self.subscripts

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        return ArrayRef(self.name, children)


@dataclass(frozen=True)
class Unary(Expr):
    op: str
    operand: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.operand,)

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        return Unary(self.op, *children)


@dataclass(frozen=True)
class Binary(Expr):
    op: str
    left: Expr
    right: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.left, self.right)

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        return Binary(self.op, *children)


@dataclass(frozen=True)
class Call(Expr):
    function: str
    args: tuple[Expr, ...]

    def children(self) -> tuple[Expr, ...]:
        return self.args

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        return Call(self.function, children)


@dataclass(frozen=True)
class Cast(Expr):
    ctype: str
    operand: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.operand,)

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        return Cast(self.ctype, *children)


@dataclass(frozen=True)
class Ternary(Expr):
    cond: Expr
    then: Expr
    otherwise: Expr

    def children(self) -> tuple[Expr, ...]:
        return (self.cond, self.then, self.otherwise)

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        return Ternary(*children)


def print_expr(expr: Expr, iterator: Callable[[int], str], quasi_affine: Callable[[str], str] = str) -> str:
    """C text of ``expr``; ``iterator(depth)`` gives the text that replaces an iterator and
    ``quasi_affine(text)`` the text of a :class:`QuasiAffine` (by default, its isl text)."""

    def p(e: Expr) -> str:
        return print_expr(e, iterator, quasi_affine)

    match expr:
        case Const(text):
            return text
        case Iter(depth):
            return iterator(depth)
        case Var(name):
            return name
        case QuasiAffine(text):
            return quasi_affine(text)
        case ArrayRef(name, subs):
            return name + "".join(f"[{p(s)}]" for s in subs)
        case Unary(op, operand):
            return f"{op}({p(operand)})"
        case Binary(op, left, right):
            return f"({p(left)} {op} {p(right)})"
        case Call(fn, args):
            return f"{fn}({', '.join(p(a) for a in args)})"
        case Cast(ctype, operand):
            return f"(({ctype}) {p(operand)})"
        case Ternary(cond, then, otherwise):
            return f"({p(cond)} ? {p(then)} : {p(otherwise)})"
    raise TypeError(f"not an expression: {expr!r}")
