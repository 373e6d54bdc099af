"""GradientBoosting(grow_policy='Lossguide'): best-first trees within max_depth
and max_leaves, checked against an independent best-first walk of the
Depthwise tree grown from the same gradients; leaf values from the rows that
reach each leaf; the training predictions of the fit against the model's;
layout, save/load, parameters, determinism, and prediction on a GPU."""

import heapq

import numpy as np
import pytest

from twinlearn import GradientBoosting, _backend, _native
from gb_helpers import (assert_round_trips, assert_same_bits_across_thread_counts, assert_same_model, bits,
                        check_booster_estimator, higgs_like, numpy_raw, tree_leaves, trees)


def lossguide(**kw):
    kw.setdefault("n_estimators", 10)
    kw.setdefault("learning_rate", 0.3)
    kw.setdefault("device", "cpu")
    return GradientBoosting(grow_policy="Lossguide", **kw)


def best_first(feat, gain, depth, max_leaves):
    """The slots best-first growth splits, from a grown per-node tree's best
    splits (feature -1: none): the open leaf of largest gain first, the lowest
    slot on ties, until max_leaves leaves."""
    heap, keep, leaves = [], set(), 1
    if depth > 0 and feat[0] >= 0:
        heapq.heappush(heap, (-gain[0], 0))
    while heap and leaves < max_leaves:
        _, s = heapq.heappop(heap)
        keep.add(s)
        leaves += 1
        level = (s + 1).bit_length() - 1
        p = s - ((1 << level) - 1)
        if level + 1 < depth:
            base = (1 << (level + 1)) - 1
            for c in (base + p, base + p + (1 << level)):
                if feat[c] >= 0:
                    heapq.heappush(heap, (-gain[c], c))
    return keep


def regression(n=3000, d=6, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(np.float32)
    y = np.where(X[:, 0] > 0, 2 * X[:, 1], np.sin(3 * X[:, 2])) + X[:, 3] * X[:, 4] + 0.1 * rng.standard_normal(n)
    return X, y


@pytest.mark.parametrize("max_leaves", [2, 3, 5, 9])
def test_first_tree_is_the_best_first_part_of_the_depthwise_tree(max_leaves):
    X, y = regression()
    kw = dict(loss="RMSE", n_estimators=1, max_depth=5, learning_rate=0.5, boost_from_average=False, device="cpu")
    dw = GradientBoosting(grow_policy="Depthwise", **kw).fit(X, y)
    lg = GradientBoosting(grow_policy="Lossguide", max_leaves=max_leaves, **kw).fit(X, y)
    (d_dw, ss_dw, _), = trees(dw)
    (d_lg, ss_lg, ls_lg), = trees(lg)
    want = best_first(dw.split_feature_[ss_dw], dw.split_gain_[ss_dw], d_dw, max_leaves)
    feat = lg.split_feature_[ss_lg]
    got = {s for s in range(len(feat)) if feat[s] >= 0}
    assert got == want and len(got) == max_leaves - 1
    for s in got:  # the same splits as the Depthwise tree's nodes
        for attr in ("split_feature_", "split_bin_", "split_gain_"):
            assert getattr(lg, attr)[ss_lg][s] == getattr(dw, attr)[ss_dw][s], attr
    # Leaf values: the Newton step of the rows each leaf receives (RMSE from 0:
    # gradient -y, hessian 1), up to the fixed-point rounding of the gradients.
    leaf = tree_leaves(lg, d_lg, ss_lg, X)
    values = lg.leaf_values_[ls_lg]
    assert len(np.unique(leaf)) == max_leaves
    for j in np.unique(leaf):
        rows = leaf == j
        want_value = y[rows].sum() / (rows.sum() + lg.l2_leaf_reg) * lg.learning_rate
        np.testing.assert_allclose(values[j], want_value, rtol=1e-6, atol=1e-9)


def test_every_tree_has_at_most_max_leaves_leaves():
    X, y = higgs_like(n=5000, d=8, seed=3)
    m = lossguide(n_estimators=25, max_depth=6, max_leaves=7).fit(X, y)
    counts = [int((m.split_feature_[ss] >= 0).sum()) + 1 for _, ss, _ in trees(m)]
    assert max(counts) <= 7 and counts.count(7) >= 20
    assert m.grow_policy_ == "Lossguide" and m.max_leaves == 7
    default = lossguide(n_estimators=5, max_depth=6).fit(X, y)
    assert max(int((default.split_feature_[ss] >= 0).sum()) + 1 for _, ss, _ in trees(default)) == 31


@pytest.mark.parametrize("loss", ["Logloss", "MultiClass", "RMSE"])
def test_without_a_binding_leaf_limit_lossguide_is_depthwise(loss):
    X, y = higgs_like(n=3000, d=6, seed=4)
    if loss == "MultiClass":
        y = (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)
    if loss == "RMSE":
        y = np.nan_to_num(X[:, 0]) * 2.0 + (X[:, 2] > 0)
    kw = dict(loss=loss, n_estimators=6, max_depth=4, learning_rate=0.3, device="cpu")
    dw = GradientBoosting(grow_policy="Depthwise", **kw).fit(X, y)
    lg = GradientBoosting(grow_policy="Lossguide", max_leaves=16, **kw).fit(X, y)
    assert_same_model(dw, lg)
    assert dw.grow_policy_ == "Depthwise" and lg.grow_policy_ == "Lossguide"


def test_training_predictions_of_the_fit_are_the_models():
    # The fit moves each row to its leaf in the cut tree; the eval set (here
    # the training rows again) walks the cut splits. Same approximations, so
    # the same loss every round.
    X, y = regression(n=2000)
    est = lossguide(loss="RMSE", n_estimators=8, max_depth=5, max_leaves=6)
    params = est._core_params()
    params.update(loss="RMSE", loss_param=0.0, n_classes=2, early_stopping_rounds=0, eval_metric="Loss",
                  boost_from_average=True)
    core = _backend.core()
    ctx = core.Context("cpu", 1, "identical")
    yd = y.astype(np.float64)
    fit = core.gbdt_fit(ctx, X, yd, None, _native.params(core.GbdtParams, **params), X, yd, None, True)
    assert len(fit.train_loss) == 8
    assert bits(np.asarray(fit.train_loss)) == bits(np.asarray(fit.eval_loss))


@pytest.mark.parametrize("loss,nan_mode", [("Logloss", "Min"), ("Logloss", "Max"), ("MultiClass", "Min")])
def test_prediction_is_a_walk_of_the_layout(loss, nan_mode):
    X, y = higgs_like(n=3000, d=6, seed=5)
    if loss == "MultiClass":
        y = (np.nan_to_num(X[:, 0]) > 0).astype(int) + (np.nan_to_num(X[:, 1]) > 0.5)
    m = lossguide(loss=loss, nan_mode=nan_mode, max_depth=5, max_leaves=9).fit(X, y)
    assert bits(m.predict_raw(X).reshape(len(X), -1)) == bits(numpy_raw(m, X))


def test_save_load_and_pickle(tmp_path):
    X, y = higgs_like(n=2000, d=5, seed=6)
    m = lossguide(max_depth=5, max_leaves=5).fit(X, y)
    assert assert_round_trips(m, X, tmp_path / "lg.json").grow_policy_ == "Lossguide"


def test_fits_are_the_same_bits_across_thread_counts():
    X, y = higgs_like(n=4000, d=8, seed=7)
    assert_same_bits_across_thread_counts(lambda: lossguide(max_depth=6, max_leaves=11), X, y)


def test_check_estimator():
    est = lossguide(n_estimators=10, max_leaves=4)
    check_booster_estimator(est)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["identical", "fast"])
@pytest.mark.parametrize("loss,max_leaves", [("Logloss", 13), ("MultiClass", 5), ("RMSE", 31)])
def test_cpu_and_gpu_give_identical_bits(mode, loss, max_leaves):
    X, y = higgs_like(n=20000, d=8, seed=8)
    if loss == "MultiClass":
        y = (np.nan_to_num(X[:, 0]) > 0).astype(int) + (np.nan_to_num(X[:, 1]) > 0.5)
    if loss == "RMSE":
        y = np.nan_to_num(X[:, 0]) * 2.0 + (np.nan_to_num(X[:, 2]) > 0)
    kw = dict(loss=loss, n_estimators=12, max_depth=6, max_leaves=max_leaves, numeric_mode=mode)
    Xe, ye = X[:3000], y[:3000]
    cpu = lossguide(**kw).fit(X, y, eval_set=(Xe, ye))
    gpu = lossguide(device="cuda:0", **kw).fit(X, y, eval_set=(Xe, ye))
    assert gpu.numeric_mode_used() == "identical" and gpu.grow_policy_ == "Lossguide"
    assert_same_model(cpu, gpu)
    assert bits(np.asarray(cpu.evals_result_["validation"][loss])) == bits(
        np.asarray(gpu.evals_result_["validation"][loss]))
    assert bits(gpu.predict_raw(X)) == bits(cpu.predict_raw(X))


@pytest.mark.parametrize("kw", [{"max_leaf_nodes": 9}, {"min_samples_leaf": 40}, {}])
def test_scikit_learn_shaped_leaf_parameters(kw, tmp_path):
    """max_leaf_nodes / min_samples_leaf on the scikit-learn-shaped estimators:
    best-first per-node trees with a learned NaN side (GradientBoosting's
    Lossguide and 'Learned'); without them, oblivious trees."""
    from twinlearn import GradientBoostingClassifier

    X, y = higgs_like(n=4000, d=6, seed=9)
    m = GradientBoostingClassifier(n_estimators=8, max_depth=5, device="cpu", **kw).fit(X, y)
    if not kw:
        assert m.grow_policy_ == "SymmetricTree" and m.split_nan_right_.size == 0
        return
    assert m.grow_policy_ == "Lossguide" and m._nan_mode == "Learned"
    ref = lossguide(loss="Logloss", n_estimators=8, max_depth=5, learning_rate=0.1, l2_leaf_reg=1.0,
                    border_count=254, nan_mode="Learned", max_leaves=kw.get("max_leaf_nodes", 32),
                    min_data_in_leaf=kw.get("min_samples_leaf", 1)).fit(X, y)
    assert_same_model(m, ref)
    assert bits(m.predict_proba(X)) == bits(ref.predict_proba(X))
    back = assert_round_trips(m, X, tmp_path / "m.json")
    assert back.max_leaf_nodes == kw.get("max_leaf_nodes") and back.grow_policy_ == "Lossguide"
