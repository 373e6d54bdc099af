"""Finite input too large to compute with: a ValueError saying so (and what
magnitude is supported), never a silent infinity or a LAPACK failure.

Each test's docstring says what scikit-learn does with the same input.
"""

import warnings

import numpy as np
import pytest

import twinlearn as tl
from twinlearn import metrics

TOO_LARGE = "holds values too large for {} to compute with"


def too_large(owner):
    return pytest.raises(ValueError, match=TOO_LARGE.format(owner) + r".*Magnitudes up to about .* are supported")


def huge_columns(v=1.5e308):
    """A first column alternating +v / -v, a second of small values."""
    return np.array([[v, 1.0], [-v, 2.0], [v, 3.0], [-v, 4.0]])


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def test_standard_scaler_mean_overflow():
    """±1.5e308: the mean's running differences overflow (here: mean -inf,
    var 0). scikit-learn gives mean 0, var inf with an overflow warning."""
    with too_large("StandardScaler"):
        tl.StandardScaler(device="cpu").fit(huge_columns())
    with too_large("StandardScaler"):
        tl.StandardScaler(device="cpu").fit(np.ones((3, 2))).partial_fit(huge_columns())


@pytest.mark.parametrize("make", [lambda: tl.StandardScaler(device="cpu"), lambda: tl.GaussianNB(device="cpu")],
                         ids=["StandardScaler", "GaussianNB"])
def test_variance_overflow(make):
    """±1e200: the variance, 1e400, overflows; the core keeps the overflowed
    sum of squares as NaN (it clamped it to 0 once) and the check refuses it.
    scikit-learn gives var inf with an overflow warning."""
    est = make()
    with too_large(type(est).__name__):
        est.fit(huge_columns(1e200), [0, 1, 0, 1])


def test_min_max_scaler_range_overflow():
    """±1.5e308: max - min overflows. scikit-learn gives data_range_ inf,
    scale_ 0, and a transform that maps the column to 0."""
    with too_large("MinMaxScaler"):
        tl.MinMaxScaler(device="cpu").fit(huge_columns())


@pytest.mark.parametrize("X", [huge_columns(), huge_columns(1e30).astype(np.float32)], ids=["float64", "float32"])
def test_gaussian_nb_variance_overflow(X):
    """±1.5e308 (the class means overflow), and float32 data whose variances
    (1e60) overflow float32. scikit-learn gives var_ inf."""
    with too_large("GaussianNB"):
        tl.GaussianNB(device="cpu").fit(X, [0, 0, 1, 1])


KMEANS = [lambda: tl.KMeans(2, n_init=1, random_state=0, device="cpu"),
          lambda: tl.MiniBatchKMeans(2, n_init=1, random_state=0, device="cpu")]


@pytest.mark.parametrize("scale", [1.5e308, 1e160])
@pytest.mark.parametrize("make", KMEANS, ids=["KMeans", "MiniBatchKMeans"])
def test_kmeans_overflow(make, scale):
    """Centers of ±1.5e308 overflow; at 1e160 the squared distances do
    (inertia inf). scikit-learn gives NaN (or inf) centers with warnings."""
    X = np.array([[1, 0], [1, 1], [-1, 0], [-1, 1], [0, 0], [0, 1.0]]) * [scale, 1.0]
    est = make()
    with too_large(type(est).__name__):
        est.fit(X)
    if isinstance(est, tl.MiniBatchKMeans):
        with too_large("MiniBatchKMeans"):
            make().partial_fit(X)


@pytest.mark.parametrize("method", ["predict", "transform", "score"])
def test_kmeans_queries_overflow(method):
    """Queries at 1e300 of a model fitted on small data: the distances
    overflow, the labels would be arbitrary."""
    est = tl.KMeans(2, n_init=1, random_state=0, device="cpu").fit(np.random.default_rng(0).random((20, 2)))
    with too_large("KMeans"):
        getattr(est, method)(np.array([[1e300, 1e300]]))


def points(scale=1e300):
    return np.array([[1.0, 0.0], [0.0, 1.0], [1e-300, 1e-300], [-1.0, 2e-300]]) * scale


@pytest.mark.parametrize("make", [lambda: tl.NearestNeighbors(n_neighbors=2, device="cpu"),
                                  lambda: tl.KNeighborsRegressor(n_neighbors=2, device="cpu")],
                         ids=["NearestNeighbors", "KNeighborsRegressor"])
def test_neighbors_distances_overflow(make):
    """1e300: the squared distances overflow (here: inf self-distances and
    wrong neighbours). scikit-learn's own points come back first at
    distance 0 (its clipped dot-product form)."""
    X = points()
    est = make().fit(X, np.arange(4.0))
    with too_large(type(est).__name__):
        est.kneighbors(X)
    with too_large(type(est).__name__):
        est.kneighbors()
    if hasattr(est, "predict"):
        with too_large(type(est).__name__):
            est.predict(X)


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "manhattan", "chebyshev"])
def test_pairwise_distances_overflow(metric):
    """1e300: scikit-learn's pairwise_distances gives inf with overflow
    warnings; its argmin functions give the right indices (distance 0 to
    each point). Here the dot-product metrics' squares overflow everywhere;
    sums of absolute differences overflow only between ±1.5e308, so the
    argmins (each point's own row, at 0) are right and come back."""
    dot = metric in ("euclidean", "sqeuclidean")
    X = points(1e300 if dot else 1.5e308)
    with too_large("pairwise_distances"):
        metrics.pairwise_distances(X, X, metric=metric)
    for name in ("pairwise_distances_argmin_min", "pairwise_distances_argmin"):
        call = getattr(metrics, name)
        if dot:
            with too_large(name):
                call(X, X, metric=metric)
        else:
            out = call(X, X, metric=metric)
            assert np.array_equal(out[0] if isinstance(out, tuple) else out, np.arange(4))


DECOMPOSITIONS = {
    "PCA": lambda: tl.PCA(device="cpu"),
    "PCA-full": lambda: tl.PCA(svd_solver="full", device="cpu"),
    "PCA-covariance_eigh": lambda: tl.PCA(svd_solver="covariance_eigh", device="cpu"),
    "PCA-randomized": lambda: tl.PCA(2, svd_solver="randomized", random_state=0, device="cpu"),
    "PCA-arpack": lambda: tl.PCA(2, svd_solver="arpack", device="cpu"),
    "IncrementalPCA": lambda: tl.IncrementalPCA(device="cpu"),
    "TruncatedSVD": lambda: tl.TruncatedSVD(random_state=0, device="cpu"),
    "TruncatedSVD-arpack": lambda: tl.TruncatedSVD(algorithm="arpack", device="cpu"),
}


@pytest.mark.parametrize("shape", [(20, 5), (5, 20)], ids=["tall", "wide"])
@pytest.mark.parametrize("scale", [1e160, 1e300, 1.5e308])
@pytest.mark.parametrize("name", list(DECOMPOSITIONS))
def test_decomposition_overflow_is_not_a_lapack_failure(name, scale, shape):
    """Values of 1e160 and up: products overflow (the Gram matrix, the
    variances), and LAPACK failed to converge on what they left
    ('Eigenvalues did not converge', 'SVD did not converge'). scikit-learn's
    PCA, IncrementalPCA and TruncatedSVD at 1e300 give explained_variance_
    inf with warnings."""
    X = np.random.default_rng(0).random(shape) * scale
    est = DECOMPOSITIONS[name]()
    with too_large(type(est).__name__):
        est.fit(X)


def test_large_values_below_the_limits_are_computed():
    """1e150 squares to 1e300: every estimator above computes with it."""
    X = np.random.default_rng(0).random((20, 4)) * 1e150
    tl.StandardScaler(device="cpu").fit(X)
    tl.MinMaxScaler(device="cpu").fit(X)
    tl.GaussianNB(device="cpu").fit(X, np.arange(20) % 2)
    for make in KMEANS:
        make().fit(X).predict(X)
    assert np.array_equal(tl.NearestNeighbors(n_neighbors=1, device="cpu").fit(X).kneighbors(X)[1][:, 0],
                          np.arange(20))
    metrics.pairwise_distances(X, X)
    for make in DECOMPOSITIONS.values():
        est = make().fit(X)
        assert np.isfinite(est.explained_variance_).all()


@pytest.mark.parametrize("make", [lambda: tl.GradientBoostingRegressor(n_estimators=3, device="cpu"),
                                  lambda: tl.GradientBoosting(loss="RMSE", n_estimators=3, device="cpu"),
                                  lambda: tl.GradientBoosting(loss="Poisson", n_estimators=3, device="cpu")],
                         ids=["Regressor", "RMSE", "Poisson"])
def test_gradient_boosting_targets_beyond_float32(make):
    """Targets above float32's largest value (3.4e38), beyond the boosters'
    supported range (their predictions came back -inf or inf when they were
    float32): a clear error. scikit-learn's
    HistGradientBoostingRegressor (float32 raw predictions too) fits
    1e39-scale targets with 'invalid value' warnings and predicts a constant
    -1.69e38."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    y = np.abs(rng.standard_normal(60)) * 1e39
    est = make()
    with pytest.raises(ValueError, match=r"Input y holds values too large for .*above 3.4028235e\+38, the largest "
                                         r"float32, the limit of the boosters' targets"):
        est.fit(X, y)
    assert np.isfinite(make().fit(X, y / 1e10).predict(X)).all()


def test_gradient_boosting_predictions_overflowing_float64():
    """A model whose margins leave float64 (here: leaves set to 1e308 after
    the fit, three trees) gets an error at predict, and at each stage that
    overflows, not inf."""
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 3))
    est = tl.GradientBoostingRegressor(n_estimators=3, device="cpu").fit(X, X[:, 0])
    est.leaf_values_ = np.full_like(est.leaf_values_, 1e308)
    with pytest.raises(ValueError, match="predictions of GradientBoostingRegressor overflow float64"):
        est.predict(X)
    with pytest.raises(ValueError, match="predictions of GradientBoostingRegressor overflow float64"):
        list(est.staged_predict(X))


@pytest.mark.parametrize("make", [tl.LinearRegression, tl.Ridge, tl.Lasso, tl.ElasticNet])
def test_linear_models_overflow_is_a_value_error(make):
    """1e300: the Gram matrix (or coordinate descent) overflows: a
    ValueError saying the data overflows, not LAPACK's error. scikit-learn's
    LinearRegression at 1e300 gives non-finite or arbitrary coefficients
    with warnings."""
    rng = np.random.default_rng(0)
    X = rng.random((20, 3)) * 1e300
    with pytest.raises(ValueError, match="overflow|large values"):
        make(device="cpu").fit(X, rng.random(20))
