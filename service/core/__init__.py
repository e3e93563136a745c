"""The application core: one module per stage (sources, analysis, ingest, neighbours, suggest and gate,
measure_candidates, jobs, catalog), typed inputs (:class:`ProgramSource`) and outputs (frozen dataclasses
in :mod:`service.core.types`), wired to one database by :class:`TransferCore`; the routes and commands
see it as :class:`Core`."""

from service.core.answer_cache import AnswerCache
from service.core.core import TransferCore
from service.core.protocol import Core
from service.core.types import (
    AcceptedRecipe,
    BestRecipe,
    Candidate,
    GateDecision,
    IndexStatus,
    MeasuredCandidate,
    Measurement,
    NeighbourView,
    NestDetail,
    NestSuggestion,
    ProgramSource,
    SearchHit,
    Suggestions,
    SuggestOptions,
)

__all__ = ["AcceptedRecipe", "AnswerCache", "BestRecipe", "Candidate", "Core", "GateDecision", "IndexStatus",
           "MeasuredCandidate", "Measurement", "NeighbourView", "NestDetail", "NestSuggestion", "ProgramSource",
           "SearchHit", "SuggestOptions", "Suggestions", "TransferCore"]
