"""Integer polynomials over C names: the form of a linearized subscript (``(i*n + j)*m + k`` is
``i*m*n + j*m + k``), with the exact division that splits it into the subscripts of its rows."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from math import gcd

from pycparser import c_ast

from loopnest.frontend.affine import parse_int_constant

Monomial = tuple[str, ...]  # the factors' names, sorted, a name repeated for a power; () is a constant
# A subscript expands to more terms than any array's shape has (``(a + b + c)^20``): not read as one.
MAX_TERMS = 64
MAX_DEGREE = 8


def _order(mono: Monomial) -> tuple[int, tuple[str, ...]]:
    """Graded order: a monomial of more factors leads; among equals, the lexicographic one."""
    return len(mono), mono


def _divides(small: Monomial, big: Monomial) -> bool:
    return not (Counter(small) - Counter(big))


def _quotient(big: Monomial, small: Monomial) -> Monomial:
    return tuple(sorted((Counter(big) - Counter(small)).elements()))


@dataclass(frozen=True)
class Poly:
    """A sum of integer multiples of monomials; ``terms`` has no zero coefficient."""

    terms: tuple[tuple[Monomial, int], ...] = ()

    @staticmethod
    def of(terms: Mapping[Monomial, int] | Iterable[tuple[Monomial, int]]) -> Poly:
        acc: dict[Monomial, int] = {}
        for mono, coef in (terms.items() if isinstance(terms, Mapping) else terms):
            key = tuple(sorted(mono))
            acc[key] = acc.get(key, 0) + coef
        return Poly(tuple(sorted(((m, c) for m, c in acc.items() if c), key=lambda t: _order(t[0]), reverse=True)))

    @staticmethod
    def constant(value: int) -> Poly:
        return Poly.of([((), value)])

    @staticmethod
    def name(name: str) -> Poly:
        return Poly.of([((name,), 1)])

    def __add__(self, other: Poly) -> Poly:
        return Poly.of([*self.terms, *other.terms])

    def __neg__(self) -> Poly:
        return Poly.of((m, -c) for m, c in self.terms)

    def __sub__(self, other: Poly) -> Poly:
        return self + -other

    def __mul__(self, other: Poly) -> Poly:
        return Poly.of((a + b, ca * cb) for a, ca in self.terms for b, cb in other.terms)

    @property
    def is_zero(self) -> bool:
        return not self.terms

    @property
    def value(self) -> int | None:
        """The integer this polynomial is, or None when it names a variable."""
        if self.is_zero:
            return 0
        return self.terms[0][1] if len(self.terms) == 1 and self.terms[0][0] == () else None

    @property
    def is_affine(self) -> bool:
        """No product of two names (``i*n``, ``n*m``)."""
        return all(len(m) <= 1 for m, _ in self.terms)

    def names(self) -> set[str]:
        return {n for m, _ in self.terms for n in m}

    def coefficient(self, name: str) -> Poly | None:
        """The polynomial that multiplies ``name`` (the step of iterator ``name``), or None where a monomial
        holds ``name`` more than once (``i*i``)."""
        out = []
        for mono, coef in self.terms:
            count = mono.count(name)
            if count > 1:
                return None
            if count == 1:
                out.append((_quotient(mono, (name,)), coef))
        return Poly.of(out)

    def primitive(self) -> Poly:
        """This polynomial without its constant factor, leading coefficient positive (``2n + 4`` -> ``n + 2``)."""
        if self.is_zero:
            return self
        content = 0
        for _, coef in self.terms:
            content = gcd(content, coef)
        sign = -1 if self.terms[0][1] < 0 else 1
        return Poly.of((m, sign * c // content) for m, c in self.terms)

    def divmod(self, divisor: Poly) -> tuple[Poly, Poly]:
        """Quotient and remainder of the division by ``divisor`` (graded order): no term of the remainder is
        a multiple of the divisor's leading term. Exact (remainder zero) whenever ``divisor`` divides."""
        lead, lead_coef = divisor.terms[0]
        rest = dict(self.terms)
        quotient: dict[Monomial, int] = {}
        remainder: dict[Monomial, int] = {}
        while rest:
            mono = max(rest, key=_order)
            coef = rest[mono]
            if _divides(lead, mono) and coef % lead_coef == 0:
                factor = Poly.of({_quotient(mono, lead): coef // lead_coef})
                quotient[factor.terms[0][0]] = quotient.get(factor.terms[0][0], 0) + factor.terms[0][1]
                rest = dict((Poly(tuple(rest.items())) - factor * divisor).terms)
            else:
                remainder[mono] = coef
                del rest[mono]
        return Poly.of(quotient), Poly.of(remainder)

    def text(self) -> str:
        """C-like text (``i*n + j - 1``), for messages and extents."""
        if self.is_zero:
            return "0"
        out = ""
        for k, (mono, coef) in enumerate(self.terms):
            factors = [*([str(abs(coef))] if abs(coef) != 1 or not mono else []), *mono]
            sign = ("-" if coef < 0 else "") if k == 0 else (" - " if coef < 0 else " + ")
            out += sign + "*".join(factors)
        return out

    def evaluate(self, values: Mapping[str, int]) -> int:
        total = 0
        for mono, coef in self.terms:
            term = coef
            for name in mono:
                term *= values[name]
            total += term
        return total

    def node(self, coord: object) -> c_ast.Node:
        """The polynomial as C syntax (names and integer constants only), placed at ``coord``."""
        def factor(mono: Monomial, coef: int) -> c_ast.Node:
            parts: list[c_ast.Node] = [c_ast.ID(n, coord=coord) for n in mono]
            if abs(coef) != 1 or not parts:
                parts.insert(0, c_ast.Constant("int", str(abs(coef)), coord=coord))
            out = parts[0]
            for p in parts[1:]:
                out = c_ast.BinaryOp("*", out, p, coord=coord)
            return out

        if self.is_zero:
            return c_ast.Constant("int", "0", coord=coord)
        mono, coef = self.terms[0]
        tree = factor(mono, coef)
        if coef < 0:
            tree = c_ast.UnaryOp("-", tree, coord=coord)
        for mono, coef in self.terms[1:]:
            tree = c_ast.BinaryOp("-" if coef < 0 else "+", tree, factor(mono, coef), coord=coord)
        return tree


def polynomial(node: c_ast.Node, allowed: Callable[[str], bool] = lambda _: True) -> Poly | None:
    """``node`` as a polynomial: integer constants and names (those ``allowed``) under ``+``, ``-``, ``*``
    and integer casts; None for anything else (a division, an array element, a call)."""
    match node:
        case c_ast.Constant(type=t, value=v) if t in ("int", "long", "unsigned int", "long int", "unsigned long",
                                                      "long long", "char"):
            value = parse_int_constant(v)
            return None if value is None else Poly.constant(value)
        case c_ast.ID(name=name):
            return Poly.name(name) if allowed(name) else None
        case c_ast.Cast(expr=inner) | c_ast.UnaryOp(op="+", expr=inner):
            return polynomial(inner, allowed)
        case c_ast.UnaryOp(op="-", expr=inner):
            p = polynomial(inner, allowed)
            return None if p is None else -p
        case c_ast.BinaryOp(op=op, left=left, right=right) if op in ("+", "-", "*"):
            a, b = polynomial(left, allowed), polynomial(right, allowed)
            if a is None or b is None or (op == "*" and len(a.terms) * len(b.terms) > MAX_TERMS):
                return None
            out = a + b if op == "+" else a - b if op == "-" else a * b
            small = len(out.terms) <= MAX_TERMS and all(len(m) <= MAX_DEGREE for m, _ in out.terms)
            return out if small else None
    return None
