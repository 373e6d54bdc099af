"""IncrementalPCA: agreement with scikit-learn batch by batch, errors,
check_estimator, and CPU-versus-GPU bit identity."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits, load_iris
from sklearn.decomposition import IncrementalPCA as SkIncrementalPCA
from sklearn.utils.estimator_checks import check_estimator

from twinlearn import IncrementalPCA
from twinlearn.testing import bits


def spectrum_data(n=600, d=16, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    scales = 15.0 * 0.65 ** np.arange(d)
    return ((rng.standard_normal((n, d)) * scales) @ q.T + 4.0 * rng.standard_normal(d)).astype(dtype)


def assert_close(a, b, tol, what):
    b = np.asarray(b, dtype=np.float64)
    scale = np.abs(b).max() if b.size else 1.0
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), b, rtol=tol, atol=tol * scale, err_msg=what)


DATA = {
    "spectrum": lambda dt: spectrum_data(dtype=dt),
    "digits": lambda dt: load_digits().data.astype(dt),
    "iris": lambda dt: load_iris().data.astype(dt),
}


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("dataset", list(DATA))
@pytest.mark.parametrize("whiten", [False, True])
def test_matches_scikit_learn(dtype, dataset, whiten):
    X = DATA[dataset](dtype)
    k = {"spectrum": 5, "digits": 8, "iris": 3}[dataset]
    batch = {"spectrum": 100, "digits": 400, "iris": 40}[dataset]
    ours = IncrementalPCA(k, batch_size=batch, whiten=whiten, device="cpu").fit(X)
    ref = SkIncrementalPCA(k, batch_size=batch, whiten=whiten).fit(X.astype(np.float64))
    tol = 1e-4 if dtype == np.float32 else 1e-8
    assert_close(ours.components_, ref.components_, tol, "components_")
    for attr in ("explained_variance_", "explained_variance_ratio_", "singular_values_", "mean_", "var_"):
        assert_close(getattr(ours, attr), getattr(ref, attr), tol, attr)
    assert_close(ours.noise_variance_, ref.noise_variance_, tol * 10, "noise_variance_")
    assert ours.n_samples_seen_ == ref.n_samples_seen_ and ours.batch_size_ == ref.batch_size_
    assert_close(ours.transform(X), ref.transform(X.astype(np.float64)), tol * 10, "transform")


def test_partial_fit_sequence():
    X = spectrum_data(n=300)
    ours, ref = IncrementalPCA(4, device="cpu"), SkIncrementalPCA(4)
    for chunk in np.array_split(X, [50, 60, 200]):
        ours.partial_fit(chunk)
        ref.partial_fit(chunk)
        assert_close(ours.components_, ref.components_, 1e-8, "components_")
        assert_close(ours.singular_values_, ref.singular_values_, 1e-8, "singular_values_")
        assert_close(ours.noise_variance_, ref.noise_variance_, 1e-7, "noise_variance_")
    # n_components None: min(n_samples, n_features) of the first batch.
    a = IncrementalPCA(device="cpu").partial_fit(X[:10])
    assert a.n_components_ == SkIncrementalPCA().partial_fit(X[:10]).n_components_ == 10


def test_errors_as_scikit_learn():
    X = spectrum_data(n=40, d=6)
    cases = [
        (dict(n_components=7), X, "invalid for n_features"),
        (dict(n_components=5), X[:3], "less or equal to the batch number of samples"),
    ]
    for params, data, match in cases:
        with pytest.raises(ValueError, match=match):
            IncrementalPCA(device="cpu", **params).partial_fit(data)
        with pytest.raises(ValueError, match=match):
            SkIncrementalPCA(**params).partial_fit(data)
    ours = IncrementalPCA(device="cpu").partial_fit(X[:5])
    with pytest.raises(ValueError, match="between calls to partial_fit"):
        ours.set_params(n_components=2).partial_fit(X[5:20])
    with pytest.raises(ValueError, match="features"):
        IncrementalPCA(2, device="cpu").fit(X).partial_fit(X[:, :5])


def test_check_estimator():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(IncrementalPCA(device="cpu"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_identical_on_every_backend(device, dtype):
    X = spectrum_data(n=2500, d=30, dtype=dtype)
    ref = IncrementalPCA(6, batch_size=700, device="cpu", numeric_mode="identical").fit(X)
    ours = IncrementalPCA(6, batch_size=700, device=device, numeric_mode="identical").fit(X)
    assert ours.numeric_mode_used() == "identical"
    for attr in ("components_", "explained_variance_", "explained_variance_ratio_", "singular_values_", "mean_",
                 "var_", "noise_variance_"):
        assert bits(getattr(ours, attr)) == bits(getattr(ref, attr)), attr
    assert bits(ours.transform(X)) == bits(ref.transform(X))
