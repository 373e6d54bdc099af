"""Forests grown best first (max_leaf_nodes) and the Poisson criterion:
the same trees as scikit-learn on tie-free data, quality within a stated
margin, identity across thread counts and devices, and bad input."""

import numpy as np
import pytest
import sklearn.ensemble as ske
from sklearn.datasets import make_classification, make_friedman1
from sklearn.metrics import mean_poisson_deviance
from sklearn.model_selection import train_test_split

import twinlearn
from twinlearn.ensemble import ExtraTreesRegressor, RandomForestClassifier, RandomForestRegressor

from test_forest import ALL, CLASSIFIERS, REGRESSORS, assert_same_trees

STRUCTURE = ("children_left", "children_right", "feature", "n_node_samples")
FLOATS = ("threshold", "impurity", "weighted_n_node_samples", "value")


def _poisson_data(n=400, d=5, seed=0):
    rng = np.random.RandomState(seed)
    X = rng.rand(n, d).astype(np.float32)  # scikit-learn's trees split float32 X
    y = rng.poisson(np.exp(1.5 * X[:, 0] + X[:, 1] - 0.5 * X[:, 2])).astype(np.float64)
    return X, y


def _tie_free_regression(seed=0):
    # Continuous targets and min_samples_leaf=3: no two candidate splits
    # score the same, so the trees do not depend on feature order.
    X, y = make_friedman1(300, 5, noise=0.3, random_state=seed)
    return X.astype(np.float32), y  # scikit-learn's trees split float32 X


def _data(cls, poisson=False):
    if cls in CLASSIFIERS:
        return make_classification(300, 6, n_informative=4, n_classes=3, random_state=0)
    return _poisson_data() if poisson else make_friedman1(300, 6, noise=0.3, random_state=0)


def assert_trees_match_sklearn(ours, ref, rtol):
    assert len(ours.estimators_) == len(ref.estimators_)
    for i, (a, b) in enumerate(zip(ours.estimators_, ref.estimators_)):
        for k in STRUCTURE:
            np.testing.assert_array_equal(getattr(a.tree_, k), getattr(b.tree_, k), err_msg=f"tree {i}: {k}")
        for k in FLOATS:
            np.testing.assert_allclose(getattr(a.tree_, k), getattr(b.tree_, k), rtol=rtol, atol=1e-12,
                                       err_msg=f"tree {i}: {k}")


# -- best-first growth --------------------------------------------------------------
@pytest.mark.parametrize("criterion", ["squared_error", "poisson"])
@pytest.mark.parametrize("max_leaf_nodes", [2, 7, 30])
def test_best_first_trees_are_sklearns(criterion, max_leaf_nodes):
    """Without bootstrap and with every feature, the tree is a function of
    the data: node for node scikit-learn's best-first tree (the order the
    nodes are created in included), values within 1e-9 relative."""
    X, y = _poisson_data() if criterion == "poisson" else _tie_free_regression()
    kw = dict(n_estimators=2, bootstrap=False, max_features=None, min_samples_leaf=3, criterion=criterion,
              max_leaf_nodes=max_leaf_nodes, random_state=0)
    ours = RandomForestRegressor(device="cpu", **kw).fit(X, y)
    ref = ske.RandomForestRegressor(**kw).fit(X, y)
    assert_trees_match_sklearn(ours, ref, rtol=1e-9)
    for e in ours.estimators_:
        assert e.get_n_leaves() == max_leaf_nodes
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-9)


def test_best_first_classifier_trees_are_sklearns():
    # Two well separated informative features: no tied gini proxies above
    # the leaves that max_leaf_nodes keeps.
    rng = np.random.RandomState(1)
    X = rng.rand(400, 4).astype(np.float32)
    y = (X[:, 0] + 0.6 * X[:, 1] > 0.8).astype(int) + (X[:, 1] > 0.75)
    kw = dict(n_estimators=2, bootstrap=False, max_features=None, min_samples_leaf=5, max_leaf_nodes=6,
              random_state=0)
    ours = RandomForestClassifier(device="cpu", **kw).fit(X, y)
    ref = ske.RandomForestClassifier(**kw).fit(X, y)
    assert_trees_match_sklearn(ours, ref, rtol=1e-9)


@pytest.mark.parametrize("cls", ALL)
def test_max_leaf_nodes_caps_the_leaves_and_keeps_quality(cls):
    X, y = _data(cls)
    Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
    ours = cls(n_estimators=30, max_leaf_nodes=16, random_state=0, device="cpu").fit(Xtr, ytr)
    for e in ours.estimators_:
        assert 2 <= e.get_n_leaves() <= 16
    ref = np.mean([getattr(ske, cls.__name__)(n_estimators=30, max_leaf_nodes=16, random_state=s)
                   .fit(Xtr, ytr).score(Xte, yte) for s in range(3)])
    # scikit-learn's seed-to-seed spread on 75 test rows is a few points.
    assert ours.score(Xte, yte) >= ref - 0.05


def test_max_leaf_nodes_splits_the_best_leaf_first():
    """Growing one more leaf splits, among the current leaves, the one of
    largest weighted impurity decrease: the tree with k + 1 leaves contains
    the tree with k leaves (fails for a depth-first or breadth-first order
    cut at k leaves)."""
    X, y = _tie_free_regression(seed=3)
    kw = dict(n_estimators=1, bootstrap=False, max_features=None, min_samples_leaf=3, random_state=0,
              device="cpu")
    prev = None
    for k in range(2, 12):
        t = RandomForestRegressor(max_leaf_nodes=k, **kw).fit(X, y).estimators_[0].tree_
        if prev is not None:
            # every split of the smaller tree is a split of the larger one
            split = {(f, round(th, 12)) for f, th in zip(t.feature, t.threshold) if f >= 0}
            for f, th in zip(prev.feature, prev.threshold):
                if f >= 0:
                    assert (f, round(th, 12)) in split
            assert (t.feature >= 0).sum() == (prev.feature >= 0).sum() + 1
        prev = t


# -- Poisson ------------------------------------------------------------------------
@pytest.mark.parametrize("cls", REGRESSORS)
def test_poisson_deviance_close_to_sklearn(cls):
    X, y = _poisson_data(n=2000, seed=1)
    Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
    kw = dict(n_estimators=40, criterion="poisson", min_samples_leaf=5)
    ours = cls(random_state=0, device="cpu", **kw).fit(Xtr, ytr)
    assert (ours.predict(Xte) > 0).all()
    ref = np.mean([mean_poisson_deviance(yte, getattr(ske, cls.__name__)(random_state=s, **kw).fit(Xtr, ytr)
                                         .predict(Xte)) for s in range(3)])
    # within 5% of scikit-learn's mean deviance over three seeds
    assert mean_poisson_deviance(yte, ours.predict(Xte)) <= 1.05 * ref


def test_poisson_depth_first_trees_are_sklearns():
    """Depth first with every feature: node for node scikit-learn's tree,
    on continuous non-negative targets (with zeros) where scikit-learn's
    own trees do not depend on its feature order (checked: three seeds)."""
    X, y = _poisson_data()
    y = np.where(y > 0, y + np.random.RandomState(2).rand(y.size), 0.0)
    kw = dict(n_estimators=2, bootstrap=False, max_features=None, min_samples_leaf=4, max_depth=3,
              criterion="poisson")
    ours = RandomForestRegressor(device="cpu", random_state=0, **kw).fit(X, y)
    refs = [ske.RandomForestRegressor(random_state=s, **kw).fit(X, y) for s in range(3)]
    for ref in refs:
        assert_trees_match_sklearn(ours, ref, rtol=1e-9)
    np.testing.assert_allclose(ours.predict(X), refs[0].predict(X), rtol=1e-9)


def test_poisson_bad_targets_raise():
    X, y = _poisson_data(n=50)
    yn = y.copy()
    yn[3] = -1.0
    with pytest.raises(ValueError, match="negative which is not allowed for Poisson"):
        RandomForestRegressor(n_estimators=2, criterion="poisson", device="cpu").fit(X, yn)
    with pytest.raises(ValueError, match="Sum of y is not strictly positive"):
        ExtraTreesRegressor(n_estimators=2, criterion="poisson", device="cpu").fit(X, np.zeros_like(y))


def test_friedman_mse_is_squared_error_with_a_warning():
    X, y = _tie_free_regression()
    with pytest.warns(FutureWarning, match="friedman_mse"):
        est = RandomForestRegressor(n_estimators=3, criterion="friedman_mse", random_state=0, device="cpu")
    assert est.criterion == "squared_error"
    ref = RandomForestRegressor(n_estimators=3, random_state=0, device="cpu")
    assert_same_trees(est.fit(X, y), ref.fit(X, y))


def test_max_leaf_nodes_bad_values_raise():
    X, y = _tie_free_regression()
    for bad in (1, 0, 2.5):
        with pytest.raises(ValueError, match="max_leaf_nodes"):
            RandomForestRegressor(n_estimators=2, max_leaf_nodes=bad, device="cpu").fit(X, y)


# -- identity -----------------------------------------------------------------------
CASES = [(c, dict(max_leaf_nodes=9)) for c in ALL] + [(c, dict(criterion="poisson")) for c in REGRESSORS] + \
    [(c, dict(criterion="poisson", max_leaf_nodes=12)) for c in REGRESSORS]


@pytest.mark.parametrize("cls, kw", CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_same_trees_for_any_thread_count(cls, kw, dtype):
    X, y = _data(cls, poisson=kw.get("criterion") == "poisson")
    X = X.astype(dtype)
    fits = []
    for threads in (1, 2, 5):
        with twinlearn.config_context(n_threads=threads):
            fits.append(cls(n_estimators=7, random_state=3, device="cpu", **kw).fit(X, y))
    for f in fits[1:]:
        assert_same_trees(fits[0], f)
        assert fits[0].predict(X).tobytes() == f.predict(X).tobytes()


@pytest.mark.gpu
@pytest.mark.parametrize("cls, kw", CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_same_trees_on_cpu_and_gpu(cls, kw, dtype):
    X, y = _data(cls, poisson=kw.get("criterion") == "poisson")
    X = X.astype(dtype)
    args = dict(n_estimators=6, random_state=4, numeric_mode="identical", **kw)
    cpu = cls(device="cpu", **args).fit(X, y)
    gpu = cls(device="cuda", **args).fit(X, y)
    assert gpu.device_used() == "cuda:0"
    assert_same_trees(cpu, gpu)
    out = "predict_proba" if cls in CLASSIFIERS else "predict"
    assert getattr(cpu, out)(X).tobytes() == getattr(gpu, out)(X).tobytes()
