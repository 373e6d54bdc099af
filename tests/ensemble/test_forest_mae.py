"""The absolute_error criterion of the forest regressors: scikit-learn's
trees on tie-free data, weighted-median leaf values and mean-absolute-deviation
impurities checked against a direct computation, quality within a stated
margin, identity across thread counts and devices, and bad input."""

import numpy as np
import pytest
import sklearn.ensemble as ske
from sklearn.datasets import make_friedman1
from sklearn.model_selection import train_test_split

import twinlearn
from twinlearn.ensemble import ExtraTreesRegressor, RandomForestClassifier, RandomForestRegressor

from test_forest import REGRESSORS, assert_same_trees
from test_forest_growth import assert_trees_match_sklearn

MAE = dict(criterion="absolute_error")


def _tie_free(seed=0, n=300):
    # Continuous targets and min_samples_leaf=5: no two candidate splits
    # score the same (with smaller leaves, several features can cut a small
    # node into the same two halves and the tie goes to the feature order).
    X, y = make_friedman1(n, 5, noise=0.3, random_state=seed)
    return X.astype(np.float32), y  # scikit-learn's trees split float32 X


def _weighted_median(y, w):
    """scikit-learn's weighted median: the smallest value whose cumulative
    weight exceeds half the total, the mean of it and the value before when a
    prefix weighs exactly half."""
    o = np.argsort(y, kind="stable")
    ys, cum = y[o], np.cumsum(w[o])
    half = 0.5 * cum[-1]
    k = int(np.argmax(cum > half))
    if k > 0 and cum[k - 1] == half:
        return (ys[k - 1] + ys[k]) / 2
    return ys[k]


# -- scikit-learn's trees -----------------------------------------------------------
@pytest.mark.parametrize("max_leaf_nodes", [None, 8, 25])
@pytest.mark.parametrize("max_depth", [None, 5])
def test_trees_are_sklearns(max_leaf_nodes, max_depth):
    """Without bootstrap and with every feature, node for node scikit-learn's
    tree (structure exact, values within 1e-9 relative)."""
    X, y = _tie_free()
    kw = dict(n_estimators=2, bootstrap=False, max_features=None, min_samples_leaf=5, random_state=0,
              max_leaf_nodes=max_leaf_nodes, max_depth=max_depth, **MAE)
    ours = RandomForestRegressor(device="cpu", **kw).fit(X, y)
    ref = ske.RandomForestRegressor(**kw).fit(X, y)
    assert_trees_match_sklearn(ours, ref, rtol=1e-9)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-9)


def test_weighted_trees_are_sklearns():
    X, y = _tie_free(seed=1)
    w = np.random.RandomState(0).uniform(0.5, 2.0, X.shape[0])
    kw = dict(n_estimators=1, bootstrap=False, max_features=None, min_samples_leaf=5, random_state=0, **MAE)
    ours = RandomForestRegressor(device="cpu", **kw).fit(X, y, sample_weight=w)
    ref = ske.RandomForestRegressor(**kw).fit(X, y, sample_weight=w)
    assert_trees_match_sklearn(ours, ref, rtol=1e-9)


@pytest.mark.parametrize("cls", REGRESSORS)
@pytest.mark.parametrize("n_outputs", [1, 2])
def test_node_values_are_weighted_medians(cls, n_outputs):
    """Every node's value is, per output, the weighted median of its rows' y
    and its impurity the mean over the outputs of their mean absolute
    deviation from it (integer weights, so prefixes weighing exactly half
    occur and take the midpoint)."""
    rng = np.random.RandomState(2)
    X = rng.rand(120, 3)
    Y = np.round(rng.rand(120, n_outputs) * 20) / 2  # repeated values
    w = rng.randint(0, 4, 120).astype(np.float64)
    est = cls(n_estimators=3, bootstrap=False, max_features=2, random_state=0, device="cpu", **MAE)
    est.fit(X, Y[:, 0] if n_outputs == 1 else Y, sample_weight=w)
    keep = w > 0
    for e in est.estimators_:
        path = e.decision_path(X[keep]).tocsc()
        t = e.tree_
        assert t.value.shape[1:] == (n_outputs, 1)
        for k in range(t.node_count):
            rows = path[:, k].nonzero()[0]
            wk = w[keep][rows]
            mad = 0.0
            for o in range(n_outputs):
                yk = Y[keep][rows, o]
                m = _weighted_median(yk, wk)
                assert t.value[k, o, 0] == m, f"node {k}, output {o}"
                mad += np.sum(wk * np.abs(yk - m)) / wk.sum()
            np.testing.assert_allclose(t.impurity[k], mad / n_outputs, rtol=1e-10, atol=1e-12)
            assert t.weighted_n_node_samples[k] == wk.sum()


@pytest.mark.parametrize("name", ["RandomForestRegressor", "ExtraTreesRegressor"])
def test_quality_close_to_sklearn(name):
    """With bootstrap and feature sampling the trees are not scikit-learn's
    (other random draws): held-out R^2 within 0.03 of scikit-learn's."""
    X, y = make_friedman1(800, 6, noise=0.5, random_state=3)
    Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
    kw = dict(n_estimators=40, random_state=0, min_samples_leaf=2, **MAE)
    ours = getattr(twinlearn.ensemble, name)(device="cpu", **kw).fit(Xtr, ytr).score(Xte, yte)
    ref = getattr(ske, name)(**kw).fit(Xtr, ytr).score(Xte, yte)
    assert ours >= ref - 0.03


def test_oob_score_close_to_sklearn():
    X, y = make_friedman1(500, 5, noise=0.3, random_state=4)
    kw = dict(n_estimators=40, oob_score=True, random_state=0, **MAE)
    ours = RandomForestRegressor(device="cpu", **kw).fit(X, y)
    ref = ske.RandomForestRegressor(**kw).fit(X, y)
    assert ours.oob_prediction_.shape == (500,)
    assert abs(ours.oob_score_ - ref.oob_score_) < 0.05


# -- identity -----------------------------------------------------------------------
CASES = [(c, {}) for c in REGRESSORS] + [(c, dict(max_leaf_nodes=10)) for c in REGRESSORS]


@pytest.mark.parametrize("cls, kw", CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_same_trees_for_any_thread_count(cls, kw, dtype):
    X, y = make_friedman1(300, 6, noise=0.3, random_state=0)
    X = X.astype(dtype)
    w = np.random.RandomState(1).uniform(0.2, 3.0, X.shape[0])
    fits = []
    for threads in (1, 2, 5):
        with twinlearn.config_context(n_threads=threads):
            fits.append(cls(n_estimators=7, random_state=3, device="cpu", **MAE, **kw).fit(X, y, sample_weight=w))
    for f in fits[1:]:
        assert_same_trees(fits[0], f)
        assert fits[0].predict(X).tobytes() == f.predict(X).tobytes()


def test_warm_start_grows_the_trees_of_one_fit():
    X, y = _tie_free()
    one = RandomForestRegressor(n_estimators=6, random_state=5, device="cpu", **MAE).fit(X, y)
    warm = RandomForestRegressor(n_estimators=3, random_state=5, warm_start=True, device="cpu", **MAE).fit(X, y)
    warm.set_params(n_estimators=6).fit(X, y)
    assert_same_trees(one, warm)


@pytest.mark.gpu
@pytest.mark.parametrize("cls, kw", CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_same_trees_on_cpu_and_gpu(cls, kw, dtype):
    X, y = make_friedman1(400, 6, noise=0.3, random_state=0)
    X = X.astype(dtype)
    w = np.random.RandomState(1).uniform(0.2, 3.0, X.shape[0])
    args = dict(n_estimators=6, random_state=4, numeric_mode="identical", **MAE, **kw)
    cpu = cls(device="cpu", **args).fit(X, y, sample_weight=w)
    gpu = cls(device="cuda", **args).fit(X, y, sample_weight=w)
    assert gpu.device_used() == "cuda:0"
    assert_same_trees(cpu, gpu)
    assert cpu.predict(X).tobytes() == gpu.predict(X).tobytes()


# -- bad input ----------------------------------------------------------------------
def test_bad_input_raises():
    X, y = _tie_free()
    with pytest.raises(ValueError, match="criterion"):
        RandomForestClassifier(n_estimators=2, criterion="absolute_error", device="cpu").fit(X, y > 14)
    yn = y.copy()
    yn[3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ExtraTreesRegressor(n_estimators=2, device="cpu", **MAE).fit(X, yn)
    with pytest.raises(ValueError, match="[Nn]egative"):
        RandomForestRegressor(n_estimators=2, device="cpu", **MAE).fit(X, y, sample_weight=-np.ones_like(y))
