"""The user's compiler flags, read as their compiler reads them.

A local file is preprocessed with the include directories, macros and language standard the user
builds it with: from the command line (``-I``, ``-iquote``, ``-isystem``, ``-D``, ``-U``, ``-std``), or
from a JSON compilation database (``compile_commands.json``, which CMake's
``CMAKE_EXPORT_COMPILE_COMMANDS`` and Bear write), found with ``-p BUILD_DIR`` as clang-tidy and clangd
find it. Relative directories in the database are relative to its entry's ``directory``.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from loopnest.errors import ParameterError
from loopnest.frontend.preprocess import PreprocessOptions

COMPILE_COMMANDS = "compile_commands.json"
# Options whose value is the next argument (or attached: -Idir, -DX=1).
_PATH_OPTIONS = {"-I": "include_dirs", "-iquote": "quote_dirs", "-isystem": "system_dirs"}
# Options of a compile command that name its output or input: not flags of the file's language.
_NOT_FLAGS = {"-o", "-c", "-MF", "-MT", "-MQ"}


@dataclass(frozen=True)
class CompileFlags:
    """The flags that decide how a C file preprocesses: include directories by kind, macros in order
    (``-D NAME[=VALUE]`` as (NAME, VALUE or None), ``-U NAME``) and the language standard."""

    include_dirs: tuple[str, ...] = ()
    quote_dirs: tuple[str, ...] = ()
    system_dirs: tuple[str, ...] = ()
    defines: tuple[tuple[str, str | None], ...] = ()
    undefines: tuple[str, ...] = ()
    std: str | None = None
    # Everything else the compile command said (-O3, -fopenmp, -march=...): what a build of the file needs.
    other: tuple[str, ...] = field(default=())

    @classmethod
    def from_options(cls, *, include: Iterable[str] = (), iquote: Iterable[str] = (),
                     isystem: Iterable[str] = (), define: Iterable[str] = (), undefine: Iterable[str] = (),
                     std: str | None = None) -> CompileFlags:
        """The CLI's options (``-D`` as ``NAME`` or ``NAME=VALUE``)."""
        return cls(tuple(include), tuple(iquote), tuple(isystem),
                   tuple(PreprocessOptions.parse_define(d) for d in define), tuple(undefine), std)

    def then(self, later: CompileFlags) -> CompileFlags:
        """These flags followed by ``later``'s, as if written after them on the command line."""
        return CompileFlags(self.include_dirs + later.include_dirs, self.quote_dirs + later.quote_dirs,
                            self.system_dirs + later.system_dirs, self.defines + later.defines,
                            self.undefines + later.undefines, later.std or self.std, self.other + later.other)

    def preprocess_options(self, *, sandbox: str = "auto") -> PreprocessOptions:
        return PreprocessOptions(self.include_dirs, self.defines, sandbox=sandbox, quote_dirs=self.quote_dirs,
                                 system_dirs=self.system_dirs, undefines=self.undefines, std=self.std)

    def cc_args(self) -> list[str]:
        """The preprocessing flags as a compiler's arguments (a whole-program build)."""
        args = [f"-iquote{d}" for d in self.quote_dirs] + [f"-I{d}" for d in self.include_dirs]
        args += [a for d in self.system_dirs for a in ("-isystem", d)]
        args += [f"-D{n}" if v is None else f"-D{n}={v}" for n, v in self.defines]
        args += [f"-U{n}" for n in self.undefines]
        return args + ([f"-std={self.std}"] if self.std else [])


def parse_compile_flags(args: Sequence[str], directory: Path | None = None) -> CompileFlags:
    """The flags of a compiler's argument list (without the compiler itself); relative directories are
    made absolute against ``directory`` when given."""
    found: dict[str, list[str]] = {"include_dirs": [], "quote_dirs": [], "system_dirs": []}
    defines: list[tuple[str, str | None]] = []
    undefines: list[str] = []
    other: list[str] = []
    std: str | None = None
    items = list(args)
    pos = 0
    while pos < len(items):
        arg = items[pos]
        name, value, pos = _option(items, pos)
        if name in _PATH_OPTIONS:
            found[_PATH_OPTIONS[name]].append(_absolute(value, directory))
        elif name == "-D":
            defines.append(PreprocessOptions.parse_define(value))
        elif name == "-U":
            undefines.append(value)
        elif arg.startswith(("-std=", "--std=")):
            std = arg.split("=", 1)[1]
        elif name in _NOT_FLAGS or not arg.startswith("-"):
            continue
        else:
            other.append(arg)
    return CompileFlags(tuple(found["include_dirs"]), tuple(found["quote_dirs"]), tuple(found["system_dirs"]),
                        tuple(defines), tuple(undefines), std, tuple(other))


def _option(items: list[str], pos: int) -> tuple[str, str, int]:
    """(option, value, next position) for an option that takes a value, attached or separate; else
    (the argument, "", next position). ``-o``/``-MF``-style options skip their value."""
    arg = items[pos]
    for name in ("-iquote", "-isystem", "-I", "-D", "-U", *sorted(_NOT_FLAGS - {"-c"})):
        if arg == name:
            if pos + 1 >= len(items):
                raise ParameterError(f"compiler option {name} has no value")
            return name, items[pos + 1], pos + 2
        if arg.startswith(name) and len(name) == 2 and name not in _NOT_FLAGS:
            return name, arg[len(name):], pos + 1
    return arg, "", pos + 1


def _absolute(path: str, directory: Path | None) -> str:
    return str(directory / path) if directory is not None and not Path(path).is_absolute() else path


@dataclass(frozen=True)
class CompileCommand:
    """One entry of a compilation database: the file, the directory its command runs in, the command."""

    directory: Path
    file: Path  # absolute
    arguments: tuple[str, ...]  # the compiler first

    @property
    def flags(self) -> CompileFlags:
        return parse_compile_flags(self.arguments[1:], self.directory)


def read_compile_commands(build_dir: Path) -> list[CompileCommand]:
    """The entries of ``BUILD_DIR/compile_commands.json`` (or of that file, given itself)."""
    path = build_dir if build_dir.name == COMPILE_COMMANDS else build_dir / COMPILE_COMMANDS
    try:
        entries = json.loads(path.read_text())
    except FileNotFoundError:
        raise ParameterError(f"-p {build_dir}: no {COMPILE_COMMANDS} there (CMake writes it with "
                             "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON; Bear with `bear -- make`)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ParameterError(f"{path}: not a readable compilation database ({exc})") from None
    if not isinstance(entries, list):
        raise ParameterError(f"{path}: a compilation database is a JSON list of entries")
    return [_entry(path, number, entry) for number, entry in enumerate(entries, start=1)]


def _entry(path: Path, number: int, entry: object) -> CompileCommand:
    if not isinstance(entry, dict) or not isinstance(entry.get("directory"), str) \
            or not isinstance(entry.get("file"), str):
        raise ParameterError(f"{path}: entry {number} has no 'directory' and 'file'")
    directory = Path(entry["directory"])
    arguments = entry.get("arguments")
    if isinstance(arguments, list) and all(isinstance(a, str) for a in arguments):
        args = tuple(arguments)
    elif isinstance(entry.get("command"), str):
        args = tuple(shlex.split(entry["command"]))
    else:
        raise ParameterError(f"{path}: entry {number} has neither 'arguments' nor 'command'")
    if not args:
        raise ParameterError(f"{path}: entry {number} has an empty command")
    file = Path(entry["file"])
    return CompileCommand(directory, (directory / file).resolve(), args)


def command_for(build_dir: Path, file: Path) -> CompileCommand:
    """The database's entry for ``file`` (matched by its resolved path), or one line saying it is not there."""
    commands = read_compile_commands(build_dir)
    wanted = file.resolve()
    for command in commands:
        if command.file == wanted:
            return command
    raise ParameterError(f"{file}: not in {build_dir / COMPILE_COMMANDS} ({len(commands)} entries); "
                         "re-run the build's configure step, or give -I/-D flags instead of -p")

