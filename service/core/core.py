"""The application core behind the CLI, the REST API and notebooks:

source -> nests -> static features -> embedding -> neighbours -> adapted recipes -> gate ->
(measured) candidates -> database, with the autotuning fallback. Each stage is a module of this
package; :class:`TransferCore` wires them to one database and owns the answer cache.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar

from autotune.config import AutotuneSettings
from autotune.transfer import MIN_SPEEDUP
from database.store import Store
from loopnest.harness import Harness
from loopnest.harness.factory import HarnessFactory
from loopnest.harness.progress import ProgressFn
from service.core import catalog
from service.core.analysis import ProgramAnalysis
from service.core.answer_cache import AnswerCache
from service.core.context import CoreContext
from service.core.ingest import ingest_program
from service.core.program import AppliedRecipe, ProgramEvaluation
from service.core.program_checks import record_program_checks
from service.core.suggest import suggest, suggest_read
from service.core.types import IndexStatus, NestDetail, ProgramSource, SearchHit, Suggestions, SuggestOptions

T = TypeVar("T")


class TransferCore:
    """The core on one store (see :class:`service.core.protocol.Core`). ``harness``: how nests are
    compiled and timed (default: :class:`~loopnest.harness.Harness`); ``cache``: the answer cache
    (default: a new one, owned by this core)."""

    def __init__(self, store: Store, settings: AutotuneSettings, *, harness: HarnessFactory = Harness,
                 cache: AnswerCache | None = None) -> None:
        self.cache = cache if cache is not None else AnswerCache(store)
        self.context = CoreContext(store, settings, self.cache, harness)

    @property
    def store(self) -> Store:
        return self.context.store

    @property
    def settings(self) -> AutotuneSettings:
        return self.context.settings

    def ingest(self, program: ProgramSource, *, name: str | None = None, owner_key_id: int | None = None,
               analysis: ProgramAnalysis | None = None) -> list[int]:
        return ingest_program(self.context, program, name=name, owner_key_id=owner_key_id, analysis=analysis)

    def suggest(self, program: ProgramSource, options: SuggestOptions, *, settings: AutotuneSettings | None = None,
                progress: ProgressFn | None = None, analysis: ProgramAnalysis | None = None) -> Suggestions:
        """Answers from the database alone are cached per program until the database changes (a new nest,
        measurement, model or job state; :meth:`AnswerCache.stamp`), so a repeated query costs a lookup.
        Evaluating against a database that refuses writes raises
        :class:`~database.errors.ReadOnlyDatabaseError` before anything is compiled. ``progress`` hears
        each stage and step of an evaluation (:class:`~loopnest.harness.progress.Progress`); ``analysis``: the
        program's, when the caller analysed it already (within its budget), else the program is analysed here."""
        ctx = self.context if settings is None else self.context.with_settings(settings)
        min_speedup = self._min_speedup(options)
        if options.evaluate:
            self.store.check_writable()
            return suggest(ctx, program, options, min_speedup=min_speedup, analysis=analysis, progress=progress)
        key = _key(program, options, min_speedup)
        found = self.cache.get("suggestions", key)
        if found and found[0][0] == self.cache.stamp():
            cached: Suggestions = found[0][1]
            return cached
        # The answer is kept with the stamp it read, so that it is what a recomputation gives while the
        # database stays so: a nest whose gate passed, or whose job is open, is answered from the cache until
        # that changes (with fallback the request may store its nests and enqueue jobs: they change the
        # stamp, and the next request computes again). The stamp it read also renews the cache's, so the
        # next requests are answered without I/O; a request that wrote reads it again for that.
        generation, started = self.cache.generation(), time.monotonic()
        answer, stamp = suggest_read(ctx, program, options, min_speedup=min_speedup, analysis=analysis)
        if stamp is not None:
            self.cache.put("suggestions", key, (stamp, answer))
            self.cache.saw(stamp, generation, started)
        if self.cache.generation() != generation:
            self.cache.stamp()
        return answer

    def cached_suggestion(self, program: ProgramSource, options: SuggestOptions, *,
                          read_stamp: bool = False) -> Suggestions | None:
        """Touches no database and runs no analysis, so the API can answer it on its event loop (a thread
        per cached request made the tail latency under 32 clients). With ``read_stamp`` a stale stamp is
        read again first (queries: off the event loop)."""
        if options.evaluate:
            return None
        found = self.cache.get("suggestions", _key(program, options, self._min_speedup(options)))
        if not found:  # never answered: no stamp to read
            return None
        stamp = self.cache.stamp() if read_stamp else self.cache.fresh_stamp()
        return found[0][1] if stamp is not None and found[0][0] == stamp else None

    def view(self, name: str, compute: Callable[[], T]) -> T:
        """``compute()``, a view of the database alone (the dashboard's embedding map), remembered in this
        core's answer cache under ``name`` until the database changes, like the cached suggestions."""
        return self.cache.memoized(name, list(self.cache.stamp()), compute)

    def search(self, *, vector: Sequence[float] | None, program: ProgramSource | None, k: int,
               name: str | None = None, analysis: ProgramAnalysis | None = None) -> list[SearchHit]:
        return catalog.search(self.context, vector=vector, program=program, k=k, name=name, analysis=analysis)

    def record_program_checks(self, evaluation: ProgramEvaluation, applied: Mapping[int, AppliedRecipe]) -> int:
        """Store what the whole program said of each nest's applied recipe (:mod:`service.core.program_checks`)."""
        return record_program_checks(self.context, evaluation, applied)

    def nest_detail(self, nest_id: int) -> NestDetail:
        return catalog.nest_detail(self.context, nest_id)

    def index_status(self) -> IndexStatus:
        return catalog.index_status(self.context)

    def _min_speedup(self, options: SuggestOptions) -> float:
        if options.min_speedup is not None:
            return options.min_speedup
        return float(getattr(self.settings, "min_speedup", MIN_SPEEDUP))


def _key(program: ProgramSource, options: SuggestOptions, min_speedup: float) -> list[object]:
    """A suggestion's cache key: the program and what changes the answer (it is kept with its stamp)."""
    return [program.key(), options.k, min_speedup, options.fallback, options.name, options.budget,
            options.owner_key_id if options.fallback else None]
