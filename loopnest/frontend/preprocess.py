"""Run the system's C preprocessor the way a compiler would, with pycparser's fake libc headers.

A program from the network is preprocessed *confined*: includes resolve only among the files it
brought (its include directories) and the fake libc, cpp runs in the sandbox, and a message never
says whether a file outside exists or quotes a line of it.
"""

from __future__ import annotations

import dataclasses
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from loopnest.errors import SourceError, SourceLocation
from loopnest.frontend.cpp_view import MAX_PREPROCESSED_MB, header_dirs, tool_files
from loopnest.harness.sandbox import Limits, run_limited, share_with_sandbox

# GCC extensions that system-style headers use and pycparser does not parse.
_EXTENSION_DEFINES = (
    "__attribute__(x)=",
    "__extension__=",
    "__restrict=restrict",
    "__restrict__=restrict",
    "__inline=inline",
    "__inline__=inline",
    "__asm__(x)=",
    "__volatile__=volatile",
)
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_INCLUDE_LINE = re.compile(r'^\s*#\s*(include|include_next|import|embed)\b\s*(.*)$')
_PROBES = re.compile(r"__has_include(_next)?|__has_embed|#\s*pragma\s+GCC\s+dependency")
_OUTSIDE = "includes only the program's own headers ({name} is not one of them)"
_CONFINED_LIMITS = Limits(cpu_seconds=20, memory_mb=1024, output_mb=MAX_PREPROCESSED_MB, wall_seconds=20.0)


@dataclass(frozen=True)
class PreprocessOptions:
    """How a file is preprocessed: ``-I`` directories, ``-D`` macros, confinement and isolation; for a
    local file also the user's ``-iquote`` and ``-isystem`` directories, ``-U`` macros and ``-std``."""

    include_dirs: tuple[str, ...] = ()
    defines: tuple[tuple[str, str | None], ...] = ()
    # A program from the network: includes resolve only in include_dirs and the fake libc.
    confined: bool = False
    sandbox: str = "auto"
    quote_dirs: tuple[str, ...] = ()
    system_dirs: tuple[str, ...] = ()
    undefines: tuple[str, ...] = ()
    std: str | None = None
    # A Python kernel's example inputs (.npz, --inputs): its shapes and sizes (loopnest.frontend.python).
    inputs: str | None = None

    @staticmethod
    def parse_define(text: str) -> tuple[str, str | None]:
        """``NAME`` or ``NAME=VALUE`` as given to ``-D``."""
        name, sep, value = text.partition("=")
        if not _NAME.match(name):
            raise SourceError(f"invalid macro name in -D {text!r}")
        return name, (value if sep else None)


def _cpp_args(exe: str, options: PreprocessOptions) -> list[str]:
    """cpp's arguments: the user's directories in the compiler's order (``-iquote``, ``-I``, then the system
    directories), where the system's own headers are the fake libc's, then the user's ``-isystem``."""
    std = options.std if options.std and not options.std.startswith(("c++", "gnu++")) else "gnu99"
    args = [exe, "-nostdinc", f"-std={std}"]
    for d in options.quote_dirs:
        args += ["-iquote", str(d)]
    for d in options.include_dirs:
        # A confined program's headers are found the same way quoted or in angle brackets.
        args += ["-iquote", str(d), "-I", str(d)] if options.confined else ["-I", str(d)]
    # Resolved, as the sandbox binds them: a virtual environment reached through a symlink is not
    # visible there under the link's name.
    args += [arg for d in header_dirs(options.sandbox) for arg in ("-isystem", str(d))]
    for d in options.system_dirs:
        args += ["-isystem", str(d)]
    for define in _EXTENSION_DEFINES:
        args += ["-D", define]
    for name, value in options.defines:
        args += ["-D", name if value is None else f"{name}={value}"]
    for name in options.undefines:
        args += ["-U", name]
    return args


def preprocess(path: Path, options: PreprocessOptions, *, cpp: str = "cpp") -> str:
    """The preprocessed text of ``path``, with line markers so coordinates point at the original."""
    exe = shutil.which(cpp)
    if exe is None:
        raise SourceError(f"the C preprocessor {cpp!r} was not found on PATH")
    if options.confined:
        return _preprocess_confined(Path(path), options, exe)
    # A list of arguments, never a shell: file names and macro values are user text.
    proc = subprocess.run([*_cpp_args(exe, options), str(path)], capture_output=True, text=True, timeout=60,
                          check=False)
    if proc.returncode != 0:
        raise SourceError(_first_cpp_error(proc.stderr, path))
    return proc.stdout


def _allowed_roots(options: PreprocessOptions) -> list[Path]:
    return [*(Path(d).resolve() for d in options.include_dirs), *header_dirs(options.sandbox)]


def _check_directives(path: Path, options: PreprocessOptions) -> None:
    """Refuse, with the line, includes that name absolute or parent paths and probes of other files."""
    files = [path, *(f for d in options.include_dirs for f in Path(d).rglob("*") if f.is_file())]
    for file in files:
        shown = path.name if file == path else str(file.relative_to(_root_of(file, options)))
        for number, line in enumerate(file.read_text(errors="replace").splitlines(), start=1):
            if _PROBES.search(line):
                raise SourceError(f"{shown}:{number}: __has_include and GCC dependency pragmas are not "
                                  "supported in programs sent to the server")
            match = _INCLUDE_LINE.match(line)
            if match is None:
                continue
            name = match.group(2).strip().strip('<>"')
            if name.startswith("/") or ".." in Path(name).parts:
                raise SourceError(f"{shown}:{number}: a program sent to the server "
                                  + _OUTSIDE.format(name=repr(name)))


def _root_of(file: Path, options: PreprocessOptions) -> Path:
    for d in options.include_dirs:
        if file.is_relative_to(d):
            return Path(d)
    return file.parent


def _preprocess_confined(path: Path, options: PreprocessOptions, exe: str) -> str:
    """cpp in the sandbox; every file it read must lie in an allowed root, else one line, no content."""
    _check_directives(path, options)
    with tempfile.TemporaryDirectory(prefix="perfembed-cpp-") as tmp:
        deps = Path(tmp) / "deps.d"
        out = Path(tmp) / "out.i"
        args = [*_cpp_args(exe, options), "-MD", "-MF", str(deps), "-o", str(out), str(path)]
        binds = [*_allowed_roots(options), path.parent]
        share_with_sandbox([path.parent, *map(Path, options.include_dirs)], options.sandbox)
        work = Path(tmp)
        limits = dataclasses.replace(_CONFINED_LIMITS, sandbox=options.sandbox)
        # cpp sees only its own files, the fake libc and the request's (cpp_view): nothing else to find.
        result = run_limited(args, cwd=work, limits=limits, read_only=binds, system=tool_files(exe))
        if not result.ok:
            raise SourceError(_confined_error(result.stderr, result.status, path))
        roots = [*_allowed_roots(options), path.resolve()]
        for dep in _dependencies(deps.read_text(errors="replace") if deps.exists() else ""):
            resolved = Path(dep).resolve()
            if not any(resolved == r or resolved.is_relative_to(r) for r in roots):
                raise SourceError(f"{path.name}: a program sent to the server "
                                  + _OUTSIDE.format(name=repr(Path(dep).name)))
        return out.read_text(errors="replace")


def included_headers(path: Path, options: PreprocessOptions, *, cpp: str = "cpp") -> list[Path]:
    """The user's own headers ``path`` includes, directly or not, found as the compiler finds them (``cpp
    -MM``: not the system's, which are the fake libc's); one line with cpp's first error when one is missing."""
    exe = shutil.which(cpp)
    if exe is None:
        raise SourceError(f"the C preprocessor {cpp!r} was not found on PATH")
    proc = subprocess.run([*_cpp_args(exe, options), "-MM", str(path)], capture_output=True, text=True,
                          timeout=60, check=False)
    if proc.returncode != 0:
        raise SourceError(_first_cpp_error(proc.stderr, path))
    own = Path(path).resolve()
    return [p for p in (Path(d) for d in _dependencies(proc.stdout)) if p.resolve() != own]


def _dependencies(makefile_rule: str) -> list[str]:
    """The prerequisites of a ``cpp -MD`` rule (``target: a.c b.h \\`` lines)."""
    text = makefile_rule.replace("\\\n", " ")
    _, _, prerequisites = text.partition(": ")
    return [p.replace("\\ ", " ") for p in re.split(r"(?<!\\)\s+", prerequisites.strip()) if p]


def _confined_error(stderr: str, status: str, path: Path) -> str:
    """cpp's first error, with any include that could not be opened said the same way as one refused."""
    if status == "output-size limit" or "File size limit exceeded" in stderr:  # cc1 got SIGXFSZ
        return (f"{path.name}: the preprocessed program is larger than {MAX_PREPROCESSED_MB} MB (macro expansion); "
                "send a smaller program")
    for line in stderr.splitlines():
        # No line number: it would tell a file that exists (refused below) from one that does not.
        missing = re.match(r"^(.*?):\d+:\d+: fatal error: (.*?): No such file or directory", line)
        if missing:
            where = Path(missing.group(1)).name
            return f"{where}: a program sent to the server " + _OUTSIDE.format(name=repr(Path(missing.group(2)).name))
        if "error" in line:
            return f"preprocessing failed: {line.strip().replace(str(path), path.name)}"
    if status != "failed":
        return f"preprocessing {path.name} stopped: {status}"
    return f"preprocessing {path.name} failed"


def _first_cpp_error(stderr: str, path: Path) -> str:
    for line in stderr.splitlines():
        if "error" in line:
            return f"preprocessing failed: {line.strip()}"
    return f"preprocessing {path} failed: {stderr.strip()[:500]}"


def location_of(coord: object, fallback: str) -> SourceLocation:
    """A :class:`SourceLocation` from a pycparser ``Coord`` (or None)."""
    if coord is None:
        return SourceLocation(fallback, 0)
    file = getattr(coord, "file", None) or fallback
    return SourceLocation(str(file), int(getattr(coord, "line", 0) or 0), int(getattr(coord, "column", 0) or 0))


def compiler_diagnostic(path: Path, options: PreprocessOptions, *, cc: str = "gcc") -> str | None:
    """The compiler's first error for ``path`` (with its line), for parse errors pycparser cannot place.

    A confined program is checked with the same include paths as its preprocessing (which already
    refused anything outside them), in the sandbox."""
    exe = shutil.which(cc)
    if exe is None:
        return None
    if options.confined:
        with tempfile.TemporaryDirectory(prefix="perfembed-cc-") as tmp:
            args = [*_cpp_args(exe, options), "-fsyntax-only", "-w", str(path)]
            limits = dataclasses.replace(_CONFINED_LIMITS, sandbox=options.sandbox)
            stderr = run_limited(args, cwd=Path(tmp), limits=limits, read_only=[*_allowed_roots(options), path.parent],
                                 system=tool_files(exe)).stderr
    else:
        args = [*_cpp_args(exe, options), "-fsyntax-only", "-w", str(path)]
        stderr = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False).stderr
    for line in stderr.splitlines():
        if ": error:" in line:
            return line.strip()
    return None
