"""TruncatedSVD: agreement with scikit-learn, errors, check_estimator, and
CPU-versus-GPU bit identity."""

import warnings

import numpy as np
import pytest
from sklearn.datasets import load_digits
from sklearn.decomposition import TruncatedSVD as SkTruncatedSVD
from sklearn.utils.estimator_checks import check_estimator

from twinlearn import TruncatedSVD
from twinlearn.testing import bits


def spectrum_data(n=500, d=30, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((d, d)))
    scales = 10.0 * 0.6 ** np.arange(d)
    return ((rng.standard_normal((n, d)) * scales) @ q.T + 2.0).astype(dtype)


def assert_close(a, b, tol, what):
    b = np.asarray(b, dtype=np.float64)
    np.testing.assert_allclose(np.asarray(a, dtype=np.float64), b, rtol=tol, atol=tol * np.abs(b).max(),
                               err_msg=what)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("algorithm", ["randomized", "arpack"])
@pytest.mark.parametrize("shape", [(500, 30), (30, 200)])
def test_matches_scikit_learn(dtype, algorithm, shape):
    X = spectrum_data(*shape, dtype=dtype)
    params = dict(n_components=5, algorithm=algorithm, n_iter=10, random_state=0)
    ours = TruncatedSVD(device="cpu", **params)
    Z = ours.fit_transform(X)
    ref = SkTruncatedSVD(**params)
    Zr = ref.fit_transform(X.astype(np.float64))
    tol = 1e-4 if dtype == np.float32 else 1e-8
    assert_close(ours.components_, ref.components_, tol, "components_")
    for attr in ("explained_variance_", "explained_variance_ratio_", "singular_values_"):
        assert_close(getattr(ours, attr), getattr(ref, attr), tol, attr)
    assert ours.components_.dtype == dtype and Z.dtype == dtype
    assert_close(Z, Zr, tol * 10, "fit_transform")
    assert_close(ours.transform(X), Zr, tol * 10, "transform")
    assert_close(ours.inverse_transform(Z), ref.inverse_transform(Zr), tol * 10, "inverse_transform")


@pytest.mark.parametrize("shape", [(500, 30), (30, 200)])
def test_fit_gives_the_attributes_of_fit_transform(shape):
    # fit skips the reduced X when the solver formed XᵀX (500 x 30): the
    # variances then come from XᵀX and the column means, in fit_transform
    # too, so both give the same bits; they are the reduced X's variances
    # (the data's mean is 2, so a missing mean term would show).
    X = spectrum_data(*shape)
    a = TruncatedSVD(5, random_state=0, device="cpu").fit(X)
    b = TruncatedSVD(5, random_state=0, device="cpu")
    Z = b.fit_transform(X)
    for attr in ("components_", "explained_variance_", "explained_variance_ratio_", "singular_values_"):
        assert bits(getattr(a, attr)) == bits(getattr(b, attr)), attr
    assert_close(a.explained_variance_, Z.var(axis=0), 1e-10, "explained_variance_")


def test_float32_data_far_from_the_origin_keeps_every_component():
    # The mean direction's singular value is ~500 times the 32nd one: judged
    # by float32's rounding, the randomized solver took the smaller ones for
    # noise and returned fewer real components (zeros, then random
    # directions); XᵀX is summed in float64, so they are real.
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((64, 64)))
    X = (rng.standard_normal((20_000, 64)) * (1.0 / np.sqrt(1.0 + np.arange(64)))) @ q.T
    X = (X + rng.uniform(-20.0, 20.0, 64)).astype(np.float32)
    ours = TruncatedSVD(32, random_state=0, device="cpu").fit(X)
    exact = SkTruncatedSVD(32, algorithm="arpack").fit(X.astype(np.float64))
    assert np.all(ours.singular_values_ > 0)
    assert_close(ours.singular_values_, exact.singular_values_, 2e-2, "singular_values_")
    assert ours.explained_variance_ratio_.sum() >= 0.99 * exact.explained_variance_ratio_.sum()


def test_digits():
    X = load_digits().data
    ours = TruncatedSVD(8, n_iter=20, random_state=0, device="cpu").fit(X)
    ref = SkTruncatedSVD(8, algorithm="arpack").fit(X)
    assert_close(ours.components_, ref.components_, 1e-8, "components_")
    assert_close(ours.singular_values_, ref.singular_values_, 1e-8, "singular_values_")


def test_errors_as_scikit_learn():
    X = spectrum_data(20, 6)
    with pytest.raises(ValueError, match="must be <="):
        TruncatedSVD(7, device="cpu").fit(X)
    with pytest.raises(ValueError, match="must be <="):
        SkTruncatedSVD(7).fit(X)
    for k in (6, 20):
        with pytest.raises(ValueError, match="0 < k < min"):
            TruncatedSVD(k, algorithm="arpack", device="cpu").fit(X)
        with pytest.raises(ValueError):
            SkTruncatedSVD(k, algorithm="arpack").fit(X)
    with pytest.raises(ValueError, match="minimum of 2"):
        TruncatedSVD(1, device="cpu").fit(X[:, :1])
    with pytest.raises(ValueError, match="n_components"):
        TruncatedSVD(0, device="cpu").fit(X)


def test_rank_deficient_and_few_rows():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 2)) @ rng.standard_normal((2, 10))
    t = TruncatedSVD(4, random_state=0, device="cpu").fit(X)
    np.testing.assert_allclose(t.components_ @ t.components_.T, np.eye(4), atol=1e-10)
    assert np.all(t.singular_values_[2:] < 1e-10)
    # Fewer rows than components: as many components as the data has rows.
    Xs = rng.standard_normal((3, 10))
    assert TruncatedSVD(5, device="cpu").fit(Xs).components_.shape == \
        SkTruncatedSVD(5).fit(Xs).components_.shape


def test_check_estimator():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(TruncatedSVD(device="cpu"))
        # algorithm='arpack' is not run through check_estimator: several checks
        # fit 2-feature data with the default n_components=2, which ARPACK's
        # constraint k < min(X.shape) refuses (scikit-learn's own arpack
        # TruncatedSVD raises the same way on them).


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("algorithm", ["randomized", "arpack"])
@pytest.mark.parametrize("shape", [(3000, 40), (50, 300)])
def test_identical_on_every_backend(device, dtype, algorithm, shape):
    X = spectrum_data(*shape, dtype=dtype)
    params = dict(n_components=6, algorithm=algorithm, random_state=2, numeric_mode="identical")
    ref = TruncatedSVD(device="cpu", **params)
    Zr = ref.fit_transform(X)
    ours = TruncatedSVD(device=device, **params)
    Z = ours.fit_transform(X)
    assert ours.numeric_mode_used() == "identical"
    for attr in ("components_", "explained_variance_", "explained_variance_ratio_", "singular_values_"):
        assert bits(getattr(ours, attr)) == bits(getattr(ref, attr)), attr
    assert bits(Z) == bits(Zr)
    assert bits(ours.inverse_transform(Z)) == bits(ref.inverse_transform(Zr))


@pytest.mark.gpu
def test_fast_mode_on_gpu():
    X = spectrum_data(20000, 64, dtype=np.float32)
    fast = TruncatedSVD(5, n_iter=10, random_state=0, device="cuda:0", numeric_mode="fast").fit(X)
    assert fast.numeric_mode_used() == "fast"
    ref = SkTruncatedSVD(5, algorithm="arpack").fit(X.astype(np.float64))
    assert_close(fast.components_, ref.components_, 1e-4, "components_")


@pytest.mark.gpu
def test_fast_mode_on_gpu_takes_the_exact_eigenpairs():
    # Without power iterations and with 2 extra directions the randomized
    # subspace misses the 8 leading singular values by about 2% (the CPU
    # backend's fit below); fast mode's exact eigenpairs of XᵀX do not.
    X = spectrum_data(20000, 64, dtype=np.float32)
    ref = SkTruncatedSVD(8, algorithm="arpack").fit(X.astype(np.float64))
    params = dict(n_components=8, n_iter=0, n_oversamples=2, random_state=0)
    rough = TruncatedSVD(device="cpu", **params).fit(X)
    assert np.abs(rough.singular_values_ / ref.singular_values_ - 1).max() > 1e-3
    fast = TruncatedSVD(device="cuda:0", numeric_mode="fast", **params).fit(X)
    assert fast.numeric_mode_used() == "fast"
    assert_close(fast.components_, ref.components_, 1e-4, "components_")
    assert_close(fast.singular_values_, ref.singular_values_, 1e-5, "singular_values_")
