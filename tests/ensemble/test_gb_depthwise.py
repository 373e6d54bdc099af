"""GradientBoosting(grow_policy='Depthwise'): the tree layout (2**d - 1 split
entries per tree, level-major, -1 for nodes that do not split), prediction
against a plain NumPy walk, save/load, truncation, feature importances,
parameter checks, determinism and CPU/GPU identity."""

import json
import pickle

import numpy as np
import pytest

import twinlearn
from twinlearn import GradientBoosting, GradientBoostingClassifier
from gb_helpers import MODEL_ATTRS, bits, check_booster_estimator, higgs_like, numpy_raw, tree_leaves, trees
from gb_helpers import assert_same_model as assert_same_bits


def assert_same_model(a, b):
    assert_same_bits(a, b)
    assert a.grow_policy_ == b.grow_policy_


def branchy(n=4000, seed=0):
    """y = x1 > -1 where x0 > 0, else x2 > 1: one feature per branch, what a
    per-node split captures and a split shared by a level cannot (x0 alone is
    the strongest root split, so a greedy tree finds it)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 4))
    y = np.where(X[:, 0] > 0, X[:, 1] > -1, X[:, 2] > 1).astype(int)
    return X, y


def depthwise(**kw):
    kw.setdefault("n_estimators", 10)
    kw.setdefault("learning_rate", 0.3)
    kw.setdefault("device", "cpu")
    kw.setdefault("grow_policy", "Depthwise")
    return GradientBoosting(**kw)


def split_counts(est):
    return (1 << est.tree_depth_.astype(np.int64)) - 1


def reachable_nodes(est, ss, d):
    """Per level 0 .. d (d: the leaves): which nodes can hold rows. Node (l + 1, q) is the left
    child of (l, q) for q < 2**l, else the right child of (l, q - 2**l), which gets rows only
    when its parent splits."""
    feat = est.split_feature_[ss]
    reach = [np.array([True])]
    for level in range(1, d + 1):
        prev = reach[-1]
        splits = feat[(1 << (level - 1)) - 1 : (1 << level) - 1] >= 0
        reach.append(np.concatenate([prev, prev & splits]))
    return reach


# ---------------------------------------------------------------------------
# Layout and quality
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("loss", ["Logloss", "MultiClass", "RMSE"])
def test_layout_of_depthwise_trees(loss):
    X, y = higgs_like(n=3000, d=8, seed=1)
    if loss == "MultiClass":
        y = y + (np.nan_to_num(X[:, 1]) > 0.5)
    elif loss == "RMSE":
        y = np.nan_to_num(X[:, 0]) * 2.0 + y
    m = depthwise(loss=loss, max_depth=4, n_estimators=12).fit(X, y)
    assert m.grow_policy_ == "Depthwise"
    D = m.n_outputs_
    assert len(m.split_feature_) == split_counts(m).sum()
    for attr in ("split_bin_", "split_border_", "split_gain_"):
        assert len(getattr(m, attr)) == len(m.split_feature_), attr
    assert len(m.leaf_values_) == ((1 << m.tree_depth_.astype(np.int64)) * D).sum()
    assert m.tree_depth_.max() == 4
    not_oblivious = 0
    for d, ss, ls in trees(m):
        feat, sbin = m.split_feature_[ss], m.split_bin_[ss]
        border, gain = m.split_border_[ss], m.split_gain_[ss]
        leaves = m.leaf_values_[ls].reshape(1 << d, D)
        idle = feat < 0
        # a node that does not split: -1, -1, 0, 0; one that splits: its border and a positive gain
        assert np.all(sbin[idle] == -1) and np.all(border[idle] == 0.0) and np.all(gain[idle] == 0.0)
        assert np.all(sbin[~idle] >= 0) and np.all(gain[~idle] > 0)
        f_ok = feat[~idle]
        b_ok = sbin[~idle]
        assert np.array_equal(border[~idle], m.borders_[m.border_offsets_[f_ok] + b_ok])
        reach = reachable_nodes(m, ss, d)
        for level in range(d):
            nodes = feat[(1 << level) - 1 : (1 << (level + 1)) - 1]
            # every level of the tree has a node that splits (the tree stops at the first that has none)
            assert np.any(nodes >= 0), (level, nodes)
            # a node that cannot hold rows does not split
            assert np.all(nodes[~reach[level]] == -1)
            used = set(nodes[nodes >= 0].tolist())
            not_oblivious += len(used) > 1
        # the leaves below the right side of a node that does not split hold no rows: value 0
        assert np.all(leaves[~reach[d]] == 0.0)
    assert not_oblivious > 0  # some level's nodes split on different features
    assert bits(numpy_raw(m, X)) == bits(np.asarray(m.predict_raw(X)).reshape(len(X), D))


def test_depthwise_beats_oblivious_where_branches_need_their_own_feature():
    X, y = branchy()
    kw = dict(max_depth=2, n_estimators=3, learning_rate=0.5, device="cpu")
    sym = GradientBoosting(**kw).fit(X, y)
    dw = GradientBoosting(grow_policy="Depthwise", **kw).fit(X, y)

    def logloss(m):
        p = np.clip(m.predict_proba(X)[:, 1].astype(np.float64), 1e-7, 1 - 1e-7)
        return -np.mean(y * np.log(p) + (1 - y) * np.log(1 - p))

    # the first Depthwise tree splits x0 at the root, then x2 on its left (x0 <= 0, prefix 0)
    # and x1 on its right (prefix 1)
    d, ss, _ = trees(dw)[0]
    assert d == 2 and dw.split_feature_[ss].tolist() == [0, 2, 1]
    # one tree: a shared level-1 split fixes one branch only
    acc1 = lambda m: np.mean(m.predict(X, n_trees=1) == y)  # noqa: E731
    assert acc1(dw) > 0.99 and acc1(dw) > acc1(sym) + 0.05
    # same depth and rounds: a clearly lower training loss
    assert dw.score(X, y) >= sym.score(X, y)
    assert logloss(dw) < logloss(sym) - 0.05


def test_depth_one_depthwise_is_the_oblivious_stump():
    # one node per tree: the same choice under both policies (with min_split_gain=0.0 both split on gain > 0)
    X, y = higgs_like(n=3000, d=6, seed=2)
    kw = dict(max_depth=1, n_estimators=10, learning_rate=0.3, min_split_gain=0.0, device="cpu")
    sym = GradientBoosting(**kw).fit(X, y)
    dw = GradientBoosting(grow_policy="Depthwise", **kw).fit(X, y)
    assert dw.grow_policy_ == "Depthwise" and sym.grow_policy_ == "SymmetricTree"
    for attr in MODEL_ATTRS:
        assert bits(getattr(dw, attr)) == bits(getattr(sym, attr)), attr


def test_trees_stop_at_the_first_level_where_no_node_splits():
    X, y = higgs_like(n=3000, d=6, seed=17)
    stumps = depthwise(n_estimators=5, min_child_weight=1e9).fit(X, y)
    assert stumps.tree_depth_.tolist() == [0] * 5 and stumps.split_feature_.size == 0
    assert len(stumps.leaf_values_) == 5
    assert np.all(stumps.predict_raw(X) == stumps.predict_raw(X)[0])
    # a strong min_split_gain: shallower trees, and every level kept has a node that splits
    free = depthwise(n_estimators=10, max_depth=6).fit(X, y)
    msg = float(np.quantile(free.split_gain_[free.split_feature_ >= 0], 0.9))
    m = depthwise(n_estimators=10, max_depth=6, min_split_gain=msg).fit(X, y)
    assert m.tree_depth_.min() < 6
    assert np.all(m.split_gain_[m.split_feature_ >= 0] > msg)
    for d, ss, _ in trees(m):
        for level in range(d):
            assert np.any(m.split_feature_[ss][(1 << level) - 1 : (1 << (level + 1)) - 1] >= 0)


@pytest.mark.parametrize("nan_mode", ["Min", "Max"])
@pytest.mark.parametrize("loss", ["Logloss", "MultiClass", "RMSE"])
def test_prediction_is_a_walk_of_the_layout(loss, nan_mode):
    X, y = higgs_like(n=3000, d=6, seed=3)
    X[::7, 0] = np.nan  # NaN in a feature the trees use
    if loss == "MultiClass":
        y = y + 2 * (np.nan_to_num(X[:, 2]) > 0.7)
    elif loss == "RMSE":
        y = np.nan_to_num(X[:, 1]) * 3.0 + y + np.isnan(X[:, 0])
    m = depthwise(loss=loss, max_depth=5, n_estimators=15, nan_mode=nan_mode, min_split_gain=0.5).fit(X, y)
    assert np.any(m.split_feature_ == -1)  # the walk meets nodes that do not split
    Xt, _ = higgs_like(n=1000, d=6, seed=4)
    Xt[::5, 0] = np.nan
    raw = np.asarray(m.predict_raw(Xt)).reshape(len(Xt), m.n_outputs_)
    assert bits(numpy_raw(m, Xt)) == bits(raw)
    assert bits(numpy_raw(m, X)) == bits(np.asarray(m.predict_raw(X)).reshape(len(X), m.n_outputs_))


def test_staged_and_partial_predictions():
    X, y = higgs_like(n=2000, d=6, seed=5)
    m = depthwise(n_estimators=8).fit(X, y)
    stages = list(m.staged_predict_proba(X))
    assert len(stages) == 8 and bits(stages[-1]) == bits(m.predict_proba(X))
    assert bits(m.predict_proba(X, n_trees=3)) == bits(stages[2])


# ---------------------------------------------------------------------------
# save_model / load_model, pickle
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("loss", ["Logloss", "MultiClass"])
def test_save_and_load_round_trip(tmp_path, loss):
    X, y = higgs_like(n=2000, d=6, seed=6)
    if loss == "MultiClass":
        y = y + (np.nan_to_num(X[:, 0]) > 1)
    m = depthwise(loss=loss, n_estimators=8, max_depth=4, min_split_gain=0.3, nan_mode="Max").fit(X, y)
    assert np.any(m.split_feature_ == -1)
    path = tmp_path / "m.json"
    m.save_model(path)
    doc = json.loads(path.read_text())
    assert doc["grow_policy"] == "Depthwise" and doc["params"]["grow_policy"] == "Depthwise"
    for t in doc["trees"]:
        for k in ("split_features", "split_bins", "split_borders", "split_gains"):
            assert len(t[k]) == (1 << t["depth"]) - 1
    loaded = GradientBoosting(device="cpu").load_model(path)
    assert loaded.grow_policy == "Depthwise" and loaded.grow_policy_ == "Depthwise"
    assert_same_model(m, loaded)
    assert bits(loaded.predict_raw(X)) == bits(m.predict_raw(X))
    assert bits(loaded.predict_proba(X)) == bits(m.predict_proba(X))
    # the file's top-level grow_policy decides the layout, not the parameter
    doc2 = json.loads(path.read_text())
    doc2["params"]["grow_policy"] = "SymmetricTree"
    path.write_text(json.dumps(doc2))
    other = GradientBoosting(device="cpu").load_model(path)
    assert other.grow_policy_ == "Depthwise" and bits(other.predict_raw(X)) == bits(m.predict_raw(X))


def test_bad_depthwise_files_are_refused(tmp_path):
    X, y = higgs_like(n=1000, d=5, seed=7)
    m = depthwise(n_estimators=4, max_depth=3).fit(X, y)
    assert m.tree_depth_.max() >= 2
    path = tmp_path / "m.json"
    m.save_model(path)
    doc = json.loads(path.read_text())
    deep = next(i for i, t in enumerate(doc["trees"]) if t["depth"] >= 2)

    def relabel(d):
        d["grow_policy"] = "SymmetricTree"  # the split lists no longer have the count of the layout

    for mutate, match in [
        (lambda d: d["trees"][deep]["split_features"].pop(), "splits"),
        (lambda d: d["trees"][deep]["split_gains"].append(0.0), "splits"),
        (lambda d: d["trees"][deep]["split_bins"].pop(), "splits"),
        (lambda d: d["trees"][deep]["split_borders"].pop(), "splits"),
        (relabel, "splits"),
        (lambda d: d.update(grow_policy="Leafwise"), "grow_policy"),
        (lambda d: d["trees"][deep].update(depth=40), "depth"),
        (lambda d: d["trees"][deep]["split_features"].__setitem__(0, 99), "feature"),
    ]:
        bad = json.loads(json.dumps(doc))
        mutate(bad)
        path.write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=match):
            GradientBoosting(device="cpu").load_model(path)
    # the scikit-learn-shaped estimators hold oblivious trees only
    bad = json.loads(json.dumps(doc))
    bad["estimator"] = "GradientBoostingClassifier"
    path.write_text(json.dumps(bad))
    with pytest.raises(ValueError, match="grow_policy|oblivious"):
        GradientBoostingClassifier(device="cpu").load_model(path)


def test_files_without_grow_policy_load_as_oblivious(tmp_path):
    X, y = higgs_like(n=1000, d=4, seed=8)
    m = GradientBoosting(n_estimators=5, device="cpu").fit(X, y)
    assert m.grow_policy_ == "SymmetricTree"
    m.save_model(tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    assert doc["grow_policy"] == "SymmetricTree"
    del doc["grow_policy"]  # as written before Depthwise existed
    (tmp_path / "old.json").write_text(json.dumps(doc))
    loaded = GradientBoosting(device="cpu").load_model(tmp_path / "old.json")
    assert loaded.grow_policy_ == "SymmetricTree"
    assert bits(loaded.predict_proba(X)) == bits(m.predict_proba(X))


def test_pickle_keeps_the_layout():
    X, y = higgs_like(n=1500, d=5, seed=9)
    m = depthwise(n_estimators=5).fit(X, y)
    back = pickle.loads(pickle.dumps(m))
    assert back.grow_policy_ == "Depthwise"
    assert bits(back.predict_raw(X)) == bits(m.predict_raw(X))
    # an oblivious model pickled before grow_policy_ existed still predicts
    sym = GradientBoosting(n_estimators=5, device="cpu").fit(X, y)
    old = pickle.loads(pickle.dumps(sym))
    del old.grow_policy_
    assert bits(old.predict_raw(X)) == bits(sym.predict_raw(X))


# ---------------------------------------------------------------------------
# Truncation (use_best_model), feature importances
# ---------------------------------------------------------------------------
def test_use_best_model_truncates_consistently():
    X, y = higgs_like(n=3000, d=8, seed=10)
    Xtr, Xte, ytr, yte = X[:2000], X[2000:], y[:2000], y[2000:]
    kw = dict(max_depth=5, learning_rate=0.8, min_split_gain=0.2)
    m = depthwise(n_estimators=300, **kw).fit(Xtr, ytr, eval_set=(Xte, yte), early_stopping_rounds=5)
    hist = m.evals_result_["validation"]["Logloss"]
    assert m.n_estimators_ == m.best_iteration_ + 1 < len(hist)  # it did truncate
    full = depthwise(n_estimators=len(hist), **kw).fit(Xtr, ytr, eval_set=(Xte, yte), use_best_model=False)
    assert full.n_estimators_ == len(hist)
    # the kept arrays are the prefix of the full run's, with 2**d - 1 split entries per tree
    n_split = int(split_counts(m).sum())
    n_leaf = int(((1 << m.tree_depth_.astype(np.int64)) * m.n_outputs_).sum())
    assert len(m.split_feature_) == n_split < len(full.split_feature_)
    assert bits(m.tree_depth_) == bits(full.tree_depth_[: m.n_estimators_])
    for attr in ("split_feature_", "split_bin_", "split_border_", "split_gain_"):
        assert len(getattr(m, attr)) == n_split
        assert bits(getattr(m, attr)) == bits(getattr(full, attr)[:n_split]), attr
    assert bits(m.leaf_values_) == bits(full.leaf_values_[:n_leaf])
    staged = list(full.staged_predict_proba(Xte))[m.best_iteration_]
    assert bits(m.predict_proba(Xte)) == bits(staged)
    assert bits(m.predict_raw(Xte)) == bits(full.predict_raw(Xte, n_trees=m.n_estimators_))
    assert bits(numpy_raw(m, Xte)[:, 0]) == bits(m.predict_raw(Xte))


def test_feature_importances_ignore_nodes_that_do_not_split():
    X, y = higgs_like(n=3000, d=6, seed=11)
    m = depthwise(n_estimators=10, max_depth=5, min_split_gain=1.0).fit(X, y)
    f, g = m.split_feature_, m.split_gain_
    real = f >= 0
    assert np.any(~real) and np.any(real)  # the separating arm: there are -1 entries
    counts = m.get_feature_importance("split")
    assert counts.dtype == np.int64 and counts.shape == (6,)
    assert counts.tolist() == np.bincount(f[real], minlength=6).tolist()
    assert counts.sum() == real.sum()
    gain = np.zeros(6)
    np.add.at(gain, f[real], g[real])
    assert np.allclose(m.feature_importances_, gain / gain.sum(), rtol=0, atol=1e-12)
    assert abs(m.feature_importances_.sum() - 1.0) < 1e-12


def test_feature_importances_with_categorical_features():
    rng = np.random.default_rng(12)
    n = 3000
    c = rng.integers(0, 8, n).astype(np.float64)
    x = rng.standard_normal((n, 2))
    y = ((np.sin(c) + x[:, 0] + 0.3 * rng.standard_normal(n)) > 0).astype(int)
    X = np.c_[x, c]
    m = depthwise(n_estimators=8, max_depth=4, min_split_gain=1.0, cat_features=[2], random_state=0).fit(X, y)
    real = m.split_feature_ >= 0
    assert np.any(~real)
    counts = m.get_feature_importance("split")
    assert counts.sum() == real.sum()
    src = m._cat_encoder.sources()
    assert counts.tolist() == np.bincount(src[m.split_feature_[real]], minlength=3).tolist()


# ---------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("kw,match", [
    (dict(grow_policy="Depthwise", min_data_in_leaf=0), r"min_data_in_leaf"),
    (dict(grow_policy="Depthwise", max_leaves=8), r"max_leaves applies to grow_policy='Lossguide' only"),
    (dict(max_leaves=8), r"max_leaves applies to grow_policy='Lossguide' only"),
    (dict(grow_policy="Lossguide", max_leaves=1), r"max_leaves"),
    (dict(min_data_in_leaf=5), r"min_data_in_leaf applies to grow_policy 'Depthwise' and 'Lossguide' only"),
    (dict(grow_policy="Leafwise"), "grow_policy"),
])
def test_bad_grow_policy_parameters(kw, match):
    X, y = higgs_like(n=200, d=3, seed=13)
    with pytest.raises(ValueError, match=match):
        GradientBoosting(n_estimators=2, device="cpu", **kw).fit(X, y)


def leaf_rows(est, X, rows):
    """Per tree, the number of the given rows (a boolean mask) in each leaf."""
    return [np.bincount(tree_leaves(est, d, ss, X)[rows], minlength=1 << d) for d, ss, _ in trees(est)]


@pytest.mark.parametrize("grow_policy", ["Depthwise", "Lossguide"])
def test_min_data_in_leaf_bounds_every_leaf(grow_policy):
    X, y = higgs_like(n=5000, d=6, seed=17)
    w = np.where(np.arange(len(y)) % 5 == 0, 0.0, 1.0)  # rows of weight 0 do not count
    kw = dict(grow_policy=grow_policy, n_estimators=8, max_depth=7, learning_rate=0.3, device="cpu")
    if grow_policy == "Lossguide":
        kw["max_leaves"] = 40
    free = GradientBoosting(**kw).fit(X, y, sample_weight=w)
    assert min(c[c > 0].min() for c in leaf_rows(free, X, w > 0)) < 50, "the bound must bind"
    m = GradientBoosting(min_data_in_leaf=50, **kw).fit(X, y, sample_weight=w)
    assert min(c[c > 0].min() for c in leaf_rows(m, X, w > 0)) >= 50
    assert (m.split_feature_ >= 0).sum() > 8 * 4
    assert m.get_params()["min_data_in_leaf"] == 50


def test_parameters_reach_the_fit():
    X, y = higgs_like(n=1500, d=5, seed=14)
    dw = depthwise(n_estimators=3, max_depth=3, min_data_in_leaf=1).fit(X, y)
    sym = GradientBoosting(n_estimators=3, max_depth=3, learning_rate=0.3, device="cpu").fit(X, y)
    assert dw.grow_policy_ == "Depthwise" and sym.grow_policy_ == "SymmetricTree"
    assert len(dw.split_feature_) == split_counts(dw).sum()
    assert len(sym.split_feature_) == sym.tree_depth_.sum()
    assert GradientBoostingClassifier(n_estimators=2, device="cpu").fit(X, y).grow_policy_ == "SymmetricTree"


def test_check_estimator():
    est = GradientBoosting(grow_policy="Depthwise", n_estimators=10, learning_rate=0.3, device="cpu")
    check_booster_estimator(est)


# ---------------------------------------------------------------------------
# Determinism and CPU/GPU identity
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("kw", [
    dict(),
    dict(loss="MultiClass"),
    dict(bootstrap_type="Bernoulli", subsample=0.7, rsm=0.5, random_state=3),
    dict(min_child_weight=20.0, min_split_gain=0.5),
], ids=str)
def test_fits_are_the_same_bits_run_to_run_and_across_thread_counts(kw):
    X, y = higgs_like(n=8000, d=8, seed=15)
    if kw.get("loss") == "MultiClass":
        y = y + (np.nan_to_num(X[:, 1]) > 0.5)
    a = depthwise(n_estimators=8, max_depth=5, **kw).fit(X, y)
    b = depthwise(n_estimators=8, max_depth=5, **kw).fit(X, y)
    assert_same_model(a, b)
    assert bits(a.predict_raw(X)) == bits(b.predict_raw(X))
    with twinlearn.config_context(n_threads=3):
        c = depthwise(n_estimators=8, max_depth=5, **kw).fit(X, y)
        assert bits(c.predict_raw(X)) == bits(a.predict_raw(X))
    assert_same_model(a, c)


GPU_CASES = {
    "Logloss": dict(),
    "Logloss-Max": dict(nan_mode="Max", max_depth=7),
    "MultiClass": dict(loss="MultiClass"),
    "MultiClassOneVsAll": dict(loss="MultiClassOneVsAll"),
    "RMSE": dict(loss="RMSE"),
    "Quantile": dict(loss="Quantile:alpha=0.3"),
    "constraints": dict(min_child_weight=25.0, min_split_gain=2.0),
    "MultiClass-constraints": dict(loss="MultiClass", min_child_weight=25.0, min_split_gain=2.0),
    "sampling": dict(bootstrap_type="Bayesian", rsm=0.6, random_state=5),
    "min_data_in_leaf": dict(min_data_in_leaf=150, bootstrap_type="Bernoulli", subsample=0.7, random_state=6),
    "MultiClass-min_data_in_leaf-Learned": dict(loss="MultiClass", min_data_in_leaf=80, nan_mode="Learned"),
    "Lossguide-min_data_in_leaf": dict(grow_policy="Lossguide", max_leaves=20, min_data_in_leaf=200),
}


@pytest.mark.gpu
@pytest.mark.parametrize("case", list(GPU_CASES))
def test_cpu_and_gpu_give_identical_bits(case):
    kw = GPU_CASES[case]
    X, y = higgs_like(n=20000, d=8, seed=16)
    loss = kw.get("loss", "Logloss")
    if loss.startswith("MultiClass"):
        y = y + (np.nan_to_num(X[:, 1]) > 0.5)
    elif loss in ("RMSE",) or loss.startswith("Quantile"):
        y = np.nan_to_num(X[:, 0]) * 3.0 + y
    w = np.random.default_rng(0).uniform(0.5, 2.0, len(y))
    Xe, ye = X[:3000], y[:3000]
    kw = dict(n_estimators=12, **kw)
    ref = depthwise(numeric_mode="identical", **kw).fit(X, y, sample_weight=w, eval_set=(Xe, ye),
                                                         use_best_model=False)
    gpu = depthwise(**kw).set_params(device="cuda:0").fit(X, y, sample_weight=w, eval_set=(Xe, ye),
                                                          use_best_model=False)
    assert gpu.device_used() == "cuda:0" and gpu.numeric_mode_used() == "identical"
    if "constraints" in case or "min_data" in case:
        assert np.any(ref.split_feature_ == -1)  # some nodes did not split
    assert_same_model(ref, gpu)
    assert ref.evals_result_ == gpu.evals_result_
    assert bits(gpu.predict_raw(Xe)) == bits(ref.predict_raw(Xe))
    assert bits(gpu.predict(Xe)) == bits(ref.predict(Xe))
    # a model fitted on the GPU predicts the same bits on the CPU, and as the NumPy walk says
    on_cpu = pickle.loads(pickle.dumps(gpu)).set_params(device="cpu")
    assert bits(on_cpu.predict_raw(Xe)) == bits(ref.predict_raw(Xe))
    assert bits(numpy_raw(ref, Xe)) == bits(np.asarray(ref.predict_raw(Xe)).reshape(len(Xe), ref.n_outputs_))
