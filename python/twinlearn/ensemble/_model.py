"""The fitted model of gradient boosting: its arrays on the estimator, their
layout, and the model the core predicts with.

A fit sets ``<key>_`` for every key of :data:`MODEL_KEYS` (NumPy arrays),
``grow_policy_``, ``n_outputs_`` and the private ``_loss_name`` and
``_nan_mode``; :func:`model_dict` hands them to the core. Models pickled or
saved by older versions may lack ``grow_policy_`` (oblivious trees then),
``split_nan_right_`` (no learned NaN directions) and ``leaf_count_`` (no
training leaf counts: an empty array).
"""

from __future__ import annotations

import numpy as np

from ._params import GROW_POLICIES, PER_NODE

#: The arrays of a fitted model, as the core names them (the estimator's attributes add "_").
MODEL_KEYS = (
    "borders",
    "border_offsets",
    "tree_depth",
    "split_feature",
    "split_bin",
    "split_border",
    "split_gain",
    "split_nan_right",
    "leaf_values",
    "base_score",
    "leaf_count",
)


def tree_split_counts(tree_depth, grow_policy):
    """Split entries per tree (int64 array): the depth d for 'SymmetricTree'
    (one split per level), 2**d - 1 for 'Depthwise' and 'Lossguide' (one per
    node, level-major)."""
    depth = np.asarray(tree_depth, dtype=np.int64)
    if grow_policy in PER_NODE:
        return (np.int64(1) << depth) - 1
    if grow_policy == "SymmetricTree":
        return depth.copy()
    raise ValueError(f"grow_policy must be one of {', '.join(map(repr, GROW_POLICIES))}, got {grow_policy!r}")


def fitted_grow_policy(est):
    """The layout of the split arrays; models pickled before Depthwise existed are oblivious."""
    return getattr(est, "grow_policy_", "SymmetricTree")


def split_nan_right(est):
    """split_nan_right_ (empty unless nan_mode 'Learned'; models of older versions lack it)."""
    return np.asarray(getattr(est, "split_nan_right_", np.zeros(0, dtype=np.uint8)), dtype=np.uint8)


def leaf_count(est):
    """leaf_count_ (int64, one per leaf; empty where the model has no
    training counts, as models of older versions)."""
    return np.asarray(getattr(est, "leaf_count_", np.zeros(0, dtype=np.int64)), dtype=np.int64)


def set_model(est, fit):
    """The model arrays of a core fit result `fit` (GbdtFit) on the estimator."""
    for key in MODEL_KEYS:
        setattr(est, key + "_", np.asarray(getattr(fit, key)))
    est.grow_policy_ = str(fit.grow_policy)
    est.n_outputs_ = int(fit.n_outputs)


def truncate(est, n_trees):
    """Keeps the first n_trees trees."""
    depth = est.tree_depth_[:n_trees]
    n_split = int(tree_split_counts(depth, fitted_grow_policy(est)).sum())
    n_leaf = int(((1 << depth.astype(np.int64)) * est.n_outputs_).sum())
    est.tree_depth_ = depth.copy()
    for key in ("split_feature_", "split_bin_", "split_border_", "split_gain_"):
        setattr(est, key, getattr(est, key)[:n_split].copy())
    nan_right = split_nan_right(est)
    est.split_nan_right_ = nan_right[:n_split].copy() if nan_right.size else nan_right
    est.leaf_values_ = est.leaf_values_[:n_leaf].copy()
    counts = leaf_count(est)
    est.leaf_count_ = counts[:n_leaf // int(est.n_outputs_)].copy() if counts.size else counts


def model_dict(est):
    """The fitted model as the core's prediction functions take it."""
    return {
        "loss": est._loss_name,
        "nan_mode": est._nan_mode,
        "grow_policy": fitted_grow_policy(est),
        "n_features": int(len(est.border_offsets_) - 1),  # the encoded width with cat_features
        "n_outputs": int(est.n_outputs_),
        "borders": np.ascontiguousarray(est.borders_, dtype=np.float64),
        "border_offsets": np.ascontiguousarray(est.border_offsets_, dtype=np.int32),
        "tree_depth": np.ascontiguousarray(est.tree_depth_, dtype=np.int32),
        "split_feature": np.ascontiguousarray(est.split_feature_, dtype=np.int32),
        "split_bin": np.ascontiguousarray(est.split_bin_, dtype=np.int32),
        "split_border": np.ascontiguousarray(est.split_border_, dtype=np.float64),
        "split_gain": np.ascontiguousarray(est.split_gain_, dtype=np.float64),
        "split_nan_right": np.ascontiguousarray(split_nan_right(est)),
        "leaf_values": np.ascontiguousarray(est.leaf_values_, dtype=np.float64),
        "base_score": np.ascontiguousarray(est.base_score_, dtype=np.float64),
        "leaf_count": np.ascontiguousarray(leaf_count(est)),
    }
