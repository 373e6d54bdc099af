"""Continuing a fit of gradient boosting from a fitted model:
GradientBoosting's ``fit(init_model=...)`` (CatBoost's) and the
scikit-learn-shaped estimators' ``warm_start`` (HistGradientBoosting's).

The core (gbdt_fit's init, docs/NUMERICS.md) bins the data with the model's
borders, starts from its raw predictions and numbers the new trees after its
own, so that on the same data and parameters (an integer ``random_state``
when sampling) n1 trees continued by n2 are bit for bit the model of one fit
of n1 + n2 trees. Categorical features are refused: a continued fit would
have to re-create the first fit's ordered target statistics of the training
rows, which the model does not keep.
"""

from __future__ import annotations

import copy
import os

import numpy as np
from sklearn.exceptions import NotFittedError
from sklearn.utils.validation import check_is_fitted

#: previous_model's answer when a warm start has nothing to add (n_estimators unchanged).
NOTHING_TO_DO = object()


def _n_trees(est):
    return int(len(est.tree_depth_))


def _what(est):
    """How the estimator names a continuation: GradientBoosting's init_model, the others' warm_start."""
    return "warm_start" if hasattr(est, "warm_start") else "init_model"


def _fitted(est):
    try:
        check_is_fitted(est)
    except NotFittedError:
        return False
    return hasattr(est, "tree_depth_")


def previous_model(est, init_model=None):
    """The fitted model this fit continues from, a snapshot (shallow copy)
    taken before the fit changes any attribute: init_model (a fitted
    estimator of est's class, or a path to a model saved by its save_model),
    or with ``warm_start=True`` est itself when fitted. None for a fresh fit;
    NOTHING_TO_DO when a warm start's n_estimators equals the trees it has.
    Sets est._tl_new_trees, the trees this fit grows."""
    est._tl_new_trees = int(est.n_estimators)
    if init_model is not None:
        return _resolve_init_model(est, init_model)
    if not getattr(est, "warm_start", False) or not _fitted(est):
        return None
    have = _n_trees(est)
    if est.n_estimators < have:
        raise ValueError(
            f"n_estimators={est.n_estimators} must be larger or equal to n_estimators_={have} when warm_start==True"
        )
    if est.n_estimators == have:
        return NOTHING_TO_DO
    est._tl_new_trees = int(est.n_estimators) - have
    return copy.copy(est)


def _resolve_init_model(est, init_model):
    if isinstance(init_model, (str, os.PathLike)):
        loaded = type(est)(device=est.device, numeric_mode=est.numeric_mode)
        return loaded.load_model(init_model)
    if not isinstance(init_model, type(est)):
        raise TypeError(
            f"init_model must be a fitted {type(est).__name__} or the path of a model saved by its save_model, "
            f"got {type(init_model).__name__}"
        )
    if not _fitted(init_model):
        raise ValueError(f"init_model must be a fitted {type(est).__name__}; this one is not fitted")
    return copy.copy(init_model)


def check_no_categorical(est, prev):
    """A clear error for a continuation with categorical features (see the module's note)."""
    if prev is None:
        return
    what = _what(est)
    cat_features, _ = est._cat_settings()
    has_cat = cat_features is not None and np.asarray(cat_features, dtype=object).size > 0
    if has_cat or getattr(prev, "_cat_encoder", None) is not None:
        raise ValueError(
            f"{what} cannot continue a fit with categorical features ({est._CAT_PARAM}): the continued fit would "
            "need the first fit's ordered target statistics of the training rows, which the model does not keep"
        )


def check_compatible(est, prev, X, loss_name, n_outputs, params):
    """The model `prev` can be continued by this fit of est on X (after
    check_input and encode_target set est's n_features_in_ and classes_): a
    clear ValueError otherwise."""
    what = _what(est)
    n_prev = int(len(prev.border_offsets_) - 1)
    if X.shape[1] != n_prev:
        raise ValueError(f"X has {X.shape[1]} features, but the model to continue ({what}) has {n_prev}")
    names_prev = getattr(prev, "feature_names_in_", None)
    names = getattr(est, "feature_names_in_", None)
    if names_prev is not None and names is not None and not np.array_equal(names_prev, names):
        raise ValueError(f"X's feature names differ from those of the model to continue ({what})")
    if prev._loss_name != loss_name:
        raise ValueError(f"the model to continue ({what}) has loss {prev._loss_name!r}, this fit {loss_name!r}")
    if int(prev.n_outputs_) != n_outputs:
        raise ValueError(f"the model to continue ({what}) has {int(prev.n_outputs_)} outputs, this fit {n_outputs}")
    if hasattr(prev, "classes_") != hasattr(est, "classes_") or (
        hasattr(est, "classes_") and not np.array_equal(np.asarray(prev.classes_), np.asarray(est.classes_))
    ):
        raise ValueError(
            f"y has classes {np.asarray(getattr(est, 'classes_', [])).tolist()}, but the model to continue ({what}) "
            f"was fitted on {np.asarray(getattr(prev, 'classes_', [])).tolist()}"
        )
    if prev._nan_mode != params["nan_mode"] or prev._fitted_grow_policy() != params["grow_policy"]:
        raise ValueError(
            f"the model to continue ({what}) has nan_mode {prev._nan_mode!r} and grow_policy "
            f"{prev._fitted_grow_policy()!r}; this fit's parameters give {params['nan_mode']!r} and "
            f"{params['grow_policy']!r}"
        )
