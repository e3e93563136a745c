"""A whole program's time is the user's program's, taken inside the sandbox, not the sandbox's start too.

Reproduction (2026-12-01, AMD EPYC, 2 threads, interleaved, medians of 9): examples/matmul.c's original
and tuned programs took 85.3 and 30.2 ms inside the sandbox, but 97.6 and 46.4 ms as sandboxed processes,
whose namespaces and mounts cost about 15 ms a run (16 ms for /bin/true, 1.2 ms inside); counted in both
runs, they read the whole program's speedup as 2.10x, not 2.82x.
"""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from loopnest.harness.sandbox import Limits, RunResult

program = importlib.import_module("loopnest.harness.program")

LIMITS = Limits(cpu_seconds=10, wall_seconds=20.0, timing_lock="none")


def _run(tmp_path: Path, script: str) -> RunResult:
    result: RunResult = program.timed_inside(["/bin/sh", "-c", script], cwd=tmp_path, limits=LIMITS,
                                             env={"OMP_NUM_THREADS": "1"}, threads=1, read_only=[])
    return result


def _whole_process_times(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """Record the time of each whole sandboxed process (what the comparison timed before)."""
    seen: list[float] = []
    real = program.run_limited

    def spy(*args: object, **kwargs: object) -> RunResult:
        result: RunResult = real(*args, **kwargs)
        seen.append(result.wall_seconds)
        return result

    monkeypatch.setattr(program, "run_limited", spy)
    return seen


def test_the_time_is_the_commands_own_not_the_sandboxs_start(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    if program._bash_clock() is None:
        pytest.skip("no bash >= 5 under /usr: the whole process is timed")
    whole = _whole_process_times(monkeypatch)
    result = _run(tmp_path, "echo done")
    assert result.ok and result.stdout == "done\n"
    assert len(whole) == 1
    # The command's interval lies inside the process's: before, the comparison read the process's.
    assert 0.0 < result.wall_seconds < whole[0]


def test_a_whole_program_comparison_reads_the_programs_times(monkeypatch: pytest.MonkeyPatch) -> None:
    if program._bash_clock() is None:
        pytest.skip("no bash >= 5 under /usr: the whole process is timed")
    whole = _whole_process_times(monkeypatch)
    source = '#include <stdio.h>\nint main(void) { puts("same"); return 0; }\n'
    outcome = program.compare_programs(source, source, program.ProgramSpec(cflags="-O1"), limits=LIMITS)
    assert outcome.status == "ok" and outcome.original_seconds is not None and outcome.tuned_seconds is not None
    # Pairs run original first, then tuned first, alternately; each program's time lies inside its
    # process's, so the medians keep that order (before, they were the processes' medians).
    order = [k for pair in range(len(whole) // 2) for k in ((0, 1) if pair % 2 == 0 else (1, 0))]
    for k, seconds in ((0, outcome.original_seconds), (1, outcome.tuned_seconds)):
        processes = sorted(t for t, which in zip(whole, order, strict=True) if which == k)
        assert seconds < processes[len(processes) // 2]


def test_the_program_inherits_neither_the_clocks_pipe_nor_its_descriptors(tmp_path: Path) -> None:
    # A descriptor of the report's pipe in the program would let it write its own time.
    result = _run(tmp_path, "ls /proc/self/fd")
    assert result.ok
    assert sorted(int(fd) for fd in result.stdout.split()) == [0, 1, 2, 3]  # 3: ls's own listing


@pytest.mark.parametrize("script, status, stderr", [
    ("echo oops >&2; exit 3", "failed", "oops\n"),
    ("kill -SEGV $$", "crashed (SIGSEGV)", ""),  # bash's own "Segmentation fault" line is not the program's
])
def test_exit_status_crashes_and_standard_error_pass_through(tmp_path: Path, script: str, status: str,
                                                            stderr: str) -> None:
    result = _run(tmp_path, script)
    assert result.status == status
    assert result.stderr == stderr


def test_a_run_killed_at_the_wall_limit_is_reported_as_such(tmp_path: Path) -> None:
    result = program.timed_inside(["/bin/sh", "-c", "sleep 30"], cwd=tmp_path,
                                  limits=Limits(wall_seconds=0.5, timing_lock="none"), env={}, threads=1,
                                  read_only=[])
    assert result.status == "wall-time limit"


@pytest.mark.parametrize("report, whole, expected", [
    ("100.250000 100.750000\n", 1.0, 0.5),
    ("1.0 2.0\n100.250000 100.750000\n", 1.0, 0.5),  # the clock's line is the last
    ("100.000000 105.000000\n", 1.0, None),  # longer than the whole process: not the clock's
    ("100.5 100.0\n", 1.0, None),  # negative
    ("", 1.0, None),  # killed before it reported
    ("100,25 100,75\n", 1.0, None),  # another locale's radix: not read as something else
    ("nan inf\n", 1.0, None),
])
def test_a_report_outside_the_whole_run_is_ignored(report: str, whole: float, expected: float | None) -> None:
    assert program._reported_seconds(report, whole) == expected


def test_without_bash_the_whole_process_is_timed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(program, "_bash_clock", lambda: None)
    whole = _whole_process_times(monkeypatch)
    result = _run(tmp_path, "echo done")
    assert result.ok and result.wall_seconds == whole[0]
