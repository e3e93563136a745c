"""Reductions: statements ``x op= e`` (or ``x = x op e``, ``x = fmin(x, e)``) whose ``e`` does not
read ``x``. A loop whose only carried dependences join instances of such statements on one scalar
with one operator runs in parallel (or as SIMD) with an OpenMP ``reduction(op: x)`` clause.

Reductions into array elements (``y[j] += A[i][j] * x[i]`` carried by ``i``) get an array-section
clause (``reduction(+: y[0:n])``) on an outermost loop; elsewhere (``C[i][j] += ...`` carried by an
inner ``k``) they are refused, saying so: a private copy per thread would be made once per
iteration of the outer loops.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from loopnest.ir import ArrayRef, Binary, Call, Expr, Statement, Var

# Compound assignment -> OpenMP reduction identifier. ``x -= e`` is a sum of negated terms: "+".
_COMPOUND = {"+=": "+", "-=": "+", "*=": "*", "&=": "&", "|=": "|", "^=": "^"}
# ``x = x op e`` (and ``x = e op x`` where op commutes).
_BINARY = {"+": "+", "*": "*", "&": "&", "|": "|", "^": "^"}
_CALLS = {"fmin": "min", "fminf": "min", "fmax": "max", "fmaxf": "max"}
OPERATORS = frozenset(_COMPOUND.values()) | {"min", "max"}
CLAUSE_MARK = re.compile(r"reduction:(\+|\*|&|\||\^|min|max):([A-Za-z_][A-Za-z0-9_]*)")


@dataclass(frozen=True)
class Reduction:
    op: str  # OpenMP reduction identifier
    variable: str
    is_scalar: bool

    @property
    def mark(self) -> str:
        return f"reduction:{self.op}:{self.variable}"


def _reads(expr: Expr, name: str) -> bool:
    return name in expr.names()


def _split(stmt: Statement) -> tuple[str, Expr] | None:
    """The operator and the other operand of a reduction statement, or None."""
    target, value = stmt.target, stmt.value
    if stmt.op in _COMPOUND:
        return _COMPOUND[stmt.op], value
    if stmt.op != "=" or stmt.declares:
        return None
    match value:
        case Binary(op, left, right) if op in _BINARY and left == target:
            return _BINARY[op], right
        case Binary(op, left, right) if op in _BINARY and right == target:
            return _BINARY[op], left
        case Binary("-", left, right) if left == target:
            return "+", right
        case Call(fn, (a, b)) if fn in _CALLS and a == target:
            return _CALLS[fn], b
        case Call(fn, (a, b)) if fn in _CALLS and b == target:
            return _CALLS[fn], a
    return None


def statement_reduction(stmt: Statement) -> Reduction | None:
    """The reduction ``stmt`` performs, or None when it is not of the form ``x op= e`` with ``e``
    free of ``x``."""
    split = _split(stmt)
    if split is None:
        return None
    op, other = split
    name = stmt.target.name
    if _reads(other, name):
        return None
    if isinstance(stmt.target, ArrayRef) and any(_reads(s, name) for s in stmt.target.subscripts):
        return None
    return Reduction(op, name, isinstance(stmt.target, Var))


def dependence_reduction(statements: tuple[Statement, ...], source: int, sink: int, array: str) -> Reduction | None:
    """The reduction a dependence joins: both ends reduce ``array`` with one operator."""
    a, b = statement_reduction(statements[source]), statement_reduction(statements[sink])
    if a is None or a != b or a.variable != array:
        return None
    if not a.is_scalar and statements[source].target != statements[sink].target:
        return None
    return a
