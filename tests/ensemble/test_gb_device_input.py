"""Boosting with device arrays in: predictions come back in the caller's
array type (README), labels included, with the values of NumPy input."""

import numpy as np
import pytest

import twinlearn
from twinlearn.testing import host, to_device

pytestmark = pytest.mark.gpu


@pytest.mark.parametrize("lib", ["torch", "cupy"])
@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("label_dtype", [np.int64, np.float64, bool])
def test_device_input_predictions_in_caller_type(lib, n_classes, label_dtype):
    if label_dtype is bool and n_classes > 2:
        pytest.skip("two boolean classes only")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(3000, 6)).astype(np.float32)
    y = (X[:, 0] * 2 + X[:, 1] > 0).astype(np.int64) + (X[:, 2] > 1) * (n_classes - 2)
    y = (y * 5 + 3).astype(label_dtype) if label_dtype is not bool else y.astype(bool)
    m = twinlearn.GradientBoostingClassifier(n_estimators=20, max_depth=4, device="cuda").fit(X, y)
    Xd = to_device(lib, X)
    ref = m.predict(X)
    got = m.predict(Xd)
    assert type(got) is type(Xd)
    assert host(got).dtype == ref.dtype
    np.testing.assert_array_equal(host(got), ref)
    proba = m.predict_proba(Xd)
    assert type(proba) is type(Xd)
    np.testing.assert_array_equal(host(proba), m.predict_proba(X))
    np.testing.assert_array_equal(host(m.decision_function(Xd)), m.decision_function(X))


@pytest.mark.parametrize("lib", ["torch", "cupy"])
def test_device_input_string_classes_come_back_as_numpy(lib):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(500, 4)).astype(np.float32)
    y = np.where(X[:, 0] > 0, "yes", "no")
    m = twinlearn.GradientBoostingClassifier(n_estimators=10, max_depth=3, device="cuda").fit(X, y)
    got = m.predict(to_device(lib, X))
    assert isinstance(got, np.ndarray)
    np.testing.assert_array_equal(got, m.predict(X))
