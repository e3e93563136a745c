"""Tuning jobs: what a client sends to enqueue one and what it reads back."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field, model_validator

from database.domain import JobStatus
from service.schemas._common import (
    MAX_ID,
    MAX_WARM_START,
    Forbid,
    Identifier,
    JsonObject,
    Page,
    ParamValue,
    check_exactly_one,
)
from service.schemas.programs import ProgramIn


class RecipeIn(BaseModel):
    steps: list[JsonObject] = Field(..., max_length=64)


class JobIn(BaseModel):
    """A tuning job for a stored nest (``nest_id``) or for a nest of a program sent along."""

    nest_id: int | None = Field(None, ge=1, le=MAX_ID, description="A nest already in the database")
    program: ProgramIn | None = Field(None, description="Or a program: it is stored, and its nest 'nest' tuned")
    nest: int = Field(0, ge=0, le=10_000, description="Which nest of 'program' (0 = first)")
    params: dict[Identifier, ParamValue] | None = Field(
        None, max_length=256, description="Parameter values (default: the program's)")
    budget: int | None = Field(None, ge=1, le=MAX_ID, description="Trials to evaluate (default: the server's)")
    target_id: int | None = Field(None, ge=1, le=MAX_ID, description="Target (default: the worker's machine)")
    reps: int | None = Field(None, ge=1, le=100)
    threads: int | None = Field(None, ge=0, le=1024)
    timeout_s: float | None = Field(None, gt=0, le=7 * 24 * 3600)
    seed: int | None = Field(None, ge=0, le=2**32 - 1)
    warm_start: list[RecipeIn] = Field(default_factory=list, max_length=MAX_WARM_START,
                                       description="Recipes to try first")

    @model_validator(mode="after")
    def _one_nest(self) -> JobIn:
        check_exactly_one(self, "nest_id", "program")
        return self


class JobPublic(BaseModel):
    model_config = Forbid

    id: int
    nest_id: int
    target_id: int | None
    status: JobStatus
    status_text: str = Field(description="The status in words; \"waiting for a worker: ...\" while no live "
                                         "worker can run it")
    budget: int
    trials_done: int
    best_speedup: float | None
    best_recipe_id: int | None
    best_recipe: JsonObject | None = Field(description="Steps of the best recipe so far")
    best_recipe_text: str | None = Field(None, description="The best recipe in the nest's loop names")
    error: str | None
    worker: str | None = Field(description="The worker that holds or held the job")
    attempts: int
    created_at: datetime
    updated_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class JobsPublic(Page[JobPublic]):
    pass
