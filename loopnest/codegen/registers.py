"""An innermost loop's array elements kept in locals, where the tuned code runs on arrays that do not overlap.

In the user's form the arrays are pointers, and the compiler must assume that a store through one may
change what another reads: in a jammed gemm body ``C[i][j] += alpha * A[i][k] * B[k][j]`` (twice four
copies) gcc 12 loads and multiplies ``alpha * A[i][k]`` again in every iteration of the ``j`` loop and
stores ``C[i][j]`` after each of the four copies; with globals, or ``restrict`` parameters, it does
neither. ``restrict`` on locals inside the function does not help gcc 12 (tried: the same code). So the
printer does it itself, for the tuned branch of the drop-in code only, where the run-time check
(:mod:`loopnest.codegen.overlap_guard`) has proven that no array reached through a pointer overlaps another the
nest writes (the dependence analysis takes them to be distinct as well):

- an element of an array the nest never writes, the same in every iteration of the loop, is loaded once
  before the loop (``const double perfembed_reg0 = A[i][k];``), only when the loop runs at least once;
- an element of a written array that the body reaches more than once is loaded into a local at the start
  of the body (where it is read first) and stored once at its end, when every other element of that array
  the body reaches is provably a different one (isl: their subscripts are never all equal).

Loops whose body is not straight-line statements (an inner loop, a condition, a data-dependent guard) are
printed as before, as are loops that keep SIMD reductions in locals (:mod:`loopnest.codegen.accumulate`)
and loops where a subscript is not a function of the iterators and parameters (``x[col[p]]``, or
``A[i][k]`` after ``k = idx[j]`` in the body). A read the original makes only under a condition (an arm of
``?:``, the right of ``&&``) is not loaded before the loop, and subscripts with C's ``/`` or ``%`` are never
taken for distinct (isl reads them as exact division and a non-negative modulo).
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Callable
from dataclasses import dataclass, field

import islpy as isl

from loopnest.frontend.symbols import canonical_scalar
from loopnest.ir import Scop, Statement
from loopnest.ir_expr import ArrayRef, Binary, Const, Expr, Iter, QuasiAffine, Ternary, Unary, Var

_ISL_FUNCTIONS = {"perfembed_floord": "floord", "perfembed_min": "min", "perfembed_max": "max"}


@dataclass(frozen=True)
class _Ref:
    array: str
    subscripts: tuple[str, ...]
    write: bool
    statement: int = 0  # which printed statement of the body
    conditional: bool = False  # the original may not evaluate it

    @property
    def text(self) -> str:
        return self.array + "".join(f"[{s}]" for s in self.subscripts)


def _known_element(sub: Expr, params: frozenset[str]) -> bool:
    """Whether subscript ``sub`` is a function of the loop iterators and the nest's parameters alone: not
    of an array (``x[col[p]]``) nor of a scalar the body may write (``k = idx[j]; A[i][k]``), whose value
    before the loop, or at the end of the body, is another one."""
    return all(isinstance(node, (Const, Iter, QuasiAffine, Binary, Unary))
               or (isinstance(node, Var) and node.name in params) for node in sub.walk())


def _refs(expr: Expr, text: Callable[[Expr], str], out: list[_Ref], params: frozenset[str], *,
          write: bool = False, conditional: bool = False) -> bool:
    """Append the array references of ``expr`` to ``out``, each marked ``conditional`` where the original
    may not evaluate it (an arm of ``?:``, the right of ``&&``/``||``); False where a subscript is not a
    function of the iterators and parameters."""
    if isinstance(expr, ArrayRef):
        if not all(_known_element(sub, params) for sub in expr.subscripts):
            return False
        out.append(_Ref(expr.name, tuple(text(s) for s in expr.subscripts), write, conditional=conditional))
        return True
    if isinstance(expr, Ternary):
        return (_refs(expr.cond, text, out, params, conditional=conditional)
                and _refs(expr.then, text, out, params, conditional=True)
                and _refs(expr.otherwise, text, out, params, conditional=True))
    if isinstance(expr, Binary) and expr.op in ("&&", "||"):
        return (_refs(expr.left, text, out, params, conditional=conditional)
                and _refs(expr.right, text, out, params, conditional=True))
    return all(_refs(child, text, out, params, conditional=conditional) for child in expr.children())


def _substituted(expr: Expr, text: Callable[[Expr], str], locals_: dict[str, str]) -> Expr:
    def local(e: Expr) -> Expr | None:
        name = locals_.get(text(e)) if isinstance(e, ArrayRef) else None
        return None if name is None else Var(name)
    return expr.rewritten(local)


def _affine(subscripts: list[str]) -> list[isl.PwAff] | None:
    """The subscripts as isl functions of every name they use, or None where isl cannot read one."""
    if any("/" in s or "%" in s for s in subscripts):
        return None  # isl reads "/" as exact division and "%" as a modulo that is never negative; C does not
    texts = []
    for s in subscripts:
        for ours, isls in _ISL_FUNCTIONS.items():
            s = s.replace(ours, isls)
        texts.append(s)
    names = sorted({n for t in texts for n in re.findall(r"[A-Za-z_]\w*", t)} - set(_ISL_FUNCTIONS.values()))
    try:
        return [isl.PwAff(f"[{', '.join(names)}] -> {{ [({t})] }}") for t in texts]
    except isl.Error:
        return None


def _never_equal(a: _Ref, b: _Ref) -> bool:
    """Whether ``a`` and ``b`` reach different elements for every value of the names their subscripts use."""
    return _subscripts_never_equal(*sorted((a.subscripts, b.subscripts)))


@functools.lru_cache(maxsize=4096)  # jammed bodies compare the same pairs in every loop printed
def _subscripts_never_equal(first: tuple[str, ...], second: tuple[str, ...]) -> bool:
    parsed = _affine([*first, *second])
    if parsed is None:
        return False
    n = len(first)
    return any(parsed[d].eq_set(parsed[n + d]).is_empty() for d in range(n))


@dataclass
class Registers:
    """One innermost loop's locals: surveyed in a first printing of its body, then substituted in a second."""

    scop: Scop
    iterator: str
    prefix: str
    surveying: bool = True
    straight: bool = True
    refs: list[_Ref] = field(default_factory=list)
    printed: int = 0  # statements surveyed
    hoisted: dict[str, str] = field(default_factory=dict)  # element text -> local
    merged: dict[str, str] = field(default_factory=dict)
    _types: dict[str, str] = field(default_factory=dict)  # local -> C type
    _first_read: dict[str, bool] = field(default_factory=dict)  # merged element text -> read before written

    def visit(self, stmt: Statement, text: Callable[[Expr], str]) -> Statement:
        """Survey ``stmt`` (as this loop prints it), or return it with the chosen elements replaced."""
        if not self.surveying:
            locals_ = self.hoisted | self.merged
            return stmt.replace(target=_substituted(stmt.target, text, locals_),
                                value=_substituted(stmt.value, text, locals_))
        if stmt.guard is not None:
            self.straight = False
            return stmt
        found: list[_Ref] = []
        params = frozenset(self.scop.params)
        ok = _refs(stmt.value, text, found, params)
        if stmt.op != "=":
            ok = ok and _refs(stmt.target, text, found, params)
        ok = ok and _refs(stmt.target, text, found, params, write=True)
        self.straight = self.straight and ok
        self.printed += 1
        self.refs += [dataclasses.replace(ref, statement=self.printed) for ref in found]
        return stmt

    def choose(self) -> bool:
        """Pick the elements to keep in locals from the survey; False where there are none."""
        if not self.straight:
            return False
        by_array: dict[str, list[_Ref]] = {}
        for ref in self.refs:
            by_array.setdefault(ref.array, []).append(ref)
        for array, refs in sorted(by_array.items()):
            info = self.scop.arrays[array]
            ctype = canonical_scalar(info.element_type)
            if info.is_scalar or ctype is None:
                continue
            if not info.written:  # loaded before the loop only where the original surely loads it
                for ref in refs:
                    if not ref.conditional and not re.search(rf"\b{re.escape(self.iterator)}\b", ref.text):
                        self._local(self.hoisted, ref.text, ctype)
            else:
                self._merge(refs, ctype)
        self.surveying = False
        return bool(self.hoisted or self.merged)

    def _merge(self, refs: list[_Ref], ctype: str) -> None:
        distinct = list({ref.text: ref for ref in refs}.values())
        # An element that two statements of the body reach (the copies of a jammed body): one `+=` alone
        # gains nothing, and its local cost conv2d's tuned recipe 5x (9.9x -> 2.0x over the original).
        repeated = [r for r in distinct if len({x.statement for x in refs if x.text == r.text}) > 1
                    and any(x.text == r.text and x.write for x in refs)]
        if not repeated or not all(_never_equal(a, b) for k, a in enumerate(distinct) for b in distinct[k + 1:]):
            return
        for ref in repeated:
            self._local(self.merged, ref.text, ctype)
            self._first_read[ref.text] = not next(x for x in refs if x.text == ref.text).write

    def _local(self, table: dict[str, str], text: str, ctype: str) -> None:
        if text not in table:
            local = f"{self.prefix}{len(self.hoisted) + len(self.merged)}"
            table[text] = local
            self._types[local] = ctype

    def body(self, lines: list[str], pad: str) -> list[str]:
        """The loop's body with the merged elements loaded at its start and stored at its end."""
        loads = [f"{pad}{self._types[local]} {local} = {text};" for text, local in self.merged.items()
                 if self._first_read[text]]
        loads += [f"{pad}{self._types[local]} {local};" for text, local in self.merged.items()
                  if not self._first_read[text]]
        return [*loads, *lines, *(f"{pad}{text} = {local};" for text, local in self.merged.items())]

    def hoisted_loads(self, pad: str) -> list[str]:
        return [f"{pad}const {self._types[local]} {local} = {text};" for text, local in self.hoisted.items()]
