"""Integer affine expressions of loop iterators and size parameters, as the Python frontend computes them:
subscripts, slice bounds, loop bounds and array extents.

Iterators carry their canonical names (``i0`` is a statement's outermost loop) and parameters their own, so
an :class:`Affine` prints straight to isl text and to an IR expression. Placeholders (``@0``, ``@1``) stand
for the axes of an array view until the view is read at coordinates (:meth:`Affine.substitute`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from loopnest.ir import Binary, Const, Expr, Iter, Var

_ITERATOR = re.compile(r"i(\d+)")


@dataclass(frozen=True)
class Affine:
    """``sum(coeff * name) + const``; ``terms`` sorted by name, no zero coefficient."""

    terms: tuple[tuple[str, int], ...] = ()
    const: int = 0

    @staticmethod
    def of(value: int | str) -> Affine:
        return Affine((), value) if isinstance(value, int) else Affine(((value, 1),), 0)

    @staticmethod
    def iterator(depth: int) -> Affine:
        return Affine.of(f"i{depth}")

    @staticmethod
    def axis(k: int) -> Affine:
        return Affine.of(f"@{k}")

    @property
    def is_const(self) -> bool:
        return not self.terms

    @property
    def names(self) -> frozenset[str]:
        return frozenset(n for n, _ in self.terms)

    def _combine(self, other: Affine, sign: int) -> Affine:
        coeffs = dict(self.terms)
        for name, c in other.terms:
            coeffs[name] = coeffs.get(name, 0) + sign * c
        return Affine(tuple(sorted((n, c) for n, c in coeffs.items() if c)), self.const + sign * other.const)

    def __add__(self, other: Affine | int) -> Affine:
        return self._combine(other if isinstance(other, Affine) else Affine.of(other), 1)

    def __sub__(self, other: Affine | int) -> Affine:
        return self._combine(other if isinstance(other, Affine) else Affine.of(other), -1)

    def __neg__(self) -> Affine:
        return self.scale(-1)

    def scale(self, factor: int) -> Affine:
        if factor == 0:
            return Affine()
        return Affine(tuple((n, c * factor) for n, c in self.terms), self.const * factor)

    def times(self, other: Affine) -> Affine | None:
        """The product, or None where neither factor is a constant (not affine)."""
        if other.is_const:
            return self.scale(other.const)
        if self.is_const:
            return other.scale(self.const)
        return None

    def substitute(self, values: Mapping[str, Affine]) -> Affine:
        out = Affine((), self.const)
        for name, c in self.terms:
            out = out + (values[name].scale(c) if name in values else Affine(((name, c),), 0))
        return out

    def isl(self) -> str:
        parts = [f"{c}*{n}" if c != 1 else n for n, c in self.terms]
        if self.const or not parts:
            parts.append(str(self.const))
        return " + ".join(parts).replace("+ -", "- ")

    def c_text(self) -> str:
        """C (and Python) text: ``N - 2``, ``2*N``."""
        return self.isl()

    def expr(self) -> Expr:
        """The IR expression: iterators as :class:`Iter`, parameters as :class:`Var`."""
        out: Expr | None = None
        for name, c in self.terms:
            m = _ITERATOR.fullmatch(name)
            leaf: Expr = Iter(int(m.group(1))) if m else Var(name)
            if abs(c) != 1:
                leaf = Binary("*", Const(str(abs(c))), leaf)
            if out is None:
                out = leaf if c > 0 else Binary("-", Const("0"), leaf)
            else:
                out = Binary("+" if c > 0 else "-", out, leaf)
        if out is None:
            return Const(str(self.const))
        if self.const:
            out = Binary("+" if self.const > 0 else "-", out, Const(str(abs(self.const))))
        return out


@dataclass(frozen=True)
class Extent:
    """The length of an array axis: ``ceil(num / den)`` (``den`` > 1 only for a slice with a step)."""

    num: Affine
    den: int = 1

    @staticmethod
    def of(value: Affine | int) -> Extent:
        return Extent(value if isinstance(value, Affine) else Affine.of(value))

    @property
    def is_one(self) -> bool:
        return self.num.is_const and self.den == 1 and self.num.const == 1

    @property
    def affine(self) -> Affine | None:
        """The length as an affine expression, or None where it needs a division."""
        if self.den == 1:
            return self.num
        if self.num.is_const:
            return Affine.of(max(0, -(-self.num.const // self.den)))
        return None

    def normal(self) -> Extent:
        exact = self.affine
        return Extent(exact) if exact is not None else self

    def constraint(self, iterator: str) -> str:
        """isl text: ``iterator`` lies in ``[0, ceil(num / den))``."""
        scaled = iterator if self.den == 1 else f"{self.den}*{iterator}"
        return f"0 <= {iterator} and {scaled} < {self.num.isl()}"

    def c_text(self) -> str:
        """The extent as C text over the parameters (a declared dimension)."""
        if self.den == 1:
            return self.num.c_text()
        return f"({self.num.c_text()} + {self.den - 1}) / {self.den}"

    def describe(self) -> str:
        return self.c_text()
