"""Feature importances of a fitted gradient-boosting model, per input column
(an encoded categorical column counts for the input column it came from)."""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import check_is_fitted


def feature_importance(est, importance_type="gain"):
    """Total split gain ('gain', normalized to sum to 1; zeros when no split
    has gain) or number of splits ('split', int64) per input feature."""
    check_is_fitted(est)
    if importance_type not in ("gain", "split"):
        raise ValueError(f"importance_type must be 'gain', 'split' or 'ShapValues', got {importance_type!r}")
    feature = np.asarray(est.split_feature_, dtype=np.intp)
    gain = np.asarray(est.split_gain_, dtype=np.float64)
    real = feature >= 0  # Depthwise nodes that do not split hold -1
    feature, gain = feature[real], gain[real]
    enc = getattr(est, "_cat_encoder", None)
    if enc is not None:  # an encoded column counts for the input column it came from
        feature = enc.sources()[feature]
    if importance_type == "split":
        return np.bincount(feature, minlength=est.n_features_in_).astype(np.int64)
    imp = np.zeros(est.n_features_in_, dtype=np.float64)
    np.add.at(imp, feature, np.maximum(gain, 0.0))
    total = imp.sum()
    return imp / total if total > 0 else imp


def encoded_feature_names(est):
    """The name of each column the trees split on (see
    ``encoded_feature_names_``)."""
    check_is_fitted(est)
    names = getattr(est, "feature_names_in_", None)
    if names is None:
        names = [f"x{j}" for j in range(est.n_features_in_)]
    enc = getattr(est, "_cat_encoder", None)
    return np.asarray(list(names) if enc is None else enc.names(names), dtype=object)
