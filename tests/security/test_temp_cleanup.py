"""Temporary directories are removed whatever kills the run (issue 59, item 10): an analysis killed at
its time limit left its ``/tmp/perfembed-src-*`` (about 1.7 MB each, owned by nobody) forever. The
cleanup runs on the parent's side, so a SIGKILL cannot skip it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from loopnest.errors import AnalysisTimeoutError, LimitExceededError
from service.analysis_budget import BudgetedRunner
from tests.security.hostile_work import allocate, make_temp_dir_and_hang


@pytest.fixture(scope="module")
def runner() -> Iterator[BudgetedRunner]:
    work = BudgetedRunner(1, memory_mb=1024)
    yield work
    work.close()


def test_an_analysis_killed_at_its_limit_leaves_no_temporary_directory(runner: BudgetedRunner, tmp_path: Path) -> None:
    marker = tmp_path / "made"
    with pytest.raises(AnalysisTimeoutError):
        runner.run(make_temp_dir_and_hang, str(marker), limit_s=2.0)
    made = Path(marker.read_text())
    assert not made.exists(), f"{made} was left behind"


def test_an_analysis_over_its_memory_limit_is_a_user_error(runner: BudgetedRunner) -> None:
    """Reproduction: the macro bomb's analysis peaked at 4.46 GB; an analysis worker's memory is now bounded
    (PERFEMBED_ANALYSIS_MEMORY_LIMIT_MB) and going over it is a 422 naming the setting, not a crash."""
    with pytest.raises(LimitExceededError, match="PERFEMBED_ANALYSIS_MEMORY_LIMIT_MB"):
        runner.run(allocate, 2048, limit_s=20.0)
    assert runner.run(allocate, 8, limit_s=20.0) == 8 << 20  # the worker is still there
