"""A SIMD loop's reductions into array elements it does not index, kept in locals while the loop runs.

``C[i][j] += A[i][k] * B[j][k]`` over an innermost ``k`` marked simd: an OpenMP reduction variable must be
a variable or an array section, and an array-section clause gives every SIMD lane a copy of the whole
section. So the element is loaded into a local before the loop, reduced there under ``reduction(op:
local)``, and stored back after it, once per run of the loop; a jammed body gets one local per copy's
element (a register block of dot products). Measured on a 2-core machine (512^3 ``C[i][j] +=
A[i][k] * B[j][k]`` with two elements per loop, one thread, gcc 12 ``-O3 -march=native -fopenmp``):
locals 4.9-6.7 GFLOP/s, a one-element array-section clause 2.8-4.1, the plain loop 1.3-2.0.

Which reductions qualify is decided with the exact dependences (:func:`loopnest.transform.parallel.accumulable`):
nothing else in the loop touches the array, each element is the same in every iteration, and no two
copies reach one element. The printer checks once more that no element's text names the loop's iterator
or one inside it; if one did, the loop is printed as a plain loop (its order as written, still correct).
The load and the store run only when the loop runs at least once: an empty loop's element may lie
outside the array, and the original never touches it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from loopnest.ir import Expr, Scop, Statement, Var
from loopnest.ir_expr import print_expr
from loopnest.transform.reduction import CLAUSE_MARK, statement_reduction


def accumulated_arrays(scop: Scop, level: int, statements: set[int]) -> dict[str, str]:
    """The arrays (name -> reduction operator) whose reduction clause on the loop at ``level`` is printed
    as locals: a SIMD loop (not parallel) inside another loop (an outermost loop's array reductions keep
    their array-section clause)."""
    marks = scop.schedule.marks.get(level, ())
    if "simd" not in marks or "parallel" in marks:
        return {}
    if not any(scop.schedule.has_loop(s, outer) for s in statements for outer in range(level)):
        return {}
    out = {}
    for mark in marks:
        found = CLAUSE_MARK.fullmatch(mark)
        if found is not None and not scop.arrays[found.group(2)].is_scalar:
            out[found.group(2)] = found.group(1)
    return out


def _replaced(expr: Expr, old: Expr, new: Expr) -> Expr:
    return expr.rewritten(lambda e: new if e == old else None)


@dataclass
class Accumulators:
    """The locals of one SIMD loop as its body is printed: each element's C text -> (local, array)."""

    arrays: dict[str, str]  # array -> reduction operator
    prefix: str  # of the locals' names: no name of the nest starts with it
    inner: set[str]  # iterators of the loop and of every loop printed inside it
    names: dict[str, tuple[str, str]] = field(default_factory=dict)
    failed: bool = False

    def rewrite(self, original: Statement, printed: Statement, iterator: Callable[[int], str],
                quasi_affine: Callable[[str], str]) -> Statement:
        """``printed`` (``original`` as this loop prints it) with its element replaced by the local, where
        ``original`` reduces into an accumulated array; else ``printed`` unchanged."""
        red = statement_reduction(original)
        if red is None or red.variable not in self.arrays:
            return printed
        text = print_expr(printed.target, iterator, quasi_affine)
        if any(re.search(rf"\b{re.escape(it)}\b", text) for it in self.inner):
            self.failed = True
        local = self.names.setdefault(text, (f"{self.prefix}{len(self.names)}", red.variable))[0]
        guard = None if printed.guard is None else _replaced(printed.guard, printed.target, Var(local))
        return printed.replace(target=Var(local), value=_replaced(printed.value, printed.target, Var(local)),
                               guard=guard)

    def clause_names(self) -> dict[str, list[str]]:
        """Array -> the locals that stand for its elements (for the ``reduction`` clause)."""
        out: dict[str, list[str]] = {}
        for local, array in self.names.values():
            out.setdefault(array, []).append(local)
        return out

    def wrap(self, scop: Scop, pad: str, indent: str, it: str, init: str, cond: str, inc: str,
             pragmas: list[str], body: list[str]) -> list[str]:
        """The loop with its locals: loaded when it runs at least once, stored after it."""
        inner = pad + indent * 2
        loads = [f"{inner}{scop.arrays[array].element_type} {local} = {text};"
                 for text, (local, array) in self.names.items()]
        stores = [f"{inner}{text} = {local};" for text, (local, _) in self.names.items()]
        return [f"{pad}{{", f"{pad}{indent}{scop.index_type} {it} = {init};", f"{pad}{indent}if ({cond}) {{",
                *loads, *pragmas,
                f"{inner}for ({it} = {init}; {cond}; {it} += {inc}) {{", *body, f"{inner}}}", *stores,
                f"{pad}{indent}}}", f"{pad}}}"]
