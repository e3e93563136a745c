"""Request and response models of the REST API (kept apart from the ORM models).

Families follow the template: ``XIn`` is what a client sends, ``XPublic`` what it gets back and
``XsPublic`` a page of them (``data`` plus ``count``). Every response model forbids keys it does not
declare (``ErrorPublic`` excepted: errors carry their own details): what comes from the application core
(suggestions, search, nest details) is filled by explicit mappers (:mod:`service.mappers`), the rest by
the services, and a key that none of them names is a bug caught at once, never sent to a client.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, field_validator, model_validator

from database.domain import JobStatus

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


def _check_utf8(text: str, what: str) -> str:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"{what} is not valid Unicode text (position {exc.start})") from None
    if "\x00" in text:
        raise ValueError(f"{what} contains a NUL character (position {text.index(chr(0))})")
    return text


# --- programs -----------------------------------------------------------------------------------


class ProgramIn(BaseModel):
    """A C program as the client has it: the source, its quoted includes, macros and sizes."""

    source: str = Field(..., max_length=MAX_SOURCE_BYTES, description="C source text")
    headers: dict[HeaderName, Annotated[str, Field(max_length=MAX_SOURCE_BYTES)]] = Field(
        default_factory=dict, max_length=MAX_HEADERS, description="Quoted includes by file name")
    defines: dict[Identifier, Annotated[str, Field(max_length=1024)] | None] = Field(
        default_factory=dict, max_length=256, description="Macros, as cc -D")
    params: dict[Identifier, ParamValue] = Field(default_factory=dict, max_length=256,
                                                 description="Parameter values")
    function: Identifier | None = Field(None, description="Only the nests of this function")
    name: ProgramName | None = Field(None, description="The program's name (its file name): a stored nest is "
                                     "called NAME#INDEX in every answer (default: the function, else 'program')")
    sparsity: Literal["uniform", "banded", "powerlaw"] | None = Field(
        None, description="Pattern of the generated matrices sparse nests (CSR/CSC index arrays) run on "
                          "(default uniform)")
    density: float | None = Field(None, gt=0, le=1, description="Fraction of entries of those matrices (default "
                                  "0.01, or less where the nest's index arrays hold less)")
    matrix: MatrixId | None = Field(None, description="Run sparse nests on this matrix instead: the id POST "
                                    "/v1/matrices answered for a Matrix Market file (its shape must match the "
                                    "parameters)")

    @model_validator(mode="after")
    def _one_structure(self) -> ProgramIn:
        if self.matrix is not None and (self.sparsity is not None or self.density is not None):
            raise ValueError("give either matrix or sparsity/density: a matrix file has its own pattern")
        return self

    @field_validator("source")
    @classmethod
    def _source_is_text(cls, value: str) -> str:
        return _check_utf8(value, "source")

    @field_validator("headers")
    @classmethod
    def _headers_are_text(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            _check_utf8(name, "a header name")
            _check_utf8(text, f"header {name!r}")
        return value

    @field_validator("defines")
    @classmethod
    def _defines_are_text(cls, value: dict[str, str | None]) -> dict[str, str | None]:
        for name, text in value.items():
            if text is not None:
                _check_utf8(text, f"macro {name}")
        return value


class MatrixPublic(BaseModel):
    """A Matrix Market file the server holds, by the id requests name it with (``"matrix": ID``)."""

    model_config = Forbid

    id: MatrixId = Field(description="The first 16 hex digits of the SHA-256 of the (uncompressed) file")
    rows: int
    cols: int
    nnz: int = Field(description="Entries, symmetric ones expanded")
    values: bool = Field(description="Whether it has values (false: a pattern matrix; the values are then random)")
    bytes: int = Field(description="Size of the uncompressed file")


class AnalysisPublic(BaseModel):
    model_config = Forbid

    nests: list[dict[str, Any]]
    rejected: list[dict[str, Any]] = Field(
        description="Regions outside the supported subset, with construct and location")


class ProgramStoredPublic(BaseModel):
    model_config = Forbid

    nest_ids: list[int] = Field(description="Database ids of the program's nests, in source order")


# --- suggestions and search ---------------------------------------------------------------------


class SuggestionsIn(ProgramIn):
    k: int = Field(5, ge=1, le=100, description="Neighbours per nest")
    evaluate: bool | Literal["nest", "program"] = Field(
        False, description='Compile, verify and time the adapted recipes here (bounded pool); "program" also '
        "builds and times the whole program (it must define main), original against tuned, and keeps the "
        "tuning only when its output is the same and it is faster by the margin")
    run: str | None = Field(None, max_length=1024, description='With evaluate "program": how to run it, '
                            "'{program} ARGS' (runs in the sandbox)")
    check: str | None = Field(None, max_length=1024, description='With evaluate "program": a shell command '
                              "comparing the runs' files in $ORIGINAL and $TUNED, exit 0 when they agree")
    fallback: bool = Field(True, description="Enqueue a tuning job when no neighbour is good enough")



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
                                      "from_recipe_text and from_speedup: the neighbour's recipe it came from")
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
        if (self.vector is None) == (self.program is None):
            raise ValueError("give exactly one of 'vector' and 'program'")
        return self


class SearchPublic(BaseModel):
    model_config = Forbid

    neighbours: list[NeighbourPublic]
    count: int


# --- tuning jobs --------------------------------------------------------------------------------


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
        if (self.nest_id is None) == (self.program is None):
            raise ValueError("give exactly one of 'nest_id' and 'program'")
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


class JobsPublic(BaseModel):
    model_config = Forbid

    data: list[JobPublic]
    count: int


# --- nests and targets --------------------------------------------------------------------------


class NestSummaryPublic(BaseModel):
    model_config = Forbid

    id: int
    program_id: int
    index: int
    name: str = Field(description="PROGRAM#INDEX, the nest's name in every answer")
    created_at: datetime


class NestsPublic(BaseModel):
    model_config = Forbid

    data: list[NestSummaryPublic]
    count: int
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
    best_recipes: list[JsonObject] = Field(default_factory=list, description="The best recipe on each target")


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


class TargetsPublic(BaseModel):
    model_config = Forbid

    data: list[TargetPublic]
    count: int


# --- health and errors --------------------------------------------------------------------------


class HealthPublic(BaseModel):
    model_config = Forbid

    status: Literal["ok"]


class WorkerPublic(BaseModel):
    model_config = Forbid

    name: str = Field(description="host:pid:random, as in a running job's `worker`")
    host: str
    pid: int
    cpus: str | None = Field(description="The CPUs it is pinned to (PERFEMBED_WORKER_THREADS), null if unpinned")
    job_id: int | None = Field(description="The tuning job it runs, null when idle")
    last_seen_s: float = Field(description="Seconds since its last heartbeat")


class WorkersPublic(BaseModel):
    model_config = Forbid

    alive: int = Field(description="Workers whose last heartbeat is recent (PERFEMBED_WORKER_STALE_AFTER_S)")
    busy: int = Field(description="Live workers running a job")
    data: list[WorkerPublic]


class ReadyPublic(BaseModel):
    model_config = Forbid

    status: Literal["ready", "not ready"]
    checks: dict[str, str]
    isolation: str = Field(description="The sandbox that compiles and runs code from requests, "
                                       "e.g. \"bubblewrap\" or \"none (rlimits only)\"")
    workers: WorkersPublic | None = Field(default=None, description="The live tuning workers, from their "
                                          "heartbeats (null while the database is not ready)")


class ErrorPublic(BaseModel):
    """Every 4xx and 5xx body: the error class, a message naming the problem (and line), details."""

    model_config = ConfigDict(extra="allow")

    error: str
    message: str
    detail: Any = None
    location: dict[str, Any] | None = None
