"""The compiler flags every command that reads a C file takes, as ``cc`` spells them, and ``-p BUILD_DIR``
(a compilation database, as clang-tidy and clangd read it): one place that turns them into
:class:`~loopnest.frontend.compile_flags.CompileFlags`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import typer

from loopnest.frontend.compile_flags import CompileFlags, command_for

UndefineOpt = typer.Option([], "-U", "--undefine", help="Undefine a macro (as cc -U).")
QuoteDirOpt = typer.Option([], "-iquote", help="Directory for quoted includes only (as cc -iquote).")
SystemDirOpt = typer.Option([], "-isystem", help="Directory for system headers (as cc -isystem).")
StdOpt = typer.Option(None, "-std", "--std", help="C language standard (as cc -std=; default gnu99).")
BuildPathOpt = typer.Option(None, "-p", "--build-path", metavar="BUILD_DIR", file_okay=True, dir_okay=True,
                            help="Read FILE's flags from BUILD_DIR/compile_commands.json (CMake: "
                                 "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON; make: bear -- make).")


def compile_flags(file: Path, *, include: Sequence[str], define: Sequence[str], undefine: Sequence[str] = (),
                  iquote: Sequence[str] = (), isystem: Sequence[str] = (), std: str | None = None,
                  build_path: Path | None = None) -> CompileFlags:
    """FILE's flags: those of its compilation database entry (``-p``), then those on the command line."""
    # Absolute, as the compiler would resolve them from here: the whole-program build runs elsewhere.
    here = Path.cwd()
    given = CompileFlags.from_options(include=[str(here / d) for d in include], iquote=[str(here / d) for d in iquote],
                                      isystem=[str(here / d) for d in isystem], define=define, undefine=undefine,
                                      std=std)
    if build_path is None:
        return given
    return command_for(build_path, file).flags.then(given)
