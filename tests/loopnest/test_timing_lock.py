"""Timed runs wait for one lock per machine: two jobs never time at once (seed build --jobs 2 measured
parallel variants at 0.45-0.93x of the original while the other job timed its own)."""

from __future__ import annotations

import fcntl
import importlib
import os
import threading
from pathlib import Path

import pytest

from loopnest import Harness, Recipe
from loopnest.harness.program import ProgramSpec, compare_programs
from loopnest.harness.sandbox import Limits
from loopnest.harness.timing_lock import timed_exclusively, timing_lock_path
from tests.loopnest.test_legality import nest

AXPY = """
void axpy(int n, double a, double x[n], double y[n]) {
  for (int i = 0; i < n; i++)
    y[i] = a * x[i] + y[i];
}
"""
PROGRAM = '#include <stdio.h>\nint main(void) { double s = 0; for (int i = 1; i < 200000; i++) s += 1.0 / i; ' \
          'printf("%.6f\\n", s); return 0; }\n'


def _held_elsewhere(path: Path) -> bool:
    """Whether some other holder has the lock (probed on a descriptor of our own, without waiting)."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def test_a_timed_run_waits_while_another_holds_the_lock(tmp_path: Path) -> None:
    lock = tmp_path / "timing.lock"
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # another job is timing
    entered = threading.Event()

    def job() -> None:
        with timed_exclusively(str(lock)):
            entered.set()

    worker = threading.Thread(target=job)
    worker.start()
    assert not entered.wait(0.3), "a timed run started while another job held the machine"
    fcntl.flock(fd, fcntl.LOCK_UN)
    os.close(fd)
    assert entered.wait(30)
    worker.join()


def test_nested_and_disabled_locks(tmp_path: Path) -> None:
    lock = tmp_path / "timing.lock"
    with timed_exclusively(str(lock)), timed_exclusively(str(lock)):  # nested: no self-deadlock
        assert _held_elsewhere(lock)
    assert not _held_elsewhere(lock)
    assert timing_lock_path("none") is None and timing_lock_path("auto") == timing_lock_path("")
    with timed_exclusively("none"):
        pass


def _spy(monkeypatch: pytest.MonkeyPatch, module: object, name: str, lock: Path) -> list[bool]:
    """Record, at each timed call of ``module.name``, whether the lock is held (by the caller)."""
    seen: list[bool] = []
    real = getattr(module, name)

    def spy(*args: object, **kwargs: object) -> object:
        env = kwargs.get("env")
        if isinstance(env, dict) and "OMP_NUM_THREADS" in env:
            seen.append(_held_elsewhere(lock))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return seen


def test_harness_times_variants_and_pairs_under_the_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lock = tmp_path / "timing.lock"
    seen = _spy(monkeypatch, importlib.import_module("loopnest.harness.measure"), "run_limited", lock)
    limits = Limits(timing_lock=str(lock))
    with Harness(nest(tmp_path, AXPY), {"n": 4096}, reps=1, threads=2, limits=limits) as harness:
        evaluation = harness.evaluate(Recipe.from_dict({"steps": [{"op": "unroll", "loop": 0, "factor": 4}]}))
        comparison = harness.compare(Recipe.from_dict({"steps": [{"op": "parallelize", "loop": 0}]}))
    assert evaluation.verified
    assert comparison.status == "ok"
    assert len(seen) >= 3 and all(seen), seen  # baseline, variant, and every interleaved run
    assert not _held_elsewhere(lock)


def test_program_comparison_times_pairs_under_the_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lock = tmp_path / "timing.lock"
    seen = _spy(monkeypatch, importlib.import_module("loopnest.harness.program"), "run_limited", lock)
    result = compare_programs(PROGRAM, PROGRAM, ProgramSpec(), limits=Limits(timing_lock=str(lock)))
    assert result.status == "ok"
    assert len(seen) >= 6 and all(seen), seen  # at least 3 pairs, both programs of each
