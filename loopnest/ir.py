"""The loop-nest IR: statement bodies as expression trees, statements with polyhedral domains and
accesses, and the :class:`Scop` that ties them to a schedule.

Iterators are canonical (``i0`` is a statement's outermost loop), so two nests that differ only in
names have equal IR; original names are kept for messages. isl objects are stored as their string
form and rebuilt on demand: strings are hashable, picklable and JSON-able, and isl parses them in
microseconds.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from loopnest.errors import SourceLocation
from loopnest.ir_expr import (
    ArrayRef,
    Binary,
    Call,
    Cast,
    Const,
    Expr,
    Iter,
    QuasiAffine,
    Ternary,
    Unary,
    Var,
    print_expr,
)

__all__ = [
    "Access", "ArrayInfo", "ArrayRef", "Binary", "Call", "Cast", "Const", "DynamicBound", "Expr", "FlatArray",
    "IndexArray", "IndexStructure", "Iter", "LoopInfo", "QuasiAffine", "Schedule", "ScheduleDim", "Scop",
    "SourceRegion", "Statement", "Ternary", "Unary", "Var", "print_expr",
]

# ---------------------------------------------------------------------------------------------
# Arrays, accesses, statements


@dataclass(frozen=True)
class FlatArray:
    """An array the source declares flat (``const double *restrict A``, ``double A[m * n]``) and subscripts
    linearly (``A[i*n + j]``), which the IR holds as its rows (``A[i][j]``): the drop-in code reaches it
    through a pointer to rows with the declaration's qualifiers (:mod:`loopnest.dropin`)."""

    const: bool = False
    restrict: bool = False


@dataclass(frozen=True)
class ArrayInfo:
    """A variable the nest reads or writes; ``dims == ()`` for scalars."""

    name: str
    element_type: str
    dims: tuple[str | None, ...]  # declared extents as C text; None where unknown (pointer, [])
    storage: str  # "param" | "global" | "local" | "extern" | "region" (declared inside the nest)
    written: bool
    addressed: bool = True  # False: a local whose address its function never takes (no pointer reaches it)
    flat: FlatArray | None = None  # declared flat in the source, delinearized here

    @property
    def is_scalar(self) -> bool:
        return not self.dims

    @property
    def holds_row_pointers(self) -> bool:
        """An array of pointers (``double **a``, ``double *rows[n]``): its rows are separate objects,
        reached through a table of pointers, rather than one block of memory."""
        return any(dim is None for dim in self.dims[1:])

    @property
    def is_row_table(self) -> bool:
        """One level of row pointers (``T **a``, ``T *a[n]``): the form the measurement driver builds as
        a table and the drop-in code's check walks row by row (a table of tables is neither)."""
        return len(self.dims) == 2 and self.holds_row_pointers


@dataclass(frozen=True)
class Access:
    """One read or write of a statement. ``approximated`` accesses have a subscript that is not affine
    (``x[col[j]]``, ``a[i*j]``): their relation spans the array's declared extent in that dimension
    (``S0[i0, i1] -> x[o] : 0 <= o < m``), their subscript text is the real subscript with
    iterators ``i0``.., and an approximated write is a may-write (it kills no dependence)."""

    array: str
    subscripts: tuple[str, ...]  # isl affine expressions in i0.., parameters (C-like text where approximated)
    is_write: bool
    relation: str  # isl map "[params] -> { S0[i0, i1] -> A[i0, i1] }" restricted to the domain
    approximated: bool = False
    reason: str = ""  # why the relation over-approximates the elements, for reports

    def subscript_text(self) -> str:
        return self.array + "".join(f"[{s}]" for s in self.subscripts)


@dataclass(frozen=True)
class DynamicBound:
    """A loop of a statement whose bounds read data (``for (j = rowptr[i]; j < rowptr[i+1]; j++)``).

    The statement's domain bounds the iterator at ``depth`` by the extents of the arrays it
    subscripts (an over-approximation); the generated loop runs from ``lower`` (inclusive) to
    ``upper`` (exclusive), expressions in the statement's iterators outside ``depth`` that read
    arrays the nest never writes. None where that side is affine and exact in the domain."""

    depth: int
    lower: Expr | None
    upper: Expr | None
    reason: str  # the loop as written, for reports

    @property
    def pointer(self) -> str | None:
        """The array holding both bounds (``p[f] <= j < p[g]``: CSR, CSC), or None."""
        low, high = self.lower, self.upper
        if isinstance(low, ArrayRef) and isinstance(high, ArrayRef) and low.name == high.name:
            return low.name
        return None

    def iterators_read(self) -> frozenset[int]:
        """The depths of the outer iterators the bounds read."""
        return frozenset(e.depth for side in (self.lower, self.upper) if side is not None
                         for e in side.walk() if isinstance(e, Iter))


@dataclass(frozen=True)
class Statement:
    """One assignment of a nest: its iteration domain, target, value and accesses, where it is in the source.

    ``guard`` is a condition on data the statement runs under (``if (a[i] > 0)``), left out of the
    domain; ``dynamic_bounds`` the loops around it whose bounds read data. Either makes the domain
    an over-approximation of the instances that run, so the statement's writes are may-writes.
    """

    index: int
    iterators: tuple[str, ...]  # original names, outermost first
    domain: str  # isl set "[params] -> { S0[i0, i1] : ... }"
    target: ArrayRef | Var
    op: str  # "=", "+=", ...
    value: Expr
    accesses: tuple[Access, ...]
    location: SourceLocation
    declares: str | None = None  # the C type when the statement is "T x = value;"
    guard: Expr | None = None
    dynamic_bounds: tuple[DynamicBound, ...] = ()

    @property
    def name(self) -> str:
        return f"S{self.index}"

    @property
    def exact_domain(self) -> bool:
        """Whether every point of the domain runs: no data-dependent guard or loop bound."""
        return self.guard is None and not self.dynamic_bounds

    def dynamic_bound(self, depth: int) -> DynamicBound | None:
        return next((b for b in self.dynamic_bounds if b.depth == depth), None)

    def may_write(self, access: Access) -> bool:
        """Whether ``access`` (a write) may leave some element of its relation unwritten."""
        return access.approximated or not self.exact_domain

    def replace(self, **changes: Any) -> Statement:
        return dataclasses.replace(self, **changes)

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
        text = f"{lhs} {self.op} {print_expr(self.value, iterator, quasi_affine)};"
        if self.guard is not None:
            text = f"if ({print_expr(self.guard, iterator, quasi_affine)}) {text}"
        return text

    def quasi_affine_texts(self) -> tuple[str, ...]:
        """The distinct :class:`QuasiAffine` subscripts of the statement, target first, in print order."""
        roots = (self.target, self.value) if self.guard is None else (self.guard, self.target, self.value)
        found = (e.text for root in roots for e in root.walk() if isinstance(e, QuasiAffine))
        return tuple(dict.fromkeys(found))


# ---------------------------------------------------------------------------------------------
# Schedule


ScheduleDim = int | str  # int: a constant (scalar dimension); str: an isl affine expression

_ITERATOR = re.compile(r"\bi\d+\b")


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

    def is_skewed(self, statement: int, level: int) -> bool:
        """Whether the loop at ``level`` walks a mix of iterators (``2*i0 + i1``: a skewed stencil loop)."""
        expr = self.rows[statement][2 * level + 1]
        return isinstance(expr, str) and len(set(_ITERATOR.findall(expr))) > 1

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
class IndexArray:
    """An integer array whose values the nest uses as subscripts or loop bounds, and the values that
    keep every access in bounds (what a measurement driver must fill it with).

    ``role`` "indices": its values subscript other arrays (``x[col[j]]``): valid in [0, E).
    ``role`` "pointers": its values bound a loop (``rowptr[i] <= j < rowptr[i+1]``) whose iterator
    subscripts arrays: non-decreasing, in [0, E]. ``role`` "bounds": each value is one bound of such
    a loop (``j < len[i]``): in [0, E]. E is the smallest of ``extents`` (C texts of
    declared extents, evaluated with the parameter values); ``targets`` says what it indexes
    (``x[0]``: dimension 0 of x; for pointers, the loop iterator).

    An index array may also subscript through a constant scale and offset (``x[col[j] + 1]``,
    ``x[2 * idx[i]]``): each such use is in ``forms`` as (extent, a, c), the value v must keep
    ``0 <= a*v + c < extent``. A use in a form no range of values keeps in bounds (``x[idx[i] + i]``,
    ``x[idx[i] * k]``) is in ``unbounded`` with where it is (``k.c:4: x[(idx[i0] + i0)]``): a measurement
    driver cannot fill the array, and says so."""

    name: str
    role: str  # "indices" | "pointers" | "bounds"
    extents: tuple[str, ...]
    targets: tuple[str, ...]
    forms: tuple[tuple[str, int, int], ...] = ()
    unbounded: tuple[str, ...] = ()


@dataclass(frozen=True)
class IndexStructure:
    """A compressed sparse structure: a pointer array and the index arrays the loop it bounds reads
    at its iterator (CSR: rowptr and col; CSC: colptr and row), with the arrays that loop walks at its
    iterator (the nonzero values)."""

    pointers: str
    indices: tuple[str, ...]
    values: tuple[str, ...]


@dataclass(frozen=True)
class Scop:
    """A static control part: statements, arrays, parameters, and a schedule.

    ``index_arrays`` and ``index_structures`` describe the integer arrays whose values subscript
    arrays or bound loops (sparse nests), for the measurement driver and for reports."""

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
    index_arrays: tuple[IndexArray, ...] = ()
    index_structures: tuple[IndexStructure, ...] = ()
    # The C type of the generated code's loop iterators: "long" where a loop counter or size parameter of
    # the source is wider than int or unsigned (size_t, int64_t, long, unsigned), else "int".
    index_type: str = "int"

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

    @property
    def is_exact(self) -> bool:
        """Whether the model is exact: no approximated access, guard or data-dependent bound."""
        return all(s.exact_domain and not any(a.approximated for a in s.accesses) for s in self.statements)
