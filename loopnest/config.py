"""The one settings object of perfembed, read from ``PERFEMBED_*`` environment variables.

Library functions take explicit arguments; only entry points (CLI, service, workers) call
:func:`get_settings` and pass values down, so tests can build their own :class:`Settings`. Layers
above add their fields by subclassing: the database URL in :class:`database.config.DatabaseSettings`,
the server's limits in ``service.config.ServiceSettings``.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PERFEMBED_", env_ignore_empty=True, extra="ignore")

    data_dir: Path = Field(default=Path("data"), description="Database file, index files, caches.")

    # Harness limits for every compile and run of generated code.
    cc: str = "gcc"
    cflags: str = "-O3 -march=native -fopenmp"
    memory_limit_mb: int = 4096
    cpu_time_limit_s: int = 120
    wall_time_limit_s: float = 120.0
    output_limit_mb: int = 512
    threads: int = 0  # 0: all cores
    # Isolation of every compile and run: "auto" uses bubblewrap where it works (and warns where not),
    # "bubblewrap" requires it, "none" runs with rlimits only. The server evaluates requests only in
    # a sandbox unless allow_unsandboxed is set.
    sandbox: str = Field(default="auto", pattern="^(auto|bubblewrap|none)$")
    allow_unsandboxed: bool = Field(default=False, description="Let the server evaluate without a sandbox.")

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
    max_expression_nodes: int = Field(default=10_000, ge=1, description="Syntax-tree nodes in one statement.")
    max_nesting_depth: int = Field(default=128, ge=8, le=400,
                                   description="Depth of the syntax tree (expressions, blocks, loops).")
    analysis_time_limit_s: float = Field(default=10.0, gt=0, description="Wall time to analyse one API request.")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
