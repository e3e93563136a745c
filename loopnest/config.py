"""The engine's settings, read from ``PERFEMBED_*`` environment variables, and the one loader of them all.

Each layer owns the settings it reads and adds them by subclassing the class of the layer below, so
that one object (and one ``PERFEMBED_*`` namespace) carries them all and a layer never sees a field
that belongs above it:

* :class:`Settings` (here): the data directory, the harness's compiler, limits and sandbox, the
  acceptance margin and the analysis limits;
* ``database.config.DatabaseSettings``: the database URL and the seed file;
* ``autotune.config.AutotuneSettings``: transfer (families, first guesses) and the tuning workers;
* ``service.config.ServiceSettings``: the REST API's limits (the analysis time limit among them).

``embeddings`` reads no setting: its functions take their arguments explicitly. Library functions
take explicit arguments; only entry points (CLI, service, workers) read the environment (through
:func:`load_settings`) and pass values down, so tests can build their own settings.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from functools import lru_cache
from pathlib import Path
from typing import TypeVar

from platformdirs import user_data_path
from pydantic import Field, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from loopnest.errors import SettingsError

APP_NAME = "perfembed"
DATA_DIR_ENV = "PERFEMBED_DATA_DIR"


def default_data_dir() -> Path:
    """The per-user data directory (``~/.local/share/perfembed`` on Linux, honouring ``XDG_DATA_HOME``):
    the same wherever a command starts, so a notebook in ``notebooks/`` opens the CLI's database."""
    return user_data_path(APP_NAME, appauthor=False)


def data_dir_in_use() -> tuple[Path, bool]:
    """The data directory commands use, and whether ``PERFEMBED_DATA_DIR`` chose it; read without any
    other setting, so that ``perfembed --help`` can show it even when another value is invalid."""
    override = os.environ.get(DATA_DIR_ENV)
    if override:
        return Path(override).absolute(), True
    return default_data_dir(), False


def describe_data_dir() -> str:
    """``"/home/u/.local/share/perfembed (the per-user default; PERFEMBED_DATA_DIR overrides it)"``."""
    path, from_env = data_dir_in_use()
    why = f"from {DATA_DIR_ENV}" if from_env else f"the per-user default; {DATA_DIR_ENV} overrides it"
    return f"{path} ({why})"


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """``"0-3,8"`` -> ``(0, 1, 2, 3, 8)`` (the kernel's cpuset list format); ValueError otherwise."""
    cpus: set[int] = set()
    for part in text.replace(" ", "").split(","):
        first, _, last = part.partition("-")
        if not first.isdigit() or (last and not last.isdigit()) or (last and int(last) < int(first)):
            raise ValueError(f"{text!r} is not a CPU list such as 0-3,8")
        cpus.update(range(int(first), int(last or first) + 1))
    return tuple(sorted(cpus))


def format_cpu_list(cpus: Iterable[int]) -> str:
    """``(0, 1, 2, 3, 8)`` -> ``"0-3,8"``."""
    runs: list[list[int]] = []
    for cpu in sorted(set(cpus)):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def thread_placement() -> str:
    """Where this process's threads may run: "unpinned", or "pinned to CPUs 0-1" when its CPU
    affinity (a pinned worker, ``taskset``, a container's cpuset) leaves out some of the machine's CPUs."""
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") else set()
    if not allowed or len(allowed) >= (os.cpu_count() or 1):
        return "unpinned"
    return f"pinned to CPUs {format_cpu_list(allowed)}"


class Settings(BaseSettings):
    """The engine's fields; the layers above subclass it (see the module docstring)."""

    model_config = SettingsConfigDict(env_prefix="PERFEMBED_", env_ignore_empty=True, extra="ignore")

    data_dir: Path = Field(default_factory=default_data_dir,
                           description="Database file, index files, caches (default: the per-user data directory).")

    # Harness limits for every compile and run of generated code.
    cc: str = "gcc"
    cflags: str = "-O3 -march=native -fopenmp"
    memory_limit_mb: int = 4096
    cpu_time_limit_s: int = 120
    wall_time_limit_s: float = 120.0
    output_limit_mb: int = 512
    disk_limit_mb: int = Field(default=1024, ge=1, description="Quota of a run's work directory.")
    # A cgroup v2 per run bounds its whole tree (memory, tasks): "auto" uses this process's cgroup where it
    # delegates the memory and pids controllers, "none" keeps to rlimits, else the path of a delegated cgroup.
    cgroup: str = Field(default="auto", min_length=1)
    threads: int = 0  # 0: all cores
    # Isolation of every compile and run: "auto" uses bubblewrap where it works (and warns where not),
    # "bubblewrap" requires it, "none" runs with rlimits only. The server evaluates requests only in
    # a sandbox unless allow_unsandboxed is set.
    sandbox: str = Field(default="auto", pattern="^(auto|bubblewrap|none)$")
    allow_unsandboxed: bool = Field(default=False, description="Let the server evaluate without a sandbox.")
    # Timed runs hold one lock per machine and user, so that concurrent jobs never time at once
    # (loopnest.harness.timing_lock): "auto", "none" or the lock file's path.
    timing_lock: str = Field(default="auto", min_length=1)

    # Acceptance: a recipe is offered only when its re-measured speedup's interval (at ``confidence``)
    # lies above ``min_speedup``; a run is stopped at ``timeout_factor`` x the baseline; a measurement
    # taken while some task waited for a CPU more than ``load_threshold`` of the time is flagged.
    min_speedup: float = Field(default=1.1, gt=1.0, le=100.0)
    confidence: float = Field(default=0.95, gt=0.5, lt=1.0)
    timeout_factor: float = Field(default=3.0, ge=1.0, le=100.0)
    load_threshold: float = Field(default=0.25, ge=0.0, le=1.0)

    # Analysis limits (corpus/ maxima: 11 statements in a nest, depth 7, 767 AST nodes and nesting
    # 38 in one function); a program over one is rejected with an error naming the setting.
    max_statements: int = Field(default=128, ge=1, description="Statements in one loop nest.")
    max_loop_depth: int = Field(default=16, ge=1, description="Loops nested in one another.")
    max_nests: int = Field(default=256, ge=1, description="Loop nests analysed in one file (or in --function).")
    max_expression_nodes: int = Field(default=10_000, ge=1, description="Syntax-tree nodes in one statement.")
    max_nesting_depth: int = Field(default=128, ge=8, le=400,
                                   description="Depth of the syntax tree (expressions, blocks, loops).")


S = TypeVar("S", bound=Settings)


def load_settings(cls: type[S]) -> S:
    """``cls()`` from the environment; a bad value is a :class:`SettingsError` naming its variable."""
    try:
        return cls()
    except ValidationError as exc:
        problems = []
        for error in exc.errors():
            name = "_".join(str(part) for part in error["loc"]).upper()
            message = error["msg"].removeprefix("Value error, ")
            problems.append(f"PERFEMBED_{name}={error['input']!r}: {message}" if name else message)
        raise SettingsError("; ".join(problems)) from None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return load_settings(Settings)
