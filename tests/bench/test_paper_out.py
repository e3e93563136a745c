"""Where the paper benchmark writes its report, checked before it measures anything."""

from __future__ import annotations

from pathlib import Path

import pytest

from experiments.paper import main, report_path
from loopnest.errors import ParameterError


def test_a_directory_as_out_gets_the_report_inside_it(tmp_path: Path) -> None:
    # A 30-nest run (2 h 20 min) ended in an IsADirectoryError traceback on `--out DIR`, its report lost.
    assert report_path(tmp_path) == tmp_path / "paper-benchmark.md"
    assert report_path(tmp_path / "run.md") == tmp_path / "run.md"


def test_an_out_that_cannot_be_written_is_one_line_and_exit_2_before_any_measuring(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "a-file").write_text("")
    missing = tmp_path / "a-file" / "report.md"  # its directory cannot be made
    with pytest.raises(ParameterError, match="cannot be made"):
        report_path(missing)
    assert report_path(tmp_path / "new" / "r.md") == tmp_path / "new" / "r.md"  # a new directory is made
    status = main(["--per-family", "1", "--json", "--out", str(missing), "--url", f"sqlite:///{tmp_path}/none.db"])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and "a-file" in captured.err and "Traceback" not in captured.err
    assert not (tmp_path / "none.db").exists()  # refused before the database was opened: nothing measured
