"""Statements of the Python frontend, as the C frontend's walk collects them (:class:`RawStatement`): the
domain of the enclosing ``for`` loops and of the axes a whole-array statement sweeps, the 2d+1 schedule
row, and the accesses; and the exact dependence tests that decide where NumPy's evaluate-then-write
semantics needs a temporary and where a single sweep computes the same.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import islpy as isl

from loopnest.errors import SourceLocation, UnsupportedConstructError
from loopnest.frontend.assemble import RawStatement
from loopnest.frontend.expressions import RawAccess
from loopnest.frontend.python.affine import Affine, Extent
from loopnest.ir import ArrayRef, Expr, LoopInfo, Var, print_expr

Element = Callable[[tuple[Affine, ...]], tuple[ArrayRef | Var, str, Expr]]


@dataclass
class LoopFrame:
    name: str
    depth: int
    constraints: list[str]
    negative: bool
    line: int
    span: tuple[Affine, Affine] | None = None  # (lower, upper) of a unit-step forward loop, else None


@dataclass
class Pending:
    """A statement not yet placed: its raw form and the loops it adds (for reports)."""

    raw: RawStatement
    axis_loops: list[tuple[int, str, str]]  # (depth, iterator, condition)


def isl_text(expr: Expr) -> str:
    return print_expr(expr, lambda d: f"i{d}")


class Emitter:
    """Loops, positions and statements of one kernel."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.loops: list[LoopFrame] = []
        self.beta: list[int] = [0]
        self.raws: list[RawStatement] = []
        self.infos: list[LoopInfo] = []
        self.params: list[str] = []
        self.scalar_locals: set[str] = set()  # scalars the kernel assigns: their reads are accesses
        self._axis_count = 0

    @property
    def level(self) -> int:
        return len(self.loops)

    def statement(self, node: ast.AST, axes: Sequence[Extent], element: Element, *, offset: int = 0,
                  reverse: bool = False) -> Pending:
        """The statement ``target op value`` at each point of ``axes`` (inside the enclosing loops), at the
        next position of this level plus ``offset``; the axes run backwards with ``reverse``."""
        base = self.level
        coords = tuple(Affine.iterator(base + k) for k in range(len(axes)))
        target, op, value = element(coords)
        constraints = [c for loop in self.loops for c in loop.constraints]
        names = [loop.name for loop in self.loops]
        axis_loops = []
        for k, extent in enumerate(axes):
            self._axis_count += 1
            name = f"ax{self._axis_count}"
            constraints.append(extent.constraint(f"i{base + k}"))
            names.append(name)
            axis_loops.append((base + k, name, f"{name} < {extent.c_text()}"))
        row: list[int | str] = []
        for d, loop in enumerate(self.loops):
            row += [self.beta[d], f"-i{d}" if loop.negative else f"i{d}"]
        row.append(self.beta[-1] + offset)
        for k in range(len(axes)):
            row += [f"-i{base + k}" if reverse else f"i{base + k}", 0]
        accesses = self.reads(value)
        own = self.access(target)
        if op != "=":
            accesses.append(own)
        accesses.append(own.with_mode(write=True))
        loc = SourceLocation(self.file, getattr(node, "lineno", 0), getattr(node, "col_offset", -1) + 1)
        raw = RawStatement(tuple(names), constraints, row, target, op, value, accesses, loc, None)
        self._check_indices(raw, node)
        return Pending(raw, axis_loops)

    def commit(self, *pending: Pending) -> None:
        for p in pending:
            index = len(self.raws)
            self.raws.append(p.raw)
            self.beta[-1] += 1
            for depth, name, condition in p.axis_loops:
                self.infos.append(LoopInfo(depth, name, "0", condition, 1, (index,)))

    def access(self, target: ArrayRef | Var) -> RawAccess:
        if isinstance(target, Var):
            return RawAccess(target.name, (), False)
        return RawAccess(target.name, tuple(isl_text(s) for s in target.subscripts), False)

    def reads(self, value: Expr) -> list[RawAccess]:
        out = []
        for e in value.walk():
            if isinstance(e, ArrayRef) or isinstance(e, Var) and e.name in self.scalar_locals:
                out.append(self.access(e))
        return out

    # -- dependence tests ---------------------------------------------------------------------------
    def _relations(self, raw: RawStatement, name: str, accesses: list[RawAccess]) -> isl.UnionMap:
        params = ", ".join(self.params)
        its = ", ".join(f"i{d}" for d in range(len(raw.iterators)))
        cons = " and ".join(raw.constraints) or "true"
        out = isl.UnionMap(f"[{params}] -> {{ }}")
        for acc in accesses:
            if acc.array == name:
                text = f"[{params}] -> {{ S[{its}] -> {name}[{', '.join(acc.subscripts)}] : {cons} }}"
                out = out.union(isl.UnionMap(text))
        return out

    def _context(self) -> isl.Set:
        params = ", ".join(self.params)
        return isl.Set(f"[{params}] -> {{ : {' and '.join(f'{p} >= 0' for p in self.params) or 'true'} }}")

    def overlapping(self, raw: RawStatement, name: str, order: str | None) -> bool:
        """Whether an element of ``name`` the statement writes at one point is read by its value (besides the
        element it updates) at another point of the same iteration of the enclosing loops: at a later point
        in its sweep (``order`` "lt": the writing point is lexicographically first; "gt": last), or at any
        other point (None)."""
        written = [a for a in raw.accesses if a.is_write]
        own = {a.with_mode(write=False) for a in written}  # the element each point updates: read first
        reads = [a for a in self.reads(raw.value) if a not in own]
        pairs = self._relations(raw, name, written).apply_range(self._relations(raw, name, reads).reverse())
        if pairs.is_empty():
            return False
        n, prefix = len(raw.iterators), self.level
        src = ", ".join(f"a{d}" for d in range(n))
        dst = ", ".join(f"b{d}" for d in range(n))
        same = [f"a{d} = b{d}" for d in range(prefix)]
        if order is None:
            differ = [" or ".join(f"a{d} != b{d}" for d in range(prefix, n)) or "false"]
        else:
            differ = [_lex(prefix, n, "<" if order == "lt" else ">")]
        params = ", ".join(self.params)
        text = f"[{params}] -> {{ S[{src}] -> S[{dst}] : {' and '.join([*same, *differ])} }}"
        hits = pairs.intersect(isl.UnionMap(text)).intersect_params(self._context())
        return not hits.is_empty()

    def _check_indices(self, raw: RawStatement, node: ast.AST) -> None:
        """A subscript that may be negative reads from the end of the axis in NumPy: refused."""
        params = ", ".join(self.params)
        its = ", ".join(f"i{d}" for d in range(len(raw.iterators)))
        cons = " and ".join(raw.constraints) or "true"
        for acc in raw.accesses:
            if not acc.subscripts:
                continue
            negative = " or ".join(f"({s}) < 0" for s in acc.subscripts)
            points = isl.Set(f"[{params}] -> {{ S[{its}] : {cons} and ({negative}) }}")
            if not points.intersect_params(self._context()).is_empty():
                subs = ", ".join(acc.subscripts)
                raise UnsupportedConstructError(
                    "negative index", f"negative index: {acc.array}[{subs}] may be negative, which NumPy reads "
                    "from the end of the axis; bound the loop so that it is not", raw.location)


def _lex(first: int, n: int, op: str) -> str:
    """isl text: (a_first..a_{n-1}) compares ``op`` (b_first..) lexicographically."""
    parts = []
    for d in range(first, n):
        equal = [f"a{e} = b{e}" for e in range(first, d)]
        parts.append("(" + " and ".join([*equal, f"a{d} {op} b{d}"]) + ")")
    return "(" + " or ".join(parts) + ")" if parts else "false"
