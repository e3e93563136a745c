"""The scikit-learn plumbing every embedder shares: validation, preprocessing, tags."""

from __future__ import annotations

from numbers import Integral, Real
from typing import Any, Self

import numpy as np
import numpy.typing as npt
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from embeddings._constraints import Constraints, Interval, check_parameters
from embeddings._preprocessing import Float64Array, Preprocessing, apply_preprocessing, fit_preprocessing
from embeddings.errors import EmbeddingInputError

PREPROCESSING_CONSTRAINTS: Constraints = {
    "n_components": [Interval(Integral, 1, None, closed="left")],
    "log_transform": ["boolean"],
    "std_floor": [Interval(Real, 0, None, closed="neither")],
}


def svd_flip_rows(vt: Float64Array) -> Float64Array:
    """Sign-fix components so each one's largest-magnitude loading is positive (deterministic output)."""
    if vt.size == 0:
        return vt
    signs = np.sign(vt[np.arange(len(vt)), np.argmax(np.abs(vt), axis=1)])
    signs[signs == 0] = 1.0
    flipped: Float64Array = vt * signs[:, None]
    return flipped


class BaseEmbedder(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    """Shared fit/transform: validation, preprocessing, then the subclass's ``_fit_embedding``/``_embed``.

    Subclasses declare ``n_components``, ``log_transform`` and ``std_floor`` (and their own
    hyper-parameters) in ``__init__``, what each may be in ``_constraints`` (checked when ``fit`` starts),
    and set ``_requires_y``.
    """

    _requires_y = False
    _constraints: Constraints = PREPROCESSING_CONSTRAINTS
    n_components: int
    log_transform: bool
    std_floor: float

    def fit(self, X: npt.ArrayLike, y: npt.ArrayLike | None = None) -> Self:
        """Learn preprocessing and the embedding from ``X`` (NaN = missing) and, if supervised, ``y``."""
        check_parameters(self, self._constraints)
        if self._requires_y:
            X_arr, y_arr = validate_data(
                self, X, y, dtype=np.float64, ensure_all_finite="allow-nan", **self._y_check_params()
            )
        else:
            X_arr, y_arr = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan"), None
        state = fit_preprocessing(X_arr, log_transform=self.log_transform, std_floor=self.std_floor)
        self.used_features_ = state.used_features
        self.imputation_values_ = state.impute_values
        self.indicator_features_ = state.indicator_features
        self.mean_ = state.mean
        self.scale_ = state.scale
        if state.n_output_features == 0:
            raise EmbeddingInputError(
                f"every one of the {X_arr.shape[1]} features is missing (NaN) in all {X_arr.shape[0]} "
                "samples; there is nothing to embed"
            )
        Z = apply_preprocessing(X_arr, state, log_transform=self.log_transform)
        self._fit_embedding(Z, y_arr)
        self._n_features_out = self.n_components_
        return self

    def transform(self, X: npt.ArrayLike) -> npt.NDArray[np.float32]:
        """Embed ``X`` (n_samples, n_features_in_) into float32 (n_samples, n_components_)."""
        check_is_fitted(self)
        X_arr = validate_data(self, X, dtype=np.float64, ensure_all_finite="allow-nan", reset=False)
        Z = apply_preprocessing(X_arr, self._preprocessing(), log_transform=self.log_transform)
        return np.asarray(self._embed(Z), dtype=np.float32)

    def _preprocessing(self) -> Preprocessing:
        return Preprocessing(
            used_features=self.used_features_,
            impute_values=self.imputation_values_,
            indicator_features=self.indicator_features_,
            mean=self.mean_,
            scale=self.scale_,
        )

    def _y_check_params(self) -> dict[str, Any]:
        return {}

    def _fit_embedding(self, Z: Float64Array, y: Any) -> None:
        raise NotImplementedError

    def _embed(self, Z: Float64Array) -> Float64Array:
        raise NotImplementedError

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        tags.transformer_tags.preserves_dtype = []  # always float32, whatever the input
        tags.target_tags.required = self._requires_y
        return tags
