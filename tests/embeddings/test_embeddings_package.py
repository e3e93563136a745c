"""The package's lazy facade: unknown names fail, a moved name says where it went, and importing it stays
cheap. (That every name in ``__all__`` resolves and is documented: tests/test_public_api.py.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import embeddings
from loopnest.errors import PerfembedError


def test_unknown_attribute_raises_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        _ = embeddings.Nope  # type: ignore[attr-defined]


def test_the_old_notebook_import_names_the_notebook_entry_point_in_one_line() -> None:
    """Before: `from embeddings import EmbeddingStore` (what notebooks once did) failed with Python's bare
    "cannot import name", the pointer in the AttributeError dropped by the from-import."""
    code = "from embeddings import EmbeddingStore"
    repo = Path(embeddings.__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, cwd=repo)
    last = out.stderr.strip().splitlines()[-1]
    assert out.returncode == 1 and last.startswith("ImportError: EmbeddingStore moved out of embeddings"), out.stderr
    assert "`from service.notebook import Notebook; nb = Notebook.open()`" in last
    with pytest.raises(ImportError, match="from service.notebook import Notebook"):
        _ = embeddings.EmbeddingStore  # type: ignore[attr-defined]


def test_invalid_arguments_are_user_errors_and_value_errors() -> None:
    # Before: bare ValueErrors, which the service answered with 500 and the CLI with a traceback.
    with pytest.raises(embeddings.EmbeddingInputError, match="backend must be one of") as info:
        embeddings.make_index(4, n_expected=10, backend="bogus")
    assert isinstance(info.value, PerfembedError) and isinstance(info.value, ValueError)


def test_import_loads_neither_sklearn_nor_faiss() -> None:
    code = (
        "import sys, embeddings, embeddings.index\n"
        "from embeddings import evaluate_neighbour_transfer\n"
        "print(sorted(m for m in ('sklearn', 'faiss') if m in sys.modules))"
    )
    repo = Path(embeddings.__file__).resolve().parents[1]
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=repo)
    assert out.stdout.strip() == "[]"
