"""Split constraints: min_child_weight, min_split_gain."""

import numpy as np
import pytest
from sklearn.datasets import make_friedman1

import twinlearn
from twinlearn import GradientBoosting
from gb_helpers import assert_same_model, bits, higgs_like


# ---------------------------------------------------------------------------
# Split constraints: min_child_weight, min_split_gain
# ---------------------------------------------------------------------------
def _leaf_counts(m, X):
    """Rows of X per leaf of each tree (from the model's splits)."""
    X = np.asarray(X, dtype=np.float64)
    counts, s = [], 0
    for d in m.tree_depth_:
        leaf = np.zeros(len(X), dtype=np.int64)
        for level in range(int(d)):
            v = X[:, m.split_feature_[s + level]]
            right = np.where(np.isnan(v), m._nan_mode == "Max", v > m.split_border_[s + level])
            leaf |= right.astype(np.int64) << level
        counts.append(np.bincount(leaf, minlength=1 << int(d)))
        s += int(d)
    return counts


def test_min_child_weight_bounds_every_non_empty_leaf():
    X, y = make_friedman1(n_samples=3000, noise=0.5, random_state=6)
    kw = dict(loss="RMSE", n_estimators=15, learning_rate=0.3, max_depth=6, device="cpu")
    free = GradientBoosting(**kw).fit(X, y)
    m = GradientBoosting(min_child_weight=100.0, **kw).fit(X, y)
    # RMSE without weights: a leaf's hessian sum is its row count
    small = lambda est: sum(int(np.sum((c > 0) & (c < 100))) for c in _leaf_counts(est, X))  # noqa: E731
    assert small(free) > 0  # the separating arm: without the constraint, small leaves exist
    assert small(m) == 0
    assert bits(m.leaf_values_) != bits(free.leaf_values_)
    stumps = GradientBoosting(min_child_weight=1e9, **kw).fit(X, y)
    assert list(stumps.tree_depth_) == [0] * 15 and stumps.n_estimators_ == 15
    assert np.allclose(stumps.predict(X), stumps.predict(X)[0])  # a constant: no tree could split


def test_min_split_gain_stops_trees_at_a_weak_level():
    X, y = higgs_like(n=3000, d=6, seed=51)
    kw = dict(n_estimators=25, learning_rate=0.3, max_depth=6, device="cpu")
    free = GradientBoosting(**kw).fit(X, y)
    msg = float(np.quantile(free.split_gain_, 0.2))
    assert np.any(free.split_gain_ <= msg)  # the separating arm
    m = GradientBoosting(min_split_gain=msg, **kw).fit(X, y)
    assert np.all(m.split_gain_ > msg)
    assert m.tree_depth_.min() < 6 and bits(m.leaf_values_) != bits(free.leaf_values_)
    assert bits(list(m.staged_predict_proba(X))[-1]) == bits(m.predict_proba(X))
    pos = GradientBoosting(min_split_gain=0.0, **kw).fit(X, y)
    assert np.all(pos.split_gain_ > 0)
    # None (the default) is no constraint
    assert_same_model(free, GradientBoosting(min_split_gain=None, min_child_weight=0.0, **kw).fit(X, y))


def test_split_constraints_bits_do_not_depend_on_thread_count():
    X, y = higgs_like(n=30000, d=6, seed=52)
    kw = dict(n_estimators=8, learning_rate=0.3, min_child_weight=30.0, min_split_gain=1.0, device="cpu")
    with twinlearn.config_context(n_threads=1):
        ref = GradientBoosting(**kw).fit(X, y)
    with twinlearn.config_context(n_threads=4):
        assert_same_model(ref, GradientBoosting(**kw).fit(X, y))


@pytest.mark.parametrize("kw,match", [
    (dict(min_child_weight=-1.0), "min_child_weight"),
    (dict(min_child_weight="big"), "min_child_weight"),
    (dict(min_split_gain=-0.5), "min_split_gain"),
    (dict(verbose=-1), "verbose"),
    (dict(verbose="yes"), "verbose"),
])
def test_bad_constraint_and_verbose_values(kw, match):
    X, y = higgs_like(n=200, d=4, seed=53)
    with pytest.raises(ValueError, match=match):
        GradientBoosting(n_estimators=2, device="cpu", **kw).fit(X, y)


@pytest.mark.gpu
@pytest.mark.parametrize("loss", ["Logloss", "MultiClass", "Quantile:alpha=0.3"])
def test_split_constraints_cpu_and_gpu_give_identical_bits(loss):
    X, y = higgs_like(n=20000, d=8, seed=54)
    if loss == "MultiClass":
        y = y + (np.nan_to_num(X[:, 1]) > 0.5)
    elif loss.startswith("Quantile"):
        y = np.nan_to_num(X[:, 0]) * 3.0 + y
    kw = dict(loss=loss, n_estimators=10, learning_rate=0.3)
    free = GradientBoosting(device="cpu", **kw).fit(X, y)
    # a threshold that stops some levels: the 30% quantile of the free fit's level scores
    kw.update(min_child_weight=25.0, min_split_gain=float(np.quantile(free.split_gain_, 0.3)))
    Xe, ye = X[:3000], y[:3000]
    ref = GradientBoosting(device="cpu", **kw).fit(X, y, eval_set=(Xe, ye), use_best_model=False)
    gpu = GradientBoosting(device="cuda:0", **kw).fit(X, y, eval_set=(Xe, ye), use_best_model=False)
    assert ref.tree_depth_.min() < 6
    assert_same_model(ref, gpu)
    assert ref.evals_result_ == gpu.evals_result_
    assert bits(gpu.predict_raw(Xe)) == bits(ref.predict_raw(Xe))
