"""Helpers shared by the gradient-boosting tests: bit-exact comparison of
arrays and fitted models, the HIGGS-like fixture, and a plain walk of the
per-node tree layout (Depthwise, Lossguide)."""

import warnings

import numpy as np
from sklearn.model_selection import cross_validate, train_test_split

from twinlearn.testing import bits

MODEL_ATTRS = ("borders_", "border_offsets_", "tree_depth_", "split_feature_", "split_bin_", "split_border_",
               "split_gain_", "split_nan_right_", "leaf_values_", "base_score_", "leaf_count_")


def split(X, y, seed=0):
    return train_test_split(X, y, test_size=0.3, random_state=seed)


def cv_scores(est, X, y, cv, scoring):
    res = cross_validate(est, X, y, cv=cv, scoring=scoring)
    return {k[5:]: v.mean() for k, v in res.items() if k.startswith("test_")}


def assert_same_model(a, b):
    for attr in MODEL_ATTRS:
        assert bits(getattr(a, attr)) == bits(getattr(b, attr)), attr


def higgs_like(n=6000, d=12, seed=0):
    """A nonlinear label of a few features plus noise; some NaN and ties."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)).astype(np.float32)
    c = [j % d for j in range(5)]
    X[:, c[3]] = np.round(X[:, c[3]] * 2)
    s = (X[:, c[0]] * X[:, c[1]] + np.sin(2 * X[:, c[2]]) + 0.5 * X[:, c[3]] ** 2 - np.abs(X[:, c[4]])
         + 0.7 * rng.standard_normal(n))
    y = (s > np.median(s)).astype(int)
    X[rng.random((n, d)) < 0.02] = np.nan
    return X, y


def trees(est):
    """Per tree: (depth, its split-entry slice, its leaf-value slice)."""
    out = []
    s = l = 0
    for d in est.tree_depth_.astype(np.int64):
        d = int(d)
        c, nl = (1 << d) - 1, (1 << d) * est.n_outputs_
        out.append((d, slice(s, s + c), slice(l, l + nl)))
        s, l = s + c, l + nl
    return out


def tree_leaves(est, d, ss, X):
    """Each row's leaf in one per-node tree (depth d, split entries ss) by a plain
    walk of the layout (docs/GBDT_MODEL_FORMAT.md): node (l, p) at entry
    2**l - 1 + p, -1 sends left, NaN right under nan_mode='Max' or, under
    'Learned', where split_nan_right_ is 1."""
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    feat, border = est.split_feature_[ss], est.split_border_[ss]
    if est._nan_mode == "Learned":
        nan_right = est.split_nan_right_[ss].astype(bool)
    else:
        nan_right = np.full(len(feat), est._nan_mode == "Max")
    leaf = np.zeros(n, dtype=np.int64)
    for level in range(d):
        slot = (1 << level) - 1 + leaf
        f = feat[slot]
        v = X[np.arange(n), np.maximum(f, 0)]
        right = np.where(np.isnan(v), nan_right[slot], v > border[slot]) & (f >= 0)
        leaf |= right.astype(np.int64) << level
    return leaf


def numpy_raw(est, X):
    """The raw margins by tree_leaves, accumulated in double in tree order (float64, as predict)."""
    n, D = np.shape(X)[0], est.n_outputs_
    acc = np.tile(est.base_score_, (n, 1)).astype(np.float64)
    for d, ss, ls in trees(est):
        acc = acc + est.leaf_values_[ls].reshape(-1, D)[tree_leaves(est, d, ss, X)]
    return acc


def check_booster_estimator(est):
    """scikit-learn's check_estimator on a booster, waiving the one check that
    cannot hold for quantile borders."""
    from sklearn.utils.estimator_checks import check_estimator

    waived = {"check_sample_weight_equivalence_on_dense_data": "borders are quantiles of the unweighted rows"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(est, expected_failed_checks=waived)


def assert_same_bits_across_thread_counts(make, X, y):
    """make() fitted on X, y with 1 and with 3 threads gives the same model."""
    import twinlearn

    fits = []
    for n in (1, 3):
        with twinlearn.config_context(n_threads=n):
            fits.append(make().fit(X, y))
    assert_same_model(fits[0], fits[1])


def assert_round_trips(est, X, path):
    """save_model / load_model (into the same class, on the CPU) and pickle keep
    the model and its predicted probabilities, bit for bit; returns the loaded one."""
    import pickle

    est.save_model(path)
    back = type(est)(device="cpu").load_model(path)
    assert_same_model(est, back)
    assert back.grow_policy_ == est.grow_policy_
    assert bits(back.predict_proba(X)) == bits(est.predict_proba(X))
    again = pickle.loads(pickle.dumps(est))
    assert again.grow_policy_ == est.grow_policy_ and bits(again.predict_proba(X)) == bits(est.predict_proba(X))
    return back
