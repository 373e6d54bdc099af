"""float64 predictions: every prediction of the boosters is the double
accumulation of the leaf values (base score first, trees in order) with the
link computed in double, returned as float64 with no rounding to float32
(scikit-learn's and CatBoost's dtype). Separating: on margins that need more
than float32's 24 bits the outputs differ from their float32 rounding, so a
float32 output path fails these tests."""

import numpy as np
import pytest

from twinlearn.ensemble import GradientBoosting, GradientBoostingClassifier, GradientBoostingRegressor, _predict
from twinlearn.testing import bits

from gb_helpers import higgs_like, numpy_raw


def _sum_leaves(m, X, n_trees=None):
    """The margins by the leaf indices (the prediction's branch rule on the
    host), summed in double in tree order from the base score."""
    leaves = _predict.leaf_indices(m, X, n_trees=n_trees)
    D = m.n_outputs_
    lo = np.concatenate([[0], np.cumsum((1 << m.tree_depth_.astype(np.int64)) * D)])
    acc = np.tile(m.base_score_, (len(X), 1)).astype(np.float64)
    for t in range(leaves.shape[1]):
        acc = acc + m.leaf_values_[lo[t]:lo[t + 1]].reshape(-1, D)[leaves[:, t]]
    return acc


def _link(m, acc, kind):
    mod, _ = m._tl_context("cpu")
    return mod.gbdt_link(m._loss_name, np.ascontiguousarray(acc), kind)


def _needs_more_than_float32(a):
    a = np.asarray(a, dtype=np.float64)
    return bits(a) != bits(a.astype(np.float32).astype(np.float64))


def _large_offset_regression(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    y = 1e6 + X[:, 0] * 1e-2 + np.sin(X[:, 1]) * 1e-3 + 1e-4 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("max_leaf_nodes", [None, 12], ids=["oblivious", "best-first"])
def test_regression_predictions_are_the_double_sum(max_leaf_nodes):
    X, y = _large_offset_regression()
    reg = GradientBoostingRegressor(n_estimators=30, max_depth=4, max_leaf_nodes=max_leaf_nodes,
                                    device="cpu").fit(X, y)
    pred = reg.predict(X)
    want = _sum_leaves(reg, X)[:, 0]
    assert pred.dtype == np.float64 and pred.shape == (len(X),)
    assert bits(pred) == bits(want)
    # float32 holds 1e6 to 0.0625: its rounding loses the fitted variations.
    assert _needs_more_than_float32(want)
    assert np.abs(pred - y).mean() < np.abs(pred.astype(np.float32) - y).mean()
    stages = list(reg.staged_predict(X))
    assert stages[-1].dtype == np.float64 and bits(stages[-1]) == bits(pred)
    assert bits(stages[9]) == bits(_sum_leaves(reg, X, 10)[:, 0])


@pytest.mark.parametrize("grow_policy", ["Depthwise", "Lossguide"])
def test_per_node_margins_equal_an_independent_walk(grow_policy):
    # numpy_raw walks the per-node layout itself (gb_helpers.tree_leaves).
    X, y = _large_offset_regression(seed=1)
    m = GradientBoosting(loss="RMSE", n_estimators=25, grow_policy=grow_policy, boost_from_average=True,
                         device="cpu").fit(X, y)
    raw = m.predict_raw(X)
    assert raw.dtype == np.float64 and bits(raw) == bits(numpy_raw(m, X)[:, 0])
    assert bits(m.predict(X)) == bits(raw) and _needs_more_than_float32(raw)
    sub = m.predict_raw(X, iteration_range=(3, 20))
    assert sub.dtype == np.float64


@pytest.mark.parametrize("n_classes", [2, 3])
def test_classifier_outputs_are_float64(n_classes):
    X, y = higgs_like(n=3000, d=6, seed=2)
    if n_classes == 3:
        y = y + (np.nan_to_num(X[:, 1]) > 0.7)
    clf = GradientBoostingClassifier(n_estimators=40, max_depth=4, learning_rate=0.2, device="cpu").fit(X, y)
    acc = _sum_leaves(clf, X)
    dec = clf.decision_function(X)
    proba = clf.predict_proba(X)
    assert dec.dtype == np.float64 and proba.dtype == np.float64
    assert bits(dec) == bits(acc[:, 0] if n_classes == 2 else acc)
    p = _link(clf, acc, "probability")
    want = np.column_stack([1 - p[:, 0], p[:, 0]]) if n_classes == 2 else p
    assert bits(proba) == bits(want)
    assert _needs_more_than_float32(dec) and _needs_more_than_float32(proba)
    assert np.abs(proba.sum(axis=1) - 1).max() < 1e-12
    stages_p = list(clf.staged_predict_proba(X))
    stages_d = list(clf.staged_decision_function(X))
    assert stages_p[-1].dtype == np.float64 and bits(stages_p[-1]) == bits(proba)
    assert stages_d[-1].dtype == np.float64 and bits(stages_d[-1]) == bits(dec)
    np.testing.assert_array_equal(clf.predict(X), clf.classes_[np.argmax(proba, axis=1)])


@pytest.mark.parametrize("loss", ["Poisson", "Logloss", "MultiClassOneVsAll"])
def test_links_are_computed_in_double(loss):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((2000, 4))
    if loss == "Poisson":
        y = rng.poisson(np.exp(2 + X[:, 0])).astype(float)
    elif loss == "Logloss":
        y = (X[:, 0] + 0.3 * rng.standard_normal(2000) > 0).astype(int)
    else:
        y = np.digitize(X[:, 0], [-0.5, 0.5])
    m = GradientBoosting(loss=loss, n_estimators=20, device="cpu").fit(X, y)
    acc = _sum_leaves(m, X)
    if loss == "Poisson":
        got = m.predict(X)
        want = _link(m, acc, "exponent")[:, 0]
    else:
        got = m.predict_proba(X)
        p = _link(m, acc, "probability")
        want = np.column_stack([1 - p[:, 0], p[:, 0]]) if loss == "Logloss" else p
    assert got.dtype == np.float64 and bits(got) == bits(want)
    assert _needs_more_than_float32(got)


@pytest.mark.gpu
@pytest.mark.parametrize("grow_policy", ["SymmetricTree", "Depthwise"])
def test_float64_outputs_cpu_and_gpu_give_identical_bits(grow_policy):
    X, y = _large_offset_regression(n=5000, seed=3)
    kw = dict(loss="RMSE", n_estimators=20, max_depth=5, grow_policy=grow_policy, boost_from_average=True,
              numeric_mode="identical")
    cpu = GradientBoosting(device="cpu", **kw).fit(X, y)
    gpu = GradientBoosting(device="cuda:0", **kw).fit(X, y)
    p = gpu.predict(X)
    assert p.dtype == np.float64 and bits(cpu.predict(X)) == bits(p) and _needs_more_than_float32(p)
    Xc, yc = higgs_like(n=4000, d=6, seed=4)
    yc = yc + (np.nan_to_num(Xc[:, 1]) > 0.7)
    kw = dict(loss="MultiClass", n_estimators=15, grow_policy=grow_policy, numeric_mode="identical")
    c = GradientBoosting(device="cpu", **kw).fit(Xc, yc)
    g = GradientBoosting(device="cuda:0", **kw).fit(Xc, yc)
    assert bits(c.predict_proba(Xc)) == bits(g.predict_proba(Xc))
    assert bits(c.decision_function(Xc)) == bits(g.decision_function(Xc))


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["torch", "cupy"])
def test_device_input_gets_device_float64_outputs(lib):
    from twinlearn.testing import host, to_device

    X, y = _large_offset_regression(n=3000, seed=6)
    reg = GradientBoostingRegressor(n_estimators=10, device="cuda").fit(X, y)
    Xd = to_device(lib, X)
    got = reg.predict(Xd)
    assert type(got) is type(Xd)
    assert host(got).dtype == np.float64 and bits(host(got)) == bits(reg.predict(X))
