"""Limits, constrained types and helpers shared by the API's request and response models."""

from __future__ import annotations

from typing import Annotated, Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

MAX_SOURCE_BYTES = 256 * 1024
MAX_HEADERS = 64
MAX_VECTOR = 4096
MAX_WARM_START = 20

Identifier = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=128)]
HeaderName = Annotated[str, StringConstraints(min_length=1, max_length=200)]
ParamValue = Annotated[int, Field(ge=-(2**31), le=2**31 - 1)]
ProgramName = Annotated[str, StringConstraints(pattern=r"^[^\x00-\x1f\x7f]+$", min_length=1, max_length=200)]
MatrixId = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{16}$")]
MAX_ID = 2**31 - 1  # ids are 32-bit integers in the database
FLOAT32_MAX = 3.4028234663852886e38  # larger embedding values become inf in the index's float32
Forbid = ConfigDict(extra="forbid")  # response models: a key no mapper names is a bug, never sent

JsonObject = dict[str, Any]


def check_utf8(text: str, what: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{what} is not valid Unicode text (position {exc.start})") from None
    if "\x00" in text:
        raise ValueError(f"{what} contains a NUL character (position {text.index(chr(0))})")
    return text


def check_exactly_one(model: BaseModel, first: str, second: str) -> None:
    """For a request that takes one of two fields: a ValueError (a 422) unless exactly one is given."""
    if (getattr(model, first) is None) == (getattr(model, second) is None):
        raise ValueError(f"give exactly one of {first!r} and {second!r}")


ItemT = TypeVar("ItemT")


class Page(BaseModel, Generic[ItemT]):
    """The ``XsPublic`` envelope: ``data``, a list of items, and ``count``. Subclass it per item type
    (``class JobsPublic(Page[JobPublic])``), so that each page keeps its own name in the OpenAPI schema."""

    model_config = Forbid

    data: list[ItemT]
    count: int
