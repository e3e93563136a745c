"""A request's nest as messages name it (``label`` in place of the temporary file's name).
Putting a program on disk and extracting its nests, and reading a local file as a program, is
:mod:`loopnest.frontend.program`."""

from __future__ import annotations

from loopnest.frontend.program import PROGRAM_FILE
from loopnest.ir import Scop


def nest_label(scop: Scop, label: str | None = None) -> str:
    """The nest's name in messages: ``label`` (``NAME:``) in place of the temporary file's name."""
    return scop.name.replace(f"{PROGRAM_FILE}:", label, 1) if label else scop.name
