"""CPU slots: the CPUs each tuning worker of one host is pinned to.

:func:`claim_cpus` shares the CPUs out among the workers of one host: with ``worker_threads`` set,
each worker takes the first free slot of that many CPUs (from ``worker_cpus``, default every CPU
this process may use) by locking a file in the data directory, pins itself to it (:func:`pin_to`),
and measures with that many threads. The lock goes with the process, however it ends, so a crashed
worker's slot is free again at once. Workers in containers on one host share the slots through the
data volume they all mount.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING

from database.errors import ensure_data_dir
from loopnest.config import format_cpu_list, parse_cpu_list
from loopnest.errors import SettingsError

if TYPE_CHECKING:
    from autotune.config import AutotuneSettings

CPU_LOCK_DIR = "worker-cpus"  # under the data directory


@dataclass
class CpuSlot:
    """CPUs held by this process (through a locked file) until :meth:`release` or its exit."""

    cpus: tuple[int, ...]
    _lock_file: IO[str] | None = field(default=None, repr=False)

    def describe(self) -> str:
        return format_cpu_list(self.cpus)

    def release(self) -> None:
        if self._lock_file is not None:
            self._lock_file.close()  # closing drops the flock
            self._lock_file = None


def cpu_pool(settings: AutotuneSettings) -> tuple[int, ...]:
    """The CPUs the workers share out: ``worker_cpus``, else every CPU this process may use."""
    allowed = tuple(sorted(os.sched_getaffinity(0)))
    if settings.worker_cpus is None:
        return allowed
    named = parse_cpu_list(settings.worker_cpus)
    missing = sorted(set(named) - set(allowed))
    if missing:
        raise SettingsError(f"PERFEMBED_WORKER_CPUS={settings.worker_cpus}: CPU(s) {format_cpu_list(missing)} are "
                            f"not available to this process (it may use {format_cpu_list(allowed)})")
    return named


def claim_cpus(settings: AutotuneSettings) -> CpuSlot | None:
    """Take a free slot of ``settings.worker_threads`` CPUs (None when workers are not pinned).

    Raises :class:`SettingsError` naming the fix when the pool is smaller than one slot or every
    slot is held by another worker.
    """
    threads = settings.worker_threads
    if not threads:
        return None
    pool = cpu_pool(settings)
    slots = [pool[i:i + threads] for i in range(0, len(pool) - threads + 1, threads)]
    if not slots:
        raise SettingsError(f"PERFEMBED_WORKER_THREADS={threads} is more than the {len(pool)} CPU(s) the workers "
                            f"may use ({format_cpu_list(pool)}); lower it")
    lock_dir = settings.data_dir / CPU_LOCK_DIR
    _make_lock_dir(lock_dir)
    for slot in slots:
        handle = open(lock_dir / f"cpus-{format_cpu_list(slot)}.lock", "a")  # noqa: SIM115 (held for life)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            continue
        return CpuSlot(tuple(slot), handle)
    raise SettingsError(f"no free CPUs for another worker: the {len(slots)} slot(s) of {threads} CPU(s) in "
                        f"{format_cpu_list(pool)} are held by running workers (locks in {lock_dir}); stop one, "
                        "or lower PERFEMBED_WORKER_THREADS")


def pin_to(slot: CpuSlot) -> None:
    """Confine this process (and every thread and child it starts from now on) to the slot's CPUs."""
    os.sched_setaffinity(0, slot.cpus)


def _make_lock_dir(path: Path) -> None:
    ensure_data_dir(path, what="the worker CPU lock directory")
