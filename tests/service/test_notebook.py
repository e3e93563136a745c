"""notebooks/explore.ipynb runs from top to bottom (nbclient) against a fresh temporary database.

Nothing here skips: a notebook import that fails (a name that moved, a dev dependency missing) fails
the test, as it would fail a user."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

from tests.service.factories import ROOT

NOTEBOOK = ROOT / "notebooks" / "explore.ipynb"


def test_the_notebook_runs_on_a_fresh_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PERFEMBED_DATABASE_URL", f"sqlite:///{tmp_path / 'perfembed.db'}")
    monkeypatch.setenv("PERFEMBED_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("PERFEMBED_THREADS", "1")
    monkeypatch.setenv("PERFEMBED_ROOT", str(ROOT))
    monkeypatch.setenv("PERFEMBED_NOTEBOOK_BUDGET", "3")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
                   ).execute()
    outputs = [o for cell in notebook.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    text = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    assert "enqueued tuning job" in text and "done:" in text
    assert "same results: True | tuned: True" in text, text  # the NumPy function of the last cell
    assert any("image/png" in o.get("data", {}) for o in outputs), "the embedding map was not shown"
    assert (tmp_path / "embedding-map.png").stat().st_size > 0
