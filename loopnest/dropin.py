"""Write the user's file back with tuned regions replaced by generated code, every other byte kept."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from loopnest.codegen.flat_arrays import flat_views
from loopnest.codegen.overlap_guard import guarded_c
from loopnest.errors import SourceError
from loopnest.frontend.source_span import statement_span
from loopnest.ir import Scop


def _indent(code: str, pad: str) -> str:
    return "\n".join(line if line.startswith("#") or not line else pad + line for line in code.splitlines())


def replace_regions(path: Path, transformed: Mapping[int, Scop], scops: list[Scop]) -> str:
    """The text of ``path`` with nest ``i`` of ``scops`` replaced by the code of ``transformed[i]``, run
    where the arrays it reaches through pointers do not overlap (:mod:`loopnest.codegen.overlap_guard`), its flat
    arrays seen as their rows (:mod:`loopnest.codegen.flat_arrays`)."""
    text = Path(path).read_text()
    edits: list[tuple[int, int, str]] = []
    for index, new in transformed.items():
        region = scops[index].region
        if Path(region.file) != Path(path):
            raise SourceError(f"nest {index} lives in {region.file}, not in {path}")
        lines = text.split("\n")
        if region.pragma:
            start = sum(len(line) + 1 for line in lines[: region.first_line - 1])
            end = sum(len(line) + 1 for line in lines[: region.last_line])
            first = lines[region.first_line - 1] if region.first_line <= len(lines) else ""
            pad = first[: len(first) - len(first.lstrip())]
            code = flat_views(scops[index], guarded_c(scops[index], new), text[start:end])
            edits.append((start, end, _indent(code, pad) + "\n"))
        else:
            start, end = statement_span(text, region.first_line)
            line_start = text.rfind("\n", 0, start) + 1
            pad = text[line_start:start] if not text[line_start:start].strip() else ""
            code = _indent(flat_views(scops[index], guarded_c(scops[index], new), pad + text[start:end]), pad)
            edits.append((start, end, code[len(pad):] if pad else code))
    for start, end, code in sorted(edits, reverse=True):
        text = text[:start] + code + text[end:]
    return text
