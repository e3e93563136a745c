"""The embedders' hyper-parameters, declared per class and checked when ``fit`` starts.

Declared as scikit-learn declares its own (a dict of parameter name to allowed values), but checked
here: scikit-learn's checker (``sklearn.utils._param_validation``, ``sklearn.base._fit_context``) is
private to it and changes between releases. A value none of a parameter's constraints allows raises
:class:`~embeddings.errors.EmbeddingInputError`, one line naming the class, the parameter, what it
may be and the value given.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Literal, TypeAlias

import numpy as np

from embeddings.errors import EmbeddingInputError


@dataclass(frozen=True)
class Interval:
    """A number of ``kind`` (Integral or Real) between ``low`` and ``high`` (None: unbounded);
    ``closed`` says which ends belong to it. Booleans are never numbers here."""

    kind: type[Integral] | type[Real]
    low: float | None
    high: float | None = None
    closed: Literal["left", "right", "both", "neither"] = "left"

    def allows(self, value: object) -> bool:
        if isinstance(value, bool | np.bool_) or not isinstance(value, self.kind):
            return False
        number = float(value)
        open_low, open_high = self.closed in ("right", "neither"), self.closed in ("left", "neither")
        below = self.low is not None and (number < self.low or (number == self.low and open_low))
        above = self.high is not None and (number > self.high or (number == self.high and open_high))
        return not (below or above)

    def describe(self) -> str:
        what = "an int" if self.kind is Integral else "a number"
        low = "-inf" if self.low is None else f"{self.low:g}"
        high = "inf" if self.high is None else f"{self.high:g}"
        opening = "[" if self.closed in ("left", "both") and self.low is not None else "("
        closing = "]" if self.closed in ("right", "both") and self.high is not None else ")"
        return f"{what} in {opening}{low}, {high}{closing}"


@dataclass(frozen=True)
class Options:
    """One of a set of strings."""

    values: frozenset[str]

    def allows(self, value: object) -> bool:
        return isinstance(value, str) and value in self.values

    def describe(self) -> str:
        return "one of " + ", ".join(repr(v) for v in sorted(self.values))


# "boolean": True or False; "random_state": None, an int or a numpy RandomState; a type: an instance
# of it; None: None itself.
Constraint: TypeAlias = Interval | Options | Literal["boolean", "random_state"] | type | None
Constraints: TypeAlias = Mapping[str, Sequence[Constraint]]


def _allows(constraint: Constraint, value: object) -> bool:
    if constraint is None:
        return value is None
    if constraint == "boolean":
        return isinstance(value, bool | np.bool_)
    if constraint == "random_state":
        return value is None or isinstance(value, np.random.RandomState) or (
            isinstance(value, Integral) and not isinstance(value, bool))
    if isinstance(constraint, type):
        return isinstance(value, constraint)
    assert isinstance(constraint, Interval | Options)
    return constraint.allows(value)


def _describe(constraint: Constraint) -> str:
    if constraint is None:
        return "None"
    if constraint == "boolean":
        return "True or False"
    if constraint == "random_state":
        return "None, an int or a numpy RandomState"
    if isinstance(constraint, type):
        return f"a {constraint.__name__}"
    assert isinstance(constraint, Interval | Options)
    return constraint.describe()


def check_parameters(owner: object, constraints: Constraints) -> None:
    """Raise :class:`EmbeddingInputError` for the first attribute of ``owner`` that none of its
    constraints allows."""
    for name, allowed in constraints.items():
        value = getattr(owner, name)
        if not any(_allows(c, value) for c in allowed):
            what = " or ".join(_describe(c) for c in allowed)
            raise EmbeddingInputError(f"{type(owner).__name__}: {name} must be {what}; got {value!r}")
