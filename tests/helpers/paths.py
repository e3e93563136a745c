"""Where the checkout's test inputs are: the repository root and the C corpus with its expected analyses."""

from __future__ import annotations

import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "corpus"


def load_expected() -> dict[str, dict]:
    """corpus/expected.json: per corpus file, the nests (and rejections) its extraction must find."""
    return json.loads((CORPUS / "expected.json").read_text())
