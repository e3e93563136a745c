"""Temporary directories are removed whatever kills the run (issue 59, item 10): an analysis killed at
its time limit left its ``/tmp/perfembed-src-*`` (about 1.7 MB each, owned by nobody) forever. The
cleanup runs on the parent's side, so a SIGKILL cannot skip it."""

from __future__ import annotations

from pathlib import Path

import pytest

from loopnest.errors import AnalysisTimeoutError
from service.analysis_budget import BudgetedRunner
from tests.security.hostile_work import make_temp_dir_and_hang


def test_an_analysis_killed_at_its_limit_leaves_no_temporary_directory(tmp_path: Path) -> None:
    runner = BudgetedRunner(1)
    marker = tmp_path / "made"
    try:
        with pytest.raises(AnalysisTimeoutError):
            runner.run(make_temp_dir_and_hang, str(marker), limit_s=2.0)
        made = Path(marker.read_text())
        assert not made.exists(), f"{made} was left behind"
    finally:
        runner.close()
