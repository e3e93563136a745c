"""A user's project, copied to a scratch directory and built the user's way.

The whole-program check builds the original and the tuned program in two fresh copies of the project
root (never in the user's tree), with the user's build command (``make``, ``cmake -S . -B b && cmake
--build b``, a ``cc`` line) or, from a compilation database alone, every translation unit it lists with
its own flags, linked with ``-lm`` and OpenMP. Only the project's own files are copied: in a git work
tree, the files git would commit (tracked, or untracked and not ignored), so build outputs and virtual
environments stay behind; elsewhere every file but ``.git`` and CMake build trees (tied to their
absolute path, a copy of one would build the user's tree).
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from loopnest.errors import ParameterError
from loopnest.frontend.compile_flags import CompileCommand

MAX_PROJECT_FILES = 20_000
MAX_PROJECT_BYTES = 512 << 20
# Where a build synthesized from a compilation database puts its objects and program, in the copy.
SYNTHESIZED_DIR = ".perfembed-build"
SYNTHESIZED_PROGRAM = f"{SYNTHESIZED_DIR}/program"
BUILD_FILES = ("Makefile", "makefile", "GNUmakefile", "CMakeLists.txt", "meson.build", "configure")


@dataclass(frozen=True)
class Project:
    """The project root and the tuned file's path inside it."""

    root: Path
    file: Path  # relative to root

    @classmethod
    def locate(cls, file: Path, project: Path | None = None) -> Project:
        """``project`` (``--project DIR``), else the git work tree ``file`` lies in, else the nearest directory
        above it with a build file (a Makefile, a CMakeLists.txt: ``src/kernel.c`` beside ``Makefile``), else
        its directory."""
        path = file.resolve()
        root = project.resolve() if project is not None else \
            _git_root(path.parent) or _build_root(path.parent) or path.parent
        if not root.is_dir():
            raise ParameterError(f"--project {project}: not a directory")
        if not path.is_relative_to(root):
            raise ParameterError(f"{file} is not inside the project {root} (--project DIR must hold it)")
        return cls(root, path.relative_to(root))

    def outside(self, paths: Sequence[str]) -> list[Path]:
        """Those of ``paths`` outside the project (its copy holds the rest): what a build must be shown."""
        return [Path(p) for p in paths if not Path(p).resolve().is_relative_to(self.root)]

    @cached_property
    def files(self) -> tuple[Path, ...]:
        """The project's own files, relative to its root (see the module's docstring); listed once per
        project, however many copies a comparison makes."""
        listed = _git_files(self.root)
        files = listed if listed is not None else _walk(self.root)
        if self.file not in files:
            files.append(self.file)
        if len(files) > MAX_PROJECT_FILES:
            raise ParameterError(f"project {self.root} has {len(files)} files (at most {MAX_PROJECT_FILES} are "
                                 "copied for a build): give --project with the program's own directory")
        return tuple(files)

    def copy_to(self, target: Path, text: str) -> None:
        """The project's files in ``target``, with the tuned file's text replaced by ``text``."""
        total = 0
        for rel in self.files:
            source = self.root / rel
            if not source.is_file() or source.is_symlink():
                continue
            total += source.stat().st_size
            if total > MAX_PROJECT_BYTES:
                raise ParameterError(f"project {self.root} holds over {MAX_PROJECT_BYTES >> 20} MiB: give "
                                     "--project with the program's own directory")
            dest = target / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, dest)
        # Written in both copies (the original's text in the first), so that a build tool that compares
        # times rebuilds it in both the same way.
        (target / self.file).parent.mkdir(parents=True, exist_ok=True)
        (target / self.file).write_text(text)


def _git_root(directory: Path) -> Path | None:
    git = shutil.which("git")
    if git is None:
        return None
    proc = subprocess.run([git, "-C", str(directory), "rev-parse", "--show-toplevel"], capture_output=True,
                          text=True, timeout=30, check=False)
    return Path(proc.stdout.strip()).resolve() if proc.returncode == 0 and proc.stdout.strip() else None


def _build_root(directory: Path) -> Path | None:
    for candidate in (directory, *directory.parents):
        if any((candidate / name).is_file() for name in BUILD_FILES):
            return candidate
    return None


def _git_files(root: Path) -> list[Path] | None:
    git = shutil.which("git")
    if git is None or _git_root(root) is None:
        return None
    proc = subprocess.run([git, "-C", str(root), "ls-files", "-z", "--cached", "--others", "--exclude-standard",
                           "--", "."], capture_output=True, timeout=60, check=False)
    if proc.returncode != 0:
        return None
    return sorted({Path(p.decode()) for p in proc.stdout.split(b"\0") if p})


def _walk(root: Path) -> list[Path]:
    out: list[Path] = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root)
        if ".git" in rel.parts or any((root / Path(*rel.parts[:n]) / "CMakeCache.txt").exists()
                                      for n in range(1, len(rel.parts))):
            continue
        if path.is_file():
            out.append(rel)
            if len(out) > MAX_PROJECT_FILES:
                break
    return out


def synthesized_build(commands: Sequence[CompileCommand], project_root: Path, copy_root: Path, *,
                      link_flags: Sequence[str] = ("-lm", "-fopenmp")) -> str:
    """A shell command that builds, in ``copy_root``, every translation unit of a compilation database with
    its own flags (the project root's paths moved to the copy), and links them into
    :data:`SYNTHESIZED_PROGRAM`."""
    old, new = str(project_root), str(copy_root)
    lines = [f"mkdir -p {SYNTHESIZED_DIR}"]
    objects = []
    for number, command in enumerate(commands):
        args = _without_output(command.arguments)
        obj = f"{new}/{SYNTHESIZED_DIR}/unit{number}.o"
        moved = [a.replace(old, new) for a in args]
        directory = str(command.directory).replace(old, new)
        # A build directory is not copied (git ignores it): made again, empty, for the commands to run in.
        lines.append(f"(mkdir -p {shlex.quote(directory)} && cd {shlex.quote(directory)} && "
                     f"{shlex.join([*moved, '-c', '-o', obj])})")
        objects.append(obj)
    compiler = commands[0].arguments[0] if commands else "cc"
    others = [a for a in commands[0].arguments[1:] if a.startswith(("-f", "-m", "-O"))] if commands else []
    lines.append(shlex.join([compiler, *others, *objects, "-o", f"{new}/{SYNTHESIZED_PROGRAM}", *link_flags]))
    return " && ".join(lines)


def _without_output(arguments: Sequence[str]) -> list[str]:
    """A compile command without its ``-o FILE`` and ``-c`` (the synthesized build names its objects)."""
    out: list[str] = []
    skip = False
    for arg in arguments:
        if skip:
            skip = False
        elif arg == "-o":
            skip = True
        elif arg != "-c" and not (arg.startswith("-o") and len(arg) > 2):
            out.append(arg)
    return out
