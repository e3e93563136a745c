"""Suggestions and search: the transfer-tuning request, its per-nest answers, and the embedding search."""

from __future__ import annotations

import math
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from service.schemas._common import FLOAT32_MAX, MAX_VECTOR, Forbid, JsonObject, check_exactly_one
from service.schemas.programs import ProgramIn
from service.schemas.status import ErrorPublic


class SuggestionsIn(ProgramIn):
    k: int = Field(5, ge=1, le=100, description="Neighbours per nest")
    evaluate: bool | Literal["nest", "program"] = Field(
        False, description='Compile, verify and time the adapted recipes here (bounded pool); "program" also '
        "builds and times the whole program (it must define main), original against tuned, and keeps the "
        "tuning only when its output is the same and it is faster by the margin")
    run: str | None = Field(None, max_length=1024, description='With evaluate "program": how to run it, '
                            "'{program} ARGS' (runs in the sandbox); with build, a command run in the project's "
                            "root ('./app input.txt')")
    build: str | None = Field(None, max_length=1024, description='With evaluate "program": the shell command that '
                              "builds the program in a copy of the project (files, path): 'make', 'cc -O3 src/*.c "
                              "-Iinclude -o app -lm'; runs in the sandbox")
    check: str | None = Field(None, max_length=1024, description='With evaluate "program": a shell command '
                              "comparing the runs' files in $ORIGINAL and $TUNED, exit 0 when they agree")
    fallback: bool = Field(True, description="Enqueue a tuning job when no neighbour is good enough")

    @model_validator(mode="after")
    def _build_runs(self) -> SuggestionsIn:
        if self.build is not None and self.run is None:
            raise ValueError("build needs run: the command that runs the built program in the project's root")
        if self.build is not None and self.evaluate != "program":
            raise ValueError('build is for evaluate "program": the whole program built and timed')
        return self


class _NeighbourBase(BaseModel):
    model_config = Forbid

    nest_id: int
    name: str | None = Field(None, description="PROGRAM#INDEX, the nest's name in every answer")
    distance: float | None = None


class NeighbourPublic(_NeighbourBase):
    """A stored nest near the query: its id, its name (``PROGRAM#INDEX``, as in ``/v1/nests``), distance and
    best verified speedup with the target it was measured on."""

    best_speedup: float | None = Field(None, description="Its best verified speedup on any target")
    best_target_id: int | None = Field(None, description="The target of best_speedup")
    best_target: JsonObject | None = Field(None, description="That target: id, name, and this_machine")


class GatePublic(BaseModel):
    """The confidence gate: a neighbour's recipe is trusted when the nearest neighbour is within the
    threshold (a typical nearest-neighbour distance among the stored nests)."""

    model_config = Forbid

    confident: bool | None = Field(description="Whether the nearest neighbour is within the threshold")
    distance: float | None = Field(description="Distance to the nearest neighbour with a verified recipe "
                                               "(null: none)")
    threshold: float | None = Field(description="The largest distance the gate trusts (null: no embedding model)")
    accepted: bool | None = Field(description="With evaluate: whether a candidate held up when re-measured")


class SuggestedNeighbourPublic(_NeighbourBase):
    """A neighbour of a nest in a suggestion: another stored nest, its best recipe and where it was measured."""

    recorded_speedup: float | None = Field(None, description="Its best recipe's speedup, on its own nest")
    recipe: JsonObject | None = Field(None, description="Its best recipe (canonical JSON)")
    recipe_text: str | None = Field(None, description="The neighbour's best recipe in its own loop names "
                                    "(the JSON 'recipe' is the canonical form)")
    target: JsonObject | None = Field(None, description="Where its recorded speedup was measured: id, name, "
                                      "and this_machine (false: measured on another machine, e.g. the seed's)")


class SuggestedNestPublic(BaseModel):
    """What the service knows and did for one nest of the program. The evaluation's fields
    (``baseline_seconds`` to ``evaluations``) are present only in an evaluated answer."""

    model_config = Forbid

    index: int = Field(description="Position of the nest in the program (0 = first)")
    nest_id: int | None = Field(None, description="Its id once stored (with evaluate or fallback)")
    name: str | None = Field(None, description="PROGRAM#INDEX: the program's name (its 'name', else its "
                             "function, else 'program') and the nest's position")
    function: str | None = Field(None, description="The function the nest is in")
    params: dict[str, int] = Field(default_factory=dict, description="The parameter values it was analysed at")
    loop_names: list[str] = Field(default_factory=list, description="Its loops' names, outermost first")
    neighbours: list[SuggestedNeighbourPublic] = Field(default_factory=list,
                                                       description="Other stored nests, nearest first")
    recipes: list[JsonObject] = Field(default_factory=list, description="Neighbours' recipes adapted to this nest "
                                      "(per neighbour, nearest first: its best, then its best of other recipe "
                                      "families), each with recipe_text in this nest's loop names, and "
                                      "from_recipe_text and from_speedup: the neighbour's recipe it came from, and "
                                      "variant: transfer's variant of that recipe ('taller block', "
                                      "'SIMD reduction') or ''. "
                                      "When no neighbour is within the gate, also the recipe space's first "
                                      "guesses (isl's schedule; the outermost parallel loop with the innermost "
                                      "vectorized), with from_nest_id null")
    results: list[JsonObject] = Field(default_factory=list,
                                      description="This nest's own results: measured now (evaluate), or else "
                                      "its tuned_before result; never a neighbour's")
    tuned_before: JsonObject | None = Field(
        None, description="This very nest (same program, position and IR) measured before at the same parameter "
        "values on this machine: best recipe, speedup with its interval, and the measurement count")
    gate: GatePublic | None = Field(None, description="The confidence gate's decision")
    job_id: int | None = Field(None, description="The tuning job enqueued when the gate said no")
    baseline_seconds: float | None = Field(None, description="With evaluate: the original nest's median time")
    threads: int | None = Field(None, description="With evaluate: the threads it ran with")
    accepted: bool | None = Field(None, description="With evaluate: whether a candidate held up")
    best: JsonObject | None = Field(None, description="With evaluate: the accepted recipe, re-measured")
    evaluations: int | None = Field(None, description="With evaluate: candidates evaluated")
    screening_pressure: float | None = Field(None, description="With evaluate: CPU pressure while the candidates "
                                             "were screened (0-1)")
    busy: bool | None = Field(None, description="With evaluate: the machine was busy while screening (pressure "
                              "above 0.25): screening figures are low, parallel ones most; rerun idle or with 1 thread")


class SuggestionsPublic(BaseModel):
    model_config = Forbid

    nests: list[SuggestedNestPublic]
    rejected: list[JsonObject] = Field(default_factory=list)
    evaluated: bool = False
    program: JsonObject | None = Field(None, description='With evaluate "program": the whole program, original '
                                       "against tuned (present only when a nest was accepted)")


class ProgressPublic(BaseModel):
    """Where a running evaluation is: ``text`` says it in words (``nest 1/2: candidate 3/5 (from
    gemm.c#0): timing``); the other fields are its parts."""
    model_config = Forbid

    stage: str = Field(description='"baseline", "candidate", "re-measuring", "storing results" or "whole program"')
    step: str = Field(description='What happens now: "compiling", "timing", "verifying", "timing run 2", ...')
    current: int = Field(description="Which item of the stage (1-based; 0 when the stage has no items)")
    total: int = Field(description="Items in the stage (candidates to screen, winners to re-measure)")
    item: str = Field(description="The neighbour the candidate was adapted from, if any")
    nest: int = Field(description="Which nest of the program (1-based)")
    nests: int = Field(description="Nests in the program")
    text: str


class EvaluationJobPublic(BaseModel):
    """An evaluating suggestions request, run in the background: poll it at ``/v1/evaluation-jobs/{id}``
    until ``status`` is ``done`` (``result`` is the answer) or ``failed`` (``error`` is the error body,
    with the HTTP ``status`` the request would have got)."""
    model_config = Forbid

    id: str = Field(description="Random job id (answers are kept for PERFEMBED_EVALUATION_JOB_KEEP_S after the end)")
    status: Literal["queued", "running", "done", "failed"]
    progress: ProgressPublic | None = Field(None, description="The latest step, while running")
    queue_position: int | None = Field(None, description="1 = next to run, while queued")
    result: SuggestionsPublic | None = None
    error: ErrorPublic | None = None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None


class SearchIn(BaseModel):
    vector: list[float] | None = Field(None, min_length=1, max_length=MAX_VECTOR,
                                       description="An embedding vector to search from")
    program: ProgramIn | None = Field(None, description="A program whose nests to search from")
    k: int = Field(5, ge=1, le=100)

    @field_validator("vector")
    @classmethod
    def _finite(cls, value: list[float] | None) -> list[float] | None:
        if value is not None and not all(math.isfinite(x) and abs(x) <= FLOAT32_MAX for x in value):
            raise ValueError(f"vector values must be finite numbers of magnitude at most {FLOAT32_MAX:.6g} "
                             "(the index stores 32-bit floats)")
        return value

    @model_validator(mode="after")
    def _one_query(self) -> SearchIn:
        check_exactly_one(self, "vector", "program")
        return self


class SearchPublic(BaseModel):
    model_config = Forbid

    neighbours: list[NeighbourPublic]
    count: int
