"""This machine's signature: CPU model, cores, ISA level, cache sizes and compiler.

Cheap to read (nothing runs but ``cc --version``); it keys the measured peaks
(:mod:`embeddings.features.machine`) and every stored measurement's target.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import re
import subprocess
from collections.abc import Iterator
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import Any

_ISA_LEVELS = {
    "x86-64-v2": {"cx16", "lahf_lm", "popcnt", "sse4_1", "sse4_2", "ssse3"},
    "x86-64-v3": {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave"},
    "x86-64-v4": {"avx512f", "avx512bw", "avx512cd", "avx512dq", "avx512vl"},
}
ISA_ORDINAL = {"x86-64": 1, "x86-64-v2": 2, "x86-64-v3": 3, "x86-64-v4": 4}



@dataclass(frozen=True)
class MachineSignature:
    """What identifies a machine for tuning purposes; cheap to read, nothing is run but the compiler."""

    cpu_model: str
    cores: int  # logical CPUs this process may use
    isa_level: str  # x86-64, x86-64-v2/v3/v4, or the architecture name elsewhere
    l1d_bytes: int | None
    l2_bytes: int | None
    l3_bytes: int | None
    compiler: str
    compiler_version: str
    architecture: str = ""

    @property
    def signature_hash(self) -> str:
        """Hash of the fields whose change invalidates measured peaks: CPU model, cores, compiler."""
        key = json.dumps([self.cpu_model, self.cores, self.compiler, self.compiler_version])
        return hashlib.sha256(key.encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "signature_hash": self.signature_hash}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> MachineSignature:
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})


def _cpuinfo() -> dict[str, str]:
    out: dict[str, str] = {}
    try:
        text = Path("/proc/cpuinfo").read_text(errors="replace")
    except OSError:
        return out
    for line in text.splitlines():
        if not line.strip():
            if out:
                break  # the first processor is enough
            continue
        key, _, value = line.partition(":")
        out.setdefault(key.strip(), value.strip())
    return out


def isa_level(flags: set[str], machine: str | None = None) -> str:
    """The x86-64 micro-architecture level implied by /proc/cpuinfo flags (``x86-64-v3`` ...)."""
    machine = machine or platform.machine()
    if machine not in ("x86_64", "AMD64", "amd64"):
        return machine
    level = "x86-64"
    needed: set[str] = set()
    for name, extra in _ISA_LEVELS.items():
        needed |= extra
        if not needed <= flags:
            break
        level = name
    return level


def _size_bytes(text: str) -> int | None:
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)(?:i?B)?\s*", text, flags=re.IGNORECASE)
    if m is None:
        return None
    return int(m.group(1)) * {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[m.group(2).upper()]


def _sysfs_caches() -> Iterator[tuple[str, Path]]:
    """``(l1d | l2 | l3, sysfs directory)`` for each data or unified cache of CPU 0."""
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
        except (OSError, ValueError):
            continue
        key = {1: "l1d", 2: "l2", 3: "l3"}.get(level)
        if key is not None and kind != "Instruction":
            yield key, index


def cache_sizes() -> dict[str, int | None]:
    """L1d, L2 and L3 sizes in bytes of CPU 0 (sysfs, else ``getconf``); None where unknown."""
    out: dict[str, int | None] = {"l1d": None, "l2": None, "l3": None}
    for key, index in _sysfs_caches():
        try:
            out[key] = _size_bytes((index / "size").read_text())
        except OSError:
            continue
    for key, name in (("l1d", "LEVEL1_DCACHE_SIZE"), ("l2", "LEVEL2_CACHE_SIZE"), ("l3", "LEVEL3_CACHE_SIZE")):
        if out[key] is None:
            try:
                proc = subprocess.run(["getconf", name], capture_output=True, text=True, timeout=5, check=False)
                value = int(proc.stdout.strip() or 0)
                out[key] = value or None
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass  # no getconf, or no answer: the cache size stays unknown (None)
    return out


def cache_geometry() -> dict[str, tuple[int, int, int]]:
    """``{"l1d" | "l2" | "l3": (size bytes, ways, line bytes)}`` of CPU 0 from sysfs (what is known)."""
    out: dict[str, tuple[int, int, int]] = {}
    for key, index in _sysfs_caches():
        try:
            size = _size_bytes((index / "size").read_text())
            ways = int((index / "ways_of_associativity").read_text())
            line = int((index / "coherency_line_size").read_text())
        except (OSError, ValueError):
            continue
        if size is not None and ways > 0 and line > 0:
            out[key] = (size, ways, line)
    return out


def _compiler_version(cc: str) -> str:
    try:
        proc = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    first = proc.stdout.strip().splitlines()[:1]
    return first[0].strip() if first else "unknown"


def machine_signature(*, cc: str = "gcc") -> MachineSignature:
    """This machine's :class:`MachineSignature`: CPU model, cores, ISA flags, caches, compiler."""
    info = _cpuinfo()
    flags = set(info.get("flags", "").split())
    caches = cache_sizes()
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:
        cores = os.cpu_count() or 1
    return MachineSignature(
        cpu_model=info.get("model name") or info.get("Model") or platform.processor() or "unknown",
        cores=cores,
        isa_level=isa_level(flags),
        l1d_bytes=caches["l1d"],
        l2_bytes=caches["l2"],
        l3_bytes=caches["l3"],
        compiler=cc,
        compiler_version=_compiler_version(cc),
        architecture=platform.machine(),
    )
