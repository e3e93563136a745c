"""Service logic behind the routes: no HTTP here, only library calls."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from loopnest.analysis import describe_scop
from loopnest.errors import ParameterError, SourceError
from loopnest.frontend.extract import Extraction, extract_scops
from loopnest.frontend.preprocess import PreprocessOptions
from service.schemas import ProgramIn

_HEADER_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*(/[A-Za-z0-9_][A-Za-z0-9_.\-]*)*$")


def extract_program(program: ProgramIn) -> Extraction:
    """Write the source and its headers to a private directory and extract the nests."""
    with tempfile.TemporaryDirectory(prefix="perfembed-src-") as tmp:
        root = Path(tmp)
        for name, text in program.headers.items():
            if not _HEADER_NAME.match(name) or ".." in name.split("/"):
                raise ParameterError(f"header name {name!r} is not a plain relative path")
            target = root / "include" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text)
        source = root / "program.c"
        source.write_text(program.source)
        defines = tuple((PreprocessOptions.parse_define(k)[0], v) for k, v in program.defines.items())
        options = PreprocessOptions((str(root / "include"),), defines)
        try:
            extraction = extract_scops(source, options, function=program.function)
        except SourceError as exc:
            raise SourceError(str(exc).replace(str(source), "program.c").replace(str(root) + "/", "")) from None
        return _relabel(extraction, str(source))


def _relabel(extraction: Extraction, tmp_path: str) -> Extraction:
    """Locations name the program as the user sent it, not our temporary file."""
    for rej in extraction.rejected:
        if rej.location.file == tmp_path:
            object.__setattr__(rej.location, "file", "program.c")
    return extraction


def analyze_program(program: ProgramIn) -> dict[str, object]:
    extraction = extract_program(program)
    nests = [describe_scop(s, program.params) for s in extraction.scops]
    for n in nests:
        n["region"]["file"] = "program.c"
    return {"nests": nests, "rejected": [r.to_dict() for r in extraction.rejected]}
