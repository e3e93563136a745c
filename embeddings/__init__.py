"""Performance embeddings of loop nests, and nearest-neighbour indexes over them.

Public API (everything else in this package is private):

* embedding models, scikit-learn transformers: :class:`StandardEmbedder`, :class:`SupervisedEmbedder`,
  :class:`NCAEmbedder`, and the model-selection criterion :func:`evaluate_neighbour_transfer`;
* vector indexes: the :class:`VectorIndex` contract with :class:`NumpyIndex` and :class:`FaissIndex`,
  :func:`make_index`, and :class:`IndexMetadata` / :func:`read_index_metadata` for staleness checks;
* errors: :class:`EmbeddingInputError` (an invalid argument or array) and :class:`IndexFileError` (a
  saved index that cannot be loaded), both user errors and subclasses of ``ValueError``.

Names load on first access, so ``import embeddings`` imports neither scikit-learn nor faiss: every
``perfembed`` start imports this package, and they would add 414 and 33 ms to it (python -X importtime).

Notebooks start from ``from service.notebook import Notebook`` (nests as frames, the embedding map, the
neighbours of a C file). The ``EmbeddingStore`` that once lived here joins these models with the database, so
it is a layer up (``database``), and this package may not import it: ``from embeddings import
EmbeddingStore`` fails with an :class:`ImportError` that names the notebook entry point instead of Python's
bare "cannot import name".
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from embeddings.errors import EmbeddingInputError, IndexFileError

if TYPE_CHECKING:
    from embeddings.embedders import (
        NCAEmbedder,
        StandardEmbedder,
        SupervisedEmbedder,
        evaluate_neighbour_transfer,
    )
    from embeddings.index import (
        FaissIndex,
        IndexMetadata,
        NumpyIndex,
        VectorIndex,
        make_index,
        read_index_metadata,
    )

__all__ = [
    "EmbeddingInputError",
    "FaissIndex",
    "IndexFileError",
    "IndexMetadata",
    "NCAEmbedder",
    "NumpyIndex",
    "StandardEmbedder",
    "SupervisedEmbedder",
    "VectorIndex",
    "evaluate_neighbour_transfer",
    "make_index",
    "read_index_metadata",
]

_MODULE_OF = {
    "FaissIndex": "embeddings.index",
    "IndexMetadata": "embeddings.index",
    "NumpyIndex": "embeddings.index",
    "VectorIndex": "embeddings.index",
    "make_index": "embeddings.index",
    "read_index_metadata": "embeddings.index",
    "NCAEmbedder": "embeddings.embedders",
    "StandardEmbedder": "embeddings.embedders",
    "SupervisedEmbedder": "embeddings.embedders",
    # The criterion needs only NumPy; import it from its module so it does not pull in scikit-learn.
    "evaluate_neighbour_transfer": "embeddings._model_selection",
}
# Names that moved up a layer, and where a user goes instead. Raised as ImportError, not AttributeError:
# `from embeddings import X` turns an AttributeError into its own message and drops this one.
_MOVED = {"EmbeddingStore": "EmbeddingStore moved out of embeddings (it needs the database): in a notebook use "
                            "`from service.notebook import Notebook; nb = Notebook.open()` (nb.embeddings is the "
                            "store), see docs/python-api.md"}


def __getattr__(name: str) -> Any:
    if name in _MOVED:
        raise ImportError(_MOVED[name], name=name)
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module 'embeddings' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
