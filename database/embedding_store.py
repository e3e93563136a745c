"""The embedding store: nests' features in the database, a fitted embedding model, and a vector
index persisted next to the database and rebuilt from it when missing or stale.

**Why it lives in** ``database``: it is where stored nests meet the embedding models and indexes,
so it needs both ``database`` (repositories, the model records, the data directory) and
``embeddings``; ``database`` is the lowest layer allowed to import both (loopnest < embeddings <
database < autotune < service, checked by ``lint-imports``). It is persistence of embeddings: it
fits a model on what is stored, stores the model and every vector, and keeps the index file in
step with the database. What it computes that needs no database (the estimators of each design,
feature matrices, the supervised targets, the confidence gate) lives in :mod:`embeddings.designs`.

It stores and searches features and vectors only. Reading C files, pandas frames and maps are a
notebook's conveniences, with the settings and the core, in :class:`service.notebook.Notebook`: the
one entry point for notebooks, a layer up, where the frontend and the core may be imported.
"""

from __future__ import annotations

import hashlib
import io
import logging
import pickle
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy.orm import Session

from database.errors import DataDirError, NotFoundError, data_dir_error
from database.repositories import (
    best_recipe_for,
    get_embedding_model,
    list_embedding_models,
    list_nests,
    list_targets,
    load_embeddings,
    measured_nest_ids,
    nest_summaries,
    register_embedding_model,
    store_embeddings,
)
from database.store import Store
from embeddings import VectorIndex, make_index, read_index_metadata
from embeddings.designs import (
    feature_matrix,
    gate_distance,
    make_embedder,
    recipe_family,
    static_names,
    tuning_targets,
)
from embeddings.errors import IndexFileError
from loopnest.errors import ParameterError
from loopnest.frontend.program import nest_name

_logger = logging.getLogger(__name__)



@dataclass(frozen=True)
class Hit:
    nest_id: int
    distance: float
    program: str
    index: int
    best_speedup: float | None
    best_target_id: int | None = None  # the target ``best_speedup`` was measured on

    @property
    def name(self) -> str:
        return nest_name(self.program, self.index)

    def to_dict(self) -> dict[str, Any]:
        return {"nest_id": self.nest_id, "name": self.name, "distance": self.distance, "program": self.program,
                "index": self.index, "best_speedup": self.best_speedup, "best_target_id": self.best_target_id}


# A fitted model is stored pickled, so its class is named by module. The embedders' module was
# embeddings.model until the modules were named after what they hold: a model fitted before loads too.
_RENAMED_MODULES = {"embeddings.model": "embeddings.embedders"}


class _RenamesUnpickler(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        return super().find_class(_RENAMED_MODULES.get(module, module), name)


def load_fitted(state: bytes) -> Any:
    """A fitted model as :meth:`EmbeddingStore.fit` stored it (``pickle``), by an earlier version too."""
    return _RenamesUnpickler(io.BytesIO(state)).load()


@dataclass(frozen=True)
class FittedModel:
    """The current embedding model as one read saw it: its version, estimator and confidence gate's distance.
    A request that searches for several nests reads it once (:meth:`EmbeddingStore.fitted`)."""

    version: str
    estimator: Any
    gate_distance: float


class EmbeddingStore:
    """Nests' embeddings and the index over them, kept in step with the database (notebooks: see
    :class:`service.notebook.Notebook`, whose ``embeddings`` this is)."""

    def __init__(self, store: Store, *, data_dir: Path) -> None:
        self.store = store
        self.data_dir = Path(data_dir)
        self._model: tuple[str, Any] | None = None
        self._index: tuple[str, Any, float] | None = None  # version, index, metadata mtime
        self._lock = threading.RLock()

    @classmethod
    def for_store(cls, store: Store, *, data_dir: Path) -> EmbeddingStore:
        """The embedding store shared by everything using ``store`` (one loaded model and index per
        process and database, instead of one per request)."""
        shared: dict[str, EmbeddingStore] = store.__dict__.setdefault("_embedding_stores", {})
        key = str(Path(data_dir).resolve())
        if key not in shared:
            shared[key] = cls(store, data_dir=Path(data_dir))
        return shared[key]

    # -- model -----------------------------------------------------------------------------------
    def current_version(self) -> str | None:
        with self.store.session() as session:
            models = list_embedding_models(session)
        return models[-1].version if models else None

    def fitted(self, session: Session | None = None) -> FittedModel:
        """The current model, its estimator and gate distance, in one visit (or read in ``session``);
        :class:`NotFoundError` before the first fit. The estimator is unpickled once per version."""
        if session is None:
            with self.store.session() as own:
                return self.fitted(own)
        models = list_embedding_models(session)
        if not models:
            raise NotFoundError("no embedding model has been fitted yet: load the shipped seed ('perfembed seed "
                                "load'), or store nests and run 'perfembed embeddings fit'")
        record = models[-1]
        with self._lock:
            loaded = self._model if self._model is not None and self._model[0] == record.version else None
        if loaded is None:  # read outside the lock (see :meth:`index`)
            loaded = (record.version, load_fitted(get_embedding_model(session, version=record.version).fitted_state
                                                   or b""))
            with self._lock:
                self._model = loaded
        return FittedModel(record.version, loaded[1], float(record.quality_metrics.get("gate_distance", 0.0)))

    def model(self) -> tuple[str, Any]:
        """The current fitted model (version, estimator); NotFoundError before the first fit."""
        fitted = self.fitted()
        return fitted.version, fitted.estimator

    def fit(self, *, design: str = "standard", n_components: int = 16) -> str:
        """Fit a model on every stored nest, store all embeddings, rebuild the index; the version."""
        with self.store.session() as session:
            nests = list_nests(session)
        if len(nests) < 2:
            raise ParameterError("fitting an embedding needs at least two stored nests ('perfembed seed load' "
                                 "stores the shipped ones)")
        names = static_names()
        X = feature_matrix([n.static_features for n in nests], names)
        estimator = make_embedder(design, n_components)
        if design == "standard":
            estimator.fit(X)
        else:
            best = best_recipes(self.store, [n.id for n in nests])
            if design == "nca":
                estimator.fit(X, np.asarray([recipe_family(best[n.id][0]) for n in nests]))
            else:
                estimator.fit(X, tuning_targets([best[n.id] for n in nests]))
        vectors = estimator.transform(X)
        digest = hashlib.sha256(X.tobytes() + design.encode() + str(n_components).encode()).hexdigest()[:12]
        version = f"{design}-{n_components}-{len(nests)}-{digest}"
        gate = gate_distance(vectors)
        with self.store.session() as session:
            existing = {m.version for m in list_embedding_models(session)}
            if version not in existing:
                register_embedding_model(session, version=version,
                                         hyper_parameters={"design": design, "n_components": n_components,
                                                           "features": "static"},
                                         fitted_state=pickle.dumps(estimator),
                                         quality_metrics={"gate_distance": gate, "nests": len(nests)})
            store_embeddings(session, model_version=version,
                             vectors={n.id: [float(x) for x in v] for n, v in zip(nests, vectors, strict=True)})
        self._model = (version, estimator)
        self._index = None
        self.index(rebuild=True)
        return version

    def gate_distance(self) -> float:
        return self.fitted().gate_distance

    def embed(self, features: Mapping[str, float | None], fitted: FittedModel | None = None) -> np.ndarray:
        estimator = (fitted or self.fitted()).estimator
        X = feature_matrix([{k: v for k, v in features.items() if v is not None}], static_names())
        return np.asarray(estimator.transform(X), dtype=np.float32)[0]

    def add(self, nest_id: int, features: Mapping[str, float | None]) -> np.ndarray:
        """Embed one stored nest, persist its vector and add it to the index (used after tuning)."""
        with self.store.session() as session:
            fitted = self.fitted(session)
            vectors = self.store_vectors(session, fitted, {nest_id: features})
        self.add_to_index(fitted.version, vectors)
        return vectors[nest_id]

    def store_vectors(self, session: Session, fitted: FittedModel,
                      features: Mapping[int, Mapping[str, float | None]]) -> dict[int, np.ndarray]:
        """Embed stored nests (``nest_id -> features``) with ``fitted`` and store their vectors in ``session``
        (the caller's transaction); :meth:`add_to_index` once it committed."""
        vectors = {nest_id: self.embed(values, fitted) for nest_id, values in features.items()}
        store_embeddings(session, model_version=fitted.version,
                         vectors={i: [float(x) for x in v] for i, v in vectors.items()})
        return vectors

    def add_to_index(self, version: str, vectors: Mapping[int, np.ndarray]) -> None:
        """Add stored vectors of model ``version`` to its index, and save it once. If the file cannot be
        written, the index in memory is dropped too (the next use rebuilds it from the database)."""
        index = self.index(version=version)  # before the lock: it may read the database
        with self._lock:
            new = [i for i in vectors if i not in set(index.ids().tolist())]
            if not new:
                return
            index.add(np.asarray(new, dtype=np.int64), np.stack([vectors[i] for i in new]))
            path = self._index_path(version)
            try:
                self._save(index, path)
            except DataDirError:
                self._index = None
                raise
            self._index = (version, index, Path(str(path) + ".json").stat().st_mtime)

    # -- index -----------------------------------------------------------------------------------
    def _save(self, index: Any, path: Path) -> None:
        """Write the index file; an unwritable data directory is a :class:`DataDirError` naming it."""
        try:
            self.data_dir.mkdir(parents=True, exist_ok=True)
            index.save(path)
        except OSError as exc:
            raise data_dir_error(self.data_dir, exc) from exc

    def _index_path(self, version: str) -> Path:
        return self.data_dir / f"index-{version}.faiss"

    def index(self, *, rebuild: bool = False, version: str | None = None, session: Session | None = None) -> Any:
        """The index of the current model (or of ``version``): loaded from disk, or rebuilt when missing or stale
        (``session``: the caller's transaction, to read the vectors in).

        The lock is never held while the database is read: a thread holding it would wait for SQLite's write
        lock while the writer, in its transaction, waits for the lock (:meth:`fitted` takes it there)."""
        version = self.model()[0] if version is None else version
        path = self._index_path(version)
        meta = Path(str(path) + ".json")
        with self._lock:
            if self._index is not None and self._index[0] == version and not rebuild:
                # Another process (a worker) may have added nests: reload only when the file changed.
                if not meta.exists() or meta.stat().st_mtime == self._index[2]:
                    return self._index[1]
        if session is None:
            with self.store.session() as own:
                vectors, dim = self._stored_vectors(own, version)
        else:
            vectors, dim = self._stored_vectors(session, version)
        with self._lock:
            return self._load_or_rebuild(version, path, meta, rebuild, vectors, dim)

    def _stored_vectors(self, session: Session, version: str) -> tuple[dict[int, Any], int]:
        """Every stored vector of model ``version``, and their length."""
        vectors = load_embeddings(session, model_version=version)
        dim = len(next(iter(vectors.values()))) if vectors else int(self.fitted(session).estimator.n_components_)
        return vectors, dim

    def _load_or_rebuild(self, version: str, path: Path, meta: Path, rebuild: bool, vectors: Mapping[int, Any],
                         dim: int) -> Any:
        """The index file if it holds ``vectors``, else an index built of them and saved (under the lock)."""
        if not rebuild and path.exists():
            try:
                metadata = read_index_metadata(path)
                if not metadata.is_stale(model_version=version, count=len(vectors)):
                    self._index = (version, VectorIndex.load(path), meta.stat().st_mtime)
                    return self._index[1]
                _logger.info("rebuilding the index %s: it holds %d vectors of model %s, the database %d of %s",
                             path, metadata.count, metadata.model_version, len(vectors), version)
            except (OSError, IndexFileError) as exc:  # unreadable, partial, or from another backend
                _logger.warning("rebuilding the index %s from the database: %s", path, exc)
        index = make_index(dim, n_expected=len(vectors), model_version=version)
        if vectors:
            ids = np.fromiter(vectors, dtype=np.int64)
            index.add(ids, np.asarray([vectors[i] for i in ids], dtype=np.float32))
        self._save(index, path)
        self._index = (version, index, meta.stat().st_mtime)
        return index

    # -- queries ---------------------------------------------------------------------------------
    def search(self, query: Mapping[str, float | None] | Sequence[float] | np.ndarray, k: int = 5, *,
               target_id: int | None = None, exclude: Sequence[int] = ()) -> list[Hit]:
        """Nearest stored nests to a nest's static features (a dict) or to a vector.

        With ``target_id``, only nests measured on that target are returned (all when none is).
        """
        fitted = self.fitted() if isinstance(query, Mapping) else None
        vector = self._query_vector(query, fitted)
        index = self.index(version=fitted.version if fitted else None)
        allowed = None
        if target_id is not None:
            with self.store.session() as session:
                measured = measured_nest_ids(session, target_id=target_id)
            allowed = np.asarray(sorted(measured - set(exclude)), dtype=np.int64) if measured else None
        dist, ids = index.search(vector[None, :], k + len(exclude), allowed_ids=allowed)
        hits = [(int(i), float(d)) for i, d in zip(ids[0], dist[0], strict=True) if i >= 0 and i not in exclude]
        return self._describe(hits[:k])

    def search_features(self, session: Session, fitted: FittedModel, features: Mapping[str, float | None],
                        k: int) -> list[Hit]:
        """The ``k`` stored nests nearest to ``features``, embedded with ``fitted`` and described in ``session``
        (a suggestion's read: :func:`database.neighbourhood.read_neighbourhoods`)."""
        dist, ids = self.index(version=fitted.version, session=session).search(self.embed(features, fitted)[None, :], k)
        return self._describe([(int(i), float(d)) for i, d in zip(ids[0], dist[0], strict=True) if i >= 0], session)

    def _query_vector(self, query: Any, fitted: FittedModel | None) -> np.ndarray:
        if isinstance(query, Mapping):
            return self.embed(query, fitted)
        if isinstance(query, str | Path):  # it used to read C: say where that went, not "could not convert"
            raise ParameterError("EmbeddingStore.search takes features or a vector; search by C file or source "
                                 "with `from service.notebook import Notebook; Notebook.open().search(...)`")
        vector = np.asarray(query, dtype=np.float32).reshape(-1)
        dim = self.index().dim
        if vector.shape[0] != dim:
            raise ParameterError(f"the vector has {vector.shape[0]} components; the embedding has {dim}")
        return vector

    def _describe(self, hits: list[tuple[int, float]], session: Session | None = None) -> list[Hit]:
        if not hits:
            return []
        if session is None:
            with self.store.session() as own:
                return self._describe(hits, own)
        known = nest_summaries(session, nest_ids=[h[0] for h in hits])
        return [Hit(i, d, *known[i]) for i, d in hits if i in known]


def best_recipes(store: Store, nest_ids: Sequence[int]) -> dict[int, tuple[list[dict[str, Any]], float]]:
    """Each nest's best verified recipe (steps, speedup) on any target; the identity when none is faster."""
    out: dict[int, tuple[list[dict[str, Any]], float]] = {}
    with store.session() as session:
        targets = list_targets(session)
        for nest_id in nest_ids:
            best: tuple[list[dict[str, Any]], float] = ([], 1.0)
            for target in targets:
                ranked = best_recipe_for(session, nest_id=nest_id, target_id=target.id)
                if ranked is not None and (ranked.measurement.speedup or 0.0) > best[1]:
                    steps = ranked.recipe.steps  # a steps list (older records: {"steps": [...]})
                    steps = steps.get("steps", []) if isinstance(steps, dict) else steps
                    best = (list(steps), float(ranked.measurement.speedup or 1.0))
            out[nest_id] = best
    return out
