"""The embedding layer's errors, under the root :class:`~loopnest.errors.PerfembedError`.

Both are user errors (exit code 2 in the CLI, HTTP 422 in the service) and subclasses of ``ValueError``,
as scikit-learn's conventions and older callers expect. Broken invariants of perfembed's own code
(a feature schema with duplicate names, vectors of different schemas) raise
:class:`~loopnest.errors.InternalError`: those are bugs, HTTP 500 and exit code 1, asking for a report.
"""

from __future__ import annotations

from loopnest.errors import PerfembedError


class EmbeddingInputError(PerfembedError, ValueError):
    """An argument or array given to an embedding model, index or criterion is invalid: a wrong shape,
    non-finite values, an unknown option, too few samples. The message names it and its value."""


class IndexFileError(PerfembedError, ValueError):
    """A saved index cannot be loaded: unreadable, of another backend or format version, or its files
    from different saves. The message names the file; rebuilding the index from the database fixes it."""
