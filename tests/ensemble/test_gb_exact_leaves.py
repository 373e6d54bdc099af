"""The pinball losses' exact leaves (MAE / absolute_error, Quantile / quantile):
each leaf set to the weighted quantile of its rows' residuals, times the
learning rate; and the leaf indices that predictions use (pred_leaf, apply,
iteration_range)."""

import numpy as np
import pytest
from sklearn.datasets import load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.model_selection import train_test_split

from twinlearn import GradientBoosting, GradientBoostingClassifier, GradientBoostingRegressor
from gb_helpers import assert_same_model, bits, higgs_like


def _diabetes():
    X, y = load_diabetes(return_X_y=True)
    return train_test_split(X, y, random_state=0)


@pytest.mark.parametrize("loss", ["absolute_error", "quantile"])
def test_pinball_losses_score_like_hist_gradient_boosting_on_diabetes(loss):
    # Gradient steps of at most learning_rate * max(alpha, 1 - alpha) per tree
    # barely move from the median in 100 trees (R^2 about 0.01); exact leaves
    # reach scikit-learn's score.
    Xtr, Xte, ytr, yte = _diabetes()
    kw = {"quantile": 0.5} if loss == "quantile" else {}
    ref = HistGradientBoostingRegressor(loss=loss, max_iter=100, learning_rate=0.1, early_stopping=False,
                                        random_state=0, **kw).fit(Xtr, ytr).score(Xte, yte)
    tkw = {"alpha": 0.5} if loss == "quantile" else {}
    for trees in ({}, {"max_leaf_nodes": 31, "min_samples_leaf": 20, "l2_regularization": 0.0}):
        ours = GradientBoostingRegressor(loss=loss, device="cpu", **trees, **tkw).fit(Xtr, ytr).score(Xte, yte)
        assert ours >= ref - 0.05, (trees, ours, ref)
    native = "MAE" if loss == "absolute_error" else "Quantile:alpha=0.5"
    assert GradientBoosting(loss=native, device="cpu").fit(Xtr, ytr).score(Xte, yte) >= ref - 0.05


def _lower_weighted_quantile(r, w, alpha):
    """The smallest r_i (rows of positive weight, stably sorted by value) whose
    running weight reaches alpha times the total, both summed in that order."""
    keep = w > 0
    r, w = r[keep], w[keep]
    if r.size == 0:
        return 0.0
    order = np.argsort(r, kind="stable")
    c = np.cumsum(w[order])  # sequential sums
    return r[order][np.argmax(c >= alpha * c[-1])]


@pytest.mark.parametrize("policy", [{}, {"grow_policy": "Depthwise"}, {"grow_policy": "Lossguide", "max_leaves": 6}])
@pytest.mark.parametrize("loss,alpha", [("MAE", 0.5), ("Quantile:alpha=0.8", 0.8)])
def test_each_leaf_is_the_weighted_quantile_of_its_residuals(policy, loss, alpha):
    rng = np.random.default_rng(5)
    X = rng.standard_normal((1500, 5))
    y = 3 * X[:, 0] + np.abs(X[:, 1]) * rng.standard_normal(1500)
    w = rng.uniform(0.2, 3.0, len(y))
    lr = 0.3
    m = GradientBoosting(loss=loss, n_estimators=3, learning_rate=lr, max_depth=3, l2_leaf_reg=5.0, device="cpu",
                         **policy).fit(X, y, sample_weight=w)
    leaves = m.predict(X, pred_leaf=True)
    starts = np.concatenate([[0], np.cumsum(1 << m.tree_depth_.astype(np.int64))])
    f = np.full(len(y), m.base_score_[0])
    for t in range(len(m.tree_depth_)):
        values = m.leaf_values_[starts[t]:starts[t + 1]]
        resid = y - f
        for j in range(len(values)):
            rows = leaves[:, t] == j
            assert values[j] == lr * _lower_weighted_quantile(resid[rows], w[rows], alpha), (t, j)
        f = f + values[leaves[:, t]]


def test_rows_of_zero_weight_do_not_enter_the_leaves():
    # Their gradients are 0 (the same trees) and the base score skips them:
    # their targets change nothing only if the leaves skip them too.
    rng = np.random.default_rng(6)
    X = rng.standard_normal((800, 3))
    y = X[:, 0] + rng.standard_normal(800)
    w = np.where(rng.random(800) < 0.3, 0.0, 1.0)
    y_far = np.where(w == 0, 1e6, y)
    for loss in ("MAE", "Quantile:alpha=0.7"):
        a = GradientBoosting(loss=loss, n_estimators=5, max_depth=3, device="cpu").fit(X, y, sample_weight=w)
        b = GradientBoosting(loss=loss, n_estimators=5, max_depth=3, device="cpu").fit(X, y_far, sample_weight=w)
        assert_same_model(a, b)


@pytest.mark.gpu
@pytest.mark.parametrize("kw", [{}, {"grow_policy": "Depthwise"}, {"grow_policy": "Lossguide", "max_leaves": 12},
                                {"bootstrap_type": "Bayesian", "bagging_temperature": 1.0},
                                {"bootstrap_type": "Bernoulli", "subsample": 0.6}], ids=str)
@pytest.mark.parametrize("loss", ["MAE", "Quantile:alpha=0.3"])
def test_exact_leaves_cpu_and_gpu_give_identical_bits(kw, loss):
    X, y = higgs_like(n=20000, d=8, seed=17)
    y = np.nan_to_num(X[:, 0]) * 3.0 + y * 10.0
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    Xe, ye = X[:3000], y[:3000]
    make = lambda dev: GradientBoosting(loss=loss, n_estimators=40, random_state=2, numeric_mode="identical",
                                        device=dev, **kw)
    ref = make("cpu").fit(X, y, sample_weight=w, eval_set=(Xe, ye), use_best_model=False)
    gpu = make("cuda").fit(X, y, sample_weight=w, eval_set=(Xe, ye), use_best_model=False)
    assert_same_model(ref, gpu)
    assert ref.evals_result_ == gpu.evals_result_


# ---------------------------------------------------------------------------
# pred_leaf, apply, iteration_range
# ---------------------------------------------------------------------------
def _sum_leaves(m, leaves, t0, t1):
    D = m.n_outputs_
    lo = np.concatenate([[0], np.cumsum((1 << m.tree_depth_.astype(np.int64)) * D)])
    acc = np.tile(m.base_score_, (leaves.shape[0], 1)).astype(np.float64)
    for t in range(t0, t1):
        acc = acc + m.leaf_values_[lo[t]:lo[t + 1]].reshape(-1, D)[leaves[:, t]]
    return acc


@pytest.mark.parametrize("kw", [{}, {"nan_mode": "Max"}, {"grow_policy": "Depthwise", "nan_mode": "Learned"},
                                {"grow_policy": "Lossguide", "max_leaves": 10}], ids=str)
@pytest.mark.parametrize("loss", ["Logloss", "MultiClass"])
def test_pred_leaf_indexes_the_values_predictions_add(kw, loss):
    X, y = higgs_like(n=3000, d=8, seed=3)
    if loss == "MultiClass":
        y = y + (np.nan_to_num(X[:, 1]) > 0.5)
    m = GradientBoosting(loss=loss, n_estimators=25, device="cpu", **kw).fit(X, y)
    leaves = m.predict(X, pred_leaf=True)
    assert leaves.dtype == np.int32 and leaves.shape == (len(X), 25)
    assert np.all(leaves >= 0) and np.all(leaves < (1 << m.tree_depth_.astype(np.int64))[None, :])
    raw = m.predict_raw(X).reshape(len(X), -1)
    assert bits(_sum_leaves(m, leaves, 0, 25)) == bits(raw)
    sub = m.predict_raw(X, iteration_range=(5, 20)).reshape(len(X), -1)
    assert bits(_sum_leaves(m, leaves, 5, 20)) == bits(sub)
    assert np.array_equal(m.predict(X, pred_leaf=True, iteration_range=(3, 7)), leaves[:, 3:7])
    assert bits(m.predict_raw(X, iteration_range=(0, 12))) == bits(m.predict_raw(X, n_trees=12))
    assert bits(m.predict_proba(X, iteration_range=(0, 0))) == bits(m.predict_proba(X))
    p = m.predict_proba(X, iteration_range=(5, 20))
    assert p.dtype == np.float64 and np.allclose(p.sum(axis=1), 1.0, atol=1e-12)


def test_iteration_range_regression_and_errors():
    X, y = load_diabetes(return_X_y=True)
    m = GradientBoosting(loss="RMSE", n_estimators=10, device="cpu").fit(X, y)
    leaves = m.predict(X, pred_leaf=True)
    assert bits(m.predict(X, iteration_range=(2, 10))) == bits(_sum_leaves(m, leaves, 2, 10)[:, 0])
    for bad in [(3, 3), (-1, 4), (0, 11), (5, 2), (1.0, 3), 4, (1, 2, 3)]:
        with pytest.raises(ValueError, match="iteration_range"):
            m.predict(X, iteration_range=bad)
    with pytest.raises(ValueError, match="n_trees or iteration_range"):
        m.predict(X, n_trees=3, iteration_range=(0, 3))


def test_sklearn_shaped_apply():
    X, y = higgs_like(n=2000, d=6, seed=4)
    clf = GradientBoostingClassifier(n_estimators=15, device="cpu").fit(X, y)
    native = GradientBoosting(loss="Logloss", n_estimators=15, learning_rate=0.1, l2_leaf_reg=1.0, border_count=254,
                              nan_mode="Min", device="cpu").fit(X, y)
    a = clf.apply(X)
    assert a.dtype == np.int32 and a.shape == (len(X), 15)
    assert bits(_sum_leaves(clf, a, 0, 15)[:, 0]) == bits(clf.decision_function(X))
    assert_same_model(clf, native)
    assert np.array_equal(a, native.predict(X, pred_leaf=True))
    reg = GradientBoostingRegressor(n_estimators=5, max_leaf_nodes=8, device="cpu").fit(X, y.astype(float))
    assert bits(_sum_leaves(reg, reg.apply(X), 0, 5)[:, 0]) == bits(reg.predict(X))
