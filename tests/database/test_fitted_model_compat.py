"""A model fitted before the embedders' module was renamed (embeddings.model, now embeddings.embedders)
still loads from the database: every suggestion on such a database was a 500 ModuleNotFoundError."""

from __future__ import annotations

import pickle
import sys

import numpy as np
import pytest

import embeddings.embedders
from database.embedding_store import load_fitted
from embeddings.embedders import StandardEmbedder


def _pickled_as_before(estimator: StandardEmbedder, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """``estimator`` pickled as a version with the old module name stored it."""
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "embeddings.model", embeddings.embedders)
        m.setattr(StandardEmbedder, "__module__", "embeddings.model")
        state = pickle.dumps(estimator)
    assert b"embeddings.model" in state and b"embeddings.embedders" not in state
    return state


def test_a_model_fitted_under_the_old_module_name_loads_and_embeds_the_same(monkeypatch: pytest.MonkeyPatch) -> None:
    x = np.random.default_rng(0).lognormal(size=(40, 6))
    fitted = StandardEmbedder(n_components=3).fit(x)
    loaded = load_fitted(_pickled_as_before(fitted, monkeypatch))
    assert type(loaded) is StandardEmbedder
    np.testing.assert_allclose(loaded.transform(x), fitted.transform(x))
