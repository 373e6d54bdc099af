"""Predictions of a fitted gradient-boosting model.

The core writes float64 raw margins or probabilities (n, n_outputs) into an
array of the input's kind (host or device): the margins are accumulated in
double and the link is computed in double, with no rounding to float32
(scikit-learn's and CatBoost's dtype). Staged predictions accumulate the
margins tree by tree in a host float64 array and apply the link on the host
(gbdt_link), the same arithmetic as gbdt_predict. The shapes of
scikit-learn (decision values, two-column probabilities, labels) are made
from those here.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted

from .. import _io, identity
from ._categorical import encode
from ._checks import check_input
from ._model import fitted_grow_policy, model_dict, split_nan_right, tree_split_counts
from ._params import LOG_LINK_LOSSES, PER_NODE


def tree_range(est, n_trees=None, iteration_range=None):
    """(begin, end): the trees [begin, end) a prediction uses. `n_trees`
    (the first n_trees) and `iteration_range` (XGBoost's ``(begin, end)``,
    ``end=0`` meaning the last tree) are exclusive; neither: every tree."""
    check_is_fitted(est)
    total = len(est.tree_depth_)
    if iteration_range is None:
        return 0, total if n_trees is None else int(n_trees)
    if n_trees is not None:
        raise ValueError("Pass n_trees or iteration_range, not both")
    try:
        begin, end = iteration_range
    except (TypeError, ValueError):
        raise ValueError(f"iteration_range must be a pair (begin, end) of ints, got {iteration_range!r}") from None
    for v in (begin, end):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
            raise ValueError(f"iteration_range must be a pair (begin, end) of ints, got {iteration_range!r}")
    begin, end = int(begin), int(end)
    if end == 0:
        end = total
    if not 0 <= begin < end <= total:
        raise ValueError(
            f"iteration_range must satisfy 0 <= begin < end <= n_trees ({total}; end=0 means {total}), "
            f"got {iteration_range!r}"
        )
    return begin, end


def predict_core(est, X, kind, n_trees=None, iteration_range=None):
    """float64 (n, n_outputs) raw margins or probabilities, on the backend's side
    (a device array on a GPU); the public method mirrors it to the caller's type.
    Trees [begin, end) of `iteration_range` with begin > 0 are accumulated in
    float64 on the host from the base score (the staged predictions' arithmetic),
    the link applied there; the first `end` trees are predicted as n_trees=end."""
    begin, end = tree_range(est, n_trees, iteration_range)
    device = est._tl_device(X)
    X, _ = check_input(est, X, device, reset=False)
    X = encode(est, X)
    mod, ctx = est._tl_context(device, X)
    if begin > 0:
        acc = np.empty((X.shape[0], est.n_outputs_), dtype=np.float64)
        acc[:] = est.base_score_[None, :]
        mod.gbdt_predict_stage(ctx, model_dict(est), X, begin, end, acc)
        out = mod.gbdt_link(est._loss_name, acc, kind, False)
    else:
        out = _io.empty_like_kind(X, (X.shape[0], est.n_outputs_), np.dtype(np.float64))
        mod.gbdt_predict(ctx, model_dict(est), X, -1 if n_trees is None and iteration_range is None else end,
                         kind, out)
    check_predictions(est, out)
    identity.record(f"{type(est).__name__}.predict_{kind}", out)
    return out


def leaf_indices(est, X, n_trees=None, iteration_range=None):
    """Each row's leaf in each tree of the range, int32 (n_samples, n_trees):
    leaf j of a tree of depth d (0 <= j < 2**d) is the one whose value is
    ``leaf_values_[offset + j * n_outputs_ + k]`` (docs/GBDT_MODEL_FORMAT.md),
    bit l of j set where the row went right at level l. Computed on the host
    by the prediction's branch rule: right where x > split_border (x as
    float64), NaN right where split_nan_right_ is 1 (nan_mode 'Learned') or
    under nan_mode 'Max'; a per-node split of feature -1 sends every row left."""
    begin, end = tree_range(est, n_trees, iteration_range)
    device = est._tl_device(X)
    X, _ = check_input(est, X, device, reset=False)
    X = np.asarray(_io.to_numpy(encode(est, X)), dtype=np.float64)
    n = X.shape[0]
    per_node = fitted_grow_policy(est) in PER_NODE
    depth = est.tree_depth_.astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(tree_split_counts(depth, fitted_grow_policy(est)))])
    nan_right_all = split_nan_right(est)
    rows = np.arange(n)
    out = np.zeros((n, end - begin), dtype=np.int32)
    for c, t in enumerate(range(begin, end)):
        leaf = np.zeros(n, dtype=np.int64)
        for level in range(int(depth[t])):
            slot = starts[t] + ((1 << level) - 1 + leaf if per_node else level)
            f = np.asarray(est.split_feature_[slot], dtype=np.int64)
            border = np.asarray(est.split_border_[slot], dtype=np.float64)
            if nan_right_all.size:
                nan_right = nan_right_all[slot].astype(bool)
            else:
                nan_right = np.full(np.shape(slot), est._nan_mode == "Max")
            v = X[rows, np.maximum(f, 0)] if per_node else X[:, max(int(f), 0)]
            right = np.where(np.isnan(v), nan_right, v > border) & (f >= 0)
            leaf |= right.astype(np.int64) << level
        out[:, c] = leaf
    return out


def check_predictions(est, out):
    """out, unless a prediction overflowed: the float64 output (host or
    device) holds an infinity (a sum of leaf values beyond float64's range,
    or exp of a margin above 709.78 under a log link)."""
    if _io.any_nonfinite(out, find_nan=False):
        raise ValueError(
            f"The predictions of {type(est).__name__} overflow float64, the dtype they are computed in "
            f"(largest value {np.finfo(np.float64).max:.8g}): the model's values are too large for it."
        )
    return out


def staged_core(est, X, kind, sklearn_shape=False):
    """The predictions after each tree, NumPy: float64 (n, n_outputs), or
    with sklearn_shape in scikit-learn's shape (gbdt_link), each stage the
    bits of the prediction with that many trees."""
    check_is_fitted(est)
    device = est._tl_device(X)
    X, _ = check_input(est, X, device, reset=False)
    X = encode(est, X)
    mod, ctx = est._tl_context(device, X)
    model = model_dict(est)
    acc = np.empty((X.shape[0], est.n_outputs_), dtype=np.float64)
    acc[:] = est.base_score_[None, :]
    for t in range(len(est.tree_depth_)):
        mod.gbdt_predict_stage(ctx, model, X, t, t + 1, acc)
        yield check_predictions(est, mod.gbdt_link(est._loss_name, acc, kind, sklearn_shape))


def value_kind(est):
    """The prediction of a regression loss: the margin, or its exponent under a log link."""
    check_is_fitted(est)
    return "exponent" if est._loss_name in LOG_LINK_LOSSES else "raw"


def raw_to_decision(raw):
    """scikit-learn's decision_function shape: (n,) for two classes (softmax over two outputs:
    the difference of the margins), else (n, n_classes)."""
    if raw.shape[1] == 1:
        return raw[:, 0]
    if raw.shape[1] == 2:
        return raw[:, 1] - raw[:, 0]
    return raw


def _namespace(a):
    k = _io.kind(a)
    if k == "cupy":
        import cupy

        return cupy
    if k == "torch":
        import torch

        return torch
    return np


def proba_from_core(est, p):
    """Class probabilities (n, n_classes) from the core's: a binary loss's
    one column p becomes [1 - p, p], in p's array type."""
    if est._loss_name in ("Logloss", "CrossEntropy"):
        p1 = p[:, 0]
        xp = _namespace(p1)
        return xp.stack([1 - p1, p1], axis=1)
    return p


def labels_from_raw(est, raw):
    """Class labels of the raw margins (n, 1) or (n, n_classes): in raw's
    array type, on its device, when raw is a device array and the classes
    are numeric (as the linear classifiers' labels); NumPy otherwise."""
    if _io.is_device_array(raw) and est.classes_.dtype.kind in "biuf":
        torch_like = _io.kind(raw) == "torch"
        if raw.shape[1] == 1:
            hit = raw[:, 0] > 0
            idx = hit.long() if torch_like else hit.astype(np.intp)
        else:
            idx = raw.argmax(dim=1) if torch_like else raw.argmax(axis=1)
        return _io.from_numpy_like(raw, est.classes_)[idx]
    raw = _io.to_numpy(raw)
    if raw.shape[1] == 1:
        return est.classes_[(raw[:, 0] > 0).astype(np.intp)]
    return est.classes_[np.argmax(raw, axis=1)]


def _host_encoded(est, X):
    """X checked and encoded as the trees see it, on the host (NumPy)."""
    X, _ = check_input(est, _io.to_host(X), "cpu", reset=False)
    return np.ascontiguousarray(_io.to_numpy(encode(est, X)))


def shap_values(est, X, reference=None, reference_weight=None):
    """Exact TreeSHAP contributions of each feature to the raw margins of X's
    rows: float64 (n_samples, n_outputs_, n_features_in_ + 1), the expected
    value last. The branches are weighed by covers: by default the model's
    training leaf counts (leaf_count_, LightGBM's rule; a model without them
    raises a ValueError asking for `reference`), else the covers of
    `reference` (its rows' weights per leaf). With categorical features an
    input column's value is the sum of its encoded columns' (in encoded
    column order). Host code (tl::gbdt_shap_values): the same bits on every
    device and thread count."""
    check_is_fitted(est)
    Xh = _host_encoded(est, X)
    mod, ctx = est._tl_context("cpu")
    model = model_dict(est)
    if reference is None:
        if reference_weight is not None:
            raise ValueError("reference_weight needs a reference")
        if model["leaf_count"].size == 0:
            raise ValueError("this model has no training leaf counts (leaf_count_ is empty: a model saved by an "
                             "older version, or continued from one); pass reference (and reference_weight), "
                             "e.g. the training rows, for the SHAP covers")
        cover = model["leaf_count"].astype(np.float64)
        return _finish_shap(est, mod, ctx, model, Xh, cover)
    R = _host_encoded(est, reference)
    w = None
    if reference_weight is not None:
        w = np.asarray(_io.to_numpy(reference_weight), dtype=np.float64)
        if w.ndim != 1 or w.shape[0] != R.shape[0]:
            raise ValueError(f"reference_weight must have one entry per reference row ({R.shape[0]}), "
                             f"got shape {w.shape}")
        if not np.all(np.isfinite(w)) or np.any(w < 0):
            raise ValueError("reference_weight must be finite and >= 0")
        w = np.ascontiguousarray(w)
    if R.shape[0] == 0 or (w is not None and not w.sum() > 0):
        raise ValueError("the reference rows must have a positive total weight (the covers of the SHAP values)")
    cover = mod.gbdt_leaf_cover(ctx, model, R, w)
    return _finish_shap(est, mod, ctx, model, Xh, cover)


def _finish_shap(est, mod, ctx, model, Xh, cover):
    """shap_values of the encoded host rows Xh with the leaf covers `cover`."""
    phi = mod.gbdt_shap_values(ctx, model, Xh, cover)
    enc = getattr(est, "_cat_encoder", None)
    if enc is not None:
        src = enc.sources()
        out = np.zeros((phi.shape[0], phi.shape[1], est.n_features_in_ + 1), dtype=np.float64)
        for c, j in enumerate(src):  # encoded column order: a fixed summation order
            out[:, :, j] += phi[:, :, c]
        out[:, :, -1] = phi[:, :, -1]
        phi = out
    identity.record(f"{type(est).__name__}.shap_values", phi)
    return phi


def contributions(est, X, reference=None, reference_weight=None):
    """shap_values in the public shape: (n_samples, n_features_in_ + 1) for a
    model of one output, (n_samples, n_outputs_, n_features_in_ + 1) otherwise."""
    phi = shap_values(est, X, reference, reference_weight)
    return phi[:, 0, :] if phi.shape[1] == 1 else phi
