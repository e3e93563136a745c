"""Feature preprocessing shared by every embedder, as pure functions over NumPy arrays.

Missing values are NaN. Per feature, fitting learns (on the signed-log values when enabled):

1. the mean of the observed values, which imputes missing ones;
2. whether any value was missing, which adds a 0/1 indicator column, so "missing" stays distinguishable
   from "equal to the mean" (features are never silently filled with zeros);
3. a mean and a *floored* standard deviation over the imputed and indicator columns. A feature with no
   spread in training would otherwise scale an unseen value by ~1/0 (the paper saw 1e6): with the
   floor, a deviation of one floor unit maps to 1.

Features never observed during fit carry no information and are ignored, indicator included.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Float64Array = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.intp]


def signed_log2(x: Float64Array) -> Float64Array:
    """``sign(x) * log2(|x| + 1)``: compresses magnitudes, keeps sign and zero, NaN stays NaN."""
    return np.sign(x) * np.log2(np.abs(x) + 1.0)


@dataclass(frozen=True)
class Preprocessing:
    """Learned preprocessing state; the estimators copy it into their ``*_`` attributes."""

    used_features: IntArray  # input columns observed at least once during fit
    impute_values: Float64Array  # per used feature, the mean of its observed values
    indicator_features: IntArray  # input columns that had a missing value during fit
    mean: Float64Array  # per output column (used features, then indicators)
    scale: Float64Array  # per output column, max(std, std_floor)

    @property
    def n_output_features(self) -> int:
        return len(self.mean)


def fit_preprocessing(X: Float64Array, *, log_transform: bool, std_floor: float) -> Preprocessing:
    """Learn imputation, indicators and standardisation from ``X`` (n_samples, n_features), NaN = missing."""
    values = signed_log2(X) if log_transform else X
    missing = np.isnan(values)
    observed = ~missing.all(axis=0)
    used = np.flatnonzero(observed)
    indicators = np.flatnonzero(missing.any(axis=0) & observed)
    impute = np.zeros(len(used))
    if len(used) and len(values):
        impute = np.nanmean(values[:, used], axis=0)
    partial = Preprocessing(
        used_features=used,
        impute_values=impute,
        indicator_features=indicators,
        mean=np.zeros(len(used) + len(indicators)),
        scale=np.ones(len(used) + len(indicators)),
    )
    Z = _impute_and_indicate(values, partial)
    mean = Z.mean(axis=0) if len(Z) else np.zeros(Z.shape[1])
    std = Z.std(axis=0) if len(Z) else np.zeros(Z.shape[1])
    return Preprocessing(
        used_features=used,
        impute_values=impute,
        indicator_features=indicators,
        mean=mean,
        scale=np.maximum(std, std_floor),
    )


def apply_preprocessing(X: Float64Array, state: Preprocessing, *, log_transform: bool) -> Float64Array:
    """Map ``X`` to the standardised (n_samples, state.n_output_features) matrix."""
    values = signed_log2(X) if log_transform else X
    return (_impute_and_indicate(values, state) - state.mean) / state.scale


def _impute_and_indicate(values: Float64Array, state: Preprocessing) -> Float64Array:
    used = values[:, state.used_features]
    filled = np.where(np.isnan(used), state.impute_values, used)
    indicators = np.isnan(values[:, state.indicator_features]).astype(np.float64)
    return np.hstack([filled, indicators])
