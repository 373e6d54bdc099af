"""RidgeClassifier against scikit-learn, on every backend."""

import warnings

import numpy as np
import pytest
from sklearn import linear_model as sk
from sklearn.datasets import load_breast_cancer, load_digits, load_iris
from sklearn.utils.estimator_checks import check_estimator

from twinlearn.linear_model import RidgeClassifier
from twinlearn.testing import bits

WAIVED = {"check_non_transformer_estimators_n_iter"}  # as scikit-learn's own RidgeClassifier


def test_check_estimator():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(RidgeClassifier(device="cpu"), on_fail=None)
    failed = [(r["check_name"], r["exception"]) for r in results
              if r["status"] == "failed" and r["check_name"] not in WAIVED]
    assert not failed


@pytest.mark.parametrize("loader", [load_iris, load_breast_cancer, load_digits])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("class_weight", [None, "balanced"])
def test_matches_scikit_learn(device, loader, dtype, class_weight):
    X, y = loader(return_X_y=True)
    X = X.astype(dtype)
    ours = RidgeClassifier(alpha=1.0, class_weight=class_weight, device=device).fit(X, y)
    ref = sk.RidgeClassifier(alpha=1.0, class_weight=class_weight).fit(X, y)
    np.testing.assert_array_equal(ours.classes_, ref.classes_)
    assert ours.coef_.shape == ref.coef_.shape
    tol = 1e-6 if dtype == np.float64 else 1e-3
    scale = np.max(np.abs(ref.coef_))
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=tol, atol=tol * scale)
    d_ours, d_ref = ours.decision_function(X), ref.decision_function(X)
    assert d_ours.shape == d_ref.shape
    np.testing.assert_allclose(d_ours, d_ref, rtol=tol, atol=tol * np.max(np.abs(d_ref)))
    agree = np.mean(ours.predict(X) == ref.predict(X))
    assert agree == 1.0 if dtype == np.float64 else agree > 0.995


def test_string_labels_weights_and_multilabel(device):
    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 5))
    y = np.where(X[:, 0] + 0.3 * X[:, 1] > 0, "yes", "no")
    w = rng.uniform(0.2, 2.0, 300)
    ours = RidgeClassifier(device=device).fit(X, y, sample_weight=w)
    ref = sk.RidgeClassifier().fit(X, y, sample_weight=w)
    assert ours.coef_.shape == ref.coef_.shape == (5,)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    Y = np.column_stack([X[:, 0] > 0, X[:, 1] > 0.5, X[:, 2] + X[:, 3] > 0]).astype(int)
    ours = RidgeClassifier(device=device).fit(X, Y)
    ref = sk.RidgeClassifier().fit(X, Y)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))


@pytest.mark.gpu
def test_cpu_and_cuda_are_bit_identical():
    X, y = load_digits(return_X_y=True)
    a = RidgeClassifier(device="cpu", numeric_mode="identical").fit(X, y)
    b = RidgeClassifier(device="cuda:0", numeric_mode="identical").fit(X, y)
    assert bits(a.coef_) == bits(b.coef_) and bits(a.intercept_) == bits(b.intercept_)
    assert bits(a.decision_function(X)) == bits(b.decision_function(X))
