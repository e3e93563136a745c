"""The tuning layer's settings: the :class:`~database.config.DatabaseSettings` plus transfer and the workers.

Transfer's fields (how many recipe families a neighbour lends, which first guesses are tried beside
near neighbours) and the tuning workers' (heartbeat, when a silent worker counts as dead, CPU
pinning) live here because only this layer and the ones above it read them. Entry points that
transfer recipes or run workers call :func:`get_autotune_settings`; tests build an
``AutotuneSettings(...)`` (or a ``ServiceSettings``) and pass it down.
"""

from __future__ import annotations

from typing import Literal, Self

from pydantic import Field, field_validator, model_validator

from database.config import DatabaseSettings
from loopnest.config import load_settings, parse_cpu_list


class AutotuneSettings(DatabaseSettings):
    """Every setting below this layer, plus ``PERFEMBED_TRANSFER_*`` and ``PERFEMBED_WORKER_*``."""

    # Transfer: each of the nearest three neighbours lends its best recipe of this many recipe families
    # (isl's schedule, or a loop order with or without a parallel loop; autotune.transfer.recipe_family),
    # each at least min_speedup on its own nest; farther ones their best alone (service.core.neighbours).
    transfer_families: int = Field(default=3, ge=1, le=20,
                                   description="Recipe families each of the three nearest neighbours lends to "
                                   "transfer.")
    # The recipe space's first guesses transfer also tries when a neighbour lies within the confidence
    # gate (beyond it, always both): none, isl's schedule, or it and the parallel loop with simd (the
    # keys of autotune.transfer.priors.PRIOR_MODES, which this module does not import: that would load
    # the recipe space with every command's settings).
    transfer_priors: Literal["gate", "schedule", "always"] = Field(
        default="gate", description="First guesses transfer tries beside near neighbours: gate (none), schedule, "
        "always.")

    # Tuning workers. Each one records a heartbeat; it counts as alive (``/readyz``, job status)
    # while its last heartbeat is younger than ``worker_stale_after_s``. With ``worker_threads``,
    # each worker pins itself to its own ``worker_threads`` CPUs (taken from ``worker_cpus``, default
    # every CPU this process may use) and measures with that many threads, so that several workers
    # on one host do not skew each other's timings.
    worker_heartbeat_s: float = Field(default=10.0, gt=0, le=3600, description="Seconds between heartbeats.")
    worker_stale_after_s: float = Field(default=30.0, gt=0, description="A worker silent this long is not alive.")
    worker_threads: int = Field(default=0, ge=0, le=1024,
                                description="CPUs (and OpenMP threads) of each worker; 0: unpinned.")
    worker_cpus: str | None = Field(default=None, description="CPUs the workers share out, as a list: 0-3,8.")

    @field_validator("worker_cpus")
    @classmethod
    def _cpu_list(cls, value: str | None) -> str | None:
        if value is not None:
            parse_cpu_list(value)
        return value

    @model_validator(mode="after")
    def _heartbeats_fit(self) -> Self:
        if self.worker_stale_after_s <= self.worker_heartbeat_s:
            raise ValueError(f"PERFEMBED_WORKER_STALE_AFTER_S ({self.worker_stale_after_s:g}) must be longer than "
                             f"PERFEMBED_WORKER_HEARTBEAT_S ({self.worker_heartbeat_s:g}), or live workers look dead")
        return self


def get_autotune_settings() -> AutotuneSettings:
    """The settings from the environment, read at each call (as :func:`database.config.get_database_settings`)."""
    return load_settings(AutotuneSettings)
