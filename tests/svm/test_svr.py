"""twinlearn.svm.SVR against scikit-learn's libsvm and bad input."""

import numpy as np
import pytest
from sklearn import svm as sk
from sklearn.datasets import load_diabetes, make_regression
from sklearn.preprocessing import StandardScaler

import twinlearn as tl
from twinlearn.svm import SVR


def _data(name):
    X, y = load_diabetes(return_X_y=True) if name == "diabetes" else make_regression(300, 8, noise=5, random_state=0)
    return StandardScaler().fit_transform(X), (y - y.mean()) / y.std()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kernel", ["linear", "rbf", "poly"])
@pytest.mark.parametrize("name", ["diabetes", "regression"])
def test_agrees_with_sklearn(name, kernel, dtype):
    X, y = _data(name)
    X = X.astype(dtype)
    ours = SVR(kernel=kernel, device="cpu").fit(X, y)
    ref = sk.SVR(kernel=kernel).fit(X, y)
    # the tolerance of the stopping rule (tol=1e-3 on the gradient gap) bounds the agreement
    # (the linear problems converge slowly: tens of thousands of steps, and
    # the two solvers stop at different points within tol of the optimum)
    limit = 2e-2 if kernel == "linear" else 5e-3
    assert np.max(np.abs(ours.predict(X) - ref.predict(X))) < limit
    assert isinstance(ours.n_iter_, int)
    assert ours.dual_coef_.shape[0] == 1 and ours.n_support_.shape == (1,)


def test_tight_tol_agrees_to_1e_6():
    X, y = _data("diabetes")
    ours = SVR(tol=1e-8, device="cpu").fit(X, y)
    ref = sk.SVR(tol=1e-8).fit(X, y)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), atol=1e-6)
    np.testing.assert_array_equal(ours.support_, ref.support_)


def test_sample_weight_and_epsilon():
    X, y = _data("regression")
    w = np.random.default_rng(0).uniform(0.2, 3.0, X.shape[0])
    ours = SVR(epsilon=0.3, tol=1e-6, device="cpu").fit(X, y, sample_weight=w)
    ref = sk.SVR(epsilon=0.3, tol=1e-6).fit(X, y, sample_weight=w)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), atol=1e-4)
    np.testing.assert_array_equal(ours.support_, ref.support_)


def test_bits_do_not_depend_on_threads():
    X, y = make_regression(1500, 40, noise=3, random_state=2)
    y = y / y.std()
    fits = []
    for n in (1, 3):
        with tl.config_context(n_threads=n):
            est = SVR(device="cpu", numeric_mode="identical").fit(X, y)
            fits.append((est.dual_coef_.tobytes(), est.predict(X).tobytes()))
    assert fits[0] == fits[1]


def test_bad_input():
    X, y = _data("diabetes")
    with pytest.raises(ValueError, match="epsilon"):
        SVR(epsilon=-1, device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="C"):
        SVR(C=-1.0, device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="square matrix"):
        SVR(kernel="precomputed", device="cpu").fit(X, y)
    y2 = y.copy()
    y2[0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SVR(device="cpu").fit(X, y2)
