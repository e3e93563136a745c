"""The one settings object of perfembed, read from ``PERFEMBED_*`` environment variables.

Library functions take explicit arguments; only entry points (CLI, service, workers) call
:func:`get_settings` and pass values down, so tests can build their own :class:`Settings`.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="PERFEMBED_", env_ignore_empty=True, extra="ignore")

    data_dir: Path = Field(default=Path("data"), description="Database file, index files, caches.")
    database_url: str | None = Field(default=None, description="SQLAlchemy URL; default SQLite in data_dir.")

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

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'perfembed.db').resolve()}"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()
