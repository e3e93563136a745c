"""Which integer arrays of a nest are index structures, read off its IR: the values that keep every
access in bounds, for a measurement driver to fill them with and for reports.

- "indices": an array read as a whole subscript (``x[col[j]]``): its values must lie in [0, E) for
  the extent E of the dimension it subscripts.
- "pointers": an array whose elements are a loop's bounds (``rowptr[i] <= j < rowptr[i+1]``): its
  values must be non-decreasing, in [0, E] for the extents E of the arrays the iterator subscripts.
- "bounds": an array whose element is one bound of a loop (``j < len[i]``, ELLPACK): in [0, E].

A pointer array is grouped with the index arrays and value arrays its loop reads at the iterator
(CSR: ``rowptr`` with ``col`` and ``val``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

from loopnest.frontend.affine import parse_int_constant
from loopnest.frontend.symbols import INTEGER_TYPES
from loopnest.ir import (
    ArrayInfo,
    ArrayRef,
    Binary,
    Const,
    DynamicBound,
    Expr,
    IndexArray,
    IndexStructure,
    Iter,
    Statement,
    Unary,
    print_expr,
)


def _roots(stmt: Statement) -> Iterator[Expr]:
    yield stmt.target
    yield stmt.value
    if stmt.guard is not None:
        yield stmt.guard
    for bound in stmt.dynamic_bounds:
        yield from (side for side in (bound.lower, bound.upper) if side is not None)


def _refs(stmt: Statement) -> Iterator[ArrayRef]:
    for root in _roots(stmt):
        yield from (e for e in root.walk() if isinstance(e, ArrayRef))


def _integer_array(arrays: Mapping[str, ArrayInfo], name: str) -> bool:
    info = arrays.get(name)
    return info is not None and not info.is_scalar and info.element_type in INTEGER_TYPES


def _pointer(bound: DynamicBound, arrays: Mapping[str, ArrayInfo]) -> str | None:
    """The array whose elements are both bounds of the loop (``p[f] <= j < p[g]``), or None."""
    name = bound.pointer
    return name if name is not None and len(arrays[name].dims) == 1 and _integer_array(arrays, name) else None


def _linear(expr: Expr, arrays: Mapping[str, ArrayInfo]) -> tuple[ArrayRef | None, int, int] | None:
    """``expr`` as ``a * R + c`` with R an element of an integer array (None: a constant) and a, c integer
    constants; None for any other form."""
    if isinstance(expr, ArrayRef):
        return (expr, 1, 0) if _integer_array(arrays, expr.name) else None
    if isinstance(expr, Const):
        value = parse_int_constant(expr.text)
        return None if value is None else (None, 0, value)
    if isinstance(expr, Unary) and expr.op in ("-", "+"):
        inner = _linear(expr.operand, arrays)
        sign = -1 if expr.op == "-" else 1
        return None if inner is None else (inner[0], sign * inner[1], sign * inner[2])
    if not isinstance(expr, Binary) or expr.op not in ("+", "-", "*"):
        return None
    left, right = _linear(expr.left, arrays), _linear(expr.right, arrays)
    if left is None or right is None:
        return None
    if expr.op == "*":
        if left[0] is not None and right[0] is not None:
            return None
        ref, scale = (left[0], left[1] * right[2]) if right[0] is None else (right[0], right[1] * left[2])
        return ref, scale, left[2] * right[2]
    sign = 1 if expr.op == "+" else -1
    if left[0] is not None and right[0] is not None:
        return None
    return left[0] or right[0], left[1] + sign * right[1], left[2] + sign * right[2]


def _direct_refs(expr: Expr) -> Iterator[ArrayRef]:
    """The array elements in ``expr`` outside any subscript (those are another reference's)."""
    if isinstance(expr, ArrayRef):
        yield expr
        return
    for child in expr.children():
        yield from _direct_refs(child)


def _form_text(scale: int, offset: int) -> str:
    """``2*v+1``, ``v-1``: how a value v of the index array subscripts."""
    return ("v" if scale == 1 else f"{scale}*v") + (f"{offset:+d}" if offset else "")


@dataclass
class _Uses:
    """How one integer array subscripts: plain (target -> extent), scaled or offset, or unbounded."""

    plain: dict[str, str] = field(default_factory=dict)
    forms: dict[tuple[str, int, int], str] = field(default_factory=dict)  # (extent, a, c) -> target
    unbounded: dict[str, None] = field(default_factory=dict)


def _indices(statements: tuple[Statement, ...], arrays: Mapping[str, ArrayInfo]) -> dict[str, _Uses]:
    """Per index array, how it subscripts each array dimension (``A[d]``) and that dimension's extent."""
    out: dict[str, _Uses] = {}
    for stmt in statements:
        for ref in _refs(stmt):
            for dim, sub in enumerate(ref.subscripts):
                extent = arrays[ref.name].dims[dim] if ref.name in arrays else None
                form = _linear(sub, arrays)
                target = f"{ref.name}[{dim}]"
                if form is not None and form[0] is not None and form[1] > 0 and extent is not None:
                    uses = out.setdefault(form[0].name, _Uses())
                    if form[1:] == (1, 0):
                        uses.plain[target] = extent
                    else:
                        uses.forms[(extent, form[1], form[2])] = f"{target} as {_form_text(*form[1:])}"
                    continue
                for inner in _direct_refs(sub):
                    if _integer_array(arrays, inner.name):
                        out.setdefault(inner.name, _Uses()).unbounded[
                            f"{stmt.location.file}:{stmt.location.line}: {print_expr(ref, stmt.iterators.__getitem__)}"
                        ] = None
    return out


def _walked(stmt: Statement, depth: int) -> Iterator[tuple[str, int]]:
    """The (array, dimension) pairs ``stmt`` subscripts with exactly the iterator at ``depth``."""
    for ref in _refs(stmt):
        for dim, sub in enumerate(ref.subscripts):
            if sub == Iter(depth):
                yield ref.name, dim


def _bound_arrays(bound: DynamicBound, arrays: Mapping[str, ArrayInfo]) -> list[str]:
    """The integer arrays whose element is a whole bound of a loop that is not a pointer pair
    (``j < len[i]``, ``j = start[i]``)."""
    return [side.name for side in (bound.lower, bound.upper)
            if isinstance(side, ArrayRef) and _integer_array(arrays, side.name)]


def index_roles(statements: tuple[Statement, ...],
                arrays: Mapping[str, ArrayInfo]) -> tuple[tuple[IndexArray, ...], tuple[IndexStructure, ...]]:
    indices = _indices(statements, arrays)
    found: dict[tuple[str, str], tuple[dict[str, None], dict[str, None]]] = {}  # (array, role): extents, iterators
    members: dict[str, tuple[dict[str, None], dict[str, None]]] = {}
    for stmt in statements:
        for bound in stmt.dynamic_bounds:
            pointer = _pointer(bound, arrays)
            walked = list(_walked(stmt, bound.depth))
            extents = [d for name, dim in walked if (d := arrays[name].dims[dim]) is not None]
            named = [(pointer, "pointers")] if pointer is not None else [(a, "bounds") for a in
                                                                        _bound_arrays(bound, arrays)]
            if not extents or not named:
                continue
            for key in named:
                by_extent, by_iterator = found.setdefault(key, ({}, {}))
                by_extent.update(dict.fromkeys(extents))
                by_iterator[stmt.iterators[bound.depth]] = None
            if pointer is not None:
                _add_members(members.setdefault(pointer, ({}, {})), walked, indices, arrays)
    roles = [IndexArray(name, "indices", tuple(dict.fromkeys(by.plain.values())), (*by.plain, *by.forms.values()),
                        tuple(by.forms), tuple(by.unbounded)) for name, by in sorted(indices.items())]
    roles += [IndexArray(name, role, tuple(ext), tuple(its)) for (name, role), (ext, its) in sorted(found.items())]
    structures = tuple(IndexStructure(p, tuple(members[p][0]), tuple(members[p][1])) for p in sorted(members))
    return tuple(roles), structures


def _add_members(members: tuple[dict[str, None], dict[str, None]], walked: list[tuple[str, int]],
                 indices: Mapping[str, object], arrays: Mapping[str, ArrayInfo]) -> None:
    """The index arrays and the value arrays a compressed loop reads at its iterator."""
    idx, values = members
    for name, _ in walked:
        info = arrays[name]
        if name in indices:
            idx[name] = None
        elif len(info.dims) == 1 and not info.written and info.element_type not in INTEGER_TYPES:
            values[name] = None
