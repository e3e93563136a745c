"""The paper benchmark keeps its work off other processes' timed runs (reproduction of 2026-12-02).

Beside a seed build, the benchmark's isl work, code generation and compiles ran while the build timed
its variants (the lock showed the build's exclusive hold with the benchmark's process running), and
the build's parallel recipes read several times slower than alone. A measuring process holds the
timing lock shared through each nest's work, as a seed build's job does.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from experiments import paper_run
from experiments.paper_run import PaperRun
from tests.helpers.waiting import held_elsewhere


def test_a_nests_work_holds_the_timing_lock_shared(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lock = tmp_path / "timing.lock"
    run = object.__new__(PaperRun)  # the per-nest step alone: no database, no search
    run.settings = SimpleNamespace(timing_lock=str(lock))
    run.selection = SimpleNamespace(held=[None])
    run.progress = None
    run.skipped = []
    seen: dict[str, bool] = {}

    def step(name: str, result: Any) -> Any:
        def record(*args: Any) -> Any:
            seen[name] = held_elsewhere(lock)
            if name == "measure":
                raise paper_run._Skipped("stop here")
            return result
        return record

    monkeypatch.setattr(run, "_nest", step("nest", ({}, None, [])), raising=False)
    monkeypatch.setattr(run, "_autotune", step("autotune", None), raising=False)
    monkeypatch.setattr(run, "_measure", step("measure", None), raising=False)
    held = SimpleNamespace(nest_id=1, name="f/x.c#0", family="f")
    assert run.measure(0, held) is None
    assert seen == {"nest": True, "autotune": True, "measure": True}
    assert not held_elsewhere(lock)  # released when the nest is done
