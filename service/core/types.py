"""The application core's inputs and outputs: plain frozen dataclasses, no HTTP and no database rows.

The input of every stage is a :class:`ProgramSource` (a C program as a user has it); the outputs are
what the core decided and measured, per nest (:class:`NestSuggestion`). The service layer maps these
to the API's response models (:mod:`service.mappers`); the CLI prints :meth:`Suggestions.to_dict`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from loopnest.frontend.program import ProgramSource as ProgramSource  # the core's input, defined by loopnest

JsonDict = dict[str, Any]
# How the CLI's table and the web page show a neighbour whose recipes are not offered: refused here, or
# the same code as a candidate above.
NOTHING_NEW = "- (nothing new: does not apply, or repeats a recipe above)"

BUSY_PRESSURE = 0.25  # the acceptance policy's load threshold: above it a figure is flagged "machine busy"


@dataclass(frozen=True)
class NeighbourView:
    """A stored nest near the asking one: its best recipe in its own loop names, and where that was measured."""

    nest_id: int
    name: str
    distance: float
    recorded_speedup: float | None
    recipe: JsonDict
    recipe_text: str | None
    target: JsonDict | None

    def to_dict(self) -> JsonDict:
        return {"nest_id": self.nest_id, "name": self.name, "distance": self.distance,
                "recorded_speedup": self.recorded_speedup, "recipe": self.recipe, "recipe_text": self.recipe_text,
                "target": self.target}


@dataclass(frozen=True)
class Candidate:
    """A neighbour's recipe adapted to the nest (``recipe_text`` in the nest's own loop names), or a
    first guess of the recipe space when no neighbour lies within the gate (``source_nest_id`` None)."""

    source: str  # the neighbour's name
    source_nest_id: int | None
    recipe: JsonDict
    recipe_text: str | None
    source_recipe_text: str | None = None  # the neighbour's recipe it came from, in the neighbour's loop names
    source_speedup: float | None = None  # that recipe's recorded speedup on the neighbour
    variant: str = ""  # transfer's variant of that recipe ("taller block", "SIMD reduction"), "" for none

    def to_dict(self) -> JsonDict:
        return {"from": self.source, "from_nest_id": self.source_nest_id, "recipe": self.recipe,
                "recipe_text": self.recipe_text, "from_recipe_text": self.source_recipe_text,
                "from_speedup": self.source_speedup, "variant": self.variant}


@dataclass(frozen=True)
class GateDecision:
    """The confidence gate: the nearest neighbour within ``threshold`` (a typical nearest-neighbour
    distance among stored nests; None without an embedding model) makes the answer confident."""

    confident: bool
    threshold: float | None
    nearest: float | None  # the nearest neighbour's distance (None: no neighbour)


@dataclass(frozen=True)
class MeasuredCandidate:
    """A candidate compiled, verified and timed: its screening figure and, for a winner, its re-measurement."""

    source: str
    recipe: JsonDict
    recipe_text: str | None
    speedup: float | None
    verified: bool
    status: str
    message: str
    confirmed: JsonDict | None

    def to_dict(self) -> JsonDict:
        return {"from": self.source, "recipe": self.recipe, "speedup": self.speedup, "verified": self.verified,
                "status": self.status, "message": self.message, "confirmed": self.confirmed,
                "recipe_text": self.recipe_text}


@dataclass(frozen=True)
class AcceptedRecipe:
    """The candidate that held up when re-measured: its speedup with the interval and how it was measured."""

    source: str
    recipe: JsonDict
    recipe_text: str | None
    speedup: float
    interval: tuple[float, float]
    confidence: float
    pairs: int
    threads: int
    loaded: bool
    text: str

    def to_dict(self) -> JsonDict:
        return {"recipe": self.recipe, "speedup": self.speedup, "interval": list(self.interval),
                "confidence": self.confidence, "pairs": self.pairs, "threads": self.threads, "loaded": self.loaded,
                "text": self.text, "from": self.source, "recipe_text": self.recipe_text}


@dataclass(frozen=True)
class Measurement:
    """What evaluating a nest's candidates found: every candidate's run and the accepted one, if any."""

    baseline_seconds: float | None
    threads: int
    evaluated: tuple[MeasuredCandidate, ...]
    best: AcceptedRecipe | None
    evaluations: int
    # CPU pressure while the candidates were screened (PSI "some" share, else other runnable tasks per core):
    # above BUSY_PRESSURE their single readings are low, parallel ones most.
    screening_pressure: float | None = None

    @property
    def accepted(self) -> bool:
        return self.best is not None

    @property
    def busy(self) -> bool:
        return self.screening_pressure is not None and self.screening_pressure > BUSY_PRESSURE


@dataclass(frozen=True)
class NestSuggestion:
    """What the core knows and did for one nest of a program."""

    index: int
    name: str
    function: str | None
    nest_id: int | None  # set once stored (with evaluation or fallback)
    params: Mapping[str, int]
    loop_names: tuple[str, ...]
    tuned_before: JsonDict | None  # this very nest measured before here (:func:`service.measured.tuned_before`)
    neighbours: tuple[NeighbourView, ...]
    candidates: tuple[Candidate, ...]
    gate: GateDecision
    measurement: Measurement | None = None
    tuning_job: int | None = None

    def to_dict(self) -> JsonDict:
        """The CLI's form (``perfembed suggest --json``)."""
        out: JsonDict = {
            "index": self.index, "name": self.name, "function": self.function, "nest_id": self.nest_id,
            "params": dict(self.params), "loop_names": list(self.loop_names), "tuned_before": self.tuned_before,
            "neighbours": [n.to_dict() for n in self.neighbours],
            "candidates": [c.to_dict() for c in self.candidates],
            "confident": self.gate.confident, "gate_distance": self.gate.threshold}
        m = self.measurement
        if m is not None:
            out.update({"baseline_seconds": m.baseline_seconds, "threads": m.threads,
                        "evaluated": [e.to_dict() for e in m.evaluated], "accepted": m.accepted,
                        "best": None if m.best is None else m.best.to_dict(), "evaluations": m.evaluations,
                        "screening_pressure": m.screening_pressure, "busy": m.busy})
        if self.tuning_job is not None:
            out["tuning_job"] = self.tuning_job
        return out


@dataclass(frozen=True)
class Suggestions:
    """The core's answer for a program: one :class:`NestSuggestion` per nest, and the regions it rejected."""

    nests: tuple[NestSuggestion, ...]
    rejected: tuple[JsonDict, ...] = ()

    def to_dict(self) -> JsonDict:
        return {"nests": [n.to_dict() for n in self.nests], "rejected": [dict(r) for r in self.rejected]}


@dataclass(frozen=True)
class SuggestOptions:
    """How to answer: ``k`` neighbours per nest, whether to ``evaluate`` the candidates here, whether to
    enqueue a tuning job (``fallback``, of ``budget`` trials) when no neighbour helps; the acceptance
    margin (None: the settings'); ``reps`` screening repetitions; ``name``: the program's name in errors
    and storage (the CLI's file name); ``owner_key_id``: the API key of the request, which owns the program
    and the fallback job it stores."""

    k: int = 5
    evaluate: bool = False
    fallback: bool = False
    min_speedup: float | None = None
    reps: int = 3
    name: str | None = None
    budget: int = 40
    owner_key_id: int | None = None


@dataclass(frozen=True)
class SearchHit:
    """A stored nest near a query, with its best verified speedup and the target that was measured on."""

    nest_id: int
    name: str
    distance: float
    best_speedup: float | None
    best_target_id: int | None
    best_target: JsonDict | None  # id, name and this_machine of ``best_target_id``


@dataclass(frozen=True)
class BestRecipe:
    """A stored nest's best recipe on one target."""

    target_id: int
    recipe: JsonDict
    recipe_text: str | None
    speedup: float | None
    median_time_s: float
    target: JsonDict | None
    # "held: ..." when it held up in a user's whole program; None: measured on the nest alone.
    program_check: str | None = None


@dataclass(frozen=True)
class NestDetail:
    """A stored nest: its normalized form, features, embedding under the newest model, best recipe per target."""

    id: int
    name: str | None
    program_id: int
    index: int
    normalized: Any
    static_features: Mapping[str, float]
    dynamic_features: Mapping[str, float]
    embedding: tuple[float, ...] | None
    model_version: str | None
    best_recipes: tuple[BestRecipe, ...]


@dataclass(frozen=True)
class IndexStatus:
    """Whether the embedding index can answer (no model yet counts as ready), and why."""

    ready: bool
    detail: str
