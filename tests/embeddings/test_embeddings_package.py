"""The package's public surface: ``__all__`` resolves, and importing it stays cheap."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import embeddings


def test_every_public_name_resolves() -> None:
    for name in embeddings.__all__:
        assert getattr(embeddings, name) is not None
    assert set(embeddings.__all__) <= set(dir(embeddings))


def test_unknown_attribute_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = embeddings.Nope  # type: ignore[attr-defined]


def test_import_loads_neither_sklearn_nor_faiss() -> None:
    code = (
        "import sys, embeddings, embeddings.index\n"
        "from embeddings import evaluate_neighbour_transfer\n"
        "print(sorted(m for m in ('sklearn', 'faiss') if m in sys.modules))"
    )
    repo = Path(embeddings.__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo)
    assert out.stdout.strip() == "[]"
