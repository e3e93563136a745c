"""What the routes and commands need of the application core: :class:`Core`.

:class:`service.core.TransferCore` is the implementation (on a database, its embedding index and the
harness); the service layer depends on this protocol only, so a test may serve another.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol, TypeVar

from autotune.config import AutotuneSettings
from loopnest.harness.progress import ProgressFn
from service.core.analysis import ProgramAnalysis
from service.core.program import AppliedRecipe, ProgramEvaluation
from service.core.types import IndexStatus, NestDetail, ProgramSource, SearchHit, Suggestions, SuggestOptions

T = TypeVar("T")


class Core(Protocol):
    """The application core. Every method raises a :class:`~loopnest.errors.PerfembedError` subclass
    for what a user got wrong (an unknown nest: ``NotFoundError``; a bad program: ``SourceError``,
    ``ParameterError``), and ``StorageError`` when the database fails."""

    def ingest(self, program: ProgramSource, *, name: str | None = None, owner_key_id: int | None = None,
               analysis: ProgramAnalysis | None = None) -> list[int]:
        """Store the program and its nests (idempotent); the nest ids in source order. ``owner_key_id``:
        the API key sending it, whose source it then is (private unless the program was public);
        ``analysis``: the program's, when the caller has it (:func:`~service.core.analysis.analyse_program`)."""
        ...

    def suggest(self, program: ProgramSource, options: SuggestOptions, *, settings: AutotuneSettings | None = None,
                progress: ProgressFn | None = None, analysis: ProgramAnalysis | None = None) -> Suggestions:
        """Per nest: neighbours, adapted recipes, the gate, measured results (``options.evaluate``, under
        ``settings`` when given) and a fallback tuning job (``options.fallback``). ``analysis``: the
        program's, computed once per request (else here)."""
        ...

    def cached_suggestion(self, program: ProgramSource, options: SuggestOptions, *,
                          read_stamp: bool = False) -> Suggestions | None:
        """The database-only answer :meth:`suggest` would give, if it is cached (no analysis; no I/O
        unless ``read_stamp`` lets a stale database stamp be read again), else None."""
        ...

    def view(self, name: str, compute: Callable[[], T]) -> T:
        """``compute()``, computed from the database alone, remembered under ``name`` until the database
        changes (the core's one answer cache; the dashboard's views go through it)."""
        ...

    def search(self, *, vector: Sequence[float] | None, program: ProgramSource | None, k: int,
               name: str | None = None, analysis: ProgramAnalysis | None = None) -> list[SearchHit]:
        """The ``k`` stored nests nearest to ``vector`` or to the program's first nest."""
        ...

    def record_program_checks(self, evaluation: ProgramEvaluation, applied: Mapping[int, AppliedRecipe]) -> int:
        """Store the whole program's verdict beside each applied recipe's measurement; how many were marked."""
        ...

    def nest_detail(self, nest_id: int) -> NestDetail:
        """A stored nest's features, embedding and best recipe on each target."""
        ...

    def index_status(self) -> IndexStatus:
        """Whether the embedding index can answer."""
        ...
