"""Forests on multi-output y (2-D y): scikit-learn's multi-output trees node
for node on tie-free data, its attribute and prediction shapes, class
weights per output, out-of-bag shapes, identity across thread counts and
devices, and bad input."""

import numpy as np
import pytest
import sklearn.ensemble as ske
from sklearn.datasets import make_friedman1
from sklearn.utils import compute_sample_weight

import twinlearn
from twinlearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier, RandomForestRegressor

from test_forest import ALL, CLASSIFIERS, assert_same_trees
from test_forest_growth import assert_trees_match_sklearn

LIST_WEIGHTS = [{0: 1, 1: 2}, {0: 1, 1: 1, 2: 3}, {0: 2, 1: 1, 2: 1}]


def _regression(n=300, seed=0):
    # Three continuous outputs and min_samples_leaf=8: no tied candidates.
    X, y = make_friedman1(n, 5, noise=0.3, random_state=seed)
    X = X.astype(np.float32)  # scikit-learn's trees split float32 X
    rng = np.random.RandomState(seed)
    Y = np.c_[y, np.sin(3 * X[:, 1]) * 4 + rng.rand(n), X[:, 2] * 5 + rng.rand(n)]
    return X, Y


def _classification(n=300, seed=0):
    # Outputs of 2, 3 and 3 classes (labels of other dtypes in some tests).
    X, y = make_friedman1(n, 5, noise=0.3, random_state=seed)
    X = X.astype(np.float32)
    Y = np.c_[(y > 14).astype(int), (X[:, 0] + X[:, 3] > 1).astype(int) + (X[:, 1] > 0.7),
              np.digitize(X[:, 4], [0.3, 0.6])]
    return X, Y


def _data(cls):
    return _classification() if cls in CLASSIFIERS else _regression()


# -- scikit-learn's trees -----------------------------------------------------------
@pytest.mark.parametrize("criterion", ["squared_error", "poisson", "absolute_error"])
@pytest.mark.parametrize("max_leaf_nodes", [None, 12])
def test_regression_trees_are_sklearns(criterion, max_leaf_nodes):
    """Without bootstrap and with every feature: node for node scikit-learn's
    multi-output trees (impurity averaged over the outputs, values per
    output) within 1e-9 relative; predictions (n, n_outputs)."""
    X, Y = _regression()
    kw = dict(n_estimators=3, bootstrap=False, max_features=None, min_samples_leaf=8, random_state=0,
              criterion=criterion, max_leaf_nodes=max_leaf_nodes)
    ours = RandomForestRegressor(device="cpu", **kw).fit(X, Y)
    ref = ske.RandomForestRegressor(**kw).fit(X, Y)
    assert_trees_match_sklearn(ours, ref, rtol=1e-9)
    assert ours.n_outputs_ == 3
    assert ours.estimators_[0].tree_.value.shape[1:] == (3, 1)
    assert ours.predict(X).shape == (300, 3)
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=1e-9)
    np.testing.assert_allclose(ours.estimators_[1].predict(X), ref.estimators_[1].predict(X), rtol=1e-9)
    np.testing.assert_allclose(ours.feature_importances_, ref.feature_importances_, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("criterion", ["gini", "entropy"])
@pytest.mark.parametrize("class_weight", [None, "balanced", "list"])
def test_classification_trees_are_sklearns(criterion, class_weight):
    """Depth 3 (large nodes: no tied gini / entropy candidates on this data):
    node for node scikit-learn's, class fractions per output padded with
    zeros to the largest class count, probabilities and importances."""
    X, Y = _classification()
    cw = LIST_WEIGHTS if class_weight == "list" else class_weight
    kw = dict(n_estimators=3, bootstrap=False, max_features=None, min_samples_leaf=5, random_state=0,
              criterion=criterion, class_weight=cw, max_depth=3)
    ours = RandomForestClassifier(device="cpu", **kw).fit(X, Y)
    ref = ske.RandomForestClassifier(**kw).fit(X, Y)
    assert_trees_match_sklearn(ours, ref, rtol=1e-9)
    pa, pb = ours.predict_proba(X), ref.predict_proba(X)
    assert isinstance(pa, list) and len(pa) == 3
    for a, b in zip(pa, pb):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.feature_importances_, ref.feature_importances_, rtol=1e-9, atol=1e-12)


# -- attributes and shapes ----------------------------------------------------------
@pytest.mark.parametrize("cls", [RandomForestClassifier, ExtraTreesClassifier])
def test_classifier_attributes(cls):
    X, Y = _classification()
    labels = np.array(["a", "b", "c"])
    Yl = np.c_[np.array(["no", "yes"])[Y[:, 0]], labels[Y[:, 1]], labels[::-1][Y[:, 2]]]
    est = cls(n_estimators=5, random_state=0, device="cpu").fit(X, Yl)
    assert est.n_outputs_ == 3
    assert est.n_classes_ == [2, 3, 3]
    assert [list(c) for c in est.classes_] == [["no", "yes"], ["a", "b", "c"], ["a", "b", "c"]]
    proba = est.predict_proba(X)
    assert [p.shape for p in proba] == [(300, 2), (300, 3), (300, 3)]
    for p in proba:
        np.testing.assert_allclose(p.sum(axis=1), 1.0)
    logp = est.predict_log_proba(X)
    for p, lp in zip(proba, logp):
        with np.errstate(divide="ignore"):
            np.testing.assert_array_equal(lp, np.log(p))
    pred = est.predict(X)
    assert pred.shape == (300, 3) and pred.dtype == est.classes_[0].dtype
    for k in range(3):
        np.testing.assert_array_equal(pred[:, k], est.classes_[k][np.argmax(proba[k], axis=1)])
    tree = est.estimators_[0]
    assert tree.tree_.value.shape[1:] == (3, 3)
    assert [p.shape for p in tree.predict_proba(X)] == [(300, 2), (300, 3), (300, 3)]
    assert tree.predict(X).shape == (300, 3)
    assert est.feature_importances_.shape == (5,)
    assert est.apply(X).shape == (300, 5)


@pytest.mark.parametrize("cls", [RandomForestRegressor, ExtraTreesRegressor])
def test_regressor_attributes(cls):
    X, Y = _regression()
    est = cls(n_estimators=5, random_state=0, device="cpu").fit(X, Y)
    assert est.n_outputs_ == 3
    assert est.predict(X).shape == (300, 3)
    assert est.estimators_[0].predict(X).shape == (300, 3)
    assert est.score(X, Y) > 0.8


def test_column_y_is_one_output():
    X, Y = _regression()
    with pytest.warns(Warning, match="column-vector y"):
        a = RandomForestRegressor(n_estimators=3, random_state=0, device="cpu").fit(X, Y[:, :1])
    b = RandomForestRegressor(n_estimators=3, random_state=0, device="cpu").fit(X, Y[:, 0])
    assert a.n_outputs_ == 1 and a.predict(X).shape == (300,)
    assert_same_trees(a, b)


def test_one_output_of_several_matches_its_own_forest_on_shared_splits():
    """Two copies of one output: the same trees as that output alone (the
    averaged impurity and the summed proxy rank splits the same way)."""
    X, Y = _regression()
    kw = dict(n_estimators=3, random_state=0, device="cpu")
    one = RandomForestRegressor(**kw).fit(X, Y[:, 0])
    two = RandomForestRegressor(**kw).fit(X, np.c_[Y[:, 0], Y[:, 0]])
    for a, b in zip(one.estimators_, two.estimators_):
        np.testing.assert_array_equal(a.tree_.feature, b.tree_.feature)
        np.testing.assert_array_equal(a.tree_.threshold, b.tree_.threshold)
        np.testing.assert_allclose(b.tree_.value[:, 0, 0], a.tree_.value[:, 0, 0], rtol=1e-12)
        np.testing.assert_allclose(b.tree_.value[:, 1, 0], a.tree_.value[:, 0, 0], rtol=1e-12)


# -- class weights and out-of-bag ---------------------------------------------------
def test_balanced_subsample_weights_are_the_product_over_outputs():
    """Each tree's root weight is sum over rows of count x the product over
    outputs of n / (classes present x draws of the row's class), computed
    here by scikit-learn's compute_sample_weight on the tree's draws."""
    X, Y = _classification()
    est = RandomForestClassifier(n_estimators=4, class_weight="balanced_subsample", random_state=1, device="cpu")
    est.fit(X, Y)
    mod, ctx = est._tl_context("cpu", X)
    p = mod.ForestParams()
    p.criterion, p.n_trees, p.max_features, p.bootstrap = "gini", 4, 2, True
    p.n_samples_bootstrap, p.balanced_subsample, p.seed, p.keep_in_bag = 300, True, est._tl_seed, True
    fit = mod.forest_fit(ctx, X, np.ascontiguousarray(Y, dtype=np.int32), None, None, [2, 3, 3], p)
    in_bag = np.asarray(fit.in_bag)
    for t, e in enumerate(est.estimators_):
        draws = np.repeat(np.arange(300), in_bag[t])
        w = compute_sample_weight("balanced", Y, indices=draws)
        np.testing.assert_allclose(e.tree_.weighted_n_node_samples[0], np.sum(in_bag[t] * w), rtol=1e-12)


def test_oob_shapes_and_scores_close_to_sklearn():
    X, Y = _classification(n=400)
    Yb = Y[:, :1].repeat(2, axis=1)
    Yb[:, 1] = Y[:, 1] > 0  # two binary outputs: accuracy_score takes them
    kw = dict(n_estimators=40, oob_score=True, random_state=0)
    ours = RandomForestClassifier(device="cpu", **kw).fit(X, Yb)
    ref = ske.RandomForestClassifier(**kw).fit(X, Yb)
    assert ours.oob_decision_function_.shape == ref.oob_decision_function_.shape == (400, 2, 2)
    assert abs(ours.oob_score_ - ref.oob_score_) < 0.06
    Xr, Yr = _regression(n=400)
    ours = RandomForestRegressor(device="cpu", **kw).fit(Xr, Yr)
    ref = ske.RandomForestRegressor(**kw).fit(Xr, Yr)
    assert ours.oob_prediction_.shape == ref.oob_prediction_.shape == (400, 3)
    assert abs(ours.oob_score_ - ref.oob_score_) < 0.05


# -- identity -----------------------------------------------------------------------
CASES = [(c, {}) for c in ALL] + [(RandomForestRegressor, dict(criterion="absolute_error")),
                                  (ExtraTreesRegressor, dict(criterion="poisson", max_leaf_nodes=15)),
                                  (RandomForestClassifier, dict(class_weight="balanced_subsample")),
                                  (ExtraTreesClassifier, dict(criterion="entropy", class_weight=LIST_WEIGHTS))]


@pytest.mark.parametrize("cls, kw", CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_same_trees_for_any_thread_count(cls, kw, dtype):
    X, Y = _data(cls)
    X = X.astype(dtype)
    fits = []
    for threads in (1, 2, 5):
        with twinlearn.config_context(n_threads=threads):
            fits.append(cls(n_estimators=6, random_state=3, device="cpu", **kw).fit(X, Y))
    for f in fits[1:]:
        assert_same_trees(fits[0], f)
        assert fits[0].predict(X).tobytes() == f.predict(X).tobytes()


@pytest.mark.parametrize("cls", ALL)
def test_warm_start_grows_the_trees_of_one_fit(cls):
    X, Y = _data(cls)
    one = cls(n_estimators=6, random_state=5, device="cpu").fit(X, Y)
    warm = cls(n_estimators=3, random_state=5, warm_start=True, device="cpu").fit(X, Y)
    warm.set_params(n_estimators=6).fit(X, Y)
    assert_same_trees(one, warm)


@pytest.mark.gpu
@pytest.mark.parametrize("cls, kw", CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_same_trees_on_cpu_and_gpu(cls, kw, dtype):
    X, Y = _data(cls)
    X = X.astype(dtype)
    args = dict(n_estimators=6, random_state=4, numeric_mode="identical", **kw)
    cpu = cls(device="cpu", **args).fit(X, Y)
    gpu = cls(device="cuda", **args).fit(X, Y)
    assert gpu.device_used() == "cuda:0"
    assert_same_trees(cpu, gpu)
    if cls in CLASSIFIERS:
        for a, b in zip(cpu.predict_proba(X), gpu.predict_proba(X)):
            assert a.tobytes() == b.tobytes()
    else:
        assert cpu.predict(X).tobytes() == gpu.predict(X).tobytes()


# -- bad input ----------------------------------------------------------------------
def test_bad_input_raises():
    X, Y = _classification()
    with pytest.raises(ValueError, match="class_weight"):
        RandomForestClassifier(n_estimators=2, class_weight=LIST_WEIGHTS[:2], device="cpu").fit(X, Y)
    with pytest.raises(ValueError, match="multi-output"):
        RandomForestClassifier(n_estimators=2, class_weight={0: 1, 1: 2}, device="cpu").fit(X, Y)
    est = RandomForestClassifier(n_estimators=2, warm_start=True, device="cpu").fit(X, Y)
    with pytest.raises(ValueError, match="outputs"):
        est.set_params(n_estimators=4).fit(X, Y[:, :2])
    Xr, Yr = _regression()
    Yn = Yr.copy()
    Yn[5, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RandomForestRegressor(n_estimators=2, device="cpu").fit(Xr, Yn)
    Yr[7, 1] = -1.0
    with pytest.raises(ValueError, match="negative"):
        RandomForestRegressor(n_estimators=2, criterion="poisson", device="cpu").fit(Xr, Yr)
    with pytest.raises(ValueError, match="y"):
        RandomForestRegressor(n_estimators=2, device="cpu").fit(Xr, np.zeros((300, 0)))
