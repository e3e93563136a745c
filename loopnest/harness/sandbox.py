"""Run a command with CPU-time, memory, output-size and wall-clock limits, never through a shell."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Limits:
    cpu_seconds: int = 120
    memory_mb: int = 4096
    output_mb: int = 512
    wall_seconds: float = 120.0

    @classmethod
    def from_settings(cls, settings: object) -> Limits:
        return cls(cpu_seconds=settings.cpu_time_limit_s, memory_mb=settings.memory_limit_mb,
                   output_mb=settings.output_limit_mb,
                   wall_seconds=settings.wall_time_limit_s)


@dataclass(frozen=True)
class RunResult:
    status: str  # "ok" | "failed" | "crashed" | "cpu-time limit" | "wall-time limit" | "output-size limit"
    returncode: int
    stdout: str
    stderr: str
    wall_seconds: float

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def describe(self) -> str:
        tail = self.stderr.strip().splitlines()[-3:]
        return f"{self.status} (exit {self.returncode})" + (f": {' | '.join(tail)}" if tail else "")


def _limit(limits: Limits, threads: int) -> None:
    cpu = max(1, int(limits.cpu_seconds * max(threads, 1)))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    mem = limits.memory_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    out = limits.output_mb * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_FSIZE, (out, out))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))


def run_limited(args: list[str], *, cwd: Path, limits: Limits, env: Mapping[str, str] | None = None,
                threads: int = 1) -> RunResult:
    """Run ``args`` in ``cwd`` under ``limits``; the whole process group dies on a wall-clock timeout."""
    base_env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "TMPDIR": str(cwd)}
    start = time.perf_counter()
    proc = subprocess.Popen(args, cwd=cwd, env={**base_env, **(env or {})}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                            start_new_session=True, preexec_fn=lambda: _limit(limits, threads))
    try:
        stdout, stderr = proc.communicate(timeout=limits.wall_seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        return RunResult("wall-time limit", -9, stdout, stderr, time.perf_counter() - start)
    wall = time.perf_counter() - start
    rc = proc.returncode
    if rc == 0:
        status = "ok"
    elif rc == -signal.SIGXCPU or rc == -signal.SIGKILL:
        status = "cpu-time limit"
    elif rc == -signal.SIGXFSZ:
        status = "output-size limit"
    elif rc < 0:
        status = f"crashed ({signal.Signals(-rc).name})"
    else:
        status = "failed"
    return RunResult(status, rc, stdout, stderr, wall)
