"""Request and response models of the REST API (kept apart from the ORM models)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

MAX_SOURCE_BYTES = 256 * 1024


class ProgramIn(BaseModel):
    source: str = Field(..., max_length=MAX_SOURCE_BYTES, description="C source text")
    headers: dict[str, str] = Field(default_factory=dict, description="Quoted includes by file name")
    defines: dict[str, str | None] = Field(default_factory=dict, description="Macros, as cc -D")
    params: dict[str, int] = Field(default_factory=dict, description="Parameter values")
    function: str | None = None


class AnalysisPublic(BaseModel):
    nests: list[dict[str, Any]]
    rejected: list[dict[str, Any]] = Field(
        description="Regions outside the supported subset, with construct and location")


class ErrorPublic(BaseModel):
    error: str
    message: str
    detail: str | None = None
    location: dict[str, Any] | None = None
