"""A request's nest as messages name it, and a local file as a :class:`ProgramSource`. Putting a
program on disk and extracting its nests is :mod:`loopnest.frontend.program`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from loopnest.frontend.preprocess import PreprocessOptions
from loopnest.frontend.program import PROGRAM_FILE, ProgramSource
from loopnest.ir import Scop


def nest_label(scop: Scop, label: str | None = None) -> str:
    """The nest's name in messages: ``label`` (``NAME:``) in place of the temporary file's name."""
    return scop.name.replace(f"{PROGRAM_FILE}:", label, 1) if label else scop.name


def program_from_file(path: Path, *, include: list[str], define: list[str], params: Mapping[str, int],
                      function: str | None) -> ProgramSource:
    """A local file as a :class:`ProgramSource`: the headers under the ``include`` directories travel
    as ``headers``; its file name is its name."""
    headers: dict[str, str] = {}
    for directory in include:
        for header in Path(directory).rglob("*.h"):
            headers[str(header.relative_to(directory))] = header.read_text(errors="replace")
    defines = dict(PreprocessOptions.parse_define(d) for d in define)
    return ProgramSource(source=Path(path).read_text(), headers=headers, defines=defines, params=dict(params),
                         function=function, name=Path(path).name)
