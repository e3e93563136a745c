"""A cgroup v2 per sandboxed run, where the host lets perfembed make one: one memory, process and CPU
limit for the whole tree a run starts (``memory.max``, ``pids.max``, ``cpu.max``), which per-process
rlimits cannot give (six children of one candidate held 900 MB each).

perfembed needs a cgroup v2 directory whose ``memory`` and ``pids`` controllers it may hand to
children: its own cgroup when it already delegates them (a systemd unit with ``Delegate=yes`` whose
processes live in a leaf), or one the operator names in ``PERFEMBED_CGROUP``. Where there is none,
:func:`cgroup_parent` says why in one line and the rlimits are what bounds a run.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

NEEDED = ("memory", "pids")
_COUNTER = itertools.count()


@dataclass(frozen=True)
class CgroupParent:
    """Where run cgroups are made (``path``), or why none can be (``path`` None, ``reason``)."""

    path: Path | None
    reason: str
    cpu: bool = False  # the cpu controller is delegated too (cpu.max)


def _unified_mount() -> Path | None:
    for line in Path("/proc/self/mountinfo").read_text().splitlines():
        fields = line.split()
        if " - cgroup2 " in line and len(fields) > 4:
            return Path(fields[4])
    return None


def _own_cgroup(mount: Path) -> Path:
    for line in Path("/proc/self/cgroup").read_text().splitlines():
        if line.startswith("0::"):
            return mount / line[3:].lstrip("/")
    return mount


def _controllers(path: Path, name: str) -> set[str]:
    try:
        return set((path / name).read_text().split())
    except OSError:
        return set()


def _delegate(path: Path) -> str | None:
    """Enable the needed controllers for ``path``'s children; None, or why not."""
    missing = [c for c in NEEDED if c not in _controllers(path, "cgroup.controllers")]
    if missing:
        return f"{path} has no {' or '.join(missing)} controller"
    wanted = [c for c in (*NEEDED, "cpu") if c in _controllers(path, "cgroup.controllers")]
    if all(c in _controllers(path, "cgroup.subtree_control") for c in NEEDED):
        return None
    try:
        (path / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted))
    except OSError as exc:
        return f"cannot delegate controllers of {path} ({exc.strerror or exc}); name a delegated cgroup " \
               "in PERFEMBED_CGROUP"
    return None


@lru_cache(maxsize=4)
def cgroup_parent(setting: str = "auto") -> CgroupParent:
    """The cgroup v2 directory run cgroups go in: ``setting`` is "auto" (this process's own cgroup),
    "none", or the path of a cgroup delegated to perfembed."""
    if setting == "none":
        return CgroupParent(None, "cgroups off (PERFEMBED_CGROUP=none)")
    try:
        mount = _unified_mount()
        if mount is None:
            return CgroupParent(None, "no cgroup v2 hierarchy is mounted")
        path = Path(setting) if setting != "auto" else _own_cgroup(mount)
        problem = _delegate(path)
        if problem is None and not os.access(path, os.W_OK):
            problem = f"{path} is not writable by this user"
    except OSError as exc:
        return CgroupParent(None, f"cgroup v2 cannot be read here ({exc.strerror or exc})")
    if problem is not None:
        return CgroupParent(None, problem)
    return CgroupParent(path, f"cgroup v2 under {path}", cpu="cpu" in _controllers(path, "cgroup.subtree_control"))


class RunCgroup:
    """One run's cgroup: made with its limits, entered by the child before exec (:meth:`enter`), and
    emptied and removed by the parent when the run ends (:meth:`close`), whatever ended it."""

    def __init__(self, parent: CgroupParent, *, memory_mb: int, processes: int, cpus: int) -> None:
        assert parent.path is not None
        self.path = parent.path / f"perfembed-run-{os.getpid()}-{next(_COUNTER)}"
        self.path.mkdir()
        try:
            (self.path / "memory.max").write_text(str(memory_mb << 20))
            with contextlib.suppress(OSError):
                (self.path / "memory.swap.max").write_text("0")
            (self.path / "pids.max").write_text(str(processes))
            if parent.cpu:
                (self.path / "cpu.max").write_text(f"{max(cpus, 1) * 100_000} 100000")
        except OSError:
            self.close()
            raise
        self._procs = str(self.path / "cgroup.procs")

    def enter(self) -> None:
        """In the child, before exec: move this process (and so all it starts) into the cgroup."""
        fd = os.open(self._procs, os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)

    def out_of_memory(self) -> bool:
        """Whether the kernel killed a process of the run for going over ``memory.max``."""
        try:
            events = dict(line.split() for line in (self.path / "memory.events").read_text().splitlines())
        except (OSError, ValueError):
            return False
        return int(events.get("oom_kill", "0")) > 0

    def close(self) -> None:
        """Kill what is left in the cgroup and remove it."""
        kill = self.path / "cgroup.kill"
        with contextlib.suppress(OSError):
            kill.write_text("1")
        for _ in range(50):
            with contextlib.suppress(OSError):
                self.path.rmdir()
                return
            time.sleep(0.02)
