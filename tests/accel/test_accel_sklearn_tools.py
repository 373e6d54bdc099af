"""Accelerated estimators inside scikit-learn's own tools."""

from __future__ import annotations

import numpy as np
from numpy.testing import assert_allclose
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import GridSearchCV, cross_val_score, cross_validate
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import StandardScaler

import twinlearn
import twinlearn.accel as accel
from accel_helpers import accel_state, toy  # noqa: F401 (fixtures)


def data(n=120, d=4, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.arange(1, d + 1) * 10 + 5
    return X, (X @ rng.standard_normal(d) > 5).astype(int), X @ rng.standard_normal(d)


def test_pipeline_matches_plain_pipeline():
    X, _, y = data()
    plain = make_pipeline(StandardScaler(), Ridge(alpha=0.5))
    acc = twinlearn.accelerate(plain)
    assert_allclose(acc.fit(X, y).predict(X), plain.fit(X, y).predict(X), rtol=1e-10)
    assert accel.fitted_on(acc[0]) == "twinlearn:cpu"
    assert accel.fitted_on(plain[0]) == "scikit-learn"
    assert_allclose(acc[:-1].transform(X), plain[:-1].transform(X), rtol=1e-12, atol=1e-12)


def test_grid_search_clones_stay_accelerated():
    X, yc, _ = data()
    pipe = Pipeline([("scale", StandardScaler()), ("clf", LogisticRegression(max_iter=200))])
    grid = {"scale__with_mean": [True, False], "clf__C": [0.1, 1.0]}
    acc = GridSearchCV(twinlearn.accelerate(pipe), grid, cv=3).fit(X, yc)
    ref = GridSearchCV(pipe, grid, cv=3).fit(X, yc)
    assert acc.best_params_ == ref.best_params_
    assert_allclose(acc.cv_results_["mean_test_score"], ref.cv_results_["mean_test_score"])
    assert accel.fitted_on(acc.best_estimator_.named_steps["scale"]) == "twinlearn:cpu"


def test_cross_val_score_and_cross_validate():
    X, _, y = data()
    plain = make_pipeline(StandardScaler(), Ridge())
    acc = twinlearn.accelerate(plain)
    assert_allclose(cross_val_score(acc, X, y, cv=4), cross_val_score(plain, X, y, cv=4), rtol=1e-10)
    res = cross_validate(acc, X, y, cv=3, return_estimator=True)
    assert all(accel.fitted_on(e[0]) == "twinlearn:cpu" for e in res["estimator"])


def test_cross_validation_in_worker_processes_is_correct():
    # Worker processes fit the accelerated estimators (test_accel_workers.py says where).
    X, _, y = data()
    plain = make_pipeline(StandardScaler(), Ridge())
    acc = twinlearn.accelerate(plain)
    assert_allclose(cross_val_score(acc, X, y, cv=3, n_jobs=2),
                    cross_val_score(plain, X, y, cv=3), rtol=1e-10)


def test_clone_of_a_fitted_accelerated_estimator_is_unfitted():
    X, _, _ = data()
    est = twinlearn.accelerate(StandardScaler()).fit(X)
    c = clone(est)
    assert accel.is_accelerated(c) and accel.fitted_on(c) is None
    assert not hasattr(c, "mean_")
