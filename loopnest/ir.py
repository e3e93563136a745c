"""The loop-nest IR: statement bodies as expression trees, statements with polyhedral domains and
accesses, and the :class:`Scop` that ties them to a schedule.

Iterators are canonical (``i0`` is a statement's outermost loop), so two nests that differ only in
names have equal IR; original names are kept for messages. isl objects are stored as their string
form and rebuilt on demand: strings are hashable, picklable and JSON-able, and isl parses them in
microseconds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from loopnest.errors import SourceLocation

# ---------------------------------------------------------------------------------------------
# Expressions


@dataclass(frozen=True)
class Expr:
    def children(self) -> tuple[Expr, ...]:
        return ()

    def with_children(self, children: tuple[Expr, ...]) -> Expr:
        """This node with its children replaced (a leaf returns itself)."""
        return self

    def walk(self) -> Iterator[Expr]:
        yield self
        for child in self.children():
            yield from child.walk()


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


# ---------------------------------------------------------------------------------------------
# Arrays, accesses, statements


@dataclass(frozen=True)
class ArrayInfo:
    """A variable the nest reads or writes; ``dims == ()`` for scalars."""

    name: str
    element_type: str
    dims: tuple[str | None, ...]  # declared extents as C text; None where unknown (pointer, [])
    storage: str  # "param" | "global" | "local" | "extern" | "region" (declared inside the nest)
    written: bool

    @property
    def is_scalar(self) -> bool:
        return not self.dims


@dataclass(frozen=True)
class Access:
    array: str
    subscripts: tuple[str, ...]  # isl affine expressions in i0.., parameters
    is_write: bool
    relation: str  # isl map "[params] -> { S0[i0, i1] -> A[i0, i1] }" restricted to the domain

    def subscript_text(self) -> str:
        return self.array + "".join(f"[{s}]" for s in self.subscripts)


@dataclass(frozen=True)
class Statement:
    """One assignment of a nest: its iteration domain, target, value and accesses, where it is in the source."""

    index: int
    iterators: tuple[str, ...]  # original names, outermost first
    domain: str  # isl set "[params] -> { S0[i0, i1] : ... }"
    target: ArrayRef | Var
    op: str  # "=", "+=", ...
    value: Expr
    accesses: tuple[Access, ...]
    location: SourceLocation
    declares: str | None = None  # the C type when the statement is "T x = value;"

    @property
    def name(self) -> str:
        return f"S{self.index}"

    @property
    def depth(self) -> int:
        return len(self.iterators)

    @property
    def writes(self) -> tuple[Access, ...]:
        return tuple(a for a in self.accesses if a.is_write)

    @property
    def reads(self) -> tuple[Access, ...]:
        return tuple(a for a in self.accesses if not a.is_write)

    def to_c(self, iterator: Callable[[int], str], quasi_affine: Callable[[str], str] = str) -> str:
        lhs = print_expr(self.target, iterator, quasi_affine)
        return f"{lhs} {self.op} {print_expr(self.value, iterator, quasi_affine)};"

    def quasi_affine_texts(self) -> tuple[str, ...]:
        """The distinct :class:`QuasiAffine` subscripts of the statement, target first, in print order."""
        found = (e.text for root in (self.target, self.value) for e in root.walk() if isinstance(e, QuasiAffine))
        return tuple(dict.fromkeys(found))


# ---------------------------------------------------------------------------------------------
# Schedule


ScheduleDim = int | str  # int: a constant (scalar dimension); str: an isl affine expression


@dataclass(frozen=True)
class Schedule:
    """A 2d+1 schedule: per statement ``[b0, l0, b1, l1, ..., bn]``.

    Even positions are constants that order statements textually; odd positions are loop levels
    (``level k`` is position ``2k+1``), an isl expression in the statement's iterators or a constant
    where the statement has no loop at that level. ``marks`` holds per loop level the pragmas to
    emit (``parallel``, ``simd``, ``unroll:N``) and ``private`` the scalars privatized there.
    """

    rows: tuple[tuple[ScheduleDim, ...], ...]
    marks: Mapping[int, tuple[str, ...]] = field(default_factory=dict)
    private: Mapping[int, tuple[str, ...]] = field(default_factory=dict)

    @property
    def n_levels(self) -> int:
        return (len(self.rows[0]) - 1) // 2 if self.rows else 0

    def has_loop(self, statement: int, level: int) -> bool:
        return isinstance(self.rows[statement][2 * level + 1], str)

    def statements_at(self, level: int) -> list[int]:
        return [s for s in range(len(self.rows)) if self.has_loop(s, level)]

    def replace(self, **changes: Any) -> Schedule:
        return dataclasses.replace(self, **changes)

    def to_isl(self, statements: tuple[Statement, ...], params: tuple[str, ...]) -> str:
        parts = []
        for stmt, row in zip(statements, self.rows, strict=True):
            its = ", ".join(f"i{d}" for d in range(stmt.depth))
            dims = ", ".join(str(d) for d in row)
            parts.append(f"S{stmt.index}[{its}] -> [{dims}]")
        return f"[{', '.join(params)}] -> {{ {'; '.join(parts)} }}"


@dataclass(frozen=True)
class LoopInfo:
    """A ``for`` loop as written: for reports only (the domains carry the semantics)."""

    depth: int
    iterator: str
    lower: str  # C text of the initial value
    condition: str  # C text of the loop test
    step: int
    statements: tuple[int, ...]


@dataclass(frozen=True)
class SourceRegion:
    """Where a nest lives in the user's file (1-based, inclusive lines of the replaced text)."""

    file: str
    function: str
    first_line: int
    last_line: int
    pragma: bool  # marked by #pragma scop (the lines between the pragmas are the region)


@dataclass(frozen=True)
class Scop:
    """A static control part: statements, arrays, parameters, and a schedule."""

    name: str
    params: tuple[str, ...]
    context: str  # isl set over the parameters: what the analysis assumes of them
    statements: tuple[Statement, ...]
    arrays: Mapping[str, ArrayInfo]
    schedule: Schedule
    region: SourceRegion
    iterators: tuple[str, ...]  # original iterator variables the original code assigns
    param_types: Mapping[str, str] = field(default_factory=dict)
    loops: tuple[LoopInfo, ...] = ()

    def replace(self, **changes: Any) -> Scop:
        return dataclasses.replace(self, **changes)

    @property
    def depth(self) -> int:
        return max((s.depth for s in self.statements), default=0)

    @property
    def outputs(self) -> list[ArrayInfo]:
        """Variables the nest writes that outlive it (not temporaries declared inside)."""
        return [a for a in self.arrays.values() if a.written and a.storage != "region"]

    @property
    def local_scalars(self) -> list[ArrayInfo]:
        """Variables declared inside the nest: scalar temporaries, and the buffers of ``pack``."""
        return [a for a in self.arrays.values() if a.storage == "region"]

    def schedule_isl(self, schedule: Schedule | None = None) -> str:
        return (schedule or self.schedule).to_isl(self.statements, self.params)
