"""The embedding models: scikit-learn conformance, preprocessing guarantees, determinism, dimensions."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from embeddings._preprocessing import signed_log2
from embeddings.embedders import NCAEmbedder, StandardEmbedder, SupervisedEmbedder

ALL_EMBEDDERS = [
    StandardEmbedder(),
    SupervisedEmbedder(),
    SupervisedEmbedder(method="mlp", max_iter=50),
    NCAEmbedder(max_iter=10),
]


@parametrize_with_checks(ALL_EMBEDDERS)
def test_sklearn_compatible(estimator: Any, check: Any) -> None:
    check(estimator)


def make_data(n: int = 120, seed: int = 0) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], Any]:
    """Features with magnitudes like loop-nest features, some missing; targets and labels derived."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 3, n)
    centers = rng.normal(size=(3, 6)) * 3
    X = np.hstack([centers[labels] + rng.normal(size=(n, 6)), 2.0 ** rng.uniform(2, 20, (n, 3))])
    X[rng.random(X.shape) < 0.1] = np.nan
    y = np.column_stack([labels * 1.5 + rng.normal(size=n) * 0.1, np.log2(np.nan_to_num(X[:, 6], nan=4.0))])
    return X, y, labels


def fit_transform(est: Any, X: npt.NDArray[np.float64], y: Any, labels: Any) -> npt.NDArray[np.float32]:
    target = labels if isinstance(est, NCAEmbedder) else y
    return est.fit_transform(X, None if isinstance(est, StandardEmbedder) else target)


@pytest.fixture(params=ALL_EMBEDDERS, ids=lambda e: repr(e))
def embedder(request: pytest.FixtureRequest) -> Any:
    est = clone(request.param)
    if "random_state" in est.get_params():
        est.set_params(random_state=0)
    return est


def test_output_is_float32_of_n_components(embedder: Any) -> None:
    X, y, labels = make_data()
    Z = fit_transform(embedder.set_params(n_components=4), X, y, labels)
    assert Z.dtype == np.float32
    assert Z.shape == (len(X), embedder.n_components_) == (len(X), 4)
    assert np.isfinite(Z).all()
    assert list(embedder.get_feature_names_out()) == [
        f"{type(embedder).__name__.lower()}{i}" for i in range(4)
    ]


def test_deterministic_for_fixed_random_state(embedder: Any) -> None:
    X, y, labels = make_data()
    first = fit_transform(clone(embedder), X, y, labels)
    second = fit_transform(clone(embedder), X, y, labels)
    np.testing.assert_array_equal(first, second)


def test_mlp_seed_matters() -> None:
    X, y, _ = make_data()
    a = SupervisedEmbedder(8, method="mlp", max_iter=30, random_state=0).fit_transform(X, y)
    b = SupervisedEmbedder(8, method="mlp", max_iter=30, random_state=1).fit_transform(X, y)
    assert not np.allclose(a, b)


def test_transform_checks_fitted_and_feature_count(embedder: Any) -> None:
    X, y, labels = make_data()
    with pytest.raises(NotFittedError):
        embedder.transform(X)
    fit_transform(embedder, X, y, labels)
    with pytest.raises(ValueError, match="X has 8 features, but .* is expecting 9 features"):
        embedder.transform(X[:, :8])


def test_missing_values_are_imputed_with_the_mean_and_flagged() -> None:
    X = np.array([[1.0, 7.0], [np.nan, 7.0], [3.0, 7.0], [5.0, 7.0]])
    emb = StandardEmbedder().fit(X)
    observed = signed_log2(np.array([1.0, 3.0, 5.0]))
    np.testing.assert_allclose(emb.imputation_values_, [observed.mean(), 3.0])
    np.testing.assert_array_equal(emb.indicator_features_, [0])
    assert emb.mean_.shape == (3,)  # two features and one indicator
    # A missing value and the mean itself embed differently: the indicator keeps them apart.
    missing, at_mean = emb.transform(np.array([[np.nan, 7.0], [2.0 ** observed.mean() - 1.0, 7.0]]))
    assert not np.allclose(missing, at_mean)


def test_missing_value_in_a_feature_complete_during_fit_is_imputed() -> None:
    X, *_ = make_data()
    X[:, 0] = np.arange(len(X), dtype=float)
    emb = StandardEmbedder(n_components=4).fit(X)
    assert 0 not in emb.indicator_features_
    X_missing = X[:1].copy()
    X_missing[0, 0] = np.nan
    X_at_mean = X[:1].copy()
    X_at_mean[0, 0] = 2.0 ** emb.imputation_values_[0] - 1.0
    np.testing.assert_allclose(emb.transform(X_missing), emb.transform(X_at_mean), atol=1e-5)


def test_feature_never_observed_in_fit_is_ignored() -> None:
    X, *_ = make_data()
    X[:, 2] = np.nan
    emb = StandardEmbedder(n_components=3).fit(X)
    assert 2 not in emb.used_features_ and 2 not in emb.indicator_features_
    X_new = X[:3].copy()
    X_new[:, 2] = 1e9
    np.testing.assert_array_equal(emb.transform(X_new), emb.transform(X[:3]))


def test_all_features_missing_raises() -> None:
    with pytest.raises(ValueError, match="every one of the 2 features is missing"):
        StandardEmbedder().fit(np.full((5, 2), np.nan))


@pytest.mark.parametrize("log_transform", [True, False])
def test_zero_spread_feature_does_not_blow_up_unseen_values(log_transform: bool) -> None:
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.normal(size=50), np.full(50, 3.0)])
    emb = StandardEmbedder(n_components=2, log_transform=log_transform, std_floor=0.1).fit(X)
    z = emb.transform(np.array([[0.0, 4.0]]))
    # With a floor of 0.1 the deviation of 1 (or log2(5/4) ~ 0.32) scales by at most 10 per step.
    assert np.abs(z).max() < 150
    assert emb.scale_[1] == pytest.approx(0.1)


def test_n_components_is_capped_by_the_data() -> None:
    X, y, labels = make_data(n=6)
    assert StandardEmbedder(n_components=32).fit(X).n_components_ == 6
    X_wide, y_wide, labels_wide = make_data(n=120)
    assert StandardEmbedder(n_components=32).fit(X_wide).n_components_ == 9 + 9  # features + indicators
    assert SupervisedEmbedder(n_components=32, method="pls").fit(X, y).n_components_ == 5
    assert NCAEmbedder(n_components=32).fit(X_wide, labels_wide).n_components_ == 18
    assert SupervisedEmbedder(n_components=32, method="mlp", max_iter=5).fit(X, y).n_components_ == 32


def test_supervised_accepts_one_or_many_targets_and_rejects_nan() -> None:
    X, y, _ = make_data()
    for target in (y, y[:, 0]):
        for method in ("mlp", "pls"):
            emb = SupervisedEmbedder(4, method=method, max_iter=20, random_state=0).fit(X, target)
            assert emb.y_mean_.shape == (target.reshape(len(X), -1).shape[1],)
    y_bad = y.copy()
    y_bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SupervisedEmbedder(method="pls").fit(X, y_bad)
    with pytest.raises(ValueError, match="hidden_layer_sizes must hold positive integers"):
        SupervisedEmbedder(method="mlp", hidden_layer_sizes=(8, 0)).fit(X, y)


def test_nca_subsamples_large_training_sets_deterministically() -> None:
    X, _, labels = make_data(n=300)
    a = NCAEmbedder(4, max_samples=100, max_iter=5, random_state=3).fit(X, labels)
    b = NCAEmbedder(4, max_samples=100, max_iter=5, random_state=3).fit(X, labels)
    np.testing.assert_array_equal(a.transform(X), b.transform(X))
    np.testing.assert_array_equal(a.classes_, [0, 1, 2])


@pytest.mark.parametrize(
    "est", [NCAEmbedder(4, random_state=0), SupervisedEmbedder(4, method="pls")], ids=["nca", "pls"]
)
def test_label_aware_embeddings_keep_labels_together(est: Any) -> None:
    X, y, labels = make_data(n=150)
    Z = fit_transform(est, X, y, labels)
    d = ((Z[:, None, :] - Z[None, :, :]) ** 2).sum(-1)
    np.fill_diagonal(d, np.inf)
    assert (labels[d.argmin(axis=1)] == labels).mean() > 0.9


def test_the_supervised_targets_name_every_op_of_the_recipe_language() -> None:
    """The supervised design predicts which ops a nest's best recipe uses; before, the ops added by the
    second recipe language (unroll_jam, expand, pack, autoschedule) were missing, so a best recipe of
    `autoschedule; unroll_jam` had the same target as the original itself."""
    from embeddings.designs import RECIPE_OPS, tuning_targets
    from loopnest.transform.recipe import STEP_KINDS

    assert set(RECIPE_OPS) == set(STEP_KINDS)
    blocked = tuning_targets([([{"op": "autoschedule"}, {"op": "unroll_jam", "loop": 1, "factor": 4}], 4.0)])
    untouched = tuning_targets([([], 4.0)])
    assert not np.array_equal(blocked, untouched)
