"""How a whole program is built and run, for the CLI and the API alike (:func:`program_spec`): the user's
build command in a copy of the project (``build``/``run``/``project``), every unit of their compilation
database (``-p``), or the file alone with the settings' ``cc``/``cflags`` and the file's own flags."""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass
from pathlib import Path

from loopnest.config import Settings
from loopnest.errors import ParameterError
from loopnest.frontend.compile_flags import CompileFlags, read_compile_commands
from loopnest.harness.program import ProgramSpec, defines_main, program_error
from loopnest.harness.project import Project
from loopnest.harness.sandbox import SANDBOX_ERROR, Limits
from service.core.program import BUILD_HELP


class ProgramBuildError(ParameterError):
    """The user's whole program does not build (or its sandbox does not start) as given: exit 2."""


@dataclass(frozen=True)
class WholeProgram:
    """How the user builds and runs the whole program: ``build``, a shell command run in a copy of ``project``
    (default: the file's git work tree, else its directory), or ``build_path``, a directory with a
    ``compile_commands.json``; ``run`` runs the built program (``{program}`` for the executable); ``check``
    compares the runs' files. Without any, the file alone is built, when it defines ``main``."""

    build: str | None = None
    run: str | None = None
    check: str | None = None
    project: Path | None = None
    build_path: Path | None = None

    @property
    def given(self) -> bool:
        """Whether anything says how to build or run the program (else FILE must define ``main``)."""
        return any(v is not None for v in (self.build, self.build_path, self.run, self.check))


def program_spec(file: Path, flags: CompileFlags, settings: Settings, whole: WholeProgram) -> ProgramSpec:
    """The :class:`ProgramSpec` that builds and runs ``file``'s program as ``whole`` says, with ``file``'s
    preprocessing ``flags`` (the CLI's, or a posted program's include directories and macros)."""
    threads = settings.threads or os.cpu_count() or 1
    dirs = (*flags.quote_dirs, *flags.include_dirs, *flags.system_dirs)
    if whole.build is not None or whole.build_path is not None:
        if whole.build is not None and whole.run is None:
            raise ParameterError("--build needs --run: the command that runs the built program in the project "
                                 "root (e.g. --run './app input.txt')")
        commands = () if whole.build_path is None or whole.build is not None else \
            tuple(read_compile_commands(whole.build_path))
        return ProgramSpec(cc=settings.cc, cflags=settings.cflags, include_dirs=dirs, run=whole.run or "{program}",
                           check=whole.check, threads=threads, project=Project.locate(file, whole.project),
                           build=whole.build, compile_commands=commands)
    if whole.project is not None:
        raise ParameterError("--project needs --build (the command that builds the program there)")
    # Every flag in the user's order in cflags (as -iquote, -I, -isystem, -D, -U): include_dirs would add each
    # directory again as -I, so a quote-only one would find angle includes too. They are only shown.
    return ProgramSpec(cc=settings.cc, cflags=f"{settings.cflags} {shlex.join(flags.cc_args())}".strip(),
                       run=whole.run or "{program}", check=whole.check, threads=threads,
                       inputs=(str(file.resolve().parent), *dirs))


def runnable_spec(file: Path, flags: CompileFlags, settings: Settings, whole: WholeProgram) -> ProgramSpec | None:
    """:func:`program_spec`, or None when there is no program to run: FILE has no ``main`` and nothing in
    ``whole`` says how to build and run one (the CLI then verifies nest by nest)."""
    if not whole.given and whole.project is None and \
            not defines_main(file, flags.preprocess_options(sandbox=settings.sandbox)):
        return None
    return program_spec(file, flags, settings, whole)


def require_program(file: Path, spec: ProgramSpec, settings: Settings,
                    names: tuple[str, str] = ("--build", "--run")) -> None:
    """Build the original program and run it once, before any nest is measured; one line with the first
    error and what to check (exit 2, HTTP 422) when it fails. ``names``: how the request spells its build
    and run (the CLI's options, the API's fields)."""
    failed = program_error(file.read_text(), spec, name=file.name, limits=Limits.from_settings(settings))
    if failed is None:
        return
    message = failed.message.removeprefix("original: ")
    build, run = names
    if failed.status == SANDBOX_ERROR:
        raise ProgramBuildError(f"{file}: the sandbox could not start to build the whole program: {message}")
    if failed.status != "build-error":  # it built: the run command, or what the program needs to run
        raise ProgramBuildError(f"{file}: the whole program built but did not run ({failed.status}): {message}; "
                                f"check {run} (it runs in the built project's directory)")
    hint = f"check the {build} command" if spec.build else BUILD_HELP
    raise ProgramBuildError(f"{file}: the whole program does not build: {message}; {hint}")
