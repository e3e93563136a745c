"""Linearized subscripts (``A[i*n + j]`` over ``double *A``) read as the multi-dimensional accesses they
stand for (``A[i][j]`` in rows of ``n``), as Polly delinearizes them (Grosser et al., "Optimistic
delinearization of parametrically sized arrays", ICS 2015).

Per flat array of a region: the steps of the loop iterators in its subscripts that hold size parameters
(``n`` for ``i`` in ``i*n + j``) are the candidate strides; each is a multiple of the next smaller one, and
the quotients are the extents of the inner dimensions (strides ``m`` and ``n*m``: rows ``[n][m]``). Each
subscript is then divided by the extents, innermost first: the remainders are the inner subscripts, the
last quotient the outer one. The split is sound only where each inner subscript stays in ``[0, extent)``;
the expression builder proves that from the loop bounds at each access (:func:`fit_rows`). An array it
cannot split keeps its declared extent's over-approximation where it has one, and is otherwise refused
with the reason and the declaration that works (``const double (*restrict A)[n]``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import islpy as isl
from pycparser import c_ast

from loopnest.errors import SourceLocation, UnsupportedConstructError
from loopnest.frontend.literals import shorten
from loopnest.frontend.polynomial import Poly, polynomial
from loopnest.frontend.symbols import Symbol, c_text
from loopnest.ir import FlatArray

CONSTRUCT = "non-affine subscript"


class RowsRefused(UnsupportedConstructError):
    """An access of ``array`` whose split into rows the loop bounds do not prove; ``fallback``: the array has
    a declared extent, and the region is analysed again with the array flat."""

    def __init__(self, construct: str, message: str, location: SourceLocation | None = None, *, array: str = "",
                 fallback: bool = False) -> None:
        super().__init__(construct, message, location)
        self.array = array
        self.fallback = fallback

    def __reduce__(self) -> tuple[object, ...]:
        return (_rows_refused, (self.construct, self.message, self.location, self.array, self.fallback))


def _rows_refused(construct: str, message: str, location: SourceLocation | None, array: str,
                  fallback: bool) -> RowsRefused:
    return RowsRefused(construct, message, location, array=array, fallback=fallback)


def row_condition(constraints: list[str], depth: int, params: tuple[str, ...], subscript: str,
                  extent: str) -> tuple[bool, isl.Set | None]:
    """Whether ``0 <= subscript < extent`` (isl texts) holds at every point of the domain ``constraints`` over
    the iterators ``i0``..``i{depth-1}`` for every value >= 0 of the parameters; where it does not, the
    parameter values for which it does (``p <= lda``), or None when under those the domain is empty."""
    names, its = ", ".join(params), ", ".join(f"i{d}" for d in range(depth))
    base = " and ".join(f"{p} >= 0" for p in params) or "true"
    domain = isl.Set(f"[{names}] -> {{ [{its}] : ({' and '.join(constraints) or 'true'}) and {base} }}")
    outside = domain.intersect(isl.Set(f"[{names}] -> {{ [{its}] : {subscript} < 0 or {subscript} >= {extent} }}"))
    if outside.is_empty():
        return True, None
    runs = domain.params()
    holds = isl.Set(f"[{names}] -> {{ : {base} }}").subtract(outside.params())
    if holds.intersect(runs).is_empty():
        return False, None
    # Said where the nest runs (p <= lda), not also where it does nothing (or m = 0): a stronger assumption,
    # as simple as the user's own contract.
    return False, holds.gist(runs).coalesce()


@dataclass(frozen=True)
class RowLayout:
    """How the subscripts of the flat array ``array`` split into rows: ``sizes`` are the extents of its
    dimensions past the first (outer to inner), ``outer`` the first's where the declaration gives it
    (``double A[m * n]``). ``fallback``: the declaration has an affine extent, which an access that does not
    split may span instead (the analysis before delinearization)."""

    array: str
    sizes: tuple[Poly, ...]
    outer: Poly | None
    fallback: bool

    def split(self, subscript: Poly) -> list[Poly] | None:
        """The subscripts, outer to inner, of the element at linear offset ``subscript``; None where one of
        them is not affine (a product of names is left over)."""
        parts: list[Poly] = []
        rest = subscript
        for size in reversed(self.sizes):
            rest, remainder = rest.divmod(size)
            parts.append(remainder)
        parts.append(rest)
        parts.reverse()
        return parts if all(p.is_affine for p in parts) else None

    def symbol(self, sym: Symbol) -> Symbol:
        """``sym`` with the dimensions of its rows, remembered as flat in the source."""
        dims = (None if self.outer is None else self.outer.text(), *(s.text() for s in self.sizes))
        nodes = (None if self.outer is None else self.outer.node(None), *(s.node(None) for s in self.sizes))
        return dataclasses.replace(sym, dims=dims, dim_nodes=nodes,
                                   flat=FlatArray(const=sym.pointee_const, restrict=sym.restrict))


def fit_rows(parts: list[Poly], sizes: tuple[Poly, ...],
             check: Callable[[Poly, Poly], tuple[bool, isl.Set | None]]) -> tuple[int | None, list[isl.Set]]:
    """Make each inner subscript of ``parts`` (changed in place) lie in ``[0, extent)``, innermost first, as
    ``check(subscript, extent)`` (:func:`row_condition`) proves it: as split, or moved by one row (``n - 1 - j``
    splits as ``-1 - j`` in the next row), or as split under an assumption on the parameters (``k < p`` in
    rows of ``lda`` where ``p <= lda``, as Polly assumes it). The dimension that cannot be made to fit (or
    None), and the assumptions made."""
    assumed: list[isl.Set] = []
    for dim in range(len(parts) - 1, 0, -1):
        size = sizes[dim - 1]
        fallback: isl.Set | None = None
        for shift in (0, 1, -1):
            moved = parts[dim] + Poly.constant(shift) * size
            proven, assumption = check(moved, size)
            if proven:
                parts[dim] = moved
                parts[dim - 1] = parts[dim - 1] - Poly.constant(shift)
                break
            if shift == 0:
                fallback = assumption
        else:
            if fallback is None:
                return dim, assumed
            assumed.append(fallback)
    return None, assumed


def dimensions(strides: Iterable[Poly]) -> tuple[tuple[Poly, ...], tuple[Poly, Poly] | None]:
    """The extents of the inner dimensions (outer to inner) whose products are ``strides``, as Polly's
    ``findArrayDimensions``: the smallest stride is the innermost extent, every stride is a multiple of it,
    and the quotients are the strides of the rest. Else ``()`` and two strides neither divides."""
    terms = list(dict.fromkeys(s.primitive() for s in strides))
    sizes: list[Poly] = []
    while terms:
        terms.sort(key=lambda p: (len(p.terms[0][0]), p.terms[0][0]), reverse=True)
        step = terms[-1]
        quotients = []
        for term in terms:
            quotient, remainder = term.divmod(step)
            if not remainder.is_zero:
                return (), (term, step)
            if quotient.value is None:
                quotients.append(quotient.primitive())
        sizes.append(step)
        terms = list(dict.fromkeys(quotients))
    return tuple(reversed(sizes)), None


def declaration_hint(sym: Symbol, sizes: Iterable[str]) -> str:
    """The declaration under which the array's accesses are multi-dimensional."""
    const = "const " if sym.pointee_const else ""
    restrict = "restrict " if sym.restrict else ""
    rows = "".join(f"[{s}]" for s in sizes)
    return f"declare it as a pointer to rows, e.g. {const}{sym.scalar_type} (*{restrict}{sym.name}){rows}"


def _linear_accesses(node: c_ast.Node, symbols: dict[str, Symbol],
                     found: dict[str, list[tuple[c_ast.ArrayRef, Poly | None]]]) -> None:
    """Every full subscript ``A[e]`` under ``node`` of a one-dimensional array, by array, with its polynomial
    (None where ``e`` is none)."""
    if isinstance(node, c_ast.ArrayRef) and isinstance(node.name, c_ast.ID):
        sym = symbols.get(node.name.name)
        if sym is not None and len(sym.dims) == 1 and sym.scalar_type is not None:
            found.setdefault(sym.name, []).append((node, polynomial(node.subscript)))
    for _, child in node.children():
        _linear_accesses(child, symbols, found)


def _loop_names(node: c_ast.Node, names: set[str]) -> None:
    """The iterators of the ``for`` loops under ``node``."""
    if isinstance(node, c_ast.For) and isinstance(node.init, c_ast.DeclList):
        names.update(d.name for d in node.init.decls)
    elif isinstance(node, c_ast.For) and isinstance(node.init, c_ast.Assignment) \
            and isinstance(node.init.lvalue, c_ast.ID):
        names.add(node.init.lvalue.name)
    for _, child in node.children():
        _loop_names(child, names)


def plan_rows(items: list[c_ast.Node], symbols: dict[str, Symbol], locate: Callable[[c_ast.Node], SourceLocation],
              keep_flat: frozenset[str] = frozenset()) -> dict[str, RowLayout]:
    """The row layout of each flat array of the region subscripted linearly with size parameters (but those
    of ``keep_flat``).

    Raises :class:`UnsupportedConstructError` at the access, with the reason and the declaration that
    works, for an array that has no affine extent to fall back on and cannot be split."""
    loops: set[str] = set()
    found: dict[str, list[tuple[c_ast.ArrayRef, Poly | None]]] = {}
    for item in items:
        _loop_names(item, loops)
        _linear_accesses(item, symbols, found)
    out: dict[str, RowLayout] = {}
    for name, refs in found.items():
        if name in keep_flat:
            continue
        layout = _layout(symbols[name], refs, loops)
        if isinstance(layout, RowLayout):
            out[name] = layout
        elif layout is not None and not _has_affine_extent(symbols[name]):
            node, reason, sizes = layout
            hint = declaration_hint(symbols[name], sizes)
            raise UnsupportedConstructError(
                CONSTRUCT, f"unsupported construct: {CONSTRUCT} ({shorten(c_text(node))}: {reason}; {hint})",
                locate(node))
    return out


_Refusal = tuple[c_ast.Node, str, tuple[str, ...]]  # the access, why, the extents for the hint


def _layout(sym: Symbol, refs: list[tuple[c_ast.ArrayRef, Poly | None]],
            loops: set[str]) -> RowLayout | _Refusal | None:
    """The array's layout; None where no subscript is linearized (no iterator has a step of parameters,
    or a product of iterators makes it non-affine whatever the rows); else why it cannot be split."""
    strides: list[tuple[c_ast.ArrayRef, Poly]] = []
    for node, poly in refs:
        for it in sorted(loops & (poly.names() if poly is not None else set())):
            step = poly.coefficient(it) if poly is not None else None
            if step is None or step.names() & loops:
                return None  # i*i, i*j: not a linearization
            if step.value is None:
                strides.append((node, step))
    if not strides:
        return None
    sizes, clash = dimensions(s for _, s in strides)
    if clash is not None:
        big, small = clash
        where = next(node for node, s in strides if s.primitive() in (big, small))
        return where, (f"its strides {big.text()} and {small.text()} are not multiples of one row length"), \
            (strides[0][1].primitive().text(),)
    texts = tuple(s.text() for s in sizes)
    wide = next((s for s in sizes if not s.is_affine), None)
    if wide is not None:
        return strides[0][0], f"the row length {wide.text()} is a product of size parameters", texts
    layout = RowLayout(sym.name, sizes, _outer_extent(sym, sizes), _has_affine_extent(sym))
    for node, poly in refs:
        if poly is None:
            return node, (f"{shorten(c_text(node.subscript))} is not a sum of multiples of the row length "
                          f"{texts[-1]}"), texts
        if layout.split(poly) is None:
            return node, f"{poly.text()} does not split into rows of {' x '.join(texts)}", texts
    return layout


def _outer_extent(sym: Symbol, sizes: tuple[Poly, ...]) -> Poly | None:
    """The declared extent over the product of the row extents (``m`` for ``double A[m * n]``), if exact and affine."""
    node = sym.dim_nodes[0] if sym.dim_nodes else None
    declared = polynomial(node) if node is not None else None
    if declared is None:
        return None
    rows = Poly.constant(1)
    for size in sizes:
        rows = rows * size
    quotient, remainder = declared.divmod(rows)
    return quotient if remainder.is_zero and quotient.is_affine and not quotient.is_zero else None


def _has_affine_extent(sym: Symbol) -> bool:
    node = sym.dim_nodes[0] if sym.dim_nodes else None
    declared = polynomial(node) if node is not None else None
    return declared is not None and declared.is_affine
