"""Work sent to an analysis worker by the security tests (importable there by name, so it pickles)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path


def make_temp_dir_and_hang(marker: str) -> str:
    """A temporary directory, as the frontend makes one, then a hang past any budget."""
    path = Path(tempfile.mkdtemp(prefix="perfembed-src-"))
    (path / "program.c").write_text("int x;\n")
    Path(marker).write_text(str(path))
    time.sleep(60)
    return str(path)


def allocate(megabytes: int) -> int:
    """Memory an analysis would take for a huge program."""
    block = bytearray(megabytes << 20)
    return len(block)
