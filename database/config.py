"""The storage layer's settings: the engine's :class:`~loopnest.config.Settings` plus the database URL and
the seed file.

There is still one settings object: each layer adds its own ``PERFEMBED_*`` fields by subclassing
the one below (``loopnest`` → ``database`` → ``autotune`` → ``service``), so a layer never reads a
setting that belongs above it. Entry points that open the database call :func:`get_database_settings`; tests
build a ``DatabaseSettings(...)`` (or a ``ServiceSettings``) and pass it down.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from loopnest.config import Settings, load_settings


class DatabaseSettings(Settings):
    """The engine settings plus ``PERFEMBED_DATABASE_URL`` (default: SQLite in the data directory) and
    ``PERFEMBED_SEED_FILE``."""

    database_url: str | None = Field(default=None, description="SQLAlchemy URL; default SQLite in data_dir.")
    seed_file: Path | None = Field(default=None, description="Seed file `perfembed seed load` reads by default "
                                   "(default: seed/perfembed-seed.jsonl.gz beside the packages).")

    @property
    def resolved_database_url(self) -> str:
        """``database_url``, or the SQLite file ``perfembed.db`` in ``data_dir``."""
        if self.database_url:
            return self.database_url
        return f"sqlite:///{(self.data_dir / 'perfembed.db').resolve()}"


def get_database_settings() -> DatabaseSettings:
    """The settings from the environment, read at each call (entry points call it once; nothing to clear
    when a test changes the environment)."""
    return load_settings(DatabaseSettings)
