"""Performance embeddings of loop nests, and nearest-neighbour indexes over them.

Public API (everything else in this package is private):

* embedding models, scikit-learn transformers: :class:`StandardEmbedder`, :class:`SupervisedEmbedder`,
  :class:`NCAEmbedder`, and the model-selection criterion :func:`evaluate_neighbour_transfer`;
* vector indexes: the :class:`VectorIndex` contract with :class:`NumpyIndex` and :class:`FaissIndex`,
  :func:`make_index`, and :class:`IndexMetadata` / :func:`read_index_metadata` for staleness checks;
* errors: :class:`EmbeddingInputError` (an invalid argument or array) and :class:`IndexFileError` (a
  saved index that cannot be loaded), both user errors and subclasses of ``ValueError``.

Names load on first access, so ``import embeddings`` imports neither scikit-learn nor faiss: every
``perfembed`` start imports this package, and they would add 414 and 33 ms to it (python -X importtime). The
embedding store, which joins these with the database, is a layer up: ``from database import
EmbeddingStore``.
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
# Names that moved up a layer: their new home, for the error message.
_MOVED = {"EmbeddingStore": "from database import EmbeddingStore"}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        moved = f"; it moved to the database layer: {_MOVED[name]}" if name in _MOVED else ""
        raise AttributeError(f"module 'embeddings' has no attribute {name!r}{moved}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
