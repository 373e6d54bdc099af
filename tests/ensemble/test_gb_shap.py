"""SHAP values of the boosters (exact TreeSHAP, tl::gbdt_shap_values):
checked against a brute-force Shapley computation of the same game (the
conditional expectation of each tree, branches weighed by the reference
covers), exponential in the number of features, for every grow policy, NaN
routes, categorical inputs and several outputs; and the local accuracy
(values plus expected value sum to the raw margin)."""

import itertools
import math

import numpy as np
import pytest
import twinlearn
from gb_helpers import higgs_like
from twinlearn.ensemble import GradientBoosting, GradientBoostingClassifier, GradientBoostingRegressor, _predict
from twinlearn.ensemble._categorical import encode
from twinlearn.testing import bits


# ---------------------------------------------------------------------------
# The reference: Shapley values by enumeration of the feature subsets
# ---------------------------------------------------------------------------
def _goes_right(est, slot, v):
    if np.isnan(v):
        if est._nan_mode == "Learned":
            return bool(est.split_nan_right_[slot])
        return est._nan_mode == "Max"
    return v > est.split_border_[slot]


def _brute_force(est, X, R, w=None):
    """(phi, expected): Shapley values (n, D, F) of the game v(S) = sum over
    trees of E[tree | x_S], where a split on a feature outside S averages its
    children by their reference covers (rows of R, weights w; R None: the
    model's training leaf counts, leaf_count_), and expected = v(empty set)
    plus the base score. X: the encoded columns (F of them); R: raw rows."""
    F, D = X.shape[1], est.n_outputs_
    per_node = _predict.fitted_grow_policy(est) in ("Depthwise", "Lossguide")
    depth = est.tree_depth_.astype(np.int64)
    n_splits = np.where(per_node, (1 << depth) - 1, depth)
    so = np.concatenate([[0], np.cumsum(n_splits)])
    lo = np.concatenate([[0], np.cumsum((1 << depth) * D)])
    if R is not None:
        leaves = _predict.leaf_indices(est, R)  # the prediction's branch rule (R as given: leaf_indices encodes it)
        w = np.ones(len(R)) if w is None else w
    trees = []
    for t in range(len(depth)):
        if R is None:
            cov = est.leaf_count_[lo[t] // D:lo[t + 1] // D].astype(np.float64)
        else:
            cov = np.zeros(1 << depth[t])
            np.add.at(cov, leaves[:, t], w)
        trees.append((int(depth[t]), so[t], est.leaf_values_[lo[t]:lo[t + 1]].reshape(-1, D), cov))

    def node_cover(d, cov, level, p):
        return cov[[j for j in range(1 << d) if j & ((1 << level) - 1) == p]].sum()

    def value(x, S, tree, level=0, p=0):
        d, s0, vals, cov = tree
        if level == d:
            return vals[p]
        slot = s0 + ((1 << level) - 1 + p if per_node else level)
        f = est.split_feature_[slot]
        if f < 0:
            return value(x, S, tree, level + 1, p)
        right = p | (1 << level)
        if f in S:
            return value(x, S, tree, level + 1, right if _goes_right(est, slot, x[f]) else p)
        rj = node_cover(d, cov, level, p)
        if rj == 0:
            return np.zeros(D)
        out = np.zeros(D)
        for c in (p, right):
            rc = node_cover(d, cov, level + 1, c)
            if rc > 0:
                out = out + rc / rj * value(x, S, tree, level + 1, c)
        return out

    def v(x, S):
        return sum(value(x, S, tree) for tree in trees)

    phi = np.zeros((len(X), D, F))
    for i, x in enumerate(X):
        cache = {S: v(x, set(S)) for r in range(F + 1) for S in itertools.combinations(range(F), r)}
        for f in range(F):
            for S, vs in cache.items():
                if f in S:
                    continue
                k = len(S)
                wt = math.factorial(k) * math.factorial(F - k - 1) / math.factorial(F)
                phi[i, :, f] += wt * (cache[tuple(sorted(S + (f,)))] - vs)
    expected = est.base_score_ + v(X[0], set()) if len(X) else None
    return phi, expected


def _encoded(est, X):
    return np.asarray(encode(est, np.asarray(X, dtype=np.float64)), dtype=np.float64)


def _check(est, X, R=None, w=None, rtol=1e-9):
    """est's values for X (reference R; None: the training leaf counts) against
    the brute force, and local accuracy."""
    phi = _predict.shap_values(est, X, R, w)
    Xe = _encoded(est, X)
    want, expected = _brute_force(est, Xe, R, w)
    if getattr(est, "_cat_encoder", None) is None:
        np.testing.assert_allclose(phi[:, :, :-1], want, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(phi[:, :, -1], np.broadcast_to(expected, phi[:, :, -1].shape), rtol=rtol, atol=1e-12)
    raw = _predict.predict_core(est, X, "raw")
    total = phi.sum(axis=2)
    np.testing.assert_allclose(total, raw, rtol=1e-9, atol=1e-9 * np.abs(raw).max())
    return phi, want


@pytest.mark.parametrize("grow_policy", ["SymmetricTree", "Depthwise", "Lossguide"])
@pytest.mark.parametrize("nan_mode", ["Min", "Max", "Learned"])
def test_treeshap_is_the_brute_force_shapley_value(grow_policy, nan_mode):
    if nan_mode == "Learned" and grow_policy == "SymmetricTree":
        pytest.skip("Learned NaN routes need per-node trees")
    X, y = higgs_like(n=1500, d=5, seed=1)
    kw = {"max_leaves": 9} if grow_policy == "Lossguide" else {}
    m = GradientBoosting(n_estimators=8, max_depth=4, learning_rate=0.3, grow_policy=grow_policy, nan_mode=nan_mode,
                         device="cpu", **kw).fit(X, y)
    Q = X[:40].copy()
    Q[::7, 2] = np.nan
    assert np.isnan(Q).any()
    _check(m, Q)  # the training leaf counts
    _check(m, Q, R=Q)  # covers of the explained rows
    _check(m, Q, R=X[:600])  # covers of another reference set
    _check(m, Q, R=X[:600], w=np.linspace(0.1, 3.0, 600))


def test_repeated_features_on_a_path():
    # One informative feature of five: the paths split on it again and again.
    rng = np.random.default_rng(3)
    X = rng.standard_normal((2000, 4))
    y = np.sin(3 * X[:, 0]) + 0.1 * X[:, 1]
    for gp in ("SymmetricTree", "Depthwise"):
        m = GradientBoosting(loss="RMSE", n_estimators=6, max_depth=6, grow_policy=gp, device="cpu").fit(X, y)
        f = m.split_feature_[m.split_feature_ >= 0]
        assert np.bincount(f)[0] > len(m.tree_depth_)  # feature 0 repeats within trees
        _check(m, X[:25])


def test_nodes_that_do_not_split_are_passed_through():
    # Depthwise trees on a feature with few values stop splitting early: nodes of feature -1.
    rng = np.random.default_rng(4)
    X = np.c_[rng.integers(0, 3, 1500).astype(float), rng.standard_normal(1500) * 0.01]
    y = X[:, 0] * 2.0 + rng.standard_normal(1500) * 0.01
    m = GradientBoosting(loss="RMSE", n_estimators=5, max_depth=5, grow_policy="Depthwise",
                         device="cpu").fit(X, y)
    assert (m.split_feature_ < 0).any()
    _check(m, X[:30])


@pytest.mark.parametrize("loss", ["MultiClass", "MultiClassOneVsAll"])
def test_several_outputs(loss):
    X, y = higgs_like(n=1500, d=4, seed=5)
    y = y + (np.nan_to_num(X[:, 1]) > 0.5)
    m = GradientBoosting(loss=loss, n_estimators=6, max_depth=3, device="cpu").fit(X, y)
    phi, _ = _check(m, X[:20])
    c = m.get_feature_importance(type="ShapValues", data=X[:20])
    assert c.shape == (20, 3, 5) and bits(c) == bits(phi)
    assert bits(m.predict_contributions(X[:20])) == bits(phi)


def test_categorical_values_are_summed_per_input_column():
    from test_gb_categorical import categorical_data

    X, y = categorical_data(n=1500, n_cats=6)
    m = GradientBoosting(n_estimators=6, max_depth=3, cat_features=[1, 2], device="cpu").fit(X, y)
    assert len(m.encoded_feature_names_) == 4  # x0, x1:ts, x2=0, x2=1
    phi, want = _check(m, X[:20])
    assert phi.shape == (20, 1, 4)
    src = m._cat_encoder.sources()
    summed = np.zeros((20, 1, 3))
    for c, j in enumerate(src):
        summed[:, :, j] += want[:, :, c]
    np.testing.assert_allclose(phi[:, :, :-1], summed, rtol=1e-9, atol=1e-12)


def test_public_shapes_and_local_accuracy():
    X, y = higgs_like(n=2000, d=6, seed=6)
    clf = GradientBoostingClassifier(n_estimators=30, max_depth=4, device="cpu").fit(X, y)
    c = clf.predict_contributions(X[:100])
    assert c.shape == (100, 7) and c.dtype == np.float64
    np.testing.assert_allclose(c.sum(axis=1), clf.decision_function(X[:100]), rtol=1e-9, atol=1e-12)
    # The expected value is the mean margin of the reference rows.
    ref = clf.predict_contributions(X[:100], reference=X)
    np.testing.assert_allclose(ref[0, -1], clf.decision_function(X).mean(), rtol=1e-9)
    np.testing.assert_allclose(ref.sum(axis=1), clf.decision_function(X[:100]), rtol=1e-9, atol=1e-12)
    reg = GradientBoostingRegressor(n_estimators=30, max_leaf_nodes=12, device="cpu").fit(X, y.astype(float))
    r = reg.get_feature_importance(type="ShapValues", data=X[:50])
    assert r.shape == (50, 7)
    np.testing.assert_allclose(r.sum(axis=1), reg.predict(X[:50]), rtol=1e-9, atol=1e-12)


def test_bits_do_not_depend_on_the_thread_count():
    X, y = higgs_like(n=3000, d=8, seed=7)
    m = GradientBoosting(loss="MultiClass", n_estimators=20, max_depth=5, grow_policy="Depthwise",
                         device="cpu").fit(X, y + (np.nan_to_num(X[:, 2]) > 1))
    with twinlearn.config_context(n_threads=1):
        a = m.predict_contributions(X[:700], reference=X)
    with twinlearn.config_context(n_threads=2):
        b = m.predict_contributions(X[:700], reference=X)
    assert bits(a) == bits(b)


def test_bad_input_is_a_value_error():
    X, y = higgs_like(n=500, d=4, seed=8)
    m = GradientBoosting(n_estimators=3, device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="needs data"):
        m.get_feature_importance(type="ShapValues")
    with pytest.raises(ValueError, match="features"):
        m.predict_contributions(X[:, :3])
    with pytest.raises(ValueError, match="reference_weight"):
        m.predict_contributions(X, reference=X, reference_weight=np.ones(3))
    with pytest.raises(ValueError, match="reference_weight"):
        m.predict_contributions(X, reference=X, reference_weight=-np.ones(len(X)))
    with pytest.raises(ValueError, match="positive total weight"):
        m.predict_contributions(X, reference=X, reference_weight=np.zeros(len(X)))
    with pytest.raises(ValueError, match="data and reference"):
        m.get_feature_importance("gain", data=X)
    with pytest.raises(ValueError, match="importance_type"):
        m.get_feature_importance("bogus")


@pytest.mark.gpu
@pytest.mark.parametrize("grow_policy", ["SymmetricTree", "Depthwise", "Lossguide"])
def test_shap_values_cpu_and_gpu_give_identical_bits(grow_policy):
    # Host code whatever the device: a GPU-fitted model (the CPU's, bit for bit)
    # gives the CPU's values, for NumPy and device-array rows alike.
    from twinlearn.testing import to_device

    X, y = higgs_like(n=6000, d=6, seed=9)
    kw = dict(loss="MultiClass", n_estimators=15, max_depth=5, grow_policy=grow_policy, nan_mode="Min",
              numeric_mode="identical")
    cpu = GradientBoosting(device="cpu", **kw).fit(X, y + (np.nan_to_num(X[:, 2]) > 1))
    gpu = GradientBoosting(device="cuda:0", **kw).fit(X, y + (np.nan_to_num(X[:, 2]) > 1))
    a = cpu.predict_contributions(X[:500], reference=X)
    b = gpu.predict_contributions(X[:500], reference=X)
    assert bits(a) == bits(b)
    c = gpu.predict_contributions(to_device("torch", X[:500]), reference=to_device("torch", X))
    assert isinstance(c, np.ndarray) and bits(c) == bits(a)
