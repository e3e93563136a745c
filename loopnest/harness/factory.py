"""How a caller that measures nests is given its harness: a :class:`HarnessFactory`.

The tuners (:class:`autotune.search.TuneConfig`, the workers, the seed confirmation) and the core
(``service.core.TransferCore``) take one, with :class:`~loopnest.harness.Harness` itself as the default,
so a test hands them a harness whose compile and run it scripts instead of patching ``Harness``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from loopnest.harness.index_data import SparseChoice
from loopnest.harness.measure import Harness
from loopnest.harness.sandbox import Limits
from loopnest.ir import Scop


class HarnessFactory(Protocol):
    """Makes the :class:`~loopnest.harness.Harness` of one nest at its parameter values; the class
    ``Harness`` (or a subclass) is one."""

    def __call__(self, scop: Scop, params: Mapping[str, int], *, reps: int, threads: int | None, limits: Limits,
                 cc: str, cflags: str, sparse: SparseChoice | None = None) -> Harness: ...
