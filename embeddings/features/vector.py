"""Named, unit-carrying feature vectors with a fixed schema.

A :class:`FeatureVector` is an ordered tuple of :class:`Feature` entries. Every extractor declares
its schema once (a :class:`Schema`: ordered names with units) and fills it, so two vectors from one
extractor always have the same names in the same order and can be stacked into a matrix. A value
of ``None`` means *missing* (masked): not measured, not applicable (a loop level deeper than the
nest), or not computable; it becomes NaN in :meth:`FeatureVector.as_array`, never a silent zero.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from loopnest.errors import InternalError


def signed_log2(x: float) -> float:
    """``sign(x) * log2(|x| + 1)``: compresses values that span orders of magnitude, keeps 0 at 0."""
    return math.copysign(math.log2(abs(x) + 1.0), x)


@dataclass(frozen=True)
class Feature:
    """One named value of a feature vector (None: missing or masked) and its unit."""

    name: str
    value: float | None  # None: missing / masked
    unit: str


@dataclass(frozen=True)
class Schema:
    """The ordered ``(name, unit)`` pairs of one extractor."""

    fields: tuple[tuple[str, str], ...]

    def __post_init__(self) -> None:
        names = [n for n, _ in self.fields]
        dupes = sorted({n for n in names if names.count(n) > 1})
        if dupes:
            raise InternalError(f"duplicate feature names in schema: {dupes}")

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(n for n, _ in self.fields)

    def __len__(self) -> int:
        return len(self.fields)

    def fill(
        self, values: Mapping[str, float | None], *, meta: Mapping[str, str] | None = None
    ) -> FeatureVector:
        """The vector of this schema; names absent from ``values`` are masked.

        Raises ``KeyError`` for a value whose name is not in the schema (a bug in the extractor).
        """
        known = set(self.names)
        unknown = sorted(set(values) - known)
        if unknown:
            raise KeyError(f"values for names outside the schema: {unknown}")
        entries = []
        for name, unit in self.fields:
            v = values.get(name)
            if v is not None:
                v = float(v)
                if not math.isfinite(v):
                    v = None
            entries.append(Feature(name, v, unit))
        return FeatureVector(tuple(entries), tuple(sorted((meta or {}).items())))


@dataclass(frozen=True)
class FeatureVector:
    """An ordered, fixed-schema vector of named features with units; ``None`` values are masked.

    ``meta`` holds string metadata that is not part of the vector (which counter source was used,
    the reduced parameter values of a simulation, ...).
    """

    entries: tuple[Feature, ...]
    meta: tuple[tuple[str, str], ...] = field(default=())

    # -- views -----------------------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.entries)

    @property
    def units(self) -> tuple[str, ...]:
        return tuple(e.unit for e in self.entries)

    @property
    def values(self) -> tuple[float | None, ...]:
        return tuple(e.value for e in self.entries)

    @property
    def metadata(self) -> dict[str, str]:
        return dict(self.meta)

    @property
    def mask(self) -> np.ndarray:
        """True where a value is present."""
        return np.array([e.value is not None for e in self.entries], dtype=bool)

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[Feature]:
        return iter(self.entries)

    def __getitem__(self, name: str) -> float | None:
        for e in self.entries:
            if e.name == name:
                return e.value
        raise KeyError(name)

    def unit_of(self, name: str) -> str:
        for e in self.entries:
            if e.name == name:
                return e.unit
        raise KeyError(name)

    def to_dict(self) -> dict[str, float | None]:
        """``{name: value}`` in schema order (``None`` for masked values); JSON-able."""
        return {e.name: e.value for e in self.entries}

    def to_records(self) -> list[dict[str, Any]]:
        return [{"name": e.name, "value": e.value, "unit": e.unit} for e in self.entries]

    def as_array(self) -> np.ndarray:
        """float64 array in schema order, NaN where masked."""
        return np.array([np.nan if e.value is None else e.value for e in self.entries], dtype=np.float64)

    def concat(self, other: FeatureVector) -> FeatureVector:
        """This vector followed by ``other`` (names must not clash); metadata is merged."""
        clash = sorted(set(self.names) & set(other.names))
        if clash:
            raise InternalError(f"feature names in both vectors: {clash[:5]}")
        meta = {**dict(self.meta), **dict(other.meta)}
        return FeatureVector(self.entries + other.entries, tuple(sorted(meta.items())))


def stack(vectors: Sequence[FeatureVector] | Iterable[FeatureVector]) -> np.ndarray:
    """Rows of ``vectors`` as one ``(n, d)`` matrix (NaN where masked); all must share one schema."""
    vectors = list(vectors)
    if not vectors:
        return np.empty((0, 0))
    names = vectors[0].names
    for k, v in enumerate(vectors[1:], start=1):
        if v.names != names:
            raise InternalError(f"vector {k} has a different schema than vector 0")
    return np.vstack([v.as_array() for v in vectors])
