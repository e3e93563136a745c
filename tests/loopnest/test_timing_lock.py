"""Timed runs wait for one lock per machine: two jobs never time at once (seed build --jobs 2 measured
parallel variants at 0.45-0.93x of the original while the other job timed its own), nor beside another
job's trial work (its compiles and isl work made the 2-thread variants of stencils with a time loop
measure 0.02-0.4x where they run 0.4-1.6x alone)."""

from __future__ import annotations

import fcntl
import importlib
import os
import threading
import time
from pathlib import Path

import pytest

from loopnest import Harness, Recipe
from loopnest.harness import timing_lock
from loopnest.harness.program import ProgramSpec, compare_programs
from loopnest.harness.sandbox import Limits
from loopnest.harness.timing_lock import timed_exclusively, timing_lock_path, working_beside_timers
from tests.helpers.kernels import AXPY
from tests.helpers.scops import nest
from tests.helpers.waiting import held_elsewhere

PROGRAM = '#include <stdio.h>\nint main(void) { double s = 0; for (int i = 1; i < 200000; i++) s += 1.0 / i; ' \
          'printf("%.6f\\n", s); return 0; }\n'


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


def _in_thread(target: object) -> threading.Thread:
    worker = threading.Thread(target=target, daemon=True)  # type: ignore[arg-type]
    worker.start()
    return worker


def test_a_timed_run_waits_while_another_job_works_on_a_trial(tmp_path: Path) -> None:
    lock, working, release, timed = tmp_path / "timing.lock", threading.Event(), threading.Event(), threading.Event()

    def trial() -> None:
        with working_beside_timers(str(lock)):
            working.set()
            release.wait(30)

    def timer() -> None:
        with timed_exclusively(str(lock)):
            timed.set()

    busy = _in_thread(trial)
    assert working.wait(30)
    waiting = _in_thread(timer)
    assert not timed.wait(0.3), "a timed run started while another job compiled"
    release.set()
    assert timed.wait(30)
    busy.join(30)
    waiting.join(30)
    assert not held_elsewhere(lock)


def test_trials_work_side_by_side_and_convert_their_hold_to_time(tmp_path: Path) -> None:
    lock, other = tmp_path / "timing.lock", threading.Event()

    def second_trial() -> None:
        with working_beside_timers(str(lock)):
            other.set()

    with working_beside_timers(str(lock)):
        assert held_elsewhere(lock)  # nobody may time now
        _in_thread(second_trial).join(30)
        assert other.is_set(), "two trials could not work at once"
        with timed_exclusively(str(lock)), working_beside_timers(str(lock)):  # converted; nested: no change
            assert held_elsewhere(lock)
            shared = os.open(lock, os.O_RDWR)
            with pytest.raises(BlockingIOError):  # exclusive now: not even another trial may work
                fcntl.flock(shared, fcntl.LOCK_SH | fcntl.LOCK_NB)
            os.close(shared)
        assert held_elsewhere(lock)  # shared again for the rest of the trial
        other_lock = tmp_path / "other.lock"
        with timed_exclusively(str(other_lock)):  # another lock file: its own hold, ours stays shared
            assert held_elsewhere(other_lock)
            shared = os.open(lock, os.O_RDWR)
            fcntl.flock(shared, fcntl.LOCK_SH | fcntl.LOCK_NB)
            os.close(shared)
    assert not held_elsewhere(lock) and not held_elsewhere(tmp_path / "other.lock")


def test_two_jobs_never_time_while_the_other_works_and_both_finish(tmp_path: Path) -> None:
    lock = tmp_path / "timing.lock"
    spans: list[tuple[int, str, float, float]] = []

    def job(number: int) -> None:
        for _ in range(6):
            with working_beside_timers(str(lock)):
                start = time.monotonic()
                time.sleep(0.02)  # sampling, legality, compiling
                spans.append((number, "work", start, time.monotonic()))
                with timed_exclusively(str(lock)):
                    start = time.monotonic()
                    time.sleep(0.02)
                    spans.append((number, "time", start, time.monotonic()))

    workers = [_in_thread(lambda n=n: job(n)) for n in (0, 1)]
    for worker in workers:
        worker.join(60)
    assert not any(worker.is_alive() for worker in workers), "a job never got the machine"
    assert sum(kind == "time" for _, kind, _, _ in spans) == 12
    for number, kind, start, end in spans:
        if kind == "time":
            assert not any(n != number and s < end and start < e for n, _, s, e in spans), "timed beside other work"


def test_a_waiting_timed_run_goes_before_new_trials(tmp_path: Path) -> None:
    lock, order = tmp_path / "timing.lock", []
    working, release = threading.Event(), threading.Event()

    def trial(name: str, hold: threading.Event | None) -> None:
        with working_beside_timers(str(lock)):
            order.append(name)
            working.set()
            if hold is not None:
                hold.wait(30)

    def timer() -> None:
        with timed_exclusively(str(lock)):
            order.append("timed")
            time.sleep(0.1)

    first = _in_thread(lambda: trial("first trial", release))
    assert working.wait(30)
    waiting = _in_thread(timer)
    time.sleep(0.2)  # the timed run waits for the first trial, at the turnstile
    late = _in_thread(lambda: trial("new trial", None))
    time.sleep(0.2)
    assert order == ["first trial"], "a new trial started ahead of the waiting timed run"
    release.set()
    for worker in (first, waiting, late):
        worker.join(30)
    assert order == ["first trial", "timed", "new trial"]


def test_nested_and_disabled_locks(tmp_path: Path) -> None:
    lock = tmp_path / "timing.lock"
    with timed_exclusively(str(lock)), timed_exclusively(str(lock)):  # nested: no self-deadlock
        assert held_elsewhere(lock)
    assert not held_elsewhere(lock)
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
            seen.append(held_elsewhere(lock))
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, spy)
    return seen


def _work_holds(monkeypatch: pytest.MonkeyPatch, lock: Path) -> list[str | None]:
    """The caller's own hold of the lock ("shared", "exclusive" or None) at each run of work beside the
    timers (compiles, cache simulations: :func:`~loopnest.harness.sandbox.run_working`)."""
    sandbox = importlib.import_module("loopnest.harness.sandbox")
    holds: list[str | None] = []
    real = sandbox.run_limited

    def spy(*args: object, **kwargs: object) -> object:
        hold = timing_lock._held.by_path.get(lock)
        holds.append(hold.mode if hold is not None else None)
        return real(*args, **kwargs)

    monkeypatch.setattr(sandbox, "run_limited", spy)  # what run_working calls
    return holds


def test_harness_times_variants_and_pairs_under_the_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lock = tmp_path / "timing.lock"
    seen = _spy(monkeypatch, importlib.import_module("loopnest.harness.measure"), "run_limited", lock)
    compiles = _work_holds(monkeypatch, lock)
    limits = Limits(timing_lock=str(lock))
    with Harness(nest(tmp_path, AXPY), {"n": 4096}, reps=1, threads=2, limits=limits) as harness:
        evaluation = harness.evaluate(Recipe.from_dict({"steps": [{"op": "unroll", "loop": 0, "factor": 4}]}))
        comparison = harness.compare(Recipe.from_dict({"steps": [{"op": "parallelize", "loop": 0}]}))
    assert evaluation.verified
    assert comparison.status == "ok"
    assert len(seen) >= 3 and all(seen), seen  # baseline, variant, and every interleaved run
    # Every compile holds it shared: another process's timed run never runs beside it (a suggest
    # --evaluate beside the paper benchmark screened its candidates 2-4x slower).
    assert compiles == ["shared"] * 3, compiles
    assert not held_elsewhere(lock)


def test_harness_holds_the_lock_shared_over_its_own_work_between_timed_runs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Its isl work, code generation and verification ran unheld, so another process's timed run could
    # have them beside it (`perfembed measure`, a worker's confirmation, the micro-benchmarks: only the
    # tuner's trials and the paper benchmark held the lock over them).
    lock = tmp_path / "timing.lock"
    measure = importlib.import_module("loopnest.harness.measure")
    holds: dict[str, list[str | None]] = {}
    for name in ("apply_recipe", "generate_c", "guarded_c", "synthesize_driver", "verify_outputs"):
        real = getattr(measure, name)

        def spy(*args: object, _real: object = real, _name: str = name, **kwargs: object) -> object:
            hold = timing_lock._held.by_path.get(lock)
            holds.setdefault(_name, []).append(hold.mode if hold is not None else None)
            return _real(*args, **kwargs)  # type: ignore[operator]

        monkeypatch.setattr(measure, name, spy)
    limits = Limits(timing_lock=str(lock))
    with Harness(nest(tmp_path, AXPY), {"n": 4096}, reps=1, threads=2, limits=limits) as harness:
        evaluation = harness.evaluate(Recipe.from_dict({"steps": [{"op": "unroll", "loop": 0, "factor": 4}]}))
        comparison = harness.compare(Recipe.from_dict({"steps": [{"op": "parallelize", "loop": 0}]}))
        assert not held_elsewhere(lock)  # held only while it works, never while open
    assert evaluation.verified and comparison.status == "ok"
    assert set(holds) == {"apply_recipe", "generate_c", "guarded_c", "synthesize_driver", "verify_outputs"}
    assert all(mode == "shared" for modes in holds.values() for mode in modes), holds


def test_program_comparison_times_pairs_under_the_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lock = tmp_path / "timing.lock"
    seen = _spy(monkeypatch, importlib.import_module("loopnest.harness.program"), "run_limited", lock)
    compiles = _work_holds(monkeypatch, lock)
    result = compare_programs(PROGRAM, PROGRAM, ProgramSpec(), limits=Limits(timing_lock=str(lock)))
    assert result.status == "ok"
    assert len(seen) >= 6 and all(seen), seen  # at least 3 pairs, both programs of each
    assert compiles == ["shared", "shared"], compiles  # the original's build and the tuned one's


def test_cache_simulation_holds_the_lock_shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # cachegrind keeps a core busy for seconds: another process's timed run must not share the cores with it.
    dynamic = importlib.import_module("embeddings.features.dynamic")
    if not dynamic.shutil.which("valgrind"):
        pytest.skip("valgrind is not installed")
    lock = tmp_path / "timing.lock"
    holds = _work_holds(monkeypatch, lock)
    work = tmp_path / "work"
    work.mkdir()
    d1, _, _ = dynamic._cachegrind_rates(nest(tmp_path, AXPY), {"n": 256}, work, "gcc",
                                          Limits(timing_lock=str(lock)))
    assert d1 is not None
    assert holds == ["shared", "shared"], holds  # the driver's compile, then the simulation
