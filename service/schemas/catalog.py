"""The catalog: nests and targets as the API lists and details them."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field

from service.schemas._common import Forbid, JsonObject, Page


class NestSummaryPublic(BaseModel):
    model_config = Forbid

    id: int
    program_id: int
    index: int
    name: str = Field(description="PROGRAM#INDEX, the nest's name in every answer")
    created_at: datetime


class NestsPublic(Page[NestSummaryPublic]):
    limit: int
    offset: int


class NestDetailPublic(BaseModel):
    model_config = Forbid

    id: int
    name: str | None = Field(None, description="PROGRAM#INDEX, the nest's name in every answer")
    program_id: int
    index: int = Field(description="Its position in the program (0 = first)")
    normalized: Any = Field(None, description="Its normalized form (loops, statements, accesses, roles)")
    features: JsonObject = Field(default_factory=dict, description="Static and dynamic features")
    embedding: JsonObject | list[float] | None = Field(None, description="The nest's embedding (newest model)")
    best_recipes: list[JsonObject] = Field(
        default_factory=list, description="The best recipe on each target; program_check says whether it held up "
        "in a user's whole program ('held: FIGURE') or was measured on the nest alone (a recipe a whole program "
        "refused is never a best)")


class TargetPublic(BaseModel):
    model_config = Forbid

    id: int
    signature_hash: str
    cpu_model: str
    cores: int
    isa_level: str
    cache_sizes: dict[str, int]
    compiler: str
    compiler_version: str
    peak_gflops: float | None
    memory_bandwidth_gbs: float | None
    created_at: datetime


class TargetsPublic(Page[TargetPublic]):
    pass
