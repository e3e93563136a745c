"""Run the system's C preprocessor the way a compiler would, with pycparser's fake libc headers."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pycparser_fake_libc

from loopnest.errors import SourceError, SourceLocation

_OWN_INCLUDE = Path(__file__).parent / "include"
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


@dataclass(frozen=True)
class PreprocessOptions:
    include_dirs: tuple[str, ...] = ()
    defines: tuple[tuple[str, str | None], ...] = ()

    @staticmethod
    def parse_define(text: str) -> tuple[str, str | None]:
        """``NAME`` or ``NAME=VALUE`` as given to ``-D``."""
        name, sep, value = text.partition("=")
        if not _NAME.match(name):
            raise SourceError(f"invalid macro name in -D {text!r}")
        return name, (value if sep else None)


def preprocess(path: Path, options: PreprocessOptions, *, cpp: str = "cpp") -> str:
    """The preprocessed text of ``path``, with line markers so coordinates point at the original."""
    exe = shutil.which(cpp)
    if exe is None:
        raise SourceError(f"the C preprocessor {cpp!r} was not found on PATH")
    args = [exe, "-nostdinc", "-std=gnu99", "-I", str(_OWN_INCLUDE), "-I", pycparser_fake_libc.directory]
    for d in options.include_dirs:
        args += ["-iquote", str(d), "-I", str(d)]
    for define in _EXTENSION_DEFINES:
        args += ["-D", define]
    for name, value in options.defines:
        args += ["-D", name if value is None else f"{name}={value}"]
    args.append(str(path))
    # A list of arguments, never a shell: file names and macro values are user text.
    proc = subprocess.run(args, capture_output=True, text=True, timeout=60, check=False)
    if proc.returncode != 0:
        raise SourceError(_first_cpp_error(proc.stderr, path))
    return proc.stdout


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
    """The compiler's first error for ``path`` (with its line), for parse errors pycparser cannot place."""
    exe = shutil.which(cc)
    if exe is None:
        return None
    args = [exe, "-fsyntax-only", "-std=gnu99", "-w"]
    for d in options.include_dirs:
        args += ["-I", str(d)]
    for name, value in options.defines:
        args += ["-D", name if value is None else f"{name}={value}"]
    proc = subprocess.run([*args, str(path)], capture_output=True, text=True, timeout=60, check=False)
    for line in proc.stderr.splitlines():
        if ": error:" in line:
            return line.strip()
    return None
