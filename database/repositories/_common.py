"""Helpers shared by the repositories: get-or-create, unique inserts and argument checks."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from database.domain import JsonValue, canonical_json
from database.errors import DuplicateError, InvalidRecordError
from database.tables import Base

M = TypeVar("M", bound=Base)
T = TypeVar("T")

# Ids per IN (...) clause; far below SQLite's and PostgreSQL's bound-parameter limits.
IN_CHUNK = 500


def get_or_create(session: Session, find: Callable[[], M | None], build: Callable[[], M]) -> tuple[M, bool]:
    """Return ``(row, created)``, safe against a concurrent writer inserting the same row.

    The insert runs in a savepoint; if a unique constraint fires because another transaction
    won the race, the savepoint is rolled back and the winner's row is read instead, so the
    caller's transaction goes on. An integrity error that ``find`` cannot explain is re-raised.
    """
    row = find()
    if row is not None:
        return row, False
    try:
        with session.begin_nested():
            row = build()
            session.add(row)
    except IntegrityError:
        row = find()
        if row is None:
            raise
        return row, False
    return row, True


def insert_unique(session: Session, row: M, *, what: str) -> M:
    """Insert ``row`` or raise :class:`DuplicateError` naming ``what`` if it clashes."""
    try:
        with session.begin_nested():
            session.add(row)
    except IntegrityError as e:
        raise DuplicateError(f"{what} already exists") from e
    return row


def json_value(value: JsonValue, *, what: str) -> JsonValue:
    """A JSON-only copy of ``value`` (tuples become lists), or :class:`InvalidRecordError` naming ``what``."""
    try:
        return json.loads(canonical_json(value))
    except (TypeError, ValueError) as e:
        raise InvalidRecordError(f"{what} must be JSON (finite numbers, string keys): {e}") from e


def json_object(value: Mapping[str, Any] | None, *, what: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise InvalidRecordError(f"{what} must be a mapping, got {type(value).__name__}")
    result = json_value(dict(value), what=what)
    assert isinstance(result, dict)
    return result


def feature_dict(values: Mapping[str, float] | None, *, what: str) -> dict[str, float]:
    """Features as ``name -> finite float``; anything else is an :class:`InvalidRecordError` naming the feature."""
    out: dict[str, float] = {}
    for name, value in (values or {}).items():
        if not isinstance(name, str):
            raise InvalidRecordError(f"{what}: feature names must be strings, got {name!r}")
        try:
            number = float(value)
        except (TypeError, ValueError) as e:
            raise InvalidRecordError(f"{what}: feature {name!r} is not a number: {value!r}") from e
        if not math.isfinite(number):
            raise InvalidRecordError(f"{what}: feature {name!r} is not finite: {number}")
        out[name] = number
    return out


def check_positive(value: float, *, what: str) -> None:
    if not value > 0:
        raise InvalidRecordError(f"{what} must be positive, got {value}")


def check_non_negative(value: float, *, what: str) -> None:
    if not value >= 0:
        raise InvalidRecordError(f"{what} must be zero or more, got {value}")


def chunks(items: Sequence[T] | Iterable[T], size: int = IN_CHUNK) -> Iterator[list[T]]:
    batch: list[T] = []
    for item in items:
        batch.append(item)
        if len(batch) == size:
            yield batch
            batch = []
    if batch:
        yield batch
