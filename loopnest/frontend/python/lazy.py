"""NumPy values before they are computed: arrays read element by element at coordinates.

An expression of the kernel lowers to a tree of these. :meth:`Lazy.at` gives the IR expression of one
element at coordinates (affine in the statement's iterators); a :class:`Reduce` has no element form: the
statement builder computes it first (into its target, or a temporary) and reads the result.
Broadcasting aligns shapes on the right, as NumPy does; an extent that cannot be proven equal to the
other's, nor is 1, is refused rather than guessed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from loopnest.frontend.python.affine import Affine, Extent
from loopnest.ir import ArrayRef, Binary, Cast, Const, Expr, Var

Coords = tuple[Affine, ...]
Shape = tuple[Extent, ...]

_INT_SIZES = {"int": 4, "long": 8}
_FLOAT_SIZES = {"float": 4, "double": 8}


class ShapeError(ValueError):
    """Shapes that do not broadcast (or whose extents cannot be proven to)."""


@dataclass(frozen=True)
class Lazy:
    shape: Shape
    dtype: str  # C element type
    weak: bool = field(default=False, kw_only=True)  # a Python number: NumPy keeps the other operand's type

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def at(self, coords: Coords) -> Expr:
        raise NotImplementedError(type(self).__name__)


@dataclass(frozen=True)
class View(Lazy):
    """Elements of an array (``A[i, 1:-1]``, ``A.T``): per dimension of the array, its subscript as an
    affine expression of the view's axes (placeholders ``@k``)."""

    array: str = ""
    index: tuple[Affine, ...] = ()

    def at(self, coords: Coords) -> Expr:
        values = {f"@{k}": c for k, c in enumerate(coords)}
        return ArrayRef(self.array, tuple(i.substitute(values).expr() for i in self.index))

    def subscripts(self, coords: Coords) -> tuple[Affine, ...]:
        values = {f"@{k}": c for k, c in enumerate(coords)}
        return tuple(i.substitute(values) for i in self.index)

    def transposed(self) -> View:
        n = self.ndim
        swap = {f"@{k}": Affine.axis(n - 1 - k) for k in range(n)}
        return View(tuple(reversed(self.shape)), self.dtype, array=self.array,
                    index=tuple(i.substitute(swap) for i in self.index))


@dataclass(frozen=True)
class Scalar(Lazy):
    """A 0-d value: a number, a scalar variable, or an integer (iterator, size) used as data."""

    expr: Expr = Const("0")

    def at(self, coords: Coords) -> Expr:
        return self.expr


@dataclass(frozen=True)
class Indexed(Lazy):
    """Any element-wise combination: ``element(coords)`` builds the element."""

    element: Callable[[Coords], Expr] = field(default=lambda c: Const("0"), compare=False)
    operands: tuple[Lazy, ...] = ()  # the arrays it reads (to find reductions inside)

    def at(self, coords: Coords) -> Expr:
        return self.element(coords)


@dataclass(frozen=True)
class Reduce(Lazy):
    """``kind`` ("sum", "max", "min") of ``operand`` over ``axes``; its shape is the axes left."""

    kind: str = "sum"
    operand: Lazy | None = None
    axes: tuple[int, ...] = ()


def scalar(expr: Expr, dtype: str, *, weak: bool = False) -> Scalar:
    return Scalar((), dtype, weak=weak, expr=expr)


def broadcast(shapes: Sequence[Shape]) -> Shape:
    """NumPy's broadcast of ``shapes`` (aligned on the right)."""
    ndim = max((len(s) for s in shapes), default=0)
    out: list[Extent] = []
    for k in range(ndim):
        extents = [s[len(s) - ndim + k] for s in shapes if len(s) - ndim + k >= 0]
        sized = {e.normal() for e in extents if not e.is_one}
        if len(sized) > 1:
            raise ShapeError(" and ".join(e.describe() for e in sized) + " are not provably equal")
        out.append(next(iter(sized)) if sized else Extent.of(1))
    return tuple(out)


def operand_coords(operand: Lazy, shape: Shape, coords: Coords) -> Coords:
    """The coordinates of ``operand`` broadcast to ``shape`` at ``coords``: an axis of extent 1 reads 0."""
    offset = len(shape) - operand.ndim
    return tuple(Affine() if e.is_one and not shape[offset + k].is_one else coords[offset + k]
                 for k, e in enumerate(operand.shape))


def combine(operands: Sequence[Lazy], dtype: str, build: Callable[[list[Expr]], Expr], *,
            weak: bool = False) -> Lazy:
    """The element-wise ``build`` of ``operands``, broadcast; a combination of scalars stays a scalar."""
    shape = broadcast([o.shape for o in operands])
    if not shape and all(isinstance(o, Scalar) for o in operands):
        return scalar(build([o.at(()) for o in operands]), dtype, weak=weak)
    ops = tuple(operands)

    def element(coords: Coords) -> Expr:
        return build([o.at(operand_coords(o, shape, coords)) for o in ops])

    return Indexed(shape, dtype, weak=weak, element=element, operands=ops)


def transposed(value: Lazy) -> Lazy:
    if isinstance(value, View):
        return value.transposed()
    if value.ndim < 2:
        return value
    return Indexed(tuple(reversed(value.shape)), value.dtype, weak=value.weak,
                   element=lambda c: value.at(tuple(reversed(c))), operands=(value,))


def matmul(a: Lazy, b: Lazy, dtype: str) -> Reduce:
    """``a @ b`` (1-d or 2-d each) as the sum over the shared axis of a product with that axis last."""
    if not 1 <= a.ndim <= 2 or not 1 <= b.ndim <= 2:
        raise ShapeError("matmul of arrays with more than 2 dimensions is not supported")
    inner_a, inner_b = a.shape[-1].normal(), b.shape[0].normal()
    if inner_a != inner_b:
        raise ShapeError(f"the inner extents {inner_a.describe()} and {inner_b.describe()} are not provably equal")
    rows = a.shape[:-1]
    cols = b.shape[1:]

    def element(c: Coords) -> Expr:
        r = c[-1]
        left = a.at((*c[:len(rows)], r))
        right = b.at((r, *c[len(rows):len(rows) + len(cols)]))
        return Binary("*", left, right)

    term = Indexed((*rows, *cols, inner_a), dtype, element=element, operands=(a, b))
    return Reduce((*rows, *cols), dtype, kind="sum", operand=term, axes=(term.ndim - 1,))


def reduce(kind: str, value: Lazy, axes: tuple[int, ...] | None) -> Lazy:
    """``np.sum``/``np.max``/``np.min`` over ``axes`` (None: all)."""
    chosen = tuple(range(value.ndim)) if axes is None else axes
    if not chosen:
        return value
    if value.ndim == 0:
        return value
    shape = tuple(e for k, e in enumerate(value.shape) if k not in chosen)
    return Reduce(shape, value.dtype, kind=kind, operand=value, axes=tuple(sorted(chosen)))


def reduced_coords(reduction: Reduce, kept: Coords, over: Coords) -> Coords:
    """The operand's coordinates: the kept axes at ``kept``, the reduced ones at ``over``."""
    operand = reduction.operand
    assert operand is not None
    kept_it, over_it = iter(kept), iter(over)
    return tuple(next(over_it) if k in reduction.axes else next(kept_it) for k in range(operand.ndim))


def promote(a: Lazy, b: Lazy) -> str:
    """NumPy's result type of an arithmetic operation (a Python number defers to an array's kind)."""
    if a.weak != b.weak:
        strong, weak = (b, a) if a.weak else (a, b)
        return "double" if weak.dtype in _FLOAT_SIZES and strong.dtype in _INT_SIZES else strong.dtype
    if a.dtype == b.dtype:
        return a.dtype
    if a.dtype in _INT_SIZES and b.dtype in _INT_SIZES:
        return max(a.dtype, b.dtype, key=_INT_SIZES.__getitem__)
    if a.dtype in _FLOAT_SIZES and b.dtype in _FLOAT_SIZES:
        return max(a.dtype, b.dtype, key=_FLOAT_SIZES.__getitem__)
    return "double"


def is_float(dtype: str) -> bool:
    return dtype in _FLOAT_SIZES


def as_float(expr: Expr, dtype: str) -> Expr:
    """``expr`` of type ``dtype`` as a floating value (an integer is cast to double, as NumPy's true
    division and float functions convert it)."""
    return expr if is_float(dtype) else Cast("double", expr)


def scalar_var(name: str, dtype: str) -> Scalar:
    return scalar(Var(name), dtype)
