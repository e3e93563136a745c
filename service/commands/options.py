"""Options, consoles and output shared by every perfembed command.

Each option two commands share is declared once, as an ``Annotated`` type (:data:`Include`, :data:`Json`,
...), and options that go together are grouped in a small dataclass (:class:`Compiler`, :class:`Sent`,
:class:`Kernel`, :class:`Measuring`, :class:`Remote`). A command takes a group as one parameter;
:func:`grouped` shows typer the group's options in its place, under the group's ``PANEL`` heading in
``--help``, and hands the command the group, built from them.
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import inspect
import json
import os
import sys
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any, ClassVar, TextIO, TypeVar

import typer
from rich.console import Console
from rich.markup import escape

from service.core.local import SourceFile, SparseChoice, compile_flags, parse_params, sparse_choice


def make_console(stderr: bool = False, markup: bool = False, soft_wrap: bool = False) -> Console:
    """A console whose tables are not cut to 80 columns when its output goes to a file or a pipe.

    Markup is off by default: C subscripts such as A[i][j] would otherwise be read as style tags.
    """
    stream: TextIO = sys.stderr if stderr else sys.stdout
    # Rich falls back to 80 columns off a terminal, which truncates file names and recipes in
    # tables that users redirect to a log; COLUMNS still wins when set.
    width = None if stream.isatty() or "COLUMNS" in os.environ else 200
    return Console(stderr=stderr, markup=markup, soft_wrap=soft_wrap, width=width)


console = make_console()
# Error lines use markup for their colour; callers escape the user's text.
err_console = make_console(stderr=True, markup=True, soft_wrap=True)

# Bounds of the numbers the commands take (a usage error names the option outside them).
MAX_THREADS = 1024  # --threads: 1..1024, or 0 for every core (Settings.threads' convention)
MAX_TRIALS = 100_000
MAX_SEED = 2**32 - 1  # numpy's and Optuna's samplers take 32-bit seeds
MAX_NEST = 100_000
REPS_HELP = ("Timed repetitions per variant (at least: a fast kernel is timed until its calls add up to 50 ms,"
             " 200 at most).")

# A C file that must exist: a missing one is a usage error naming it (exit 2), not a traceback.
FileArg = Annotated[Path, typer.Argument(exists=True, file_okay=True, dir_okay=False, metavar="FILE",
                                         help="C source file.")]
Include = Annotated[list[str], typer.Option("-I", "--include",
                                            help="Include directory, for angle and quoted includes (as cc -I).")]
Define = Annotated[list[str], typer.Option("-D", "--define", help="Macro NAME or NAME=VALUE (as cc -D).")]
Undefine = Annotated[list[str], typer.Option("-U", "--undefine", help="Undefine a macro (as cc -U).")]
QuoteDir = Annotated[list[str], typer.Option("-iquote", help="Directory for quoted includes only (as cc -iquote).")]
SystemDir = Annotated[list[str], typer.Option("-isystem", help="Directory for system headers (as cc -isystem).")]
Std = Annotated[str | None, typer.Option("-std", "--std", help="C language standard (as cc -std=; default gnu99).")]
BuildPath = Annotated[Path | None, typer.Option(
    "-p", "--build-path", metavar="BUILD_DIR", file_okay=True, dir_okay=True,
    help="Read FILE's flags from BUILD_DIR/compile_commands.json (CMake: -DCMAKE_EXPORT_COMPILE_COMMANDS=ON; "
         "make: bear -- make).")]
Param = Annotated[list[str], typer.Option("--param", help="Parameter value NAME=INT for sizes and trip counts.")]
Function = Annotated[str | None, typer.Option("--function", rich_help_panel="Nests and sizes",
                                                help="Only nests of this function.")]
Json = Annotated[bool, typer.Option("--json", help="Print one JSON object.")]
Reps = Annotated[int, typer.Option("--reps", min=1, max=1000, help=REPS_HELP)]
Nest = Annotated[int | None, typer.Option("--nest", min=0, max=MAX_NEST, rich_help_panel="Nests and sizes",
                                          help="Only this nest (default: every nest of FILE).")]
Threads = Annotated[int | None, typer.Option("--threads", min=0, max=MAX_THREADS,
                                             help="OpenMP threads, 0 = every core (default: settings, else every "
                                                  "core).")]
# The index structures of a sparse nest (CSR/CSC pointers and indices): generated, or the user's matrix.
Sparsity = Annotated[str | None, typer.Option("--sparsity", metavar="uniform|banded|powerlaw",
                                              help="Pattern of generated sparse matrices (default uniform).")]
Density = Annotated[float | None, typer.Option("--density", min=0.0, max=1.0,
                                               help="Fraction of entries of generated sparse matrices (default "
                                                    "0.01, or what the nest's index arrays hold).")]
Matrix = Annotated[Path | None, typer.Option("--matrix", exists=True, dir_okay=False, metavar="FILE.mtx",
                                             help="Run sparse nests on this Matrix Market matrix (its shape must "
                                                  "match the parameters).")]
Inputs = Annotated[Path | None, typer.Option("--inputs", exists=True, dir_okay=False,
                                             help="A Python kernel's example inputs (.npz, one entry per "
                                                  "parameter): its shapes, dtypes and sizes.")]
Server = Annotated[str | None, typer.Option("--server", envvar="PERFEMBED_SERVER",
                                            help="Ask the perfembed server at this URL instead of working locally "
                                                 "(sends the file and its local quoted includes).")]
ApiKey = Annotated[str | None, typer.Option("--api-key", envvar="PERFEMBED_API_KEY",
                                            help="API key for --server (writes need one).")]


@dataclass(frozen=True)
class Compiler:
    """How FILE preprocesses, as ``cc`` is told: ``-I``/``-D``/``-U``/``-iquote``/``-isystem``/``-std``, or the
    flags of its compilation database entry (``-p BUILD_DIR``) followed by those."""

    PANEL: ClassVar[str] = "Compiler flags (as cc)"

    include: Include = field(default_factory=list)
    define: Define = field(default_factory=list)
    undefine: Undefine = field(default_factory=list)
    iquote: QuoteDir = field(default_factory=list)
    isystem: SystemDir = field(default_factory=list)
    std: Std = None
    build_path: BuildPath = None

    def source(self, file: Path, kernel: Kernel | None = None, inputs: Path | None = None) -> SourceFile:
        """FILE as its compiler reads it, with ``kernel``'s function and parameter values."""
        flags = compile_flags(file, include=self.include, define=self.define, undefine=self.undefine,
                              iquote=self.iquote, isystem=self.isystem, std=self.std, build_path=self.build_path)
        kernel = kernel or Kernel()
        return SourceFile(file, flags, kernel.function, kernel.params(), inputs)


@dataclass(frozen=True)
class Sent:
    """The ``-I``/``-D`` a command sends a server with FILE (its local quoted includes go as headers)."""

    PANEL: ClassVar[str] = "Compiler flags (as cc)"

    include: Include = field(default_factory=list)
    define: Define = field(default_factory=list)


@dataclass(frozen=True)
class Kernel:
    """Which nests of FILE (``--function``) and the values of their size parameters (``--param``)."""

    PANEL: ClassVar[str] = "Nests and sizes"

    param: Param = field(default_factory=list)
    function: Function = None

    def params(self) -> dict[str, int]:
        return parse_params(self.param)


@dataclass(frozen=True)
class Measuring:
    """How nests are run when measured: their threads and the structure of their sparse matrices."""

    PANEL: ClassVar[str] = "Measuring"

    threads: Threads = None
    sparsity: Sparsity = None
    density: Density = None
    matrix: Matrix = None

    def sparse(self) -> SparseChoice | None:
        return sparse_choice(self.sparsity, self.density, self.matrix)


@dataclass(frozen=True)
class Remote:
    """``--server URL`` (with its ``--api-key``): the server answers instead of this machine."""

    PANEL: ClassVar[str] = "Server"

    server: Server = None
    api_key: ApiKey = None


F = TypeVar("F", bound=Callable[..., Any])


def grouped(command: F) -> F:
    """``command`` as typer should see it: each parameter annotated with an option group (:class:`Compiler`,
    ...) becomes that group's options (named ``PARAM_FIELD``, shown under the group's ``PANEL`` in
    ``--help`` when it has one), and the command receives the group, built from them. Other parameters
    stay as they are."""
    hints = typing.get_type_hints(command, include_extras=True)
    params: list[inspect.Parameter] = []
    groups: dict[str, tuple[type, list[tuple[str, str]]]] = {}
    for param in inspect.signature(command).parameters.values():
        kind = hints.get(param.name, param.annotation)
        if not (isinstance(kind, type) and dataclasses.is_dataclass(kind)):
            params.append(param.replace(annotation=kind, kind=inspect.Parameter.KEYWORD_ONLY))
            continue
        kinds = typing.get_type_hints(kind, include_extras=True)
        names = []
        for f in dataclasses.fields(kind):
            default = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
            params.append(inspect.Parameter(f"{param.name}_{f.name}", inspect.Parameter.KEYWORD_ONLY,
                                            default=default, annotation=_in_panel(kinds[f.name], kind)))
            names.append((f.name, f"{param.name}_{f.name}"))
        groups[param.name] = (kind, names)

    @functools.wraps(command)
    def run(**options: Any) -> Any:
        for name, (kind, names) in groups.items():
            options[name] = kind(**{f: options.pop(option) for f, option in names})
        return command(**options)

    run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params}
    return typing.cast(F, run)


def _in_panel(annotation: Any, group: type) -> Any:
    """``Annotated[T, typer.Option(...)]`` with the option shown under ``group.PANEL`` in ``--help`` (a copy:
    the shared type keeps no panel, and an option that names its own panel keeps it)."""
    panel = getattr(group, "PANEL", None)
    if panel is None or typing.get_origin(annotation) is not Annotated:
        return annotation
    kind, *extras = typing.get_args(annotation)
    shown = []
    for extra in extras:
        if isinstance(extra, typer.models.OptionInfo) and extra.rich_help_panel is None:
            extra = copy.copy(extra)
            extra.rich_help_panel = panel
        shown.append(extra)
    return Annotated[(kind, *shown)]


def reflow_help(app: typer.Typer) -> None:
    """Every command of ``app`` (and its groups) with each paragraph of its help on one line.

    typer's rich help keeps a docstring's line breaks, and the terminal then wraps those lines again, ragged
    at any width but the source's; the command list shows a first paragraph's breaks as they are."""
    for info in app.registered_commands:
        doc = info.help if info.help is not None else inspect.getdoc(info.callback)
        if doc:
            info.help = "\n\n".join(" ".join(part.split()) for part in inspect.cleandoc(doc).split("\n\n"))
    for group in app.registered_groups:
        if group.typer_instance is not None:
            reflow_help(group.typer_instance)


class _Shown:
    """The status line of :func:`show_status`: ``update`` shows new text, escaped."""

    def __init__(self, status: Any) -> None:
        self._status = status

    def update(self, text: str) -> None:
        self._status.update(escape(text))


@contextmanager
def show_status(text: str) -> Iterator[_Shown]:
    """A status line on the console while a phase runs (the core's ``StatusFn``); the text is the user's
    (file names, recipes), never markup."""
    with console.status(escape(text)) as status:
        yield _Shown(status)


def fmt_value(value: float | None, pattern: str = "{:.4f}") -> str:
    """``pattern`` applied to ``value``, or "-" for a value that was not measured."""
    return "-" if value is None else pattern.format(value)


def emit_json(data: object) -> None:
    """``--json`` output: one JSON object on stdout (values JSON cannot hold are printed as text)."""
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
