"""Embedding models: scikit-learn transformers from loop-nest feature matrices to fixed-size vectors.

Every embedder takes ``X`` of shape (n_samples, n_features), float, with NaN marking a missing or masked
feature, runs the shared preprocessing of :mod:`embeddings._preprocessing` (optional signed log2,
mean imputation plus missing indicators, standardisation with a floored deviation) and then learns
its own map to ``n_components_`` dimensions. ``transform`` returns float32, the dtype of the index.
``n_components_`` is fixed by ``fit`` and is the dimension a :class:`~embeddings.index.VectorIndex`
for this model must have.

* :class:`StandardEmbedder`: unsupervised, PCA (whitened by default).
* :class:`SupervisedEmbedder`: trained to predict performance targets; the embedding is the last hidden
  layer of an MLP (as in the paper) or the x-scores of a PLS regression.
* :class:`NCAEmbedder`: Neighbourhood Components Analysis on labels such as the winning recipe family.

Choose between them with :func:`~embeddings.evaluate_neighbour_transfer`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from numbers import Integral, Real
from typing import Any

import numpy as np
from sklearn.cross_decomposition import PLSRegression
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import NeighborhoodComponentsAnalysis
from sklearn.neural_network import MLPRegressor
from sklearn.utils import check_random_state, resample
from sklearn.utils.multiclass import check_classification_targets

from embeddings._base_embedder import PREPROCESSING_CONSTRAINTS, BaseEmbedder, svd_flip_rows
from embeddings._constraints import Constraints, Interval, Options
from embeddings._model_selection import evaluate_neighbour_transfer
from embeddings._preprocessing import Float64Array
from embeddings.errors import EmbeddingInputError

__all__ = ["NCAEmbedder", "StandardEmbedder", "SupervisedEmbedder", "evaluate_neighbour_transfer"]

_ACTIVATIONS: dict[str, Callable[[Float64Array], Float64Array]] = {
    "identity": lambda z: z,
    "logistic": lambda z: 1.0 / (1.0 + np.exp(-z)),
    "tanh": np.tanh,
    "relu": lambda z: np.maximum(z, 0.0),
}


class StandardEmbedder(BaseEmbedder):
    """Unsupervised embedding: preprocessing, then PCA to ``n_components_`` dimensions, whitened.

    Parameters
    ----------
    n_components : int, default=32
        Embedding dimension asked for; ``n_components_`` is this capped by the number of training
        samples and of preprocessed columns.
    whiten : bool, default=True
        Scale each component to unit variance, dividing by ``max(singular std, std_floor)`` so that
        directions without spread in training are not blown up.
    log_transform : bool, default=True
        Apply ``sign(x) * log2(|x| + 1)`` to the features first (as the paper does).
    std_floor : float, default=0.1
        Smallest standard deviation any column or component is divided by (in log2 units when
        ``log_transform``; 0.1 is about a 7% spread, below run-to-run noise).

    Attributes
    ----------
    n_components_ : int
        Output dimension.
    components_ : ndarray of shape (n_components_, n_preprocessed_features)
        Principal axes in the standardised space, sign-fixed.
    explained_variance_ : ndarray of shape (n_components_,)
    used_features_, imputation_values_, indicator_features_, mean_, scale_ : ndarray
        Learned preprocessing: observed input columns, their imputation means, columns given a
        missing indicator, and the standardisation of the preprocessed columns.
    n_features_in_ : int
    feature_names_in_ : ndarray of str, only when ``X`` had string column names.

    Examples
    --------
    >>> import numpy as np
    >>> X = np.random.default_rng(0).normal(size=(50, 6))
    >>> X[::7, 2] = np.nan
    >>> emb = StandardEmbedder(n_components=4).fit(X)
    >>> emb.transform(X).shape, emb.transform(X).dtype
    ((50, 4), dtype('float32'))
    """

    _constraints: Constraints = {**PREPROCESSING_CONSTRAINTS, "whiten": ["boolean"]}

    def __init__(
        self,
        n_components: int = 32,
        *,
        whiten: bool = True,
        log_transform: bool = True,
        std_floor: float = 0.1,
    ) -> None:
        self.n_components = n_components
        self.whiten = whiten
        self.log_transform = log_transform
        self.std_floor = std_floor

    def _fit_embedding(self, Z: Float64Array, y: Any) -> None:
        n_samples, n_cols = Z.shape
        self.n_components_ = min(self.n_components, n_samples, n_cols)
        _, s, vt = np.linalg.svd(Z - Z.mean(axis=0), full_matrices=False)
        k = self.n_components_
        self.components_ = svd_flip_rows(vt[:k])
        self.explained_variance_ = s[:k] ** 2 / max(n_samples - 1, 1)
        self.whitening_scale_ = (
            np.maximum(np.sqrt(self.explained_variance_), self.std_floor)
            if self.whiten
            else np.ones(self.n_components_)
        )

    def _embed(self, Z: Float64Array) -> Float64Array:
        return (Z @ self.components_.T) / self.whitening_scale_


class SupervisedEmbedder(BaseEmbedder):
    """Embedding trained to predict performance targets (log runtime, FLOP/s fraction, recipe one-hot...).

    ``method="pls"`` (default) takes the x-scores of a :class:`~sklearn.cross_decomposition.PLSRegression`
    on the standardised targets: linear, deterministic without a seed, and seconds to fit.
    ``method="mlp"`` trains an :class:`~sklearn.neural_network.MLPRegressor` with hidden layers
    ``(*hidden_layer_sizes, n_components)``; the embedding is the activation of that last hidden layer,
    the paper's "layer before the prediction". On synthetic nests (``evaluate_neighbour_transfer``,
    5-fold group CV) both scored alike (PLS 0.84, MLP 0.86) with the MLP ~30x slower to fit, hence the
    default; compare them on the real corpus. Targets must be finite (no NaN).

    Parameters
    ----------
    n_components : int, default=32
        Embedding dimension; for PLS capped by preprocessed columns and ``n_samples - 1``.
    method : {"pls", "mlp"}, default="pls"
    hidden_layer_sizes : tuple of int, default=(64,)
        MLP layers before the embedding layer.
    activation : {"tanh", "relu", "logistic", "identity"}, default="tanh"
        MLP hidden activation; tanh avoids the all-zero dimensions dead ReLUs leave in an embedding.
    alpha : float, default=1e-3
        MLP L2 penalty.
    max_iter : int, default=500
        MLP epochs, or PLS (NIPALS) iterations per component.
    log_transform, std_floor :
        As in :class:`StandardEmbedder`.
    random_state : int, RandomState or None, default=None
        Seeds MLP initialisation and batching; fix it for reproducible embeddings.

    Attributes
    ----------
    n_components_ : int
    model_ : MLPRegressor or PLSRegression
    y_mean_, y_scale_ : ndarray of shape (n_targets,)
        Target standardisation used in training.
    n_iter_ : int
    random_state_ : RandomState
    """

    _requires_y = True
    _constraints: Constraints = {
        **PREPROCESSING_CONSTRAINTS,
        "method": [Options(frozenset({"mlp", "pls"}))],
        "hidden_layer_sizes": [tuple],
        "activation": [Options(frozenset(_ACTIVATIONS))],
        "alpha": [Interval(Real, 0, None, closed="left")],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components: int = 32,
        *,
        method: str = "pls",
        hidden_layer_sizes: tuple[int, ...] = (64,),
        activation: str = "tanh",
        alpha: float = 1e-3,
        max_iter: int = 500,
        log_transform: bool = True,
        std_floor: float = 0.1,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.n_components = n_components
        self.method = method
        self.hidden_layer_sizes = hidden_layer_sizes
        self.activation = activation
        self.alpha = alpha
        self.max_iter = max_iter
        self.log_transform = log_transform
        self.std_floor = std_floor
        self.random_state = random_state

    def _y_check_params(self) -> dict[str, Any]:
        return {"multi_output": True, "y_numeric": True}

    def _fit_embedding(self, Z: Float64Array, y: Any) -> None:
        sizes = self.hidden_layer_sizes
        if any(isinstance(h, bool) or not isinstance(h, Integral) or h < 1 for h in sizes):
            raise EmbeddingInputError(f"hidden_layer_sizes must hold positive integers, got {sizes!r}")
        n_samples = len(Z)
        if n_samples < 2:
            raise EmbeddingInputError(f"{type(self).__name__} needs at least 2 samples, got n_samples = {n_samples}")
        Y = np.asarray(y, dtype=np.float64).reshape(n_samples, -1)
        self.y_mean_ = Y.mean(axis=0)
        std = Y.std(axis=0)
        self.y_scale_ = np.where(std > 0, std, 1.0)
        Y_std = (Y - self.y_mean_) / self.y_scale_
        self.random_state_ = check_random_state(self.random_state)
        if self.method == "pls":
            self.n_components_ = max(1, min(self.n_components, Z.shape[1], n_samples - 1))
            self.model_ = PLSRegression(n_components=self.n_components_, scale=False, max_iter=self.max_iter)
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="Y residual is constant", category=UserWarning)
                self.model_.fit(Z, Y_std)
            self.n_iter_ = max([1, *self.model_.n_iter_])
            return
        self.n_components_ = self.n_components
        self.model_ = MLPRegressor(
            hidden_layer_sizes=(*self.hidden_layer_sizes, self.n_components),
            activation=self.activation,
            alpha=self.alpha,
            max_iter=self.max_iter,
            random_state=self.random_state_.randint(np.iinfo(np.int32).max),
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)  # max_iter is a budget, not a failure
            self.model_.fit(Z, Y_std if Y_std.shape[1] > 1 else Y_std.ravel())
        self.n_iter_ = self.model_.n_iter_

    def _embed(self, Z: Float64Array) -> Float64Array:
        if self.method == "pls":
            scores: Float64Array = self.model_.transform(Z)
            return scores
        act = _ACTIVATIONS[self.activation]
        h = Z
        for W, b in zip(self.model_.coefs_[:-1], self.model_.intercepts_[:-1], strict=True):
            h = act(h @ W + b)
        return h


class NCAEmbedder(BaseEmbedder):
    """Neighbourhood Components Analysis on class labels (e.g. the winning recipe family per nest).

    NCA learns a linear map under which a nest's nearest neighbours tend to share its label, which is
    what transfer tuning wants. Its cost is quadratic in samples, so at most ``max_samples`` (drawn
    stratified by label with ``random_state``) are used for fitting.

    Parameters
    ----------
    n_components : int, default=32
        Embedding dimension, capped by the number of preprocessed columns.
    init : {"auto", "pca", "lda", "identity", "random"}, default="auto"
    max_iter : int, default=50
    tol : float, default=1e-5
    max_samples : int or None, default=3000
        Fit on a stratified subsample of at most this many rows; None uses all (memory ~ 8 n^2 bytes).
    log_transform, std_floor :
        As in :class:`StandardEmbedder`.
    random_state : int, RandomState or None, default=None

    Attributes
    ----------
    n_components_ : int
    nca_ : NeighborhoodComponentsAnalysis
    classes_ : ndarray
    n_iter_ : int
    random_state_ : RandomState
    """

    _requires_y = True
    _constraints: Constraints = {
        **PREPROCESSING_CONSTRAINTS,
        "init": [Options(frozenset({"auto", "pca", "lda", "identity", "random"}))],
        "max_iter": [Interval(Integral, 1, None, closed="left")],
        "tol": [Interval(Real, 0, None, closed="left")],
        "max_samples": [Interval(Integral, 2, None, closed="left"), None],
        "random_state": ["random_state"],
    }

    def __init__(
        self,
        n_components: int = 32,
        *,
        init: str = "auto",
        max_iter: int = 50,
        tol: float = 1e-5,
        max_samples: int | None = 3000,
        log_transform: bool = True,
        std_floor: float = 0.1,
        random_state: int | np.random.RandomState | None = None,
    ) -> None:
        self.n_components = n_components
        self.init = init
        self.max_iter = max_iter
        self.tol = tol
        self.max_samples = max_samples
        self.log_transform = log_transform
        self.std_floor = std_floor
        self.random_state = random_state

    def _fit_embedding(self, Z: Float64Array, y: Any) -> None:
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        self.random_state_ = check_random_state(self.random_state)
        if self.max_samples is not None and len(Z) > self.max_samples:
            Z, y = resample(
                Z, y, replace=False, n_samples=self.max_samples, stratify=y, random_state=self.random_state_
            )
        self.n_components_ = max(1, min(self.n_components, Z.shape[1]))
        self.nca_ = NeighborhoodComponentsAnalysis(
            n_components=self.n_components_,
            init=self.init,
            max_iter=self.max_iter,
            tol=self.tol,
            random_state=self.random_state_.randint(np.iinfo(np.int32).max),
        )
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.nca_.fit(Z, y)
        self.n_iter_ = max(1, self.nca_.n_iter_)

    def _embed(self, Z: Float64Array) -> Float64Array:
        projected: Float64Array = self.nca_.transform(Z)
        return projected
