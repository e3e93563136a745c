"""A request's program on disk: its source and headers written to a private directory and its nests
extracted, with every location naming the program as the user sent it (``program.c``), never our
temporary file. The one place that does this (ingest, suggest, search, jobs, analysis, whole-program
evaluation all come here)."""

from __future__ import annotations

import contextlib
import re
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

from loopnest.config import get_settings
from loopnest.errors import LimitExceededError, ParameterError, SourceError, SourceLocation
from loopnest.frontend.extract import Extraction, extract_scops
from loopnest.frontend.limits import AnalysisLimits
from loopnest.frontend.preprocess import PreprocessOptions
from loopnest.ir import Scop
from service.core.model import ProgramSource

PROGRAM_FILE = "program.c"  # what the temporary source is called in every message
_HEADER_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*(/[A-Za-z0-9_][A-Za-z0-9_.\-]*)*$")


@contextlib.contextmanager
def materialized(program: ProgramSource) -> Iterator[tuple[Path, PreprocessOptions]]:
    """The program's source and headers in a private directory, with confined preprocessing options."""
    with tempfile.TemporaryDirectory(prefix="perfembed-src-") as tmp:
        root = Path(tmp)
        for name, text in program.headers.items():
            if not _HEADER_NAME.match(name) or ".." in name.split("/"):
                raise ParameterError(f"header name {name!r} is not a plain relative path")
            target = root / "include" / name
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text)
            except OSError as exc:  # "a" and "a/b", or a name too long for the file system
                raise ParameterError(f"header name {name!r} cannot be used: {exc.strerror}") from None
        source = root / PROGRAM_FILE
        source.write_text(program.source)
        defines = tuple((PreprocessOptions.parse_define(k)[0], v) for k, v in program.defines.items())
        yield source, PreprocessOptions((str(root / "include"),), defines, confined=True,
                                        sandbox=get_settings().sandbox)


def extract_program(program: ProgramSource, limits: AnalysisLimits | None = None) -> Extraction:
    """Write the source and its headers to a private directory and extract the nests."""
    with materialized(program) as (source, options):
        try:
            extraction = extract_scops(source, options, function=program.function, limits=limits)
        except SourceError as exc:
            root = str(source.parent)
            raise SourceError(str(exc).replace(str(source), PROGRAM_FILE).replace(root + "/", "")) from None
        except LimitExceededError as exc:
            raise _relabel_limit(exc, str(source)) from None
        return _relabel(extraction, str(source))


def _relabel(extraction: Extraction, tmp_path: str) -> Extraction:
    """Locations name the program as the user sent it, not our temporary file."""
    for rej in extraction.rejected:
        if rej.location.file == tmp_path:
            object.__setattr__(rej.location, "file", PROGRAM_FILE)
    return extraction


def _relabel_limit(exc: LimitExceededError, tmp_path: str) -> LimitExceededError:
    loc = exc.location
    if loc is not None and loc.file == tmp_path:
        loc = SourceLocation(PROGRAM_FILE, loc.line, loc.column)
    return LimitExceededError(exc.construct, exc.message, loc, setting=exc.setting, limit=exc.limit)


def require_params(scop: Scop, params: Mapping[str, int], *, label: str | None = None) -> dict[str, int]:
    """The nest's parameter values, each one given; else a :class:`ParameterError` naming the missing
    ones. ``label`` (``NAME:``) replaces the temporary file's name in the message."""
    missing = [p for p in scop.params if p not in params]
    if missing:
        name = scop.name.replace(f"{PROGRAM_FILE}:", label, 1) if label else scop.name
        raise ParameterError(f"{name}: missing value for parameter(s) {', '.join(missing)}")
    return {p: int(params[p]) for p in scop.params}


def has_all_params(scop: Scop, params: Mapping[str, int]) -> bool:
    return all(p in params for p in scop.params)


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
