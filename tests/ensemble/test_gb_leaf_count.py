"""Training leaf counts (leaf_count_): the training rows of positive weight in
each tree per leaf, for every grow policy and estimator; with subsampling the
tree's sampled rows; kept through early stopping's cut, continued fits and
model files; the default SHAP covers (LightGBM's rule), so explaining a
single row is no longer all zeros; identical on the GPU."""

import json

import numpy as np
import pytest
from gb_helpers import higgs_like
from twinlearn.ensemble import GradientBoosting, GradientBoostingClassifier, GradientBoostingRegressor
from twinlearn.ensemble._params import sampling_seed
from twinlearn.testing import bits


def _leaf_offsets(est):
    depth = est.tree_depth_.astype(np.int64)
    return np.concatenate([[0], np.cumsum(np.int64(1) << depth)])


def _leaves(est, X):
    return np.asarray(est.predict(X, pred_leaf=True)) if isinstance(est, GradientBoosting) else est.apply(X)


def _counts(est, X, keep=None):
    leaves = _leaves(est, X)
    out = [np.bincount(leaves[:, t] if keep is None else leaves[keep(t), t], minlength=1 << int(d))
           for t, d in enumerate(est.tree_depth_)]
    return np.concatenate(out).astype(np.int64)


def _bernoulli_keep(est, n):
    """keep(t): the rows tree t's Bernoulli draws keep (gbdt::bootstrap_weight)."""
    from twinlearn import _backend

    mod = _backend.core()
    ctx = mod.Context("cpu", 1, "identical", 0, 0)
    seed = sampling_seed(est.random_state)
    return lambda t: mod.rng_uniform(ctx, seed, (1 << 32) | t, 0, n, "float64") < est.subsample


ESTIMATORS = {
    "symmetric": lambda **kw: GradientBoosting(n_estimators=8, max_depth=5, **kw),
    "depthwise": lambda **kw: GradientBoosting(n_estimators=8, max_depth=6, grow_policy="Depthwise",
                                               min_child_weight=20.0, **kw),
    "lossguide": lambda **kw: GradientBoosting(n_estimators=8, max_depth=6, grow_policy="Lossguide", max_leaves=11,
                                               nan_mode="Learned", **kw),
    "multiclass": lambda **kw: GradientBoosting(loss="MultiClass", n_estimators=5, max_depth=4, **kw),
    "sklearn-classifier": lambda **kw: GradientBoostingClassifier(n_estimators=6, max_depth=4, **kw),
    "sklearn-regressor": lambda **kw: GradientBoostingRegressor(n_estimators=6, max_leaf_nodes=9, **kw),
}


def _data(kind, n=3000):
    X, y = higgs_like(n=n, d=6, seed=11)
    if kind == "multiclass":
        y = y + (np.nan_to_num(X[:, 2]) > 1)
    if kind == "sklearn-regressor":
        y = y + np.nan_to_num(X[:, 0])
    return X, y


@pytest.mark.parametrize("kind", sorted(ESTIMATORS))
def test_leaf_count_is_the_bincount_of_the_training_leaves(kind):
    X, y = _data(kind)
    m = ESTIMATORS[kind](device="cpu").fit(X, y)
    assert m.leaf_count_.dtype == np.int64
    assert m.leaf_count_.size * m.n_outputs_ == m.leaf_values_.size
    assert np.array_equal(m.leaf_count_, _counts(m, X))
    assert (np.add.reduceat(m.leaf_count_, _leaf_offsets(m)[:-1]) == len(X)).all()


@pytest.mark.parametrize("grow_policy", ["SymmetricTree", "Depthwise", "Lossguide"])
def test_rows_of_weight_zero_are_not_counted(grow_policy):
    X, y = _data("symmetric")
    w = np.where(np.arange(len(X)) % 5 == 0, 0.0, 1.0 + (np.arange(len(X)) % 3))
    m = GradientBoosting(n_estimators=6, max_depth=5, grow_policy=grow_policy, device="cpu").fit(X, y,
                                                                                                  sample_weight=w)
    assert np.array_equal(m.leaf_count_, _counts(m, X, keep=lambda t: w > 0))


@pytest.mark.parametrize("grow_policy", ["SymmetricTree", "Depthwise", "Lossguide"])
def test_subsampled_trees_count_their_sampled_rows(grow_policy):
    X, y = _data("symmetric")
    m = GradientBoosting(n_estimators=6, max_depth=5, grow_policy=grow_policy, bootstrap_type="Bernoulli",
                         subsample=0.6, random_state=5, device="cpu").fit(X, y)
    keep = _bernoulli_keep(m, len(X))
    sums = np.add.reduceat(m.leaf_count_, _leaf_offsets(m)[:-1])
    assert np.array_equal(sums, [keep(t).sum() for t in range(len(m.tree_depth_))])
    assert (sums < len(X)).all() and len(set(sums.tolist())) > 1
    assert np.array_equal(m.leaf_count_, _counts(m, X, keep=keep))


def test_early_stopping_cuts_the_counts_with_the_trees():
    X, y = _data("symmetric", n=4000)
    m = GradientBoosting(n_estimators=200, max_depth=5, learning_rate=0.5, device="cpu")
    m.fit(X[:3000], y[:3000], eval_set=(X[3000:], y[3000:]), early_stopping_rounds=5)
    assert m.n_estimators_ < 200
    assert np.array_equal(m.leaf_count_, _counts(m, X[:3000]))


def test_continued_fit_keeps_the_init_counts():
    X, y = _data("symmetric")
    kw = dict(max_depth=5, grow_policy="Depthwise", bootstrap_type="Bernoulli", subsample=0.7, random_state=2,
              device="cpu")
    one = GradientBoosting(n_estimators=9, **kw).fit(X, y)
    init = GradientBoosting(n_estimators=4, **kw).fit(X, y)
    more = GradientBoosting(n_estimators=5, **kw).fit(X, y, init_model=init)
    assert bits(more.leaf_count_) == bits(one.leaf_count_)
    # An init model without counts (saved by an older version): the continued model has none.
    init.leaf_count_ = np.zeros(0, dtype=np.int64)
    bare = GradientBoosting(n_estimators=5, **kw).fit(X, y, init_model=init)
    assert bare.leaf_count_.size == 0 and bits(bare.leaf_values_) == bits(one.leaf_values_)


def test_one_row_explanations_use_the_training_counts():
    for kind in ("symmetric", "depthwise", "lossguide", "multiclass"):
        Xk, yk = _data(kind)
        m = ESTIMATORS[kind](device="cpu").fit(Xk, yk)
        one = m.predict_contributions(Xk[3:4])
        # With the explained row as the only reference every branch it does not take has cover 0.
        alone = m.predict_contributions(Xk[3:4], reference=Xk[3:4])
        assert np.all(alone[..., :-1] == 0.0)
        assert np.any(one[..., :-1] != 0.0)
        # The default is the training rows' covers (unweighted, every row in every tree).
        assert bits(one) == bits(m.predict_contributions(Xk[3:4], reference=Xk))
        assert bits(m.predict_contributions(Xk[:50])) == bits(m.predict_contributions(Xk[:50], reference=Xk))
        assert bits(m.get_feature_importance(type="ShapValues", data=Xk[3:4])) == bits(one)


def test_a_model_without_counts_needs_a_reference():
    X, y = _data("symmetric")
    m = GradientBoosting(n_estimators=4, max_depth=4, device="cpu").fit(X, y)
    want = m.predict_contributions(X[:5], reference=X)
    m.leaf_count_ = np.zeros(0, dtype=np.int64)
    with pytest.raises(ValueError, match="no training leaf counts.*reference"):
        m.predict_contributions(X[:5])
    with pytest.raises(ValueError, match="no training leaf counts.*reference"):
        m.get_feature_importance(type="ShapValues", data=X[:5])
    assert bits(m.predict_contributions(X[:5], reference=X)) == bits(want)
    del m.leaf_count_  # a model pickled by an older version
    with pytest.raises(ValueError, match="reference"):
        m.predict_contributions(X[:5])
    assert bits(m.predict(X)) == bits(GradientBoosting(n_estimators=4, max_depth=4, device="cpu").fit(X, y).predict(X))


def test_bad_counts_are_refused_by_the_core():
    X, y = _data("symmetric")
    m = GradientBoosting(n_estimators=3, max_depth=3, device="cpu").fit(X, y)
    counts = m.leaf_count_.copy()
    m.leaf_count_ = counts[:-1]
    with pytest.raises(ValueError, match="leaf_count must be empty or have"):
        m.predict(X)
    m.leaf_count_ = counts.copy()
    m.leaf_count_[2] = -4
    with pytest.raises(ValueError, match="leaf_count.*negative"):
        m.predict(X)


@pytest.mark.parametrize("grow_policy", ["SymmetricTree", "Depthwise"])
def test_model_files_keep_the_counts(tmp_path, grow_policy):
    X, y = _data("multiclass")
    m = GradientBoosting(loss="MultiClass", n_estimators=4, max_depth=4, grow_policy=grow_policy,
                         device="cpu").fit(X, y)
    path = tmp_path / "m.json"
    m.save_model(path)
    doc = json.loads(path.read_text())
    assert [len(t["leaf_counts"]) for t in doc["trees"]] == [1 << d for d in m.tree_depth_.tolist()]
    loaded = GradientBoosting().load_model(path)
    assert loaded.leaf_count_.dtype == np.int64 and bits(loaded.leaf_count_) == bits(m.leaf_count_)
    assert bits(loaded.predict_contributions(X[:3])) == bits(m.predict_contributions(X[:3]))
    # A file of an older version (no 'leaf_counts') loads, without counts.
    for t in doc["trees"]:
        del t["leaf_counts"]
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    legacy = GradientBoosting().load_model(old)
    assert legacy.leaf_count_.size == 0 and bits(legacy.predict_raw(X)) == bits(m.predict_raw(X))
    with pytest.raises(ValueError, match="reference"):
        legacy.predict_contributions(X[:3])
    legacy.save_model(tmp_path / "again.json")
    assert all("leaf_counts" not in t for t in json.loads((tmp_path / "again.json").read_text())["trees"])


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["symmetric", "depthwise", "lossguide", "multiclass"])
def test_leaf_count_cpu_and_gpu_identical(kind):
    X, y = _data(kind, n=20000)
    w = np.where(np.arange(len(X)) % 7 == 0, 0.0, 0.5 + (np.arange(len(X)) % 3))
    kw = dict(bootstrap_type="Bernoulli", subsample=0.7, random_state=3, numeric_mode="identical")
    cpu = ESTIMATORS[kind](device="cpu", **kw).fit(X, y, sample_weight=w)
    gpu = ESTIMATORS[kind](device="cuda:0", **kw).fit(X, y, sample_weight=w)
    assert gpu.numeric_mode_used() == "identical"
    assert bits(cpu.leaf_count_) == bits(gpu.leaf_count_)
    keep = _bernoulli_keep(cpu, len(X))
    assert np.array_equal(gpu.leaf_count_, _counts(cpu, X, keep=lambda t: keep(t) & (w > 0)))
