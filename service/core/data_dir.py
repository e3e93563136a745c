"""Where this machine's data lives (the database, the index, the caches), in the words the CLI prints."""

from __future__ import annotations

from pathlib import Path

from database.config import get_database_settings
from database.session import safe_url
from loopnest.config import data_dir_in_use, describe_data_dir

__all__ = ["describe_data_dir", "where_data_lives"]


def where_data_lives() -> str:
    """One line: the data directory (and why it is that one) and the database it holds or names; and a
    note when ``./data`` holds a database that the default no longer opens."""
    line = f"data directory: {describe_data_dir()}; database: {safe_url(get_database_settings().resolved_database_url)}"
    path, from_env = data_dir_in_use()
    old = Path("data").absolute()  # the default up to 0.1.0: ./data, wherever a command started
    if not from_env and (old / "perfembed.db").is_file() and old.resolve() != path.resolve():
        line += f"\nnote: {old / 'perfembed.db'} is not used any more; PERFEMBED_DATA_DIR={old} uses it"
    return line
