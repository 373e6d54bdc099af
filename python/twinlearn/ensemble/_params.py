"""The parameters of gradient boosting: loss strings, grow policies, the
checks a constraint table cannot express, and the core's GbdtParams fields
each estimator's parameters give.

The core's parameter struct is filled by name (twinlearn._native.params), so
every field is set here or by the fit driver (the data's, the fit's) and none
is left to its C++ default by accident; the values that stand for "no
constraint" are the core's own (min_split_gain -infinity, rsm 1, seed 0).
"""

from __future__ import annotations

import math
import numbers

import numpy as np
from sklearn.utils import check_random_state

CLASSIFICATION_LOSSES = ("Logloss", "CrossEntropy", "MultiClass", "MultiClassOneVsAll")
#: Losses with one output per class.
MULTICLASS_LOSSES = ("MultiClass", "MultiClassOneVsAll")
LOG_LINK_LOSSES = ("Poisson", "Tweedie")
# loss name -> the name of its parameter (CatBoost's "Name:param=value" syntax), or None
LOSSES = {
    "Logloss": None,
    "CrossEntropy": None,
    "MultiClass": None,
    "MultiClassOneVsAll": None,
    "RMSE": None,
    "Poisson": None,
    "Tweedie": "variance_power",
    "Huber": "delta",
    "MAE": None,
    "Quantile": "alpha",
}
# The parameter's value when the loss string leaves it out (CatBoost's defaults); absent: required.
_LOSS_PARAM_DEFAULTS = {"Quantile": 0.5}
_NOT_YET = ("MAPE", "Expectile", "LogLinQuantile", "Lq", "MultiRMSE", "RMSEWithUncertainty", "LogCosh", "Cox",
            "Focal")
#: eval_metric values other than the loss itself (GbdtMetric in the core).
EVAL_METRICS = ("AUC", "Accuracy", "RMSE", "MAE")

#: The grow policies the core fits and predicts (CatBoost's names).
GROW_POLICIES = ("SymmetricTree", "Depthwise", "Lossguide")
#: The policies with one split entry per node.
PER_NODE = ("Depthwise", "Lossguide")
#: Leaves of a Lossguide tree when max_leaves is None (CatBoost's default).
DEFAULT_MAX_LEAVES = 31


def parse_loss(loss):
    """(name, parameter) of a loss string such as 'Logloss' or 'Tweedie:variance_power=1.5'."""
    if not isinstance(loss, str):
        raise ValueError(f"loss must be a string, got {loss!r}")
    name, _, rest = loss.partition(":")
    if name in _NOT_YET:
        raise ValueError(f"loss={name!r} is not available yet; available: {', '.join(LOSSES)}")
    if name not in LOSSES:
        raise ValueError(f"loss must be one of {', '.join(repr(k) for k in LOSSES)}; got {loss!r}")
    pname = LOSSES[name]
    if pname is None:
        if rest:
            raise ValueError(f"loss {name!r} takes no parameters, got {loss!r}")
        return name, 0.0
    if not rest and name in _LOSS_PARAM_DEFAULTS:
        return name, _LOSS_PARAM_DEFAULTS[name]
    key, eq, value = rest.partition("=")
    if key != pname or not eq:
        raise ValueError(f"loss {name!r} needs its parameter: '{name}:{pname}=<value>', got {loss!r}")
    try:
        v = float(value)
    except ValueError:
        raise ValueError(f"loss {loss!r}: {pname} must be a number") from None
    if name == "Tweedie" and not 1.0 < v < 2.0:
        raise ValueError(f"loss {loss!r}: variance_power must be in (1, 2)")
    if name == "Huber" and not (np.isfinite(v) and v > 0):
        raise ValueError(f"loss {loss!r}: delta must be > 0")
    if name == "Quantile" and not 0.0 < v < 1.0:
        raise ValueError(f"loss {loss!r}: alpha must be in (0, 1)")
    return name, v


def loss_name_or_none(loss):
    """The loss name of a loss string, or None when the string is not valid."""
    try:
        return parse_loss(loss)[0]
    except ValueError:
        return None


def sampling_seed(random_state):
    """A 63-bit seed for the counter-based sampling draws, from scikit-learn's random_state."""
    return int(check_random_state(random_state).randint(np.iinfo(np.int64).max, dtype=np.int64))


def check_catboost_params(est):
    """The rules of GradientBoosting's parameters that tie one to another
    (CatBoost's: a parameter of one grow policy or bootstrap type given with
    another raises)."""
    if est.loss is not None:
        parse_loss(est.loss)
    if est.grow_policy not in GROW_POLICIES:
        raise ValueError(
            f"grow_policy={est.grow_policy!r} is not supported; use 'SymmetricTree' (oblivious trees), "
            "'Depthwise' or 'Lossguide'"
        )
    if est.nan_mode == "Learned" and est.grow_policy not in PER_NODE:
        raise ValueError(
            f"nan_mode='Learned' needs grow_policy 'Depthwise' or 'Lossguide' (an oblivious level has one "
            f"split for all its nodes); got grow_policy={est.grow_policy!r}"
        )
    if est.max_leaves is not None and est.grow_policy != "Lossguide":
        raise ValueError(
            f"max_leaves applies to grow_policy='Lossguide' only (as in CatBoost); with "
            f"grow_policy={est.grow_policy!r} leave it at None"
        )
    if est.min_data_in_leaf != 1 and est.grow_policy == "SymmetricTree":
        raise ValueError(
            "min_data_in_leaf applies to grow_policy 'Depthwise' and 'Lossguide' only (as in CatBoost); "
            "with 'SymmetricTree' leave it at 1"
        )
    if est.bootstrap_type == "MVS":
        raise ValueError("bootstrap_type='MVS' is not available yet; use 'No', 'Bernoulli' or 'Bayesian'")
    for name, bootstrap_type in (("subsample", "Bernoulli"), ("bagging_temperature", "Bayesian")):
        if getattr(est, name) is not None and est.bootstrap_type != bootstrap_type:
            raise ValueError(
                f"{name} applies to bootstrap_type={bootstrap_type!r} only (as in CatBoost); "
                f"with bootstrap_type={est.bootstrap_type!r} leave it at None"
            )


def catboost_eval_metric(est, loss_name):
    """GradientBoosting's eval_metric as the core's: 'Loss' or one of EVAL_METRICS."""
    m = est.eval_metric
    if m is None or m == est.loss or m == loss_name:
        return "Loss"
    if m not in EVAL_METRICS:
        raise ValueError(
            f"eval_metric must be None, one of {', '.join(repr(v) for v in EVAL_METRICS)}, or the loss "
            f"({est.loss or loss_name!r}); got {m!r}"
        )
    return m


def _tree_fields(**kw):
    """The GbdtParams fields an estimator's parameters give (every one but
    those of the fit: loss, loss_param, n_classes, early_stopping_rounds,
    eval_metric), the core's no-constraint values where `kw` is silent.
    boost_from_average None: the fit decides by the loss; seed 0: no draws
    (the fit seeds them when the parameters draw)."""
    out = {
        "grow_policy": "SymmetricTree",
        "max_leaves": DEFAULT_MAX_LEAVES,
        "min_data_in_leaf": 1,
        "bootstrap": "No",
        "subsample": 1.0,
        "bagging_temperature": 1.0,
        "rsm": 1.0,
        "min_child_weight": 0.0,
        "min_split_gain": -math.inf,
        "seed": 0,
        "monotone_constraints": [],
        "interaction_constraints": [],
    }
    out.update(kw)
    return out


def catboost_core_params(est):
    """GradientBoosting's parameters as GbdtParams fields."""
    return _tree_fields(
        n_estimators=int(est.n_estimators),
        max_depth=int(est.max_depth),
        learning_rate=float(est.learning_rate),
        l2_leaf_reg=float(est.l2_leaf_reg),
        border_count=int(est.border_count),
        grow_policy=est.grow_policy,
        max_leaves=DEFAULT_MAX_LEAVES if est.max_leaves is None else int(est.max_leaves),
        min_data_in_leaf=int(est.min_data_in_leaf),
        nan_mode=est.nan_mode,
        boost_from_average=est.boost_from_average,
        bootstrap=est.bootstrap_type,
        subsample=0.8 if est.subsample is None else float(est.subsample),
        bagging_temperature=1.0 if est.bagging_temperature is None else float(est.bagging_temperature),
        rsm=float(est.rsm),
        min_child_weight=float(est.min_child_weight),
        min_split_gain=-math.inf if est.min_split_gain is None else float(est.min_split_gain),
        monotone_constraints=[] if est.monotone_constraints is None
        else catboost_monotone_fields(est, est._core_loss(len(getattr(est, "classes_", ())))),
    )


def _encoded_sources(est):
    """The input column of each column the trees see (the categorical
    encoding may widen a column), or None without the encoding."""
    enc = getattr(est, "_cat_encoder", None)
    return None if enc is None else enc.sources()


def _monotone_fields(est, cst, param, loss_name, categorical_message):
    """A per-input-column array of -1/0/1 (None: no constraint) as the core's
    monotone_constraints over the encoded columns."""
    if cst is None or not np.any(cst != 0):
        return []
    if loss_name in ("MAE", "Quantile"):
        raise ValueError(f"{param} is not supported with loss {loss_name!r}: its leaves are quantiles of the "
                         "residuals, which the constraint's bounds do not enter")
    src = _encoded_sources(est)
    if src is None:
        return [int(c) for c in cst]
    enc = est._cat_encoder
    if np.any(cst[list(enc.cat_features)] != 0):
        raise ValueError(categorical_message)
    return [int(cst[j]) for j in src]


def _interaction_fields(est, groups):
    """Groups of input column indices as the core's interaction_constraints over
    the encoded columns (the unlisted columns form one more group, in the core)."""
    if groups is None:
        return []
    src = _encoded_sources(est)
    if src is None:
        return [sorted(int(f) for f in g) for g in groups]
    return [[k for k, j in enumerate(src) if j in g] for g in groups]


def sklearn_interaction_groups(est):
    """scikit-learn's interaction_cst as a list of sets of column indices
    (its checks and messages), or None."""
    import itertools

    cst = est.interaction_cst
    n = est.n_features_in_
    if cst is None:
        return None
    if isinstance(cst, str):
        if cst == "no_interactions":
            cst = [[i] for i in range(n)]
        elif cst == "pairwise":
            cst = itertools.combinations(range(n), 2)
        else:
            raise ValueError(f"interaction_cst must be 'pairwise', 'no_interactions' or a sequence of "
                             f"lists/tuples/sets of feature indices, got {cst!r}")
    try:
        groups = [set(g) for g in cst]
    except TypeError:
        raise ValueError(f"Interaction constraints must be a sequence of tuples or lists, got: "
                         f"{est.interaction_cst!r}.") from None
    for g in groups:
        for x in g:
            if isinstance(x, bool) or not (isinstance(x, numbers.Integral) and 0 <= x < n):
                raise ValueError(
                    "Interaction constraints must consist of integer indices in"
                    f" [0, n_features - 1] = [0, {n - 1}], specifying the"
                    f" position of features, got invalid indices: {g!r}"
                )
    return groups


def sklearn_constraint_fields(est):
    """monotonic_cst and interaction_cst of a scikit-learn-shaped booster as
    the core's fields (scikit-learn's validation and messages)."""
    from sklearn.utils.validation import _check_monotonic_cst

    if est.monotonic_cst is None and est.interaction_cst is None:
        return {"monotone_constraints": [], "interaction_constraints": []}
    mono = None
    if est.monotonic_cst is not None:
        if est._is_classifier() and getattr(est, "n_classes_", 2) > 2:
            raise ValueError("monotonic constraints are not supported for multiclass classification.")
        mono = np.asarray(_check_monotonic_cst(est, est.monotonic_cst), dtype=np.int64)
    loss_name = est._core_loss(getattr(est, "n_classes_", 2))
    return {
        "monotone_constraints": _monotone_fields(est, mono, "monotonic_cst", loss_name,
                                                 "Categorical features cannot have monotonic constraints."),
        "interaction_constraints": _interaction_fields(est, sklearn_interaction_groups(est)),
    }


def catboost_monotone_fields(est, loss_name):
    """GradientBoosting's monotone_constraints (CatBoost's forms: a list or
    array of -1/0/1 per feature, a string '(1,0,-1)', a dict by feature index
    or name, or a list of 'feature:value' strings) as the core's field."""
    mc = est.monotone_constraints
    if mc is None:
        return []
    n = est.n_features_in_
    names = [str(v) for v in getattr(est, "feature_names_in_", [])]

    def index_of(key):
        if isinstance(key, (int, np.integer)) and not isinstance(key, bool) and 0 <= key < n:
            return int(key)
        if isinstance(key, str):
            if key in names:
                return names.index(key)
            if key.lstrip("-").isdigit() and 0 <= int(key) < n:
                return int(key)
        raise ValueError(f"monotone_constraints names feature {key!r}, which is neither a column index in "
                         f"[0, {n}) nor a column name of X")

    def value_of(v):
        try:
            c = int(v)
        except (TypeError, ValueError):
            c = None
        if c not in (-1, 0, 1) or (not isinstance(v, str) and c != v):
            raise ValueError(f"monotone_constraints values must be -1, 0 or 1, got {v!r}")
        return c

    cst = np.zeros(n, dtype=np.int64)
    if isinstance(mc, str):
        body = mc.strip()
        if not (body.startswith("(") and body.endswith(")")):
            raise ValueError(f"monotone_constraints as a string must look like '(1,0,-1)', got {mc!r}")
        items = [v.strip() for v in body[1:-1].split(",") if v.strip()]
        mc = items
    if isinstance(mc, dict):
        for k, v in mc.items():
            cst[index_of(k)] = value_of(v)
    else:
        items = list(mc)
        if items and all(isinstance(v, str) and ":" in v for v in items):
            for v in items:
                k, _, c = v.rpartition(":")
                cst[index_of(k)] = value_of(c)
        else:
            if len(items) != n:
                raise ValueError(f"monotone_constraints has {len(items)} entries, X has {n} features")
            cst[:] = [value_of(v) for v in items]
    if np.any(cst != 0) and est.grow_policy not in PER_NODE:
        raise ValueError("monotone_constraints need grow_policy 'Depthwise' or 'Lossguide' (per-node trees); "
                         f"got grow_policy={est.grow_policy!r}")
    if np.any(cst != 0) and loss_name in MULTICLASS_LOSSES:
        raise ValueError(f"monotone_constraints are not supported with the multiclass loss {loss_name!r}")
    return _monotone_fields(est, cst, "monotone_constraints", loss_name,
                            "monotone_constraints must be 0 for the categorical features (cat_features)")


def sklearn_core_params(est):
    """A scikit-learn-shaped booster's parameters as GbdtParams fields:
    oblivious trees, or best-first per-node trees (Lossguide, NaN learned)
    when max_leaf_nodes or min_samples_leaf asks for them."""
    out = _tree_fields(
        n_estimators=int(est.n_estimators),
        max_depth=int(est.max_depth),
        learning_rate=float(est.learning_rate),
        l2_leaf_reg=float(est.l2_regularization),
        border_count=int(est.max_bins) - 1,
        nan_mode="Min",
        boost_from_average=None,
        bootstrap="Bernoulli" if est.subsample < 1.0 else "No",
        subsample=float(est.subsample),
        min_child_weight=1e-3,
    )
    if est._per_node():
        # Lossguide with max_leaves 0: up to 2**max_depth leaves.
        out.update(grow_policy="Lossguide", nan_mode="Learned", min_data_in_leaf=int(est.min_samples_leaf),
                   max_leaves=0 if est.max_leaf_nodes is None else int(est.max_leaf_nodes))
    out.update(sklearn_constraint_fields(est))
    return out


def draws(params):
    """True when GbdtParams fields `params` sample rows or features (then the fit seeds the draws)."""
    return params["bootstrap"] != "No" or params["rsm"] < 1.0
