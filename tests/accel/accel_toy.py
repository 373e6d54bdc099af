"""Estimators for testing the accelerator's generic machinery.

- RestrictedScaler: scikit-learn's StandardScaler under another class, whose
  test entry (TOY_SCALER_ENTRY) restricts what twinlearn serves: with_mean=True
  only, no NaN, no sample_weight, 5 rows minimum. Served by the real
  twinlearn StandardScaler.
- ToyClassifier / ToyTwin: a scikit-learn-shaped classifier and a
  twinlearn-shaped twin (``device`` parameter, another parameter name) that
  count their calls, for supervised routing, ``available_if`` methods,
  parameter translation and joint parameter checks.
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, _fit_context
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.metaestimators import available_if
from sklearn.utils.validation import check_is_fitted, validate_data

from twinlearn.accel._entry import ANY, Entry, one_of, where


class RestrictedScaler(StandardScaler):
    pass


TOY_SCALER_ENTRY = Entry(
    sklearn="accel_toy.RestrictedScaler",
    twinlearn="twinlearn.preprocessing.StandardScaler",
    methods=("fit", "partial_fit", "transform", "fit_transform", "inverse_transform"),
    attributes=("mean_", "var_", "scale_", "n_samples_seen_"),
    params={"copy": ANY, "with_mean": one_of(True), "with_std": ANY},
    kwargs=("copy",),
    allow_nan=False,
    min_rows=5,
)

CALLS: list = []


def _has_proba(est):
    return est.mode == "proba"


class ToyClassifier(ClassifierMixin, BaseEstimator):
    """Nearest class mean, scaled by alpha."""

    _parameter_constraints = {
        "alpha": [Interval(Real, 0, None, closed="left")],
        "mode": [StrOptions({"plain", "proba"})],
        "shift": [Real],
    }

    def __init__(self, alpha=1.0, mode="plain", shift=0.0):
        self.alpha = alpha
        self.mode = mode
        self.shift = shift

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        CALLS.append(("sklearn", "fit"))
        X, y = validate_data(self, X, y)
        self.classes_ = np.unique(y)
        self.means_ = np.stack([X[y == c].mean(axis=0) for c in self.classes_]) * self.alpha
        return self

    def _dist(self, X):
        return ((X[:, None, :] - self.means_[None]) ** 2).sum(-1) + self.shift

    def predict(self, X):
        CALLS.append(("sklearn", "predict"))
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        return self.classes_[np.argmin(self._dist(X), axis=1)]

    @available_if(_has_proba)
    def predict_proba(self, X):
        CALLS.append(("sklearn", "predict_proba"))
        check_is_fitted(self)
        X = validate_data(self, X, reset=False)
        e = np.exp(-self._dist(X))
        return e / e.sum(axis=1, keepdims=True)


class ToyTwin(ClassifierMixin, BaseEstimator):
    """The same model under twinlearn's conventions: `scale` for alpha, a
    `device` parameter, and no `shift`."""

    def __init__(self, scale=1.0, mode="plain", device=None):
        self.scale = scale
        self.mode = mode
        self.device = device

    def fit(self, X, y, sample_weight=None):
        CALLS.append(("twinlearn", "fit", self.device))
        X, y = validate_data(self, X, y)
        self.classes_ = np.unique(y)
        self.means_ = np.stack([X[y == c].mean(axis=0) for c in self.classes_]) * self.scale
        return self

    def _dist(self, X):
        return ((X[:, None, :] - self.means_[None]) ** 2).sum(-1)

    def predict(self, X):
        CALLS.append(("twinlearn", "predict", self.device))
        X = validate_data(self, X, reset=False)
        return self.classes_[np.argmin(self._dist(X), axis=1)]

    def predict_proba(self, X):
        CALLS.append(("twinlearn", "predict_proba", self.device))
        X = validate_data(self, X, reset=False)
        e = np.exp(-self._dist(X))
        return e / e.sum(axis=1, keepdims=True)


def _translate(params):
    return {"scale": params["alpha"], "mode": params["mode"]}


def _joint(params):
    if params["mode"] == "proba" and params["alpha"] > 10:
        return "mode='proba' with alpha > 10 unsupported"
    return None


TOY_CLASSIFIER_ENTRY = Entry(
    sklearn="accel_toy.ToyClassifier",
    twinlearn="accel_toy.ToyTwin",
    methods=("fit", "predict", "predict_proba", "score"),
    attributes=("classes_", "means_"),
    params={"alpha": where(lambda a: a < 100, "alpha < 100"), "mode": ANY, "shift": one_of(0.0)},
    check=_joint,
    check_doc="mode='proba' only with alpha <= 10",
    translate=_translate,
    kwargs=("sample_weight",),
    min_rows=0,
    task="classifier",
)

MISSING_ENTRY = Entry(
    sklearn="sklearn.preprocessing.QuantileTransformer",
    twinlearn="twinlearn.preprocessing.NoSuchScaler",
    methods=("fit", "transform"),
    attributes=("min_", "scale_"),
)
