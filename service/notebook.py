"""perfembed in a notebook: the one entry point, ``from service.notebook import Notebook``.

:meth:`Notebook.open` opens the CLI's database (``PERFEMBED_DATABASE_URL``, ``PERFEMBED_DATA_DIR``) with
the application core on it, so a notebook asks the questions the CLI and the API answer, and gets pandas
frames and pictures where a script would want them::

    nb = Notebook.open()
    nb.nests()                                             # one row per stored nest
    nb.search("examples/matmul.c", k=3, params={"n": 800})  # its nearest stored nests
    nb.plot_map("map.png")                                 # the embedding space
    fast = nb.tune(kernel, A, B)                           # a NumPy function, tuned and handed back

**Why here**: these conveniences read C files (the frontend), the settings, the stored nests and the
core, and only the top layer may import them all. The storage they sit on,
:class:`database.EmbeddingStore` (``nb.embeddings``), keeps the model, the vectors and the index in step
with the database and takes features or vectors only; ``embeddings`` holds the models and indexes
without any database. pandas, matplotlib and scikit-learn load inside the methods that draw or tabulate,
so importing this module costs a ``perfembed`` command nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from autotune.config import AutotuneSettings
from database import Store, get_store, list_nests, load_embeddings, nest_summaries
from database.embedding_store import EmbeddingStore
from database.errors import ensure_data_dir
from loopnest.config import load_settings
from loopnest.errors import ParameterError
from loopnest.frontend.preprocess import PreprocessOptions
from loopnest.frontend.program import program_from_file
from service.config import ServiceSettings
from service.core import ProgramSource, SearchHit, Suggestions, SuggestOptions, TransferCore
from service.notebook_tune import TunedFunction, tune_function

__all__ = ["Notebook", "TunedFunction"]

Query = str | Path | Sequence[float]


class Notebook:
    """The core on one database, with a notebook's views of it. Build it with :meth:`open`, or around a
    core you already have (``Notebook(core)``); ``core``, ``settings``, ``store`` and ``embeddings`` are
    the pieces behind it, for everything else (``database``'s repository functions take ``store``)."""

    def __init__(self, core: TransferCore) -> None:
        self.core = core

    @classmethod
    def open(cls, url: str | None = None, *, data_dir: str | Path | None = None,
             settings: ServiceSettings | None = None) -> Notebook:
        """The database at ``url`` (default: the settings', created and migrated on first use), with its
        index files in ``data_dir`` (default: the settings'); ``settings`` default to ``PERFEMBED_*``."""
        settings = settings or load_settings(ServiceSettings)
        if data_dir is not None:
            settings = settings.model_copy(update={"data_dir": Path(data_dir)})
        ensure_data_dir(settings.data_dir)  # one line naming the directory, not an OSError
        store = get_store(url or settings.resolved_database_url, create=True)
        return cls(TransferCore(store, settings))

    @property
    def settings(self) -> AutotuneSettings:
        """The core's settings (a :class:`~service.config.ServiceSettings` when :meth:`open` built it)."""
        return self.core.settings

    @property
    def store(self) -> Store:
        return self.core.store

    @property
    def embeddings(self) -> EmbeddingStore:
        return self.core.context.embeddings

    def fit(self, *, design: str = "standard", n_components: int = 16) -> str:
        """Fit the embedding model on every stored nest again (``perfembed embeddings fit``); its version."""
        version = self.embeddings.fit(design=design, n_components=n_components)
        self.core.cache.changed()
        return version

    def search(self, query: Query, k: int = 5, *, params: Mapping[str, int] | None = None,
               include_dirs: Iterable[str | Path] = (), defines: Iterable[str] = (),
               function: str | None = None) -> list[SearchHit]:
        """The ``k`` stored nests nearest to a C file's first nest (a :class:`~pathlib.Path`, or a string
        without a newline), to C source text (a string with one), or to an embedding vector; nearest first.
        ``params`` give the sizes that are function arguments, ``include_dirs`` and ``defines`` (``NAME`` or
        ``NAME=VALUE``) resolve the file's includes as ``-I``/``-D`` do. Nothing is stored."""
        if isinstance(query, str | Path):
            program, name = self._program(query, params, include_dirs, defines, function)
            return self.core.search(vector=None, program=program, k=k, name=name)
        return self.core.search(vector=[float(x) for x in query], program=None, k=k)

    def suggest(self, query: str | Path, *, params: Mapping[str, int] | None = None, k: int = 5,
                evaluate: bool = False, include_dirs: Iterable[str | Path] = (), defines: Iterable[str] = (),
                function: str | None = None) -> Suggestions:
        """``perfembed suggest`` on a C file or source text (as :meth:`search` reads it): each nest's
        neighbours and their adapted recipes; with ``evaluate``, each candidate compiled, verified and timed
        in the sandbox. ``.to_dict()`` is the CLI's ``--json``."""
        program, name = self._program(query, params, include_dirs, defines, function)
        return self.core.suggest(program, SuggestOptions(k=k, evaluate=evaluate, name=name))

    def tune(self, kernel: Callable[..., Any], /, *args: Any, k: int = 5, out: str | Path | None = None,
             **kwargs: Any) -> TunedFunction:
        """A NumPy function tuned by transfer and handed back callable: ``fast = nb.tune(kernel, A, B, 1.5)``.

        ``args``/``kwargs`` are example arguments (C-ordered arrays and numbers, as the function takes them;
        one named ``k`` or ``out`` goes by position): the arrays' shapes and dtypes and the numbers' values are
        what the module is built for, and they are the inputs of its check. It is ``perfembed suggest kernel.py
        --function NAME --inputs example.npz --write-best ...`` on the function's source alone, each candidate
        measured in the sandbox, the module kept only when it computes what ``kernel`` computes and is not
        slower. The answer says whether it was tuned (``.tuned``, ``.outcome``); when not, calling it runs
        ``kernel`` itself. The module (``.module``, in ``out`` or a folder under the data directory) imports
        without perfembed, and runs ``kernel`` for other shapes, dtypes, sizes or layouts."""
        if out is not None and not isinstance(out, str | Path):
            raise ParameterError(f"tune: out={type(out).__name__} is not a folder (a kernel argument named out "
                                 "or k is passed by position)")
        return tune_function(self.store, self.settings, kernel, args, kwargs, k=k,
                             out=None if out is None else Path(out))

    def nests(self) -> Any:
        """A pandas DataFrame, one row per stored nest: id, program, index, best verified speedup (on any
        target) and its static features."""
        # pandas loads only here and in plot_map: `perfembed` commands import the service package, which
        # it would slow by about 120 ms (python -X importtime).
        import pandas as pd

        with self.store.session() as session:
            stored = list_nests(session)
            known = nest_summaries(session)
        rows = [{"nest_id": n.id, "program": known[n.id][0], "index": n.index, "best_speedup": known[n.id][2],
                 **n.static_features} for n in stored]
        return pd.DataFrame(rows)

    def plot_map(self, path: str | Path, *, method: str = "pca") -> Path:
        """A 2-D map of the embedding space (``pca`` or ``tsne``), coloured by best speedup, saved as PNG."""
        version = self.embeddings.model()[0]
        with self.store.session() as session:
            vectors = load_embeddings(session, model_version=version)
        if len(vectors) < 2:
            raise ParameterError("a map needs at least two embedded nests")
        ids = list(vectors)
        xy = _project(np.asarray([vectors[i] for i in ids], dtype=float), method)
        best = self.nests().set_index("nest_id")["best_speedup"]
        colour = np.log2(np.asarray([best.get(i) or 1.0 for i in ids], dtype=float))
        return _save_map(xy, colour, Path(path), f"embedding map ({method}, model {version})")

    @staticmethod
    def _program(query: str | Path, params: Mapping[str, int] | None, include_dirs: Iterable[str | Path],
                 defines: Iterable[str], function: str | None) -> tuple[ProgramSource, str | None]:
        """A file (read with the headers it includes, named by its path in errors) or source text."""
        if isinstance(query, Path) or "\n" not in query:
            path = Path(query)
            if not path.is_file():
                raise ParameterError(f"{path} is not a file (source text must hold a newline)")
            return program_from_file(path, include_dirs=include_dirs, defines=defines, params=params,
                                     function=function), str(path)
        macros = dict(PreprocessOptions.parse_define(d) for d in defines)
        return ProgramSource(source=query, params=dict(params or {}), function=function, defines=macros), None


def _project(X: np.ndarray, method: str) -> np.ndarray:
    """The rows of ``X`` in two dimensions; scikit-learn loads only for a map."""
    if method == "tsne":
        from sklearn.manifold import TSNE

        return np.asarray(TSNE(n_components=2, perplexity=min(30, len(X) - 1), random_state=0).fit_transform(X))
    if method != "pca":
        raise ParameterError(f"method must be pca or tsne, not {method!r}")
    from sklearn.decomposition import PCA

    return np.asarray(PCA(n_components=2, random_state=0).fit_transform(X))


def _save_map(xy: np.ndarray, colour: np.ndarray, out: Path, title: str) -> Path:
    # matplotlib alone takes longer to import than the rest of the store, and no command draws a map. A
    # bare Figure draws without pyplot, so the notebook's own backend and figures are left as they are.
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7, 5))
    ax = fig.subplots()
    points = ax.scatter(xy[:, 0], xy[:, 1], c=colour, cmap="viridis", s=18)
    fig.colorbar(points, ax=ax, label="log2 best verified speedup")
    ax.set_title(title)
    fig.savefig(out, dpi=110, bbox_inches="tight")
    return out
