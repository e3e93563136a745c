"""Every parameter of a nest has a value: the one check, shared by every layer (the harness, the
features, the records, the worker, the service), so each says the same one line naming what is missing."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from loopnest.errors import ParameterError


def missing_params(names: Iterable[str], values: Mapping[str, object]) -> list[str]:
    """The parameters among ``names`` without a value in ``values``, in order."""
    return [str(p) for p in names if p not in values]


def require_params(names: Iterable[str], values: Mapping[str, Any], *, what: str,
                   hint: str = "") -> dict[str, int]:
    """Each parameter of ``names`` with its value as an integer; else a :class:`ParameterError`
    ``WHAT: missing value for parameter(s) A, B[; HINT]`` (or naming a value that is no integer);
    ``{name}`` in ``hint`` is the first missing parameter."""
    names = list(names)
    missing = missing_params(names, values)
    if missing:
        raise ParameterError(f"{what}: missing value for parameter(s) {', '.join(missing)}"
                             + (f"; {hint.format(name=missing[0])}" if hint else ""))
    try:
        return {p: int(values[p]) for p in names}
    except (TypeError, ValueError):
        raise ParameterError(f"{what}: parameter values must be integers, got "
                             f"{ {p: values[p] for p in names} }") from None
