"""Random forests and extra trees: quality against scikit-learn, the tree
rules (midpoint thresholds, random thresholds), counter-based draws keyed by
(seed, tree, node) (thread counts, warm start, devices), and refusals."""

import numpy as np
import pytest
import sklearn.ensemble as ske
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, make_classification, make_friedman1
from sklearn.model_selection import train_test_split

import twinlearn
from twinlearn.ensemble import ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier, RandomForestRegressor

CLASSIFIERS = [RandomForestClassifier, ExtraTreesClassifier]
REGRESSORS = [RandomForestRegressor, ExtraTreesRegressor]
ALL = CLASSIFIERS + REGRESSORS
ARRAYS = ("children_left", "children_right", "feature", "threshold", "value", "impurity", "n_node_samples",
          "weighted_n_node_samples")


def _trees(est):
    return [{k: getattr(e.tree_, k) for k in ARRAYS} for e in est.estimators_]


def assert_same_trees(a, b):
    ta, tb = _trees(a), _trees(b)
    assert len(ta) == len(tb)
    for i, (x, y) in enumerate(zip(ta, tb)):
        for k in ARRAYS:
            np.testing.assert_array_equal(x[k], y[k], err_msg=f"tree {i}: {k}")
            assert x[k].tobytes() == y[k].tobytes(), f"tree {i}: {k} bits"


def _data(cls, n=300, d=6, seed=0):
    if cls in CLASSIFIERS:
        return make_classification(n, d, n_informative=4, n_classes=3, random_state=seed)
    return make_friedman1(n, d, noise=0.3, random_state=seed)


# -- quality against scikit-learn ---------------------------------------------------
def _classification_sets():
    yield "iris", load_iris(return_X_y=True)
    yield "breast_cancer", load_breast_cancer(return_X_y=True)
    yield "digits", load_digits(return_X_y=True)
    yield "make_classification", make_classification(6000, 20, n_informative=10, random_state=0)


@pytest.mark.parametrize("name", ["RandomForestClassifier", "ExtraTreesClassifier"])
def test_accuracy_close_to_sklearn(name):
    for setname, (X, y) in _classification_sets():
        Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
        ours = getattr(twinlearn.ensemble, name)(n_estimators=50, random_state=0, device="cpu").fit(Xtr, ytr)
        # scikit-learn's own seed-to-seed spread is about a point: compare
        # with the mean of three of its seeds.
        ref = np.mean([getattr(ske, name)(n_estimators=50, random_state=s).fit(Xtr, ytr).score(Xte, yte)
                       for s in range(3)])
        assert ours.score(Xte, yte) >= ref - 0.02, setname


@pytest.mark.parametrize("name", ["RandomForestRegressor", "ExtraTreesRegressor"])
def test_r2_close_to_sklearn(name):
    X, y = make_friedman1(4000, 8, noise=0.5, random_state=0)  # california-shaped: 8 features
    Xtr, Xte, ytr, yte = train_test_split(X, y, random_state=0)
    ours = getattr(twinlearn.ensemble, name)(n_estimators=30, random_state=0, device="cpu").fit(Xtr, ytr)
    ref = getattr(ske, name)(n_estimators=30, random_state=0).fit(Xtr, ytr).score(Xte, yte)
    assert ours.score(Xte, yte) >= ref - 0.01


# -- identity: threads, warm start, run to run --------------------------------------
@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_same_trees_for_any_thread_count(cls, dtype):
    X, y = _data(cls)
    X = X.astype(dtype)
    fits = []
    for threads in (1, 2, 3, 8):
        with twinlearn.config_context(n_threads=threads):
            fits.append(cls(n_estimators=7, random_state=3, device="cpu").fit(X, y))
    for f in fits[1:]:
        assert_same_trees(fits[0], f)
        np.testing.assert_array_equal(fits[0].predict(X), f.predict(X))


@pytest.mark.parametrize("cls", ALL)
def test_warm_start_grows_the_trees_of_one_fit(cls):
    """Tree t's draws are keyed by its global index t, not by the order or
    the batch it is built in: 4 + 3 + 2 trees by warm start are the 9 trees
    of one fit (fails if the key were the index within a fit call)."""
    X, y = _data(cls)
    one = cls(n_estimators=9, random_state=5, device="cpu").fit(X, y)
    warm = cls(n_estimators=4, random_state=5, warm_start=True, device="cpu").fit(X, y)
    warm.set_params(n_estimators=7).fit(X, y)
    warm.set_params(n_estimators=9).fit(X, y)
    assert_same_trees(one, warm)
    # and the key does matter: the trees differ from one another
    t = _trees(one)
    assert not np.array_equal(t[0]["threshold"], t[1]["threshold"])


def test_warm_start_refusals():
    X, y = _data(RandomForestClassifier)
    est = RandomForestClassifier(n_estimators=4, warm_start=True, random_state=0, device="cpu").fit(X, y)
    with pytest.warns(UserWarning, match="without increasing"):
        est.fit(X, y)
    with pytest.raises(ValueError, match="must be larger or equal"):
        est.set_params(n_estimators=2).fit(X, y)
    with pytest.raises(ValueError, match="oob_score with warm_start"):
        est.set_params(n_estimators=6, oob_score=True).fit(X, y)
    assert len(est.estimators_) == 4


@pytest.mark.parametrize("cls", ALL)
def test_random_state_sets_the_forest(cls):
    X, y = _data(cls)
    a = cls(n_estimators=3, random_state=1, device="cpu").fit(X, y)
    b = cls(n_estimators=3, random_state=1, device="cpu").fit(X, y)
    c = cls(n_estimators=3, random_state=2, device="cpu").fit(X, y)
    assert_same_trees(a, b)
    assert any(not np.array_equal(x["threshold"], z["threshold"]) for x, z in zip(_trees(a), _trees(c)))


# -- the tree rules -------------------------------------------------------------------
def test_thresholds_are_midpoints_of_training_values():
    """Best splits put the threshold halfway between the two consecutive
    distinct values of the node's rows, as scikit-learn (a / 2 + b / 2)."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, 4))
    y = (X[:, 0] + X[:, 1] > 0).astype(int)
    est = RandomForestClassifier(n_estimators=3, bootstrap=False, random_state=0, device="cpu").fit(X, y)
    checked = 0
    for e in est.estimators_:
        tr, path = e.tree_, e.decision_path(X).tocsc()
        for k in np.nonzero(tr.children_left >= 0)[0]:
            x = X[path[:, k].nonzero()[0], tr.feature[k]]
            a, b = x[x <= tr.threshold[k]].max(), x[x > tr.threshold[k]].min()
            assert tr.threshold[k] == a / 2 + b / 2
            checked += 1
    assert checked > 10


def test_extra_trees_thresholds_are_drawn_between_min_and_max():
    rng = np.random.default_rng(0)
    X = rng.integers(0, 20, size=(200, 4)).astype(np.float64)
    y = (X[:, 0] + X[:, 1] > 19).astype(int)
    est = ExtraTreesClassifier(n_estimators=5, random_state=0, device="cpu").fit(X, y)
    thr = np.concatenate([e.tree_.threshold[e.tree_.children_left >= 0] for e in est.estimators_])
    assert np.mean(thr - np.floor(thr) == 0.5) < 0.2  # not midpoints
    assert thr.min() >= 0 and thr.max() < 19


def test_no_bootstrap_all_features_is_the_exact_greedy_tree():
    """Without bootstrap and with every feature tried, a tree fits the
    training set exactly when labels are a function of X."""
    X, y = load_iris(return_X_y=True)
    X, idx = np.unique(X, axis=0, return_index=True)
    y = y[idx]
    est = RandomForestClassifier(n_estimators=2, bootstrap=False, max_features=None, random_state=0,
                                 device="cpu").fit(X, y)
    for e in est.estimators_:
        assert e.tree_.n_node_samples[0] == X.shape[0]
    assert est.score(X, y) > 0.99


@pytest.mark.parametrize("cls", ALL)
def test_tree_objects_agree_with_the_forest(cls):
    X, y = _data(cls)
    est = cls(n_estimators=4, random_state=0, device="cpu").fit(X, y)
    leaves = est.apply(X)
    assert leaves.shape == (X.shape[0], 4)
    for t, e in enumerate(est.estimators_):
        np.testing.assert_array_equal(e.apply(X), leaves[:, t])
        tr = e.tree_
        assert tr.node_count == tr.children_left.shape[0] and tr.value.shape[:2] == (tr.node_count, 1)
        assert np.all(tr.children_left[tr.feature == -2] == -1)
    ind, ptr = est.decision_path(X)
    assert ind.shape == (X.shape[0], ptr[-1]) and ptr.shape == (5,)
    # the path ends at the leaf and starts at the root of each tree
    assert np.all(ind[np.arange(X.shape[0]), ptr[0] + leaves[:, 0]] == 1)
    assert np.all(ind[:, ptr[:-1]].toarray() == 1)
    if cls in CLASSIFIERS:
        mean = np.mean([e.predict_proba(X) for e in est.estimators_], axis=0)
        np.testing.assert_allclose(est.predict_proba(X), mean, rtol=1e-12)
        np.testing.assert_allclose(est.predict_proba(X).sum(axis=1), 1.0)
        with np.errstate(divide="ignore"):
            np.testing.assert_array_equal(est.predict_log_proba(X), np.log(est.predict_proba(X)))
    else:
        mean = np.mean([e.predict(X) for e in est.estimators_], axis=0)
        np.testing.assert_allclose(est.predict(X), mean, rtol=1e-12)


def test_feature_importances_find_the_informative_features():
    X, y = make_classification(1000, 8, n_informative=2, n_redundant=0, shuffle=False, random_state=0)
    est = RandomForestClassifier(n_estimators=20, random_state=0, device="cpu").fit(X, y)
    imp = est.feature_importances_
    assert imp.shape == (8,) and np.isclose(imp.sum(), 1.0)
    assert set(np.argsort(imp)[-2:]) == {0, 1}
    ref = ske.RandomForestClassifier(n_estimators=20, random_state=0).fit(X, y).feature_importances_
    np.testing.assert_allclose(imp, ref, atol=0.05)


def test_entropy_and_log_loss_are_one_criterion():
    X, y = _data(RandomForestClassifier)
    a = RandomForestClassifier(n_estimators=3, criterion="entropy", random_state=0, device="cpu").fit(X, y)
    b = RandomForestClassifier(n_estimators=3, criterion="log_loss", random_state=0, device="cpu").fit(X, y)
    g = RandomForestClassifier(n_estimators=3, criterion="gini", random_state=0, device="cpu").fit(X, y)
    assert_same_trees(a, b)
    root = a.estimators_[0].tree_
    p = root.value[0, 0]
    np.testing.assert_allclose(root.impurity[0], -np.sum(p[p > 0] * np.log2(p[p > 0])), rtol=1e-13)
    rg = g.estimators_[0].tree_
    np.testing.assert_allclose(rg.impurity[0], 1 - np.sum(rg.value[0, 0] ** 2), rtol=1e-13)


@pytest.mark.parametrize("cls", [RandomForestClassifier, RandomForestRegressor])
def test_oob_score_close_to_sklearn(cls):
    X, y = _data(cls, n=600)
    ours = cls(n_estimators=40, oob_score=True, random_state=0, device="cpu").fit(X, y)
    ref = getattr(ske, cls.__name__)(n_estimators=40, oob_score=True, random_state=0).fit(X, y)
    assert abs(ours.oob_score_ - ref.oob_score_) < 0.05
    attr = "oob_decision_function_" if cls is RandomForestClassifier else "oob_prediction_"
    assert getattr(ours, attr).shape == getattr(ref, attr).shape


def test_zero_weight_rows_are_dropped():
    """bootstrap=False: a row of weight 0 changes nothing (it never enters a
    node), weight 2 is a repeated row for the extra trees' draws too."""
    X, y = _data(ExtraTreesClassifier)
    w = np.ones(X.shape[0])
    w[::3] = 0
    a = ExtraTreesClassifier(n_estimators=3, random_state=0, device="cpu").fit(X, y, sample_weight=w)
    b = ExtraTreesClassifier(n_estimators=3, random_state=0, device="cpu").fit(X[w > 0], y[w > 0])
    for ta, tb in zip(_trees(a), _trees(b)):
        for k in ("children_left", "feature", "threshold", "value", "n_node_samples"):
            np.testing.assert_array_equal(ta[k], tb[k])


def test_weighted_bootstrap_draws_rows_by_weight():
    """scikit-learn >= 1.9: with bootstrap, sample_weight sets the draw
    probabilities and each tree is fitted on its draw counts (the root
    weighs n_samples_bootstrap whatever the weights)."""
    X, y = _data(RandomForestRegressor, n=400)
    w = np.where(np.arange(400) < 200, 9.0, 1.0)
    est = RandomForestRegressor(n_estimators=8, max_samples=300, random_state=0, device="cpu")
    est.fit(X, y, sample_weight=w)
    for e in est.estimators_:
        assert e.tree_.weighted_n_node_samples[0] == 300.0
    assert est._n_samples_bootstrap == 300 and est._n_samples == 400
    # the draws follow the weights: a weight-0 row is never in a tree
    w0 = w.copy()
    w0[:200] = 0.0
    est0 = RandomForestRegressor(n_estimators=4, random_state=0, device="cpu").fit(X, y, sample_weight=w0)
    for e in est0.estimators_:
        assert e.tree_.n_node_samples[0] <= 200


@pytest.mark.parametrize("class_weight", ["balanced", "balanced_subsample", {0: 1.0, 1: 3.0, 2: 1.0}])
def test_class_weight(class_weight):
    X, y = make_classification(600, 6, n_informative=4, n_classes=3, weights=[0.7, 0.2, 0.1], random_state=0)
    est = RandomForestClassifier(n_estimators=10, class_weight=class_weight, random_state=0, device="cpu")
    est.fit(X, y)
    root = est.estimators_[0].tree_
    if class_weight != {0: 1.0, 1: 3.0, 2: 1.0}:
        # balanced: the classes weigh about the same at every root
        np.testing.assert_allclose(root.value[0, 0], 1 / 3, atol=0.08 if class_weight == "balanced" else 1e-12)
    assert est.score(X, y) > 0.9


# -- refusals ---------------------------------------------------------------------------
@pytest.mark.parametrize("params, match", [
    (dict(ccp_alpha=0.1), "ccp_alpha"),
    (dict(monotonic_cst=[0] * 6), "monotonic_cst"),
    (dict(oob_score=True, bootstrap=False), "Out of bag estimation only available if bootstrap=True"),
])
def test_unsupported_parameters_raise(params, match):
    X, y = _data(RandomForestRegressor)
    with pytest.raises(ValueError, match=match):
        RandomForestRegressor(n_estimators=2, device="cpu", **params).fit(X, y)


def test_bad_input_raises():
    X, y = _data(RandomForestClassifier)
    Xn = X.copy()
    Xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        RandomForestClassifier(n_estimators=2, device="cpu").fit(Xn, y)
    with pytest.raises(ValueError, match="max_features must be <= n_features"):
        RandomForestClassifier(n_estimators=2, max_features=50, device="cpu").fit(X, y)
    est = RandomForestClassifier(n_estimators=2, device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :3])
    with pytest.raises(ValueError, match="criterion"):
        RandomForestClassifier(criterion="squared_error", device="cpu").fit(X, y)


# -- CPU against CUDA -------------------------------------------------------------------
@pytest.mark.gpu
@pytest.mark.parametrize("cls", ALL)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_same_trees_on_cpu_and_gpu(cls, dtype):
    X, y = _data(cls, n=500)
    X = X.astype(dtype)
    kw = dict(n_estimators=6, random_state=4, numeric_mode="identical")
    if cls in CLASSIFIERS:
        kw["class_weight"] = "balanced_subsample"
    cpu = cls(device="cpu", **kw).fit(X, y)
    gpu = cls(device="cuda", **kw).fit(X, y)
    assert gpu.device_used() == "cuda:0"
    assert_same_trees(cpu, gpu)
    np.testing.assert_array_equal(cpu.apply(X), gpu.apply(X))
    out = "predict_proba" if cls in CLASSIFIERS else "predict"
    assert getattr(cpu, out)(X).tobytes() == getattr(gpu, out)(X).tobytes()


@pytest.mark.gpu
def test_auto_builds_host_input_on_the_cpu():
    # The GPU builder (one tree per GPU thread) is not yet faster than the
    # CPU's: 'auto' builds NumPy input on the CPU, device input on the GPU.
    cupy = pytest.importorskip("cupy")
    X, y = _data(RandomForestClassifier, n=300)
    assert RandomForestClassifier(n_estimators=3, device="auto").fit(X, y).device_used() == "cpu"
    on_gpu = RandomForestClassifier(n_estimators=3, device="auto").fit(cupy.asarray(X), y)
    assert on_gpu.device_used() == "cuda:0"
    assert RandomForestClassifier(n_estimators=3, device="cuda").fit(X, y).device_used() == "cuda:0"
