"""A C program as a user has it (:class:`ProgramSource`), and the one place that puts it on disk to
extract its nests.

:func:`materialized` writes the source and its headers into a private temporary directory (never a
shared file: concurrent requests each get their own), with confined preprocessing options;
:func:`extract_program` extracts the nests there, with every location naming the program as the user
sent it (``program.c``, or the job's file name), never our temporary file. The service's stages, the
embedding store's search by source and the tuning worker all come here.
"""

from __future__ import annotations

import contextlib
import re
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loopnest.config import get_settings
from loopnest.errors import LimitExceededError, ParameterError, SourceError, SourceLocation
from loopnest.frontend.extract import Extraction, extract_scops
from loopnest.frontend.limits import AnalysisLimits
from loopnest.frontend.preprocess import PreprocessOptions, included_headers
from loopnest.harness.index_data import SparseChoice

PROGRAM_FILE = "program.c"  # what the temporary source is called in every message
PYTHON_FILE = "program.py"  # a Python kernel's: the suffix selects the NumPy frontend (loopnest.frontend.python)
LANGUAGES = ("c", "python")
_QUOTED_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)
_HEADER_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.\-]*(/[A-Za-z0-9_][A-Za-z0-9_.\-]*)*$")


def nest_name(program: str, index: int) -> str:
    """The one name of a nest in every answer and in the store: its program's name and its index in it
    (``stencil_2d/jacobi2d_5pt_f32.c#0``)."""
    return f"{program}#{index}"


@dataclass(frozen=True)
class LocalFile:
    """Where a local user's program lives and how their compiler preprocesses it: its nests are extracted
    from the file itself, with their flags, so includes resolve as ``cc`` resolves them and every message
    names their file and line. Only the CLI makes these: a program from the network never has one."""

    path: str
    options: PreprocessOptions


@dataclass(frozen=True)
class ProgramSource:
    """A C program: its source text, quoted includes (``headers``, by relative name), macros (as
    ``cc -D``: a value or None), parameter values, the function whose nests are wanted, and its name."""

    source: str
    headers: Mapping[str, str] = field(default_factory=dict)
    defines: Mapping[str, str | None] = field(default_factory=dict)
    params: Mapping[str, int] = field(default_factory=dict)
    function: str | None = None
    name: str | None = None
    sparse: SparseChoice | None = None  # the index structures sparse nests run on (None: the default)
    local: LocalFile | None = None  # the user's own file, read in place (the CLI); None for a request
    # A project sent whole: its other files (sources, headers) by relative path, where the source lies in it,
    # and its -I directories (relative): includes resolve among them as cc resolves them, and nowhere else.
    files: Mapping[str, str] = field(default_factory=dict)
    path: str | None = None
    include_dirs: tuple[str, ...] = ()
    language: str = "c"  # or "python": a NumPy kernel, its shapes from its type hints and params

    def file_name(self) -> str:
        """What the source is called on disk and in messages when it has no ``path``."""
        return PYTHON_FILE if self.language == "python" else PROGRAM_FILE

    def key(self) -> dict[str, Any]:
        """Everything that identifies the program, as JSON (the answer cache's key)."""
        return {"source": self.source, "headers": dict(self.headers), "defines": dict(self.defines),
                "params": dict(self.params), "function": self.function, "name": self.name,
                "sparse": None if self.sparse is None else self.sparse.key(),
                "local": None if self.local is None else [self.local.path, repr(self.local.options)],
                "files": dict(self.files), "path": self.path, "include_dirs": list(self.include_dirs),
                "language": self.language}

    def stored_name(self, name: str | None = None) -> str:
        """The name it is stored under: the caller's (the CLI's file name), its own, its function's, else
        ``program``; its nests are ``NAME#INDEX`` (:func:`nest_name`)."""
        return name or self.name or self.function or "program"

    def define_flags(self) -> list[str]:
        """The macros as ``NAME`` or ``NAME=VALUE`` (a worker's ``defines`` option)."""
        return [k if v is None else f"{k}={v}" for k, v in self.defines.items()]


@contextlib.contextmanager
def materialized(program: ProgramSource, *,
                 filename: str | None = None) -> Iterator[tuple[Path, PreprocessOptions]]:
    """The program's source (as ``filename``, default :meth:`ProgramSource.file_name`, or at its ``path`` in
    the project), headers (under
    ``include/``) and other files (at their paths) in a private directory, with confined preprocessing
    options: includes resolve only among its own files, through ``include/``, its ``include_dirs`` and the
    project's root."""
    filename = filename or program.file_name()
    if Path(filename).name != filename:
        raise ParameterError(f"file name {filename!r} is not a plain file name")
    with tempfile.TemporaryDirectory(prefix="perfembed-src-") as tmp:
        root = Path(tmp)
        for name, text in program.headers.items():
            _write(root / "include", name, text, "header name")
        for name, text in program.files.items():
            _write(root, name, text, "file name")
        source = _write(root, program.path, program.source, "path") if program.path else root / filename
        if not program.path:  # a plain file name (checked above), not a path to validate
            source.write_text(program.source)
        dirs = [str(root / "include"), *(str(_inside(root, d, "include directory")) for d in program.include_dirs)]
        defines = tuple((PreprocessOptions.parse_define(k)[0], v) for k, v in program.defines.items())
        yield source, PreprocessOptions((*dirs, str(root)) if program.files or program.path else tuple(dirs),
                                        defines, confined=True, sandbox=get_settings().sandbox)


def project_root(source: Path, program: ProgramSource) -> Path:
    """The root of :func:`materialized`'s directory, from its ``source``."""
    return source.parents[len(Path(program.path).parts) - 1] if program.path else source.parent


def _inside(root: Path, name: str, what: str) -> Path:
    if not _HEADER_NAME.match(name) or ".." in name.split("/"):
        raise ParameterError(f"{what} {name!r} is not a plain relative path")
    return root / name


def _write(root: Path, name: str, text: str, what: str) -> Path:
    target = _inside(root, name, what)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    except OSError as exc:  # "a" and "a/b", or a name too long for the file system
        raise ParameterError(f"{what} {name!r} cannot be used: {exc.strerror}") from None
    return target


def extract_program(program: ProgramSource, limits: AnalysisLimits | None = None, *,
                    filename: str | None = None) -> Extraction:
    """Write the source and its headers to a private directory and extract the nests (of
    ``program.function`` only, when it names one); locations name ``filename``. A :class:`LocalFile`
    program is extracted in place, with the user's flags, and its locations name the user's file."""
    if program.local is not None:
        return extract_scops(Path(program.local.path), program.local.options, function=program.function,
                             limits=limits)
    filename = program.path or filename or program.file_name()
    with materialized(program, filename=Path(filename).name) as (source, options):
        try:
            extraction = extract_scops(source, options, function=program.function, limits=limits)
        except SourceError as exc:
            root = str(project_root(source, program))
            raise SourceError(str(exc).replace(str(source), filename).replace(root + "/", "")) from None
        except LimitExceededError as exc:
            raise _relabel_limit(exc, str(source), filename) from None
        return _relabel(extraction, str(source), filename)


def _relabel(extraction: Extraction, tmp_path: str, filename: str) -> Extraction:
    """Locations name the program as the user sent it, not our temporary file."""
    for rej in extraction.rejected:
        if rej.location.file == tmp_path:
            object.__setattr__(rej.location, "file", filename)
    return extraction


def _relabel_limit(exc: LimitExceededError, tmp_path: str, filename: str) -> LimitExceededError:
    loc = exc.location
    if loc is not None and loc.file == tmp_path:
        loc = SourceLocation(filename, loc.line, loc.column)
    return LimitExceededError(exc.construct, exc.message, loc, setting=exc.setting, limit=exc.limit)


def collect_quoted_includes(path: str | Path, include_dirs: Iterable[str | Path] = ()) -> dict[str, str]:
    """The local headers ``path`` includes with ``#include "..."``, recursively, by include name.

    Each name is resolved as the preprocessor does: first beside the including file, then in
    ``include_dirs`` in order. A header found beside another header is keyed by its path
    relative to the first header's include root, so the server's layout resolves it the same
    way. Names that resolve nowhere are left out (they may be system headers, or the server
    reports them). A name that climbs out of its directory (``..``) raises
    :class:`ParameterError`: the server only accepts plain relative paths.
    """
    dirs = [Path(d) for d in include_dirs]
    found: dict[str, str] = {}
    # (file, the name it was included as): the name's directory is the prefix of its own includes.
    queue: list[tuple[Path, str]] = [(Path(path), "")]
    seen: set[Path] = set()
    while queue:
        current, as_name = queue.pop(0)
        try:
            resolved = current.resolve()
            text = current.read_text()
        except (OSError, UnicodeDecodeError) as exc:
            raise ParameterError(f"cannot read {current}: {exc}") from None
        if resolved in seen:
            continue
        seen.add(resolved)
        prefix = str(Path(as_name).parent) if as_name else ""
        for name in _QUOTED_INCLUDE.findall(text):
            hit = _resolve(name, current.parent, prefix, dirs)
            if hit is None:
                continue
            header, key = hit
            if any(part == ".." for part in Path(key).parts) or Path(key).is_absolute():
                raise ParameterError(f"{current}: #include \"{name}\" leaves its directory; the server "
                                     "accepts only headers below the include directories")
            if key not in found:
                try:
                    found[key] = header.read_text()
                except (OSError, UnicodeDecodeError) as exc:
                    raise ParameterError(f"cannot read {header}: {exc}") from None
                queue.append((header, key))
    return found


def _resolve(name: str, here: Path, prefix: str, dirs: list[Path]) -> tuple[Path, str] | None:
    beside = here / name
    if beside.is_file():
        # Beside the main file: its own name; beside a header: below that header's directory.
        key = str(Path(prefix) / name) if prefix not in ("", ".") else name
        return beside, _normal(key)
    for d in dirs:
        candidate = d / name
        if candidate.is_file():
            return candidate, _normal(name)
    return None


def _normal(key: str) -> str:
    parts: list[str] = []
    for part in Path(key).parts:
        if part == ".":
            continue
        parts.append(part)
    return "/".join(parts)


def program_from_file(path: str | Path, *, include_dirs: Iterable[str | Path] = (),
                      defines: Iterable[str] | Mapping[str, str | None] = (),
                      params: Mapping[str, int] | None = None, function: str | None = None) -> ProgramSource:
    """A local file as a :class:`ProgramSource` to send: its source, the headers it includes
    (:func:`project_headers`, angle or quoted, found through ``include_dirs``), the macros (``NAME`` /
    ``NAME=VALUE`` as ``-D``, or a mapping), parameter values and function; its file name is its name."""
    path = Path(path)
    macros = dict(defines) if isinstance(defines, Mapping) else dict(PreprocessOptions.parse_define(d) for d in defines)
    options = PreprocessOptions(tuple(str(d) for d in include_dirs), tuple(macros.items()))
    return ProgramSource(source=_read(path), headers=project_headers(path, options), defines=macros,
                         params=dict(params or {}), function=function, name=path.name)


def local_program(path: str | Path, options: PreprocessOptions, *, params: Mapping[str, int] | None = None,
                  function: str | None = None) -> ProgramSource:
    """The user's own file, extracted in place with their preprocessing ``options`` (:class:`LocalFile`);
    its headers are carried too, for the tuning jobs it may enqueue (a worker reads the stored program)."""
    path = Path(path)
    if path.suffix == ".py":  # a NumPy kernel: no headers, and the C preprocessor must not read it
        return ProgramSource(source=_read(path), params=dict(params or {}), function=function, name=path.name,
                             local=LocalFile(str(path), options), language="python")
    return ProgramSource(source=_read(path), headers=project_headers(path, options), defines=dict(options.defines),
                         params=dict(params or {}), function=function, name=path.name,
                         local=LocalFile(str(path), options))


def project_headers(path: Path, options: PreprocessOptions) -> dict[str, str]:
    """The user's headers ``path`` includes (as the compiler finds them), each by its name below the first
    include directory (``-iquote``, ``-I``, then the file's own directory) that holds it, so that a copy laid
    out by :func:`materialized` resolves the same includes. A header below none of them is left out (the
    local extraction still reads it in place)."""
    roots = [Path(d).resolve() for d in (*options.quote_dirs, *options.include_dirs)] + [path.resolve().parent]
    found: dict[str, str] = {}
    for header in included_headers(path, options):
        resolved = header.resolve()
        root = next((r for r in roots if resolved.is_relative_to(r)), None)
        if root is not None:
            found.setdefault(resolved.relative_to(root).as_posix(), _read(header))
    return found


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise ParameterError(f"cannot read {path}: {exc}") from None
