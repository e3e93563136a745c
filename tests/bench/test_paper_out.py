"""Where the paper benchmark writes its report, checked before it measures anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.paper import main, report_path
from loopnest.errors import ParameterError


def test_a_directory_as_out_gets_the_report_inside_it(tmp_path: Path) -> None:
    # A 30-nest run (2 h 20 min) ended in an IsADirectoryError traceback on `--out DIR`, its report lost.
    assert report_path(tmp_path) == tmp_path / "paper-benchmark.md"
    assert report_path(tmp_path / "run.md") == tmp_path / "run.md"


def test_an_out_that_cannot_be_written_is_one_line_and_exit_2_before_any_measuring(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    missing = tmp_path / "absent" / "report.md"
    with pytest.raises(ParameterError, match="does not exist"):
        report_path(missing)
    status = main(["--per-family", "1", "--json", "--out", str(missing), "--url", f"sqlite:///{tmp_path}/none.db"])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "absent" in captured.err and "Traceback" not in captured.err
    assert not (tmp_path / "none.db").exists()  # refused before the database was opened: nothing measured
