"""What every stage of the core works with: the database, its embedding index, the answer cache,
the settings, this machine's target and the harness that compiles and times nests."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from autotune.config import AutotuneSettings
from database.embedding_store import EmbeddingStore
from database.records import ensure_local_target
from database.store import Store
from loopnest.harness import Harness, Limits
from loopnest.harness.factory import HarnessFactory
from loopnest.harness.index_data import SparseChoice
from loopnest.ir import Scop
from service.core.answer_cache import AnswerCache


@dataclass
class CoreContext:
    """The core's dependencies. The embedding store and the target are resolved on first use (a
    read-only answer never creates a target)."""

    store: Store
    settings: AutotuneSettings
    cache: AnswerCache
    harness_factory: HarnessFactory = Harness
    _embeddings: EmbeddingStore | None = field(default=None, repr=False)
    _target_id: int | None = field(default=None, repr=False)

    @property
    def embeddings(self) -> EmbeddingStore:
        if self._embeddings is None:
            self._embeddings = EmbeddingStore.for_store(self.store, data_dir=self.settings.data_dir)
        return self._embeddings

    @property
    def target_id(self) -> int:
        """This machine's target id (created on first use)."""
        if self._target_id is None:
            self._target_id = ensure_local_target(self.store, cc=self.settings.cc, check_writable=False).id
        return self._target_id

    def with_settings(self, settings: AutotuneSettings) -> CoreContext:
        """The same store, cache and harness under other settings (a request's limits)."""
        return replace(self, settings=settings)

    def harness(self, scop: Scop, params: Mapping[str, int], *, reps: int = 3,
                sparse: SparseChoice | None = None) -> Harness:
        s = self.settings
        return self.harness_factory(scop, params, reps=reps, threads=s.threads or None,
                                    limits=Limits.from_settings(s), cc=s.cc, cflags=s.cflags, sparse=sparse)
