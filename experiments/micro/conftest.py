"""Micro-benchmarks on pytest-benchmark (``pip install -e '.[experiments]'``), run from a checkout:

    make bench        # pytest experiments/micro --benchmark-autosave: each run kept in .benchmarks/
    .venv/bin/pytest-benchmark compare     # the saved runs side by side, per commit

pytest-benchmark calibrates the rounds, keeps each run's machine, commit and statistics in its JSON, and
compares runs; the hand-written timing loops these replace kept none of that.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def expected() -> dict[str, Any]:
    """The corpus's kernels with their parameters and include directories (corpus/expected.json)."""
    data: dict[str, Any] = json.loads((ROOT / "corpus" / "expected.json").read_text())
    return data
