"""Supervised estimators with device arrays in: predict returns the caller's
array type (numeric labels included; README), with the values of NumPy
input, and score takes device X, y and sample_weight (scikit-learn's metrics
run on host copies) with NumPy input's value."""

import numpy as np
import pytest

import twinlearn
from device_arrays import host, to_device

pytestmark = pytest.mark.gpu


CLASSIFIERS = [
    lambda: twinlearn.LogisticRegression(device="cuda"),
    lambda: twinlearn.RidgeClassifier(device="cuda"),
    lambda: twinlearn.KNeighborsClassifier(device="cuda"),
    lambda: twinlearn.GaussianNB(device="cuda"),
    lambda: twinlearn.GradientBoostingClassifier(n_estimators=10, max_depth=3, device="cuda"),
]
REGRESSORS = [
    lambda: twinlearn.LinearRegression(device="cuda"),
    lambda: twinlearn.Ridge(device="cuda"),
    lambda: twinlearn.Lasso(alpha=0.01, device="cuda"),
    lambda: twinlearn.KNeighborsRegressor(device="cuda"),
    lambda: twinlearn.GradientBoostingRegressor(n_estimators=10, max_depth=3, device="cuda"),
]


def _data(classification):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 5)).astype(np.float32)
    t = X[:, 0] * 2 + X[:, 1] - X[:, 2]
    y = (t > 0).astype(np.int64) * 3 + 1 if classification else (t + 0.1 * rng.normal(size=2000)).astype(np.float32)
    w = rng.uniform(0.5, 2.0, 2000).astype(np.float32)
    return X, y, w


@pytest.mark.parametrize("lib", ["cupy", "torch"])
@pytest.mark.parametrize("make", CLASSIFIERS + REGRESSORS)
def test_predict_and_score_with_device_arrays(lib, make):
    est = make()
    classification = any(est.__class__ is m().__class__ for m in CLASSIFIERS)
    X, y, w = _data(classification)
    est.fit(X, y)
    Xd, yd, wd = to_device(lib, X), to_device(lib, y), to_device(lib, w)
    got = est.predict(Xd)
    assert type(got) is type(Xd)
    np.testing.assert_array_equal(host(got), est.predict(X))
    ref = est.score(X, y, sample_weight=w)
    assert est.score(Xd, y, sample_weight=w) == ref
    assert est.score(Xd, yd, sample_weight=wd) == ref


def test_string_classes_come_back_as_numpy():
    X, y, _ = _data(True)
    names = np.array(["low", "high"])[(y > 1).astype(int)]
    Xd = to_device("cupy", X)
    for est in (twinlearn.KNeighborsClassifier(device="cuda"), twinlearn.GaussianNB(device="cuda"),
                twinlearn.LogisticRegression(device="cuda")):
        got = est.fit(X, names).predict(Xd)
        assert isinstance(got, np.ndarray)
        np.testing.assert_array_equal(got, est.predict(X))
