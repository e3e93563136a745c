"""The program suite (``benchmarks/programs/``) and perfembed's tuning of it, as a user runs it.

Each program's ``perfembed.json`` names its kernel file, the function to tune and the sizes that are
function arguments at the default (MEDIUM) dataset; the sizes of another dataset are read from the
program's header through the preprocessor. :func:`cli_suggest` runs ``perfembed suggest --evaluate
--write-best`` as a subprocess of the CLI (the same interpreter and environment) with the program's
own build (``--build 'make -C PROG clean all ...' --run 'cd PROG && ./PROG' --project SUITE``);
:func:`cli_suggest_p` runs the ``-p BUILD_DIR`` form after ``cmake -S PROG -B BUILD_DIR``.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SUITE = Path(__file__).resolve().parent / "programs"
DATASETS = ("SMALL", "MEDIUM", "LARGE")
GCC = "gcc"
GCC_FLAGS = "-O3 -march=native -fopenmp"
SUGGEST_TIMEOUT_S = 900.0  # a program of the suite takes 1-3 min; a user would not wait 15


@dataclass(frozen=True)
class Program:
    """One program of the suite: its folder and its manifest."""

    name: str
    directory: Path
    kernel_file: str
    function: str
    params: dict[str, int]
    run: str
    description: str = ""

    @classmethod
    def load(cls, directory: Path) -> Program:
        manifest = json.loads((directory / "perfembed.json").read_text())
        return cls(name=directory.name, directory=directory, kernel_file=manifest["kernel_file"],
                   function=manifest["function"], params={k: int(v) for k, v in manifest["params"].items()},
                   run=manifest.get("run") or f"./{directory.name}", description=manifest.get("description", ""))

    @property
    def suite(self) -> Path:
        return self.directory.parent

    @property
    def kernel_path(self) -> Path:
        return self.directory / self.kernel_file


def load_suite(suite: Path = SUITE) -> list[Program]:
    """Every program of ``suite`` (a folder with a ``perfembed.json``), by name."""
    return [Program.load(d) for d in sorted(suite.iterdir()) if (d / "perfembed.json").is_file()]


def select_programs(programs: list[Program], names: Sequence[str] | None) -> list[Program]:
    """``names`` in the suite's order (all when None); a ValueError naming the unknown ones."""
    if not names:
        return programs
    known = {p.name for p in programs}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown program(s) {', '.join(unknown)}; the suite has {', '.join(sorted(known))}")
    return [p for p in programs if p.name in names]


def dataset_flag(dataset: str) -> str:
    return f"-D{dataset}_DATASET"


def header_macros(program: Program, dataset: str) -> dict[str, int]:
    """The integer macros the program's headers define at ``dataset`` (``gcc -E -dM``)."""
    includes = "".join(f"#include <{h.name}>\n" for h in sorted((program.directory / "include").glob("*.h")))
    done = subprocess.run([GCC, "-E", "-dM", "-I", "include", "-I", "../common/include", dataset_flag(dataset),
                           "-x", "c", "-"], input=includes, capture_output=True, text=True,
                          cwd=program.directory, timeout=60, check=False)
    if done.returncode != 0:
        raise ValueError(f"{program.name}: its headers do not preprocess: {done.stderr.strip()[:300]}")
    return {m[1]: int(m[2]) for m in re.finditer(r"^#define (\w+) (\d+)$", done.stdout, re.MULTILINE)}


def dataset_params(program: Program, dataset: str) -> dict[str, int]:
    """The manifest's parameters at ``dataset``: each the header macro of the same name (``ni``: ``NI``, or
    ``..._NI``) or, failing that, the one macro whose MEDIUM value is the manifest's."""
    if dataset == "MEDIUM" or not program.params:
        return dict(program.params)
    medium, wanted = header_macros(program, "MEDIUM"), header_macros(program, dataset)
    params = {}
    for name, value in program.params.items():
        named = [m for m in medium if m == name.upper() or m.endswith("_" + name.upper())]
        same = [m for m in medium if medium[m] == value]
        macro = named[0] if len(named) == 1 else same[0] if len(same) == 1 else None
        if macro is None or macro not in wanted:
            raise ValueError(f"{program.name}: no header macro gives parameter {name} at {dataset}")
        params[name] = wanted[macro]
    return params


def make_args(program: Program, dataset: str, cc: str = GCC, cflags: str = GCC_FLAGS) -> list[str]:
    """The program's own build from the suite root: ``make -C PROG clean all CC=.. CFLAGS=.. DATASET=..``."""
    return ["make", "-s", "-C", program.name, "clean", "all", f"CC={cc}", f"CFLAGS={cflags}",
            f"DATASET={dataset_flag(dataset)}"]


def run_command(program: Program) -> str:
    return f"cd {shlex.quote(program.name)} && {program.run}"


@dataclass(frozen=True)
class SuggestRequest:
    """What the tuning step needs besides the program: the dataset and its sizes, the options, a scratch folder."""

    dataset: str
    params: dict[str, int]
    k: int
    threads: int
    work: Path
    timeout_s: float = SUGGEST_TIMEOUT_S


@dataclass(frozen=True)
class Tuning:
    """What ``perfembed suggest`` gave: its outcome (``tuned``, ``nest-verified``, ``not-tuned``,
    ``build-failed``; ``error`` when it ended without one), the file it wrote, and its JSON."""

    status: str
    reason: str
    tuned_text: str | None = None
    result: dict[str, Any] | None = None
    seconds: float = 0.0
    command: list[str] = field(default_factory=list)
    exit_code: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "reason": self.reason, "written": self.tuned_text is not None,
                "seconds": round(self.seconds, 1), "exit_code": self.exit_code, "command": shlex.join(self.command)}


SuggestFn = Callable[[Program, SuggestRequest], Tuning]


def perfembed_cli() -> list[str]:
    """The CLI a user runs: the ``perfembed`` script beside this interpreter, else ``python -m service.cli``."""
    script = Path(sys.executable).parent / "perfembed"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "service.cli"]


def suggest_args(program: Program, request: SuggestRequest, written: Path) -> list[str]:
    """``suggest FILE --function F --param ... --evaluate --write-best WRITTEN --json`` (no flags or build)."""
    args = ["suggest", str(program.kernel_path), "--function", program.function]
    for name, value in request.params.items():
        args += ["--param", f"{name}={value}"]
    return [*args, "--k", str(request.k), "--threads", str(request.threads), "--evaluate",
            "--write-best", str(written), "--json"]


def cli_suggest(program: Program, request: SuggestRequest) -> Tuning:
    """``perfembed suggest`` with the program's flags and its own build and run, in the suite as the project."""
    written = request.work / "tuned.c"
    args = suggest_args(program, request, written) + [
        "-I", str(program.directory / "include"), "-I", str(program.suite / "common" / "include"),
        "-D", f"{request.dataset}_DATASET", "--build", shlex.join(make_args(program, request.dataset)),
        "--run", run_command(program), "--project", str(program.suite)]
    return run_suggest([*perfembed_cli(), *args], written, request)


def cli_suggest_p(program: Program, request: SuggestRequest) -> Tuning:
    """``cmake -S PROG -B WORK/build -DDATASET=..``, then ``perfembed suggest FILE -p WORK/build`` (perfembed
    builds every unit of the compilation database itself and runs the program)."""
    build = request.work / "build"
    if shutil.which("cmake") is None:
        return Tuning("error", "cmake not found: the -p form needs a compilation database")
    shutil.rmtree(build, ignore_errors=True)
    cmake = ["cmake", "-S", str(program.directory), "-B", str(build), f"-DDATASET={request.dataset}_DATASET"]
    done = subprocess.run(cmake, capture_output=True, text=True, timeout=300, check=False)
    if done.returncode != 0 or not (build / "compile_commands.json").is_file():
        return Tuning("error", f"cmake failed: {last_line(done.stderr)}", command=cmake, exit_code=done.returncode)
    written = request.work / "tuned-p.c"
    args = suggest_args(program, request, written) + ["-p", str(build)]
    return run_suggest([*perfembed_cli(), *args], written, request)


def run_suggest(command: list[str], written: Path, request: SuggestRequest) -> Tuning:
    """Run ``command`` (a ``suggest --json``) and read its outcome and the file it wrote."""
    written.unlink(missing_ok=True)
    start = time.perf_counter()
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=request.timeout_s, check=False,
                              cwd=request.work)
    except subprocess.TimeoutExpired:
        return Tuning("error", f"suggest gave no answer in {request.timeout_s:.0f} s (--suggest-timeout): stopped",
                      seconds=time.perf_counter() - start, command=command)
    seconds = time.perf_counter() - start
    try:
        result: dict[str, Any] | None = json.loads(done.stdout)
    except json.JSONDecodeError:
        result = None
    if not isinstance(result, dict) or "outcome" not in result:
        return failed_suggest(result, done, seconds, command)
    outcome = result["outcome"]
    text = written.read_text() if outcome.get("written") and written.is_file() else None
    return Tuning(outcome["status"], outcome.get("reason") or "", text, result, seconds, command, done.returncode)


def failed_suggest(result: Any, done: subprocess.CompletedProcess[str], seconds: float,
                   command: list[str]) -> Tuning:
    """A suggest that ended without an outcome: its JSON error (``ProgramBuildError``: the original does not
    build, exit 2) or the last line it printed."""
    error = result if isinstance(result, dict) and "error" in result else None
    if error is not None:
        status = "build-failed" if error["error"] == "ProgramBuildError" else "error"
        reason = f"{error['error']}: {error.get('message') or ''}"
    elif done.returncode < 0:
        status, reason = "error", f"suggest was stopped by signal {-done.returncode} after {seconds:.0f} s"
    else:
        status = "error"
        reason = last_line(done.stderr) or last_line(done.stdout) or f"suggest exited {done.returncode} with no outcome"
    return Tuning(status, reason, seconds=seconds, command=command, exit_code=done.returncode)


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1][:500] if lines else ""
