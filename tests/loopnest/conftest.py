from __future__ import annotations

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"


def load_expected() -> dict[str, dict]:
    return json.loads((CORPUS / "expected.json").read_text())


@pytest.fixture(scope="session")
def expected() -> dict[str, dict]:
    return load_expected()
