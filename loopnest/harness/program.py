"""Whole-program evaluation: the user's original program against its drop-in tuned version.

Both are built with the user's compiler and flags, run in the sandbox alternately (original, tuned,
tuned, original, ...) in fresh processes, and compared: their standard output must be identical, and
a user's ``check`` command (run with ``$ORIGINAL`` and ``$TUNED`` naming the two run directories)
must pass. The speedup is the same paired bootstrap as for nests (:mod:`loopnest.harness.compare`),
over the programs' wall times, so a recipe is kept only when the program the user runs gets faster.

A program's time is taken inside the sandbox, around the user's run command (:func:`timed_inside`):
the sandbox's own start and end (namespaces, mounts: 15 ms a run on this project's 2-core machines)
are not the user's program, and counted in both runs of a pair they pulled every ratio towards 1
(examples/matmul.c against isl's schedule jammed 4 x 4, interleaved, medians of 9: 97.6 -> 46.4 ms as
sandboxed processes, 85.3 -> 30.2 ms inside the sandbox, 84.4 -> 33.7 ms run directly).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from pycparser import c_ast

from loopnest.frontend.compile_flags import CompileCommand
from loopnest.frontend.extract import parse_file
from loopnest.frontend.preprocess import PreprocessOptions
from loopnest.harness.compare import AcceptancePolicy, PressureMeter, Speedup, interval
from loopnest.harness.progress import StepFn, report_step
from loopnest.harness.project import SYNTHESIZED_PROGRAM, Project, synthesized_build
from loopnest.harness.sandbox import Limits, RunResult, run_limited, run_working, share_with_sandbox
from loopnest.harness.timing_lock import timed_exclusively, working_beside_timers


@dataclass(frozen=True)
class ProgramSpec:
    """How the user builds and runs the program.

    Without a ``project``, the tuned file alone is built with ``cc`` and ``cflags``, and ``run`` is a shell
    command in which ``{program}`` stands for the built executable (given without it, it is the
    program's arguments). With a ``project``, both programs are built in fresh copies of its root, by
    ``build`` (a shell command run there) or, without one, from ``compile_commands`` (every unit with its
    flags, linked as ``{program}``); ``run`` runs in the copy."""

    cc: str = "gcc"
    cflags: str = "-O3 -march=native -fopenmp"
    include_dirs: tuple[str, ...] = ()
    defines: tuple[tuple[str, str | None], ...] = ()
    run: str = "{program}"
    check: str | None = None
    threads: int = 1
    inputs: tuple[str, ...] = field(default=())  # directories the program may read (read-only)
    project: Project | None = None
    build: str | None = None
    compile_commands: tuple[CompileCommand, ...] = ()

    def command(self, program: Path | None) -> list[str]:
        if program is None:  # the user's build: their run command, as they wrote it
            return ["/bin/sh", "-c", self.run]
        text = self.run if "{program}" in self.run else "{program} " + self.run
        return ["/bin/sh", "-c", text.replace("{program}", shlex.quote(str(program)))]


@dataclass(frozen=True)
class _Built:
    """A built program: the directory it runs in and its executable (None: the user's run command finds it)."""

    run_dir: Path
    program: Path | None


@dataclass(frozen=True)
class ProgramComparison:
    # "ok", "build-error", "sandbox-error", "output-changed", "check-failed", "stopped at 3x the original", ...
    status: str
    speedup: Speedup | None = None
    original_seconds: float | None = None
    tuned_seconds: float | None = None
    message: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok" and self.speedup is not None

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "message": self.message, "original_seconds": self.original_seconds,
                "tuned_seconds": self.tuned_seconds,
                "speedup": None if self.speedup is None else self.speedup.to_dict()}


def compare_programs(original: str, tuned: str, spec: ProgramSpec, *, name: str = "program.c",
                     policy: AcceptancePolicy | None = None, limits: Limits | None = None,
                     on_step: StepFn | None = None) -> ProgramComparison:
    """Build, run, check and time ``original`` and ``tuned`` (C source texts) until the interval of the
    program's speedup clears ``policy.margin`` or clearly does not; ``on_step`` hears ``building
    original``, ``building tuned`` and ``timing pair N``. A build that fails is ``build-error`` with the
    compiler's first error."""
    policy, limits = policy or AcceptancePolicy(), limits or Limits.configured()
    with tempfile.TemporaryDirectory(prefix="perfembed-program-") as tmp:
        work = Path(tmp)
        programs = []
        for k, text in enumerate((original, tuned)):
            report_step(on_step, f"building {'original' if k == 0 else 'tuned'}")
            built = _build_one(work, k, name, text, spec, limits)
            if isinstance(built, ProgramComparison):
                return built
            programs.append(built)
        return _time_pairs(programs, spec, policy, limits, on_step, needs_openmp="#pragma omp parallel" in tuned)


def program_error(original: str, spec: ProgramSpec, *, name: str = "program.c", limits: Limits | None = None,
                  run: bool = True) -> ProgramComparison | None:
    """Why the original program does not build as ``spec`` says (``build-error``/``sandbox-error``) or,
    with ``run``, does not run once to its end (``original failed``: a wrong ``--run`` command, a missing
    input), or None: checked before any nest is measured, so a wrong command costs seconds, not minutes."""
    limits = limits or Limits.configured()
    with tempfile.TemporaryDirectory(prefix="perfembed-program-") as tmp:
        built = _build_one(Path(tmp), 0, name, original, spec, limits)
        if isinstance(built, ProgramComparison):
            return built
        if not run:
            return None
        ran = _run(built, spec, limits)
        return None if ran.ok else _failed(0, ran, AcceptancePolicy())


def _build_one(work: Path, k: int, name: str, text: str, spec: ProgramSpec,
               limits: Limits) -> _Built | ProgramComparison:
    which = "original" if k == 0 else "tuned"
    built = _build_project(work, k, text, spec, limits) if spec.project else _build(work, k, name, text, spec, limits)
    if not isinstance(built, RunResult):
        return built
    # The copy's paths read as the project's (or as the file's, built alone).
    error = first_error(built).replace(f"{work / f'src{k}'}/", "")
    return ProgramComparison(built.failure("build-error"), message=f"{which}: {error}")


def _build(work: Path, k: int, name: str, text: str, spec: ProgramSpec, limits: Limits) -> _Built | RunResult:
    src_dir = work / f"src{k}"
    src_dir.mkdir()
    (src_dir / name).write_text(text)
    exe = work / f"program{k}"
    flags = [f"-I{d}" for d in spec.include_dirs]
    flags += [f"-D{n}" if v is None else f"-D{n}={v}" for n, v in spec.defines]
    built = run_working([spec.cc, *shlex.split(spec.cflags), *flags, "-o", str(exe), str(src_dir / name), "-lm"],
                        cwd=work, limits=limits, read_only=[Path(d) for d in (*spec.include_dirs, *spec.inputs)])
    return _Built(work / f"run{k}", exe) if built.ok else built


def _build_project(work: Path, k: int, text: str, spec: ProgramSpec, limits: Limits) -> _Built | RunResult:
    """The project copied to ``work/srcK`` with ``text`` as the tuned file, built there the user's way."""
    assert spec.project is not None
    copy = work / f"src{k}"
    copy.mkdir()
    spec.project.copy_to(copy, text)
    share_with_sandbox([work], limits.sandbox)  # the copy and the directory above it: nobody builds there
    build = spec.build or synthesized_build(spec.compile_commands, spec.project.root, copy)
    built = run_working(["/bin/sh", "-c", build], cwd=copy, limits=limits,
                        read_only=spec.project.outside((*spec.include_dirs, *spec.inputs)))
    if not built.ok:
        return built
    return _Built(copy, None if spec.build else copy / SYNTHESIZED_PROGRAM)


def first_error(result: RunResult) -> str:
    """A failed build's first error line (the compiler's ``error:``, the linker's ``undefined reference``),
    else what :meth:`RunResult.describe` says."""
    for line in result.stderr.splitlines():
        if re.search(r"\berror\b|undefined reference|cannot|No such file|not found|No rule to make", line):
            return line.strip()[:300]
    return result.describe()


def _run(built: _Built, spec: ProgramSpec, limits: Limits, *, show_openmp: bool = False) -> RunResult:
    """One run of ``built``; ``show_openmp``: its OpenMP runtime, if it has one, lists its settings on
    standard error (:data:`OPENMP_BANNER`), which says whether the build enabled OpenMP."""
    if built.program is not None and not spec.project:  # a fresh directory for each run of a lone file
        shutil.rmtree(built.run_dir, ignore_errors=True)
        built.run_dir.mkdir()
        shutil.copy2(built.program, built.run_dir / built.program.name)
        program: Path | None = built.run_dir / built.program.name
    else:
        program = built.program
    env = {"OMP_NUM_THREADS": str(spec.threads), **({"OMP_DISPLAY_ENV": "TRUE"} if show_openmp else {})}
    return timed_inside(spec.command(program), cwd=built.run_dir, limits=limits, env=env, threads=spec.threads,
                        read_only=[Path(d) for d in spec.inputs])


# Run inside the sandbox by bash (>= 5: $EPOCHREALTIME): the command's start and end, written to a pipe
# the command itself does not inherit ({fd}>&- closes it for the command), and its exit status passed
# on (a death by signal as that signal, so a crash still reads as one). bash's own messages ("Segmentation
# fault") go nowhere: the command's standard error is what the user's program wrote.
_CLOCK = ('fd=$1; shift; exec 9>&2 2>/dev/null; s=$EPOCHREALTIME; "$@" 2>&9 9>&- {fd}>&-; rc=$?; '
          'e=$EPOCHREALTIME; '
          'printf "%s %s\\n" "$s" "$e" >&"$fd"; '
          'if [ "$rc" -gt 128 ]; then kill -n "$((rc - 128))" "$$"; fi; exit "$rc"')


@lru_cache(maxsize=1)
def _bash_clock() -> str | None:
    """bash where the sandbox can run it (under /usr) and it has $EPOCHREALTIME; None otherwise."""
    found = shutil.which("bash", path="/usr/bin:/bin")
    if found is None or not Path(found).resolve().is_relative_to("/usr"):
        return None
    probe = subprocess.run([found, "-c", 'echo "${EPOCHREALTIME:-}"'], capture_output=True, text=True,
                           timeout=10, check=False, env={"LC_ALL": "C", "PATH": "/usr/bin:/bin"})
    return found if probe.returncode == 0 and _seconds(probe.stdout.strip()) is not None else None


def timed_inside(args: list[str], *, cwd: Path, limits: Limits, env: dict[str, str], threads: int,
                 read_only: list[Path]) -> RunResult:
    """:func:`run_limited`, with ``wall_seconds`` the command's own time, taken inside the sandbox; where
    that cannot be had (no bash 5, a run killed before it reported), the time of the whole sandboxed
    process. The program could write to the pipe through /proc (same uid), but a report longer than
    the whole process took, or negative, is ignored, so a run can read at most the sandbox's start
    faster; and the program is the user's own, which decides its time anyway."""
    bash = _bash_clock()
    if bash is None:
        return run_limited(args, cwd=cwd, limits=limits, env=env, threads=threads, read_only=read_only)
    read_end, write_end = os.pipe()
    try:
        try:
            result = run_limited([bash, "-c", _CLOCK, "perfembed-clock", str(write_end), *args], cwd=cwd,
                                 limits=limits, env=env, threads=threads, read_only=read_only,
                                 pass_fds=(write_end,))
        finally:
            os.close(write_end)
        os.set_blocking(read_end, False)
        try:
            report = os.read(read_end, 4096).decode("ascii", "replace")
        except BlockingIOError:
            report = ""
    finally:
        os.close(read_end)
    inside = _reported_seconds(report, result.wall_seconds)
    return result if inside is None else dataclasses.replace(result, wall_seconds=inside)


def _reported_seconds(report: str, whole: float) -> float | None:
    """The time in the clock's report (its last line: start and end), when it lies within ``whole``."""
    lines = report.strip().splitlines()
    fields = lines[-1].split() if lines else []
    if len(fields) != 2:
        return None
    start, end = _seconds(fields[0]), _seconds(fields[1])
    if start is None or end is None or not 0.0 <= end - start <= whole:
        return None
    return end - start


def _seconds(text: str) -> float | None:
    # $EPOCHREALTIME prints with the locale's radix character; the sandbox's is C (a point).
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) and value > 0 else None


def _check(programs: Sequence[_Built], spec: ProgramSpec, first: tuple[RunResult, RunResult],
           limits: Limits) -> str | None:
    """Why the tuned program's results differ from the original's, or None when they agree."""
    if first[0].stdout != first[1].stdout:
        lines = zip(first[0].stdout.splitlines(), first[1].stdout.splitlines(), strict=False)
        where = next((i for i, (a, b) in enumerate(lines, 1) if a != b), None)
        return "output-changed: standard output differs" + (f" at line {where}" if where else " in length")
    if spec.check is None:
        return None
    env = {"ORIGINAL": str(programs[0].run_dir), "TUNED": str(programs[1].run_dir)}
    checked = run_limited(["/bin/sh", "-c", spec.check], cwd=programs[0].run_dir.parent, limits=limits, env=env,
                          read_only=[Path(d) for d in spec.inputs])
    return None if checked.ok else f"check-failed: the check command said {checked.describe()}"


def _time_pairs(programs: Sequence[_Built], spec: ProgramSpec, policy: AcceptancePolicy,
                limits: Limits, on_step: StepFn | None = None, *, needs_openmp: bool = False) -> ProgramComparison:
    logs: list[float] = []
    times: tuple[list[float], list[float]] = ([], [])
    pressure, runs = 0.0, 0
    wall = limits
    while True:
        report_step(on_step, f"timing pair {runs + 1}")
        order = (0, 1) if runs % 2 == 0 else (1, 0)
        results: dict[int, RunResult] = {}
        with timed_exclusively(limits.timing_lock):
            meter = PressureMeter()
            for k in order:
                results[k] = _run(programs[k], spec, wall, show_openmp=needs_openmp and runs == 0 and k == 1)
                if not results[k].ok:
                    return _failed(k, results[k], policy)
                if runs == 0 and k == 0:  # the original's time bounds every later run, within the limit
                    wall = limits.with_wall(min(limits.wall_seconds,
                                                2.0 + results[0].wall_seconds * policy.timeout_factor))
            pressure = max(pressure, meter.stop(os.cpu_count() or 1))
        if runs == 0:
            note = NO_OPENMP if needs_openmp and OPENMP_BANNER not in results[1].stderr else ""
            with working_beside_timers(limits.timing_lock):  # the user's check command is work, not a timed run
                problem = _check(programs, spec, (results[0], results[1]), limits)
            if problem is not None:
                status, _, message = problem.partition(": ")
                return ProgramComparison(status, message=message)
        runs += 1
        for k in (0, 1):
            times[k].append(results[k].wall_seconds)
        logs.append(math.log(max(results[0].wall_seconds, 1e-9) / max(results[1].wall_seconds, 1e-9)))
        ratio, low, high = interval(logs, policy.confidence)
        speedup = Speedup(ratio, low, high, policy.confidence, len(logs), runs, spec.threads, round(pressure, 3),
                          pressure > policy.load_threshold)
        if runs >= 3 and policy.decided(speedup):
            median = sorted(times[0])[len(times[0]) // 2], sorted(times[1])[len(times[1]) // 2]
            return ProgramComparison("ok", speedup, median[0], median[1], message=note)


# What an OpenMP runtime (libgomp, LLVM's libomp) prints first under OMP_DISPLAY_ENV=TRUE.
OPENMP_BANNER = "OPENMP DISPLAY ENVIRONMENT BEGIN"
NO_OPENMP = ("built without OpenMP: the tuned program's parallel loops ran on one thread (add -fopenmp to its "
             "build, then check again)")


def _failed(k: int, result: RunResult, policy: AcceptancePolicy) -> ProgramComparison:
    which = "original" if k == 0 else "tuned"
    if result.status == "wall-time limit":
        return ProgramComparison(f"stopped at {policy.timeout_factor:g}x the original",
                                 message=f"the {which} program ran over {result.wall_seconds:.1f} s")
    return ProgramComparison(f"{which} {result.status}", message=result.describe())


def defines_main(path: Path, options: PreprocessOptions) -> bool:
    """Whether ``path`` itself defines ``main`` (so it can be run as a whole program)."""
    ast = parse_file(Path(path), options)
    return any(isinstance(e, c_ast.FuncDef) and e.decl.name == "main" for e in ast.ext)
