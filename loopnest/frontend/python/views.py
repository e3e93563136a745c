"""Basic indexing of array views, as NumPy does it: integers drop an axis, slices keep one with a start,
a length and a step; missing trailing indices keep their axes whole. Negative constants count from the
end of the axis; a negative step walks it backwards.
"""

from __future__ import annotations

from dataclasses import dataclass

from loopnest.frontend.python.affine import Affine, Extent
from loopnest.frontend.python.lazy import View


class IndexingError(ValueError):
    """An index NumPy would reject or that cannot be resolved without the sizes' values."""


@dataclass(frozen=True)
class Index:
    value: Affine


@dataclass(frozen=True)
class Slice:
    start: Affine | None
    stop: Affine | None
    step: int


Item = Index | Slice


def index_view(view: View, items: list[Item]) -> View:
    if len(items) > view.ndim:
        raise IndexingError(f"{len(items)} indices for {view.ndim} dimensions")
    items = items + [Slice(None, None, 1)] * (view.ndim - len(items))
    values: dict[str, Affine] = {}
    shape: list[Extent] = []
    for k, (item, extent) in enumerate(zip(items, view.shape, strict=True)):
        if isinstance(item, Index):
            values[f"@{k}"] = _from_end(item.value, extent)
            continue
        start, length = _slice(item, extent)
        values[f"@{k}"] = start + Affine.axis(len(shape)).scale(item.step)
        shape.append(length)
    index = tuple(i.substitute(values) for i in view.index)
    return View(tuple(shape), view.dtype, array=view.array, index=index)


def _from_end(value: Affine, extent: Extent) -> Affine:
    """A negative constant counts from the end of the axis."""
    if value.is_const and value.const < 0:
        exact = extent.affine
        if exact is None:
            raise IndexingError("a negative index of an axis whose length is not affine")
        return exact + value
    return value


def _clamped(value: Affine, extent: Extent, backwards: bool = False) -> Affine:
    """A slice bound: from the end where a negative constant, and within the axis where both are known
    (from -1 to the last index for a slice that walks backwards)."""
    exact = extent.affine
    if value.is_const and exact is not None and exact.is_const:
        v = value.const + exact.const if value.const < 0 else value.const
        return Affine.of(max(-1, min(v, exact.const - 1)) if backwards else max(0, min(v, exact.const)))
    return _from_end(value, extent)


def _slice(item: Slice, extent: Extent) -> tuple[Affine, Extent]:
    """(first index, length) of a slice of an axis."""
    if item.step == 0:
        raise IndexingError("slice step cannot be zero")
    exact = extent.affine
    whole = item.start is None and item.stop is None
    if whole and item.step == 1:
        return Affine(), extent
    if exact is None:
        raise IndexingError("a slice of an axis whose length is not affine")
    if item.step > 0:
        start = Affine() if item.start is None else _clamped(item.start, extent)
        stop = exact if item.stop is None else _clamped(item.stop, extent)
        return start, Extent(stop - start, item.step).normal()
    start = exact - 1 if item.start is None else _clamped(item.start, extent, backwards=True)
    if item.stop is None:
        return start, Extent(start + 1, -item.step).normal()
    stop = _clamped(item.stop, extent, backwards=True)
    return start, Extent(start - stop, -item.step).normal()
