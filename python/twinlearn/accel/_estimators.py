"""The accelerated estimators: one declarative entry each (see ``_entry.Entry``).

Only estimators twinlearn implements are declared; an entry whose twinlearn
class is missing from this build is skipped. A new estimator is one more
``Entry(...)`` here, then ``python -m twinlearn.accel --support-matrix >
docs/SUPPORT_MATRIX.md``.
"""

from __future__ import annotations

import numbers

import numpy as np

from ._entry import ANY, DEFAULT_MIN_ROWS, Entry, Lazy, one_of, where

# -- helpers of the entries below ---------------------------------------------

#: Metrics twinlearn's neighbour search and KMeans kernels compute
#: (twinlearn.metrics._pairwise.METRICS), plus precomputed distances.
_NEIGHBOR_METRICS = ("euclidean", "l2", "sqeuclidean", "manhattan", "cityblock", "l1", "cosine", "chebyshev",
                     "minkowski", "precomputed")


def _n_threads(tl, params):
    """scikit-learn's KMeans methods read ``_n_threads`` (set by its fit)."""
    from sklearn.utils._openmp_helpers import _openmp_effective_n_threads

    return {"_n_threads": Lazy(_openmp_effective_n_threads)}


def _kmeans_derive(tl, params):
    """scikit-learn's private KMeans state (threads, algorithm, number of runs)."""
    return {**_n_threads(tl, params), "_algorithm": "lloyd", "_n_init": tl._resolve_n_init()}


def _neighbors_check(params):
    """Joint conditions of the neighbour estimators: the metric is one
    scikit-learn accepts with the algorithm (scikit-learn raises otherwise),
    and Minkowski's p is at least 1 (twinlearn computes no semi-metrics)."""
    from sklearn.neighbors import VALID_METRICS

    metric, algorithm = params.get("metric"), params.get("algorithm")
    if algorithm == "auto":
        alg = "brute" if metric == "precomputed" or metric not in VALID_METRICS["ball_tree"] else "ball_tree"
    else:
        alg = algorithm
    if metric not in VALID_METRICS[alg]:
        return f"metric={metric!r} with algorithm={algorithm!r} (scikit-learn refuses it)"
    p = params.get("p")
    if metric == "minkowski" and (p is None or not p >= 1):
        return f"parameter p={p!r} unsupported with metric='minkowski' (twinlearn serves p >= 1)"
    return None


def _neighbors_derive(tl, params):
    """scikit-learn's effective metric and brute-force state (its own
    methods then serve what twinlearn does not, e.g. sparse queries)."""
    metric = params["metric"]
    eff_params = {}
    eff = metric
    if metric == "minkowski":
        p = params["p"]
        if p == 1:
            eff = "manhattan"
        elif p == 2:
            eff = "euclidean"
        elif p == np.inf:
            eff = "chebyshev"
        else:
            eff_params = {"p": p, "w": None}
    return {"effective_metric_": eff, "effective_metric_params_": eff_params, "_fit_method": "brute",
            "_tree": None}


def _gpr_check(params):
    """Kernels twinlearn does not compute run scikit-learn."""
    from ..gaussian_process._evaluate import foreign_kernel
    from ..gaussian_process._gpr import _default_kernel

    kernel = params.get("kernel")
    foreign = foreign_kernel(_default_kernel(fit=True) if kernel is None else kernel)
    return None if foreign is None else f"kernel {foreign!r} is not computed by twinlearn"


def _svm_check(params):
    """A callable kernel runs scikit-learn (twinlearn computes the named kernels only)."""
    return "a callable kernel is not computed by twinlearn" if callable(params.get("kernel")) else None


def _svm_derive(tl, params):
    """scikit-learn's private state its own SVM methods read."""
    out = {"_n_support": tl._n_support, "_dual_coef_": tl._dual_coef_, "_intercept_": tl._intercept_,
           "_gamma": tl._gamma, "_sparse": False}
    if hasattr(tl, "probA_"):
        out["_probA"], out["_probB"] = tl.probA_, tl.probB_
    return out


def _gpr_derive(tl, params):
    """scikit-learn's private state its own methods read (the target scaling)."""
    return {"_y_train_mean": tl._y_train_mean, "_y_train_std": tl._y_train_std}


_NEIGHBOR_PARAMS = {
    "n_neighbors": ANY,
    "radius": ANY,
    "algorithm": ANY,
    "leaf_size": ANY,
    "metric": one_of(*_NEIGHBOR_METRICS),
    "p": ANY,
    "n_jobs": ANY,
}
_KNN_PARAMS = {k: v for k, v in _NEIGHBOR_PARAMS.items() if k != "radius"}
_NEIGHBOR_CHECK_DOC = (
    "the metric is one scikit-learn accepts with the algorithm, and `p >= 1` with "
    "`metric='minkowski'`."
)
_NEIGHBOR_NOTES = (
    "every `algorithm` runs twinlearn's exact brute-force search (the same neighbours as "
    "scikit-learn's trees); neighbours at equal distance come in increasing index order."
)
_NEIGHBOR_KWARGS = ("n_neighbors", "return_distance", "mode", "radius", "sort_results")
_NEIGHBOR_ATTRIBUTES = ("n_samples_fit_", "_fit_X")


def _dbscan_check(params):
    """Minkowski's p is at least 1 (twinlearn computes no semi-metrics)."""
    p = params.get("p")
    if params.get("metric") == "minkowski" and p is not None and not p >= 1:
        return f"parameter p={p!r} unsupported with metric='minkowski' (twinlearn serves p >= 1)"
    return None


# -- agglomerative clustering --------------------------------------------------------
#: Metrics twinlearn's AgglomerativeClustering serves.
_AGGLO_METRICS = ("euclidean", "l2", "manhattan", "l1", "cityblock", "cosine", "precomputed")


def _agglo_check(params):
    """No memory cache, ward with euclidean distances only."""
    if params.get("memory") is not None:
        return "memory caching is scikit-learn's (twinlearn does not cache trees)"
    if params.get("linkage", "ward") == "ward" and params.get("metric", "euclidean") not in ("euclidean", "l2"):
        return "ward takes euclidean distances only (scikit-learn raises its own error)"
    return None


def _agglo_check_rows(params, n_rows):
    """The condensed-matrix linkages (no connectivity) hold n (n - 1) / 2
    distances: at most 40000 rows."""
    from ..cluster._agglomerative import MAX_CONDENSED_SAMPLES

    if (params.get("connectivity") is None and params.get("linkage", "ward") != "single"
            and n_rows > MAX_CONDENSED_SAMPLES):
        return f"linkage={params.get('linkage', 'ward')!r} on more than {MAX_CONDENSED_SAMPLES} rows"
    return None


def _hdbscan_check(params):
    """Only minkowski's p in metric_params (p >= 1); a tree algorithm with a
    metric its tree lacks runs scikit-learn (which raises)."""
    from sklearn.neighbors import BallTree, KDTree

    algorithm, metric = params.get("algorithm", "auto"), params.get("metric", "euclidean")
    trees = {"kd_tree": KDTree.valid_metrics, "ball_tree": BallTree.valid_metrics}
    if algorithm in trees and metric not in trees[algorithm]:
        return f"metric={metric!r} is not a metric of algorithm={algorithm!r}"
    mp = dict(params.get("metric_params") or {})
    p = mp.pop("p", None)
    if mp:
        return f"metric_params {sorted(mp)} unsupported (twinlearn takes only minkowski's p)"
    if params.get("metric") == "minkowski" and p is not None and not p >= 1:
        return f"metric_params p={p!r} unsupported with metric='minkowski' (twinlearn serves p >= 1)"
    return None


def _hdbscan_derive(est, params):
    """The centers (when stored) and scikit-learn's single-linkage tree
    (read by its dbscan_clustering), from twinlearn's sorted spanning tree."""
    out = {name: getattr(est, name) for name in ("centroids_", "medoids_") if hasattr(est, name)}

    def tree():
        import numpy as np
        from sklearn.cluster._hdbscan._linkage import MST_edge_dtype, make_single_linkage

        src, dst, w = est._mst
        t = make_single_linkage(np.rec.fromarrays([src, dst, w], dtype=MST_edge_dtype))
        if est._tl_nonfinite is not None:  # the rows left out join at infinity, as scikit-learn's
            from sklearn.cluster._hdbscan.hdbscan import remap_single_linkage_tree

            finite, infinite, missing = est._tl_nonfinite
            t = remap_single_linkage_tree(t, dict(enumerate(finite.tolist())),
                                          set(np.hstack([infinite, missing]).tolist()))
        return t

    out["_single_linkage_tree_"] = Lazy(tree)
    return out


# -- kernel density -----------------------------------------------------------------
#: Metrics twinlearn's KernelDensity sums (scikit-learn's KD-tree metrics).
_KDE_METRICS = ("euclidean", "l2", "manhattan", "cityblock", "l1", "chebyshev", "infinity", "minkowski")
_KDE_PARAMS = {
    "bandwidth": ANY,
    "algorithm": ANY,
    "kernel": one_of("gaussian", "tophat", "epanechnikov", "exponential", "linear", "cosine"),
    "metric": one_of(*_KDE_METRICS),
    "atol": ANY,
    "rtol": ANY,
    "breadth_first": ANY,
    "leaf_size": ANY,
    "metric_params": ANY,
}
_KDE_CHECK_DOC = (
    "the metric is one scikit-learn accepts with the algorithm, and `metric_params` holds at most "
    "minkowski's `p` (>= 1)."
)


def _kde_check(params):
    """The metric is one scikit-learn's tree of the algorithm accepts, and
    metric_params is at most minkowski's p >= 1."""
    from sklearn.neighbors import VALID_METRICS

    metric, algorithm = params.get("metric"), params.get("algorithm")
    alg = "kd_tree" if algorithm == "auto" and metric in VALID_METRICS["kd_tree"] else algorithm
    if alg == "auto":
        alg = "ball_tree"
    if metric not in VALID_METRICS.get(alg, ()):
        return f"metric={metric!r} with algorithm={algorithm!r} (scikit-learn refuses it)"
    mp = dict(params.get("metric_params") or {})
    p = mp.pop("p", 2)
    if mp:
        return f"metric_params {sorted(mp)} unsupported (twinlearn takes minkowski's p only)"
    if not (isinstance(p, numbers.Real) and p >= 1):
        return f"metric_params p={p!r} unsupported (twinlearn serves p >= 1)"
    return None


def _kde_derive(tl, params):
    """scikit-learn's tree (for its own sample()), built when first read."""

    def make():
        from sklearn.neighbors import BallTree, KDTree

        from twinlearn import _io

        metric, algorithm = params["metric"], params["algorithm"]
        tree = KDTree if algorithm == "kd_tree" or (algorithm == "auto" and metric in KDTree.valid_metrics) \
            else BallTree
        X = np.asarray(_io.to_numpy(tl._fit_X), dtype=np.float64)
        w = None if tl._tl_weights is None else np.asarray(tl._tl_weights, dtype=np.float64)
        return tree(X, metric=metric, leaf_size=params["leaf_size"], sample_weight=w,
                    **(params.get("metric_params") or {}))

    return {"tree_": Lazy(make)}


def _kde_output(method, value):
    """Log densities in float64, as scikit-learn gives them."""
    if method == "score_samples":
        return np.asarray(value, dtype=np.float64)
    return value


def _hgb_translate(params):
    """A leaf limit that binds (below 2**max_depth) or min_samples_leaf > 1 asks
    for scikit-learn's kind of tree: twinlearn's best-first per-node trees with a
    learned NaN side. Otherwise twinlearn's faster oblivious trees serve."""
    depth, leaves, min_leaf = params["max_depth"], params["max_leaf_nodes"], params["min_samples_leaf"]
    per_node = (leaves is not None and leaves < 2 ** depth) or min_leaf != 1
    # Monotonic and interaction constraints select per-node trees in the twinlearn estimator.
    constraints = {k: params[k] for k in ("monotonic_cst", "interaction_cst") if params.get(k) is not None}
    return {
        "loss": params["loss"],
        "learning_rate": params["learning_rate"],
        "n_estimators": params["max_iter"],
        "max_depth": depth,
        "max_leaf_nodes": leaves if per_node else None,
        "min_samples_leaf": min_leaf,
        "l2_regularization": params["l2_regularization"],
        "max_bins": params["max_bins"],
        "random_state": params["random_state"],
        **constraints,
        # Early stopping and progress lines: the same names, defaults and rule in twinlearn.
        "early_stopping": params["early_stopping"],
        "scoring": params["scoring"],
        "validation_fraction": params["validation_fraction"],
        "n_iter_no_change": params["n_iter_no_change"],
        "tol": params["tol"],
        "verbose": params["verbose"],
        **({"class_weight": params["class_weight"]} if "class_weight" in params else {}),
    }


#: The scorers twinlearn's early stopping computes (twinlearn.ensemble._early_stopping.SCORERS).
_HGB_SCORERS = ("loss", "accuracy", "roc_auc", "neg_log_loss", "neg_root_mean_squared_error",
                "neg_mean_squared_error", "neg_mean_absolute_error", "r2")


def _hgb_check(params):
    if params.get("max_depth") is None:
        return ("parameter max_depth=None unsupported (twinlearn grows trees within a fixed depth, 1 to 16; "
                "scikit-learn's best-first trees may grow deeper)")
    if params.get("early_stopping") is not False and not (params.get("scoring") is None
                                                          or params.get("scoring") in _HGB_SCORERS):
        return (f"parameter scoring={params.get('scoring')!r} unsupported with early stopping (twinlearn scores "
                f"None or {', '.join(_HGB_SCORERS)})")
    return None


def _per_node_records(depth, split0, feats, borders, bins, gains, nan_right, record_dtype):
    """One per-node tree (its splits from entry split0, level-major: level l's
    node with prefix p, bit j = right at level j, at 2**l - 1 + p) as scikit-learn
    predictor records: the nodes that split, and leaves where the tree ends or a
    node does not split (all its rows go left down to leaf p, so it is that
    leaf). Returns (records, the record index of each leaf, its leaf index)."""
    recs, leaf_at, leaf_index = [], [], []
    stack = [(0, 0, -1, 0)]  # (level, prefix, parent record, 0 left / 1 right)
    while stack:
        level, p, parent, side = stack.pop()
        at = len(recs)
        rec = np.zeros((), dtype=record_dtype)
        rec["depth"] = level
        if parent >= 0:
            recs[parent]["left" if side == 0 else "right"] = at
        slot = split0 + (1 << level) - 1 + p
        if level == depth or feats[slot] < 0:
            rec["is_leaf"] = 1
            leaf_at.append(at)
            leaf_index.append(p)
            recs.append(rec)
            continue
        rec["feature_idx"] = feats[slot]
        rec["num_threshold"] = borders[slot]
        rec["bin_threshold"] = min(int(bins[slot]), 255)
        rec["gain"] = gains[slot]
        rec["missing_go_to_left"] = 1 - int(nan_right[slot]) if nan_right.size else 1
        recs.append(rec)
        stack.append((level + 1, p + (1 << level), at, 1))
        stack.append((level + 1, p, at, 0))
    return np.array(recs, dtype=record_dtype), np.asarray(leaf_at), np.asarray(leaf_index)


def _hgb_predictors(tl):
    """scikit-learn TreePredictors equal to twinlearn's trees.

    A tree of depth D has one (feature, border) split per level (oblivious
    trees) or per node (per-node trees, level-major); a row goes right at a
    split when its value exceeds the border (NaN goes left under nan_mode
    'Min', or to the side split_nan_right_ names under 'Learned'), and its leaf
    is the sum over levels l of ``goes_right << l``. Here each tree becomes a
    full binary tree of 2**(D+1) - 1 nodes (oblivious trees) or the tree of
    the nodes that split (per-node trees: a node that does not split is a
    leaf), one per output, as scikit-learn keeps one tree per class and
    iteration."""
    from sklearn.ensemble._hist_gradient_boosting.common import PREDICTOR_RECORD_DTYPE, X_BITSET_INNER_DTYPE
    from sklearn.ensemble._hist_gradient_boosting.predictor import TreePredictor

    depths = np.asarray(tl.tree_depth_, dtype=np.int64)
    feats = np.asarray(tl.split_feature_, dtype=np.int64)
    borders = np.asarray(tl.split_border_, dtype=np.float64)
    bins = np.asarray(tl.split_bin_, dtype=np.int64)
    gains = np.asarray(tl.split_gain_, dtype=np.float64)
    leaves = np.asarray(tl.leaf_values_, dtype=np.float64)
    nan_right = tl._split_nan_right()
    per_node = tl._fitted_grow_policy() != "SymmetricTree"
    k_out = int(tl.n_outputs_)
    no_bitsets = np.zeros((0, 8), dtype=X_BITSET_INNER_DTYPE)
    shapes = {}  # depth -> (node template, level of each inner node, leaf nodes, their leaf indices)

    def shape_of(depth):
        if depth not in shapes:
            n_nodes = 2 ** (depth + 1) - 1
            # Breadth-first full tree: node i's children are 2i+1 (left) and
            # 2i+2 (right); path bits give the leaf index, level 0 the lowest bit.
            level = np.floor(np.log2(np.arange(n_nodes) + 1)).astype(np.int64)
            tmpl = np.zeros(n_nodes, dtype=PREDICTOR_RECORD_DTYPE)
            inner = np.arange(2 ** depth - 1)
            tmpl["depth"] = level
            tmpl["missing_go_to_left"][inner] = 1
            tmpl["left"][inner] = 2 * inner + 1
            tmpl["right"][inner] = 2 * inner + 2
            leaf_nodes = np.arange(2 ** depth - 1, n_nodes)
            tmpl["is_leaf"][leaf_nodes] = 1
            pos = leaf_nodes - (2 ** depth - 1)  # left-to-right position: bits root-first
            leaf_index = np.zeros_like(pos)
            for lvl in range(depth):
                leaf_index |= ((pos >> (depth - 1 - lvl)) & 1) << lvl
            shapes[depth] = (tmpl, level[inner], leaf_nodes, leaf_index)
        return shapes[depth]

    predictors = []
    s_off = l_off = 0
    for depth in depths:
        depth = int(depth)
        if per_node:
            nodes, leaf_nodes, leaf_index = _per_node_records(depth, s_off, feats, borders, bins, gains, nan_right,
                                                              PREDICTOR_RECORD_DTYPE)
        else:
            tmpl, level_inner, leaf_nodes, leaf_index = shape_of(depth)
            inner = slice(0, 2 ** depth - 1)
            split = s_off + level_inner
            nodes = tmpl.copy()
            nodes["feature_idx"][inner] = feats[split]
            nodes["num_threshold"][inner] = borders[split]
            nodes["bin_threshold"][inner] = np.minimum(bins[split], 255)
            nodes["gain"][inner] = gains[split]
        values = leaves[l_off:l_off + (2 ** depth) * k_out].reshape(2 ** depth, k_out)
        per_output = []
        for k in range(k_out):
            nk = nodes if k == k_out - 1 else nodes.copy()
            nk["value"][leaf_nodes] = values[leaf_index, k]
            per_output.append(TreePredictor(nk, no_bitsets, no_bitsets))
        predictors.append(per_output)
        s_off += 2 ** depth - 1 if per_node else depth
        l_off += (2 ** depth) * k_out
    return predictors


def _hgb_derive(tl, params):
    """scikit-learn's fitted state of HistGradientBoosting from twinlearn's
    model, so scikit-learn's own predict methods (and pickles loaded without
    twinlearn) give twinlearn's predictions."""
    from sklearn.ensemble._hist_gradient_boosting.binning import _BinMapper
    from sklearn._loss.loss import HalfBinomialLoss, HalfMultinomialLoss, HalfPoissonLoss, HalfSquaredError

    n_classes = len(getattr(tl, "classes_", ()))
    k = n_classes if n_classes > 2 else 1
    if n_classes > 2:
        loss = HalfMultinomialLoss(n_classes=n_classes)
    elif n_classes == 2:
        loss = HalfBinomialLoss()
    elif params["loss"] == "poisson":
        loss = HalfPoissonLoss()
    else:
        loss = HalfSquaredError()
    d = int(tl.n_features_in_)

    def bin_mapper():
        offsets = np.asarray(tl.border_offsets_, dtype=np.int64)
        all_borders = np.asarray(tl.borders_, dtype=np.float64)
        mapper = _BinMapper(n_bins=int(params["max_bins"]) + 1, random_state=params["random_state"])
        mapper.bin_thresholds_ = [all_borders[offsets[j]:offsets[j + 1]] for j in range(d)]
        mapper.is_categorical_ = np.zeros(d, dtype=np.uint8)
        mapper.n_bins_non_missing_ = np.asarray([len(b) + 1 for b in mapper.bin_thresholds_], dtype=np.uint32)
        mapper.missing_values_bin_idx_ = int(params["max_bins"])
        return mapper

    return {
        "n_iter_": int(tl.n_estimators_),
        "n_trees_per_iteration_": k,
        "do_early_stopping_": bool(tl.do_early_stopping_),
        "train_score_": np.asarray(tl.train_score_),
        "validation_score_": np.asarray(tl.validation_score_),
        "is_categorical_": None,
        "_preprocessor": None,
        "_is_categorical_remapped": None,
        "_n_features": d,
        "_loss": loss,
        "_baseline_prediction": np.asarray(tl.base_score_, dtype=np.float64).reshape(1, k),
        "_bin_mapper": Lazy(bin_mapper),
        "_predictors": Lazy(lambda: _hgb_predictors(tl)),
        "_use_validation_data": bool(tl.do_early_stopping_) and params["validation_fraction"] is not None,
    }


_HGB_PARAMS = {
    "learning_rate": ANY,
    "max_iter": ANY,
    "max_leaf_nodes": where(lambda v: v is None or isinstance(v, numbers.Integral), "None or an int"),
    "max_depth": where(lambda v: isinstance(v, numbers.Integral) and 1 <= v <= 16, "integers 1 to 16"),
    "min_samples_leaf": where(lambda v: isinstance(v, numbers.Integral), "ints"),
    "l2_regularization": ANY,
    "max_features": one_of(1.0),
    "max_bins": ANY,
    "monotonic_cst": ANY,
    "interaction_cst": ANY,
    "categorical_features": one_of("from_dtype", None),
    "early_stopping": ANY,
    "scoring": ANY,
    "validation_fraction": ANY,
    "n_iter_no_change": ANY,
    "tol": ANY,
    "verbose": ANY,
    "random_state": ANY,
}
_HGB_CHECK_DOC = (
    "`max_depth` is set (1 to 16). "
    "Early stopping (`early_stopping` True, or 'auto' with more than 10 000 rows, as scikit-learn) runs on "
    "twinlearn with scikit-learn's rule, validation split and `scoring` 'loss' (its default), None or one of "
    "accuracy, roc_auc, neg_log_loss, neg_root_mean_squared_error, neg_mean_squared_error, "
    "neg_mean_absolute_error, r2; other scorers run on scikit-learn. `verbose` prints scikit-learn's lines "
    "(without the per-round leaf counts and time breakdown). Categorical features (pandas category columns, "
    "`categorical_features` masks), feature subsampling and warm starts run on scikit-learn; class "
    "weights multiply the sample weights, as in scikit-learn. `monotonic_cst` and `interaction_cst` run "
    "on twinlearn (per-node trees, scikit-learn's rules and checks)."
)
_HGB_NOTES = (
    "With a `max_leaf_nodes` below `2**max_depth` (scikit-learn's default 31 does for `max_depth` 5 "
    "and more) or `min_samples_leaf` above 1 (its default is 20), twinlearn grows trees as "
    "scikit-learn does: node by node, best first within `max_depth`, up to `max_leaf_nodes` leaves, "
    "each split learning the side NaN goes to; `min_samples_leaf` counts rows of positive sample "
    "weight. Otherwise it grows oblivious (symmetric, CatBoost-style) trees of exactly `max_depth` "
    "levels, one split per level, with NaN below every value. Either way the model is twinlearn's, "
    "of comparable quality, not scikit-learn's model (borders, gains and regularization are "
    "twinlearn's). `max_iter` boosting rounds (one multi-output tree per round for several classes). "
    "Predictions are computed in float64 (the margins summed in double), as scikit-learn's."
)
_HGB_EXAMPLE = {"max_depth": 6, "max_leaf_nodes": None, "min_samples_leaf": 1, "early_stopping": False}

ENTRIES = (
    Entry(
        sklearn="sklearn.preprocessing.StandardScaler",
        twinlearn="twinlearn.preprocessing.StandardScaler",
        methods=("fit", "partial_fit", "transform", "fit_transform", "inverse_transform"),
        attributes=("mean_", "var_", "scale_", "n_samples_seen_"),
        params={"copy": ANY, "with_mean": ANY, "with_std": ANY},
        kwargs=("sample_weight", "copy"),
        allow_nan=True,
        min_rows=DEFAULT_MIN_ROWS,
        conformance=(
            ("sklearn.preprocessing.tests.test_data", ""),
            ("sklearn.tests.test_common", "StandardScaler"),
        ),
        conformance_k="standard_scaler or StandardScaler",
    ),
    Entry(
        sklearn="sklearn.preprocessing.MinMaxScaler",
        twinlearn="twinlearn.preprocessing.MinMaxScaler",
        methods=("fit", "partial_fit", "transform", "fit_transform", "inverse_transform"),
        attributes=("min_", "scale_", "data_min_", "data_max_", "data_range_", "n_samples_seen_"),
        params={"feature_range": ANY, "copy": ANY, "clip": ANY},
        allow_nan=True,
        min_rows=DEFAULT_MIN_ROWS,
        conformance=(
            ("sklearn.preprocessing.tests.test_data", ""),
            ("sklearn.tests.test_common", "MinMaxScaler"),
        ),
        conformance_k="min_max_scaler or minmax_scaler or MinMaxScaler",
    ),
    Entry(
        sklearn="sklearn.preprocessing.MaxAbsScaler",
        twinlearn="twinlearn.preprocessing.MaxAbsScaler",
        methods=("fit", "partial_fit", "transform", "fit_transform", "inverse_transform"),
        attributes=("scale_", "max_abs_", "n_samples_seen_"),
        params={"copy": ANY, "clip": ANY},
        allow_nan=True,
        min_rows=DEFAULT_MIN_ROWS,
        conformance=(
            ("sklearn.preprocessing.tests.test_data", ""),
            ("sklearn.tests.test_common", "MaxAbsScaler"),
        ),
        conformance_k="maxabs_scaler or max_abs_scaler or MaxAbsScaler",
    ),
    Entry(
        sklearn="sklearn.preprocessing.RobustScaler",
        twinlearn="twinlearn.preprocessing.RobustScaler",
        methods=("fit", "transform", "fit_transform", "inverse_transform"),
        attributes=("center_", "scale_"),
        params={"copy": ANY, "quantile_range": ANY, "unit_variance": ANY, "with_centering": ANY,
                "with_scaling": ANY},
        allow_nan=True,
        min_rows=DEFAULT_MIN_ROWS,
        conformance=(
            ("sklearn.preprocessing.tests.test_data", ""),
            ("sklearn.tests.test_common", "RobustScaler"),
        ),
        conformance_k="robust_scaler or RobustScaler",
    ),
    Entry(
        sklearn="sklearn.preprocessing.Normalizer",
        twinlearn="twinlearn.preprocessing.Normalizer",
        methods=("fit", "transform", "fit_transform"),
        attributes=(),
        params={"norm": ANY, "copy": ANY},
        kwargs=("copy",),
        min_rows=DEFAULT_MIN_ROWS,
        conformance=(
            ("sklearn.preprocessing.tests.test_data", ""),
            ("sklearn.tests.test_common", "Normalizer"),
        ),
        conformance_k="normalize or normalizer or Normalizer",
    ),
    Entry(
        sklearn="sklearn.naive_bayes.GaussianNB",
        twinlearn="twinlearn.naive_bayes.GaussianNB",
        methods=("fit", "partial_fit", "predict", "predict_proba", "predict_log_proba",
                 "predict_joint_log_proba", "score"),
        attributes=("class_count_", "class_prior_", "classes_", "var_", "theta_", "epsilon_"),
        params={"priors": ANY, "var_smoothing": ANY},
        kwargs=("sample_weight", "classes"),
        min_rows=DEFAULT_MIN_ROWS,
        task="classifier",
        conformance=(
            ("sklearn.tests.test_naive_bayes", ""),
            ("sklearn.tests.test_common", "GaussianNB"),
        ),
        conformance_k="gnb or GaussianNB or gaussian",
    ),
    # -- support vector machines -------------------------------------------------------
    Entry(
        sklearn="sklearn.svm.SVC",
        twinlearn="twinlearn.svm.SVC",
        # predict_proba (probability=True only) runs scikit-learn's own code on the mirrored model
        methods=("fit", "predict", "decision_function", "score"),
        attributes=("support_", "support_vectors_", "dual_coef_", "intercept_", "classes_", "class_weight_",
                    "fit_status_", "n_iter_", "shape_fit_", "probA_", "probB_"),
        params={p: ANY for p in ("C", "kernel", "degree", "gamma", "coef0", "shrinking", "probability", "tol",
                                 "cache_size", "class_weight", "verbose", "max_iter", "decision_function_shape",
                                 "break_ties", "random_state")},
        check=_svm_check,
        check_doc="a named kernel (linear, poly, rbf, sigmoid, precomputed); a callable kernel runs scikit-learn.",
        derive=_svm_derive,
        kwargs=("sample_weight",),
        min_rows=DEFAULT_MIN_ROWS,
        task="classifier",
        notes=("libsvm's SMO (WSS2, shrinking, rho) on the CPU with float64 kernel values; decision values within "
               "the stopping tolerance of scikit-learn's; Platt scaling from twinlearn's own folds."),
        conformance=(("sklearn.svm.tests.test_svm", ""),),
        conformance_k="svc or SVC",
    ),
    Entry(
        sklearn="sklearn.svm.SVR",
        twinlearn="twinlearn.svm.SVR",
        methods=("fit", "predict", "score"),
        attributes=("support_", "support_vectors_", "dual_coef_", "intercept_", "fit_status_", "n_iter_",
                    "shape_fit_"),
        params={p: ANY for p in ("kernel", "degree", "gamma", "coef0", "tol", "C", "epsilon", "shrinking",
                                 "cache_size", "verbose", "max_iter")},
        check=_svm_check,
        check_doc="a named kernel (linear, poly, rbf, sigmoid, precomputed); a callable kernel runs scikit-learn.",
        derive=_svm_derive,
        kwargs=("sample_weight",),
        min_rows=DEFAULT_MIN_ROWS,
        task="regressor",
        notes="libsvm's epsilon-SVR dual (2n variables) on the same SMO solver as SVC.",
        conformance=(("sklearn.svm.tests.test_svm", ""),),
        conformance_k="svr or SVR",
    ),
    # -- Gaussian processes ----------------------------------------------------------
    Entry(
        sklearn="sklearn.gaussian_process.GaussianProcessRegressor",
        twinlearn="twinlearn.gaussian_process.GaussianProcessRegressor",
        methods=("fit", "predict", "sample_y", "score"),
        attributes=("X_train_", "y_train_", "kernel_", "L_", "alpha_", "log_marginal_likelihood_value_"),
        params={"kernel": ANY, "alpha": ANY, "optimizer": ANY, "n_restarts_optimizer": ANY, "normalize_y": ANY,
                "copy_X_train": ANY, "n_targets": ANY, "random_state": ANY},
        check=_gpr_check,
        check_doc=("a kernel twinlearn computes: RBF, Matern (nu 0.5, 1.5, 2.5, inf), RationalQuadratic, "
                   "ExpSineSquared, DotProduct, WhiteKernel, ConstantKernel and their sums, products and powers."),
        derive=_gpr_derive,
        min_rows=DEFAULT_MIN_ROWS,
        task="regressor",
        notes=("the kernel matrices use twinlearn's distance kernels and its own exp/log/sin/cos/pow; the "
               "factorization is the fixed-order host Cholesky (LAPACK in fast mode on the CPU, cuSOLVER on a "
               "GPU); results within 1e-5 of scikit-learn's."),
        conformance=(
            ("sklearn.gaussian_process.tests.test_gpr", ""),
        ),
        conformance_k="gpr",
    ),
    # -- clustering ----------------------------------------------------------------
    Entry(
        sklearn="sklearn.cluster.KMeans",
        twinlearn="twinlearn.cluster.KMeans",
        methods=("fit", "fit_predict", "fit_transform", "predict", "transform", "score"),
        attributes=("cluster_centers_", "labels_", "inertia_", "n_iter_", "_n_features_out"),
        params={"n_clusters": ANY, "init": ANY, "n_init": ANY, "max_iter": ANY, "tol": ANY,
                "random_state": ANY, "copy_x": ANY, "algorithm": ANY},
        check=lambda p: ("algorithm='elkan' with n_clusters=1 (scikit-learn warns and runs 'lloyd')"
                         if p["algorithm"] == "elkan" and p["n_clusters"] == 1 else None),
        check_doc="not `algorithm='elkan'` with `n_clusters=1`.",
        derive=_kmeans_derive,
        lazy=("_n_threads",),
        kwargs=("sample_weight",),
        min_rows=DEFAULT_MIN_ROWS,
        notes=("initial centers ('k-means++', 'random') are drawn by twinlearn's counter-based generator, "
               "so for the same `random_state` they differ from scikit-learn's; from the same initial "
               "centers the iterations follow scikit-learn's. `algorithm='elkan'` runs Lloyd's "
               "iterations (the same result)."),
        conformance=(
            ("sklearn.cluster.tests.test_k_means", ""),
            ("sklearn.tests.test_common", "KMeans and not MiniBatch"),
        ),
        conformance_k="not MiniBatch and not minibatch",
    ),
    Entry(
        sklearn="sklearn.cluster.MiniBatchKMeans",
        twinlearn="twinlearn.cluster.MiniBatchKMeans",
        methods=("fit", "partial_fit", "fit_predict", "fit_transform", "predict", "transform", "score"),
        attributes=("cluster_centers_", "labels_", "inertia_", "n_iter_", "n_steps_", "_n_features_out",
                    "_counts", "_batch_size", "_n_since_last_reassign", "_n_init", "_init_size"),
        params={"n_clusters": ANY, "init": ANY, "max_iter": ANY, "batch_size": ANY,
                "compute_labels": ANY, "random_state": ANY, "tol": ANY, "max_no_improvement": ANY,
                "init_size": ANY, "n_init": ANY, "reassignment_ratio": ANY},
        derive=_n_threads,
        lazy=("_n_threads",),
        kwargs=("sample_weight",),
        min_rows=DEFAULT_MIN_ROWS,
        notes=("initial centers and mini-batches are drawn by twinlearn's counter-based generator, so "
               "for the same `random_state` they differ from scikit-learn's."),
        conformance=(
            ("sklearn.cluster.tests.test_k_means", ""),
            ("sklearn.tests.test_common", "MiniBatchKMeans"),
        ),
        conformance_k="MiniBatch or minibatch",
    ),
    Entry(
        sklearn="sklearn.cluster.DBSCAN",
        twinlearn="twinlearn.cluster.DBSCAN",
        methods=("fit", "fit_predict"),
        attributes=("core_sample_indices_", "components_", "labels_"),
        params={"eps": ANY, "min_samples": ANY, "metric": one_of(*_NEIGHBOR_METRICS),
                "metric_params": where(lambda v: not v, "None or {}"), "algorithm": ANY,
                "leaf_size": ANY, "p": ANY, "n_jobs": ANY},
        check=_dbscan_check,
        check_doc="`p >= 1` with `metric='minkowski'`.",
        kwargs=("sample_weight",),
        min_rows=DEFAULT_MIN_ROWS,
        notes=("every `algorithm` runs twinlearn's exact brute-force scan, distances in float64; the "
               "labels are scikit-learn's rule computed by connected components (the same labels)."),
        conformance=(
            ("sklearn.cluster.tests.test_dbscan", ""),
            ("sklearn.tests.test_common", "DBSCAN"),
        ),
        conformance_k="dbscan",
    ),
    Entry(
        sklearn="sklearn.cluster.AgglomerativeClustering",
        twinlearn="twinlearn.cluster.AgglomerativeClustering",
        methods=("fit", "fit_predict"),
        attributes=("labels_", "children_", "n_clusters_", "n_leaves_", "n_connected_components_"),
        derive=lambda tl, params: {"distances_": tl.distances_} if hasattr(tl, "distances_") else {},
        params={"n_clusters": ANY, "metric": one_of(*_AGGLO_METRICS), "memory": ANY, "connectivity": ANY,
                "compute_full_tree": ANY, "linkage": ANY, "distance_threshold": ANY, "compute_distances": ANY},
        check=_agglo_check,
        check_rows=_agglo_check_rows,
        check_doc="`memory=None`, ward with 'euclidean' / 'l2'; without connectivity, linkages other than "
                  "'single' on at most 40000 rows.",
        min_rows=DEFAULT_MIN_ROWS,
        notes=("SciPy's nearest-neighbour chain and scikit-learn's Prim scan, the same tree and labels; "
               "distances in float64, euclidean by differences."),
        conformance=(
            ("sklearn.cluster.tests.test_hierarchical", ""),
            ("sklearn.tests.test_common", "AgglomerativeClustering"),
        ),
        conformance_k="agglomerative or Agglomerative",
    ),
    Entry(
        sklearn="sklearn.cluster.HDBSCAN",
        twinlearn="twinlearn.cluster.HDBSCAN",
        methods=("fit", "fit_predict"),
        attributes=("labels_", "probabilities_"),
        params={"min_cluster_size": ANY, "min_samples": ANY, "cluster_selection_epsilon": ANY,
                "max_cluster_size": ANY, "metric": one_of(*_NEIGHBOR_METRICS), "metric_params": ANY,
                "alpha": ANY, "algorithm": ANY, "leaf_size": ANY, "n_jobs": ANY,
                "cluster_selection_method": ANY, "allow_single_cluster": ANY, "store_centers": ANY,
                "copy": ANY},
        check=_hdbscan_check,
        check_doc="`metric_params` holds only minkowski's `p` (>= 1); `algorithm` 'kd_tree' / 'ball_tree' "
                  "with a metric of its tree.",
        derive=_hdbscan_derive,
        lazy=("_single_linkage_tree_",),
        allow_nan=True,
        min_rows=DEFAULT_MIN_ROWS,
        notes=("core distances and Prim's spanning tree on the chosen device (distances in float64, "
               "computed on the fly); the tree condensation and selection follow scikit-learn's "
               "`_tree.pyx` step by step. Sparse precomputed graphs are not served (ValueError)."),
        conformance=(
            ("sklearn.cluster.tests.test_hdbscan", ""),
        ),
        conformance_k="hdbscan",
    ),
    Entry(
        sklearn="sklearn.cluster.SpectralClustering",
        twinlearn="twinlearn.cluster.SpectralClustering",
        methods=("fit", "fit_predict"),
        attributes=("affinity_matrix_", "labels_"),
        params={"n_clusters": ANY, "eigen_solver": one_of(None, "arpack", "lobpcg"), "n_components": ANY,
                "random_state": ANY, "n_init": ANY, "gamma": ANY, "affinity": ANY, "n_neighbors": ANY,
                "eigen_tol": ANY, "assign_labels": ANY, "degree": ANY, "coef0": ANY, "kernel_params": ANY,
                "n_jobs": ANY, "verbose": ANY},
        min_rows=DEFAULT_MIN_ROWS,
        notes=("the normalized Laplacian's embedding as scikit-learn's (signs by its rule), eigenvectors by "
               "a dense eigensolver or subspace iteration on the canonical GEMM, labels by twinlearn's KMeans "
               "(its own k-means++ draws): the same clusters up to a permutation where they are well "
               "defined. `eigen_solver='amg'` runs scikit-learn."),
        conformance=(
            ("sklearn.cluster.tests.test_spectral", ""),
            ("sklearn.tests.test_common", "SpectralClustering"),
        ),
        conformance_k="spectral or Spectral",
    ),
    # -- neighbours ------------------------------------------------------------------
    Entry(
        sklearn="sklearn.neighbors.NearestNeighbors",
        twinlearn="twinlearn.neighbors.NearestNeighbors",
        methods=("fit", "kneighbors", "kneighbors_graph", "radius_neighbors", "radius_neighbors_graph"),
        attributes=_NEIGHBOR_ATTRIBUTES,
        params=_NEIGHBOR_PARAMS,
        check=_neighbors_check,
        check_doc=_NEIGHBOR_CHECK_DOC,
        derive=_neighbors_derive,
        kwargs=_NEIGHBOR_KWARGS,
        min_rows=DEFAULT_MIN_ROWS,
        notes=_NEIGHBOR_NOTES,
        conformance=(
            ("sklearn.neighbors.tests.test_neighbors", ""),
            ("sklearn.tests.test_common", "NearestNeighbors"),
        ),
        conformance_k="unsupervised_kneighbors or kneighbors_graph or radius_neighbors_graph or k_and_radius_neighbors",
    ),
    Entry(
        sklearn="sklearn.neighbors.KNeighborsClassifier",
        twinlearn="twinlearn.neighbors.KNeighborsClassifier",
        methods=("fit", "predict", "predict_proba", "score", "kneighbors", "kneighbors_graph"),
        attributes=_NEIGHBOR_ATTRIBUTES + ("classes_", "outputs_2d_", "_y"),
        params={**_KNN_PARAMS, "weights": one_of("uniform", "distance")},
        check=_neighbors_check,
        check_doc=_NEIGHBOR_CHECK_DOC,
        derive=_neighbors_derive,
        kwargs=_NEIGHBOR_KWARGS + ("sample_weight",),
        min_rows=DEFAULT_MIN_ROWS,
        task="classifier",
        notes=_NEIGHBOR_NOTES,
        conformance=(
            ("sklearn.neighbors.tests.test_neighbors", ""),
            ("sklearn.tests.test_common", "KNeighborsClassifier"),
        ),
        conformance_k="kneighbors_classifier or KNeighborsClassifier_multioutput or neighbors_iris",
    ),
    Entry(
        sklearn="sklearn.neighbors.KNeighborsRegressor",
        twinlearn="twinlearn.neighbors.KNeighborsRegressor",
        methods=("fit", "predict", "score", "kneighbors", "kneighbors_graph"),
        attributes=_NEIGHBOR_ATTRIBUTES + ("_y",),
        params={**_KNN_PARAMS, "weights": one_of("uniform", "distance")},
        check=_neighbors_check,
        check_doc=_NEIGHBOR_CHECK_DOC,
        derive=_neighbors_derive,
        kwargs=_NEIGHBOR_KWARGS + ("sample_weight",),
        min_rows=DEFAULT_MIN_ROWS,
        task="regressor",
        notes=_NEIGHBOR_NOTES,
        conformance=(
            ("sklearn.neighbors.tests.test_neighbors", ""),
            ("sklearn.tests.test_common", "KNeighborsRegressor"),
        ),
        conformance_k="kneighbors_regressor or KNeighborsRegressor_multioutput",
    ),
    Entry(
        sklearn="sklearn.neighbors.KernelDensity",
        twinlearn="twinlearn.neighbors.KernelDensity",
        methods=("fit", "score_samples", "score"),
        attributes=("bandwidth_",),
        params=_KDE_PARAMS,
        check=_kde_check,
        check_doc=_KDE_CHECK_DOC,
        derive=_kde_derive,
        lazy=("tree_",),
        kwargs=("sample_weight",),
        output=_kde_output,
        min_rows=DEFAULT_MIN_ROWS,
        notes=(
            "exact kernel sums (no tree, so `atol`, `rtol`, `breadth_first`, `leaf_size` and `algorithm` have "
            "no effect; scikit-learn's tree leaves roundoff where the density is 0 or tiny); `sample` is "
            "scikit-learn's, on a tree built when first needed."
        ),
        conformance=(("sklearn.neighbors.tests.test_kde", ""),),
        conformance_k="kernel_density or kde",
    ),
    # -- linear models -----------------------------------------------------------------
    Entry(
        sklearn="sklearn.linear_model.LinearRegression",
        twinlearn="twinlearn.linear_model.LinearRegression",
        methods=("fit", "predict", "score"),
        attributes=("coef_", "intercept_", "rank_", "singular_"),
        params={"fit_intercept": ANY, "copy_X": ANY, "tol": ANY, "n_jobs": ANY, "positive": ANY},
        kwargs=("sample_weight",),
        min_rows=DEFAULT_MIN_ROWS,
        task="regressor",
        conformance=(
            ("sklearn.linear_model.tests.test_base", ""),
            ("sklearn.tests.test_common", "LinearRegression"),
        ),
        conformance_k="linear_regression or LinearRegression",
    ),
    Entry(
        sklearn="sklearn.linear_model.Ridge",
        twinlearn="twinlearn.linear_model.Ridge",
        methods=("fit", "predict", "score"),
        attributes=("coef_", "intercept_", "n_iter_", "solver_"),
        params={"alpha": ANY, "fit_intercept": ANY, "copy_X": ANY, "max_iter": ANY, "tol": ANY,
                "solver": one_of("auto", "svd", "cholesky"), "positive": ANY, "random_state": ANY},
        kwargs=("sample_weight",),
        min_rows=DEFAULT_MIN_ROWS,
        task="regressor",
        notes=("`positive=True` is solved exactly (non-negative least squares on the Gram matrix) "
               "where scikit-learn runs L-BFGS to `tol`."),
        conformance=(
            ("sklearn.linear_model.tests.test_ridge", ""),
            ("sklearn.tests.test_common", "Ridge and not RidgeCV and not RidgeClassifier"),
        ),
        conformance_k="ridge_regression_sample_weights or ridge_shapes_type or ridge_intercept or ridge_vs_lstsq or ridge_individual_penalties or dtype_match",
    ),
    Entry(
        sklearn="sklearn.linear_model.RidgeClassifier",
        twinlearn="twinlearn.linear_model.RidgeClassifier",
        methods=("fit", "predict", "decision_function", "score"),
        attributes=("coef_", "intercept_", "n_iter_", "solver_", "classes_", "_label_binarizer"),
        params={"alpha": ANY, "fit_intercept": ANY, "copy_X": ANY, "max_iter": ANY, "tol": ANY,
                "class_weight": ANY, "solver": one_of("auto", "svd", "cholesky"), "positive": ANY,
                "random_state": ANY},
        kwargs=("sample_weight",),
        min_rows=DEFAULT_MIN_ROWS,
        task="classifier",
        conformance=(
            ("sklearn.linear_model.tests.test_ridge", ""),
            ("sklearn.tests.test_common", "RidgeClassifier and not RidgeClassifierCV"),
        ),
        conformance_k="class_weights or ridgeclassifier_multilabel",
    ),
    Entry(
        sklearn="sklearn.linear_model.LogisticRegression",
        twinlearn="twinlearn.linear_model.LogisticRegression",
        methods=("fit", "predict", "predict_proba", "predict_log_proba", "decision_function", "score"),
        attributes=("classes_", "coef_", "intercept_", "n_iter_"),
        params={"C": ANY, "l1_ratio": ANY, "dual": ANY, "tol": ANY, "fit_intercept": ANY,
                "intercept_scaling": ANY, "class_weight": ANY, "random_state": ANY, "max_iter": ANY},
        kwargs=("sample_weight",),
        min_rows=DEFAULT_MIN_ROWS,
        task="classifier",
        notes=("twinlearn's L-BFGS runs to a gradient at most `tol / 4` (an objective at least as low as "
               "scikit-learn's); `n_iter_` counts its iterations. The other solvers (their own "
               "convergence warnings, warm starts, L1 and elastic-net penalties) and the deprecated "
               "`penalty` run on scikit-learn."),
        conformance=(
            ("sklearn.linear_model.tests.test_logistic", ""),
            ("sklearn.tests.test_common", "LogisticRegression and not LogisticRegressionCV"),
        ),
        conformance_k="predict_2_classes or predict_3_classes or logistic_regression_sample_weights or logistic_regression_class_weights or dtype_match or write_parameters",
    ),
    Entry(
        sklearn="sklearn.linear_model.Lasso",
        twinlearn="twinlearn.linear_model.Lasso",
        methods=("fit", "predict", "score"),
        attributes=("coef_", "intercept_", "n_iter_", "dual_gap_"),
        params={"alpha": ANY, "fit_intercept": ANY, "precompute": where(lambda v: isinstance(v, bool), "True, False"),
                "copy_X": ANY, "max_iter": ANY, "tol": ANY, "positive": ANY, "random_state": ANY},
        kwargs=("sample_weight",),
        min_rows=DEFAULT_MIN_ROWS,
        task="regressor",
        conformance=(
            ("sklearn.linear_model.tests.test_coordinate_descent", ""),
            ("sklearn.tests.test_common", "Lasso and not LassoCV and not LassoLars and not MultiTask"),
        ),
        conformance_k="lasso_toy or lasso_zero or lasso_dual_gap or lasso_positive_constraint or lasso_readonly_data",
    ),
    Entry(
        sklearn="sklearn.linear_model.ElasticNet",
        twinlearn="twinlearn.linear_model.ElasticNet",
        methods=("fit", "predict", "score"),
        attributes=("coef_", "intercept_", "n_iter_", "dual_gap_"),
        params={"alpha": ANY, "l1_ratio": ANY, "fit_intercept": ANY,
                "precompute": where(lambda v: isinstance(v, bool), "True, False"), "max_iter": ANY,
                "copy_X": ANY, "tol": ANY, "positive": ANY, "random_state": ANY},
        kwargs=("sample_weight",),
        min_rows=DEFAULT_MIN_ROWS,
        task="regressor",
        conformance=(
            ("sklearn.linear_model.tests.test_coordinate_descent", ""),
            ("sklearn.tests.test_common", "ElasticNet and not ElasticNetCV and not MultiTask"),
        ),
        conformance_k="enet_toy or enet_positive_constraint or enet_multitarget or enet_sample_weight_consistency or enet_float_precision or enet_l1_ratio",
    ),
    # -- decomposition -------------------------------------------------------------------
    Entry(
        sklearn="sklearn.decomposition.PCA",
        twinlearn="twinlearn.decomposition.PCA",
        methods=("fit", "transform", "fit_transform", "inverse_transform", "score", "score_samples"),
        attributes=("components_", "explained_variance_", "explained_variance_ratio_", "singular_values_",
                    "mean_", "n_components_", "n_samples_", "noise_variance_", "_fit_svd_solver"),
        params={"n_components": ANY, "copy": ANY, "whiten": ANY, "svd_solver": ANY, "tol": ANY,
                "iterated_power": ANY, "n_oversamples": ANY, "power_iteration_normalizer": ANY,
                "random_state": ANY},
        min_rows=DEFAULT_MIN_ROWS,
        notes=("'arpack' is served by an exact solver; 'randomized' draws its projection from "
               "twinlearn's generator (for the same `random_state`, another approximation than "
               "scikit-learn's)."),
        conformance=(
            ("sklearn.decomposition.tests.test_pca", ""),
            ("sklearn.tests.test_common", "PCA and not Incremental and not Kernel and not Sparse"),
        ),
        conformance_k="not sparse",
    ),
    Entry(
        sklearn="sklearn.decomposition.TruncatedSVD",
        twinlearn="twinlearn.decomposition.TruncatedSVD",
        methods=("fit", "transform", "fit_transform", "inverse_transform"),
        attributes=("components_", "explained_variance_", "explained_variance_ratio_", "singular_values_"),
        params={"n_components": ANY, "algorithm": ANY, "n_iter": ANY, "n_oversamples": ANY,
                "power_iteration_normalizer": ANY, "random_state": ANY, "tol": ANY},
        min_rows=DEFAULT_MIN_ROWS,
        notes=("'randomized' draws its projection from twinlearn's generator (for the same "
               "`random_state`, another approximation than scikit-learn's). Sparse X, TruncatedSVD's "
               "usual input, runs on scikit-learn."),
        conformance=(
            ("sklearn.decomposition.tests.test_truncated_svd", ""),
            ("sklearn.tests.test_common", "TruncatedSVD"),
        ),
        conformance_k="not sparse",
    ),
    Entry(
        sklearn="sklearn.decomposition.IncrementalPCA",
        twinlearn="twinlearn.decomposition.IncrementalPCA",
        methods=("fit", "partial_fit", "transform", "fit_transform", "inverse_transform"),
        attributes=("components_", "n_samples_seen_", "mean_", "var_", "singular_values_", "explained_variance_",
                    "explained_variance_ratio_", "noise_variance_", "batch_size_", "n_components_"),
        params={"n_components": ANY, "whiten": ANY, "copy": ANY, "batch_size": ANY},
        kwargs=("check_input",),
        min_rows=DEFAULT_MIN_ROWS,
        conformance=(
            ("sklearn.decomposition.tests.test_incremental_pca", ""),
            ("sklearn.tests.test_common", "IncrementalPCA"),
        ),
        conformance_k="not sparse",
    ),
    # -- ensembles ---------------------------------------------------------------------
    Entry(
        sklearn="sklearn.ensemble.HistGradientBoostingClassifier",
        twinlearn="twinlearn.ensemble.GradientBoostingClassifier",
        methods=("fit", "predict", "predict_proba", "decision_function", "staged_predict",
                 "staged_predict_proba", "staged_decision_function", "score"),
        attributes=("classes_",),
        params={**_HGB_PARAMS, "loss": one_of("log_loss"), "class_weight": ANY},
        check=_hgb_check,
        check_doc=_HGB_CHECK_DOC,
        translate=_hgb_translate,
        derive=_hgb_derive,
        lazy=("_bin_mapper", "_predictors"),
        kwargs=("sample_weight",),
        allow_nan=True,
        min_rows=DEFAULT_MIN_ROWS,
        task="classifier",
        example=_HGB_EXAMPLE,
        notes=_HGB_NOTES,
        conformance=(
            ("sklearn.ensemble._hist_gradient_boosting.tests.test_gradient_boosting", ""),
            ("sklearn.tests.test_common", "HistGradientBoostingClassifier"),
        ),
        conformance_k="missing_values_trivial or zero_sample_weights_classification or staged_predict or consistent_lengths or single_node_trees",
    ),
    Entry(
        sklearn="sklearn.ensemble.HistGradientBoostingRegressor",
        twinlearn="twinlearn.ensemble.GradientBoostingRegressor",
        methods=("fit", "predict", "staged_predict", "score"),
        attributes=(),
        params={**_HGB_PARAMS, "loss": one_of("squared_error", "poisson")},
        check=_hgb_check,
        check_doc=_HGB_CHECK_DOC,
        translate=_hgb_translate,
        derive=_hgb_derive,
        lazy=("_bin_mapper", "_predictors"),
        kwargs=("sample_weight",),
        allow_nan=True,
        min_rows=DEFAULT_MIN_ROWS,
        task="regressor",
        example=_HGB_EXAMPLE,
        notes=_HGB_NOTES,
        conformance=(
            ("sklearn.ensemble._hist_gradient_boosting.tests.test_gradient_boosting", ""),
            ("sklearn.tests.test_common", "HistGradientBoostingRegressor"),
        ),
        conformance_k="max_depth_max_leaf_nodes or zero_sample_weights_regression or infinite_values or uint8_predict or different_bitness",
    ),
)


# -- random forests and extra trees ---------------------------------------------------
_FOREST_PARAMS = {
    "n_estimators": ANY, "max_depth": ANY, "min_samples_split": ANY, "min_samples_leaf": ANY,
    "min_weight_fraction_leaf": ANY, "max_features": ANY, "min_impurity_decrease": ANY, "bootstrap": ANY,
    "oob_score": ANY, "n_jobs": ANY, "random_state": ANY, "verbose": ANY, "max_samples": ANY,
    "max_leaf_nodes": ANY,
}
_FOREST_CHECK_DOC = "not `oob_score` or `max_samples` without `bootstrap` (scikit-learn raises)."
_FOREST_NOTES = ("the bootstrap rows and per-node feature draws (and extra trees' thresholds) come from "
                 "twinlearn's counter-based generator, so for the same `random_state` the trees differ from "
                 "scikit-learn's (the same in distribution); `estimators_` holds twinlearn's light trees "
                 "(`tree_` arrays, apply, decision_path, predict, predict_proba). Multi-output y (2-D) runs on "
                 "twinlearn: scikit-learn's multi-output criteria, `classes_` / `n_classes_` lists, "
                 "`predict_proba` a list; `ccp_alpha`, `monotonic_cst` and `warm_start` run scikit-learn.")


def _forest_check(params):
    if params.get("oob_score") and not params.get("bootstrap"):
        return "oob_score without bootstrap (scikit-learn raises)"
    if params.get("max_samples") is not None and not params.get("bootstrap"):
        return "max_samples without bootstrap (scikit-learn raises)"
    return None


def _forest_derive(tl, params):
    """The out-of-bag attributes, where the fit made them (oob_score), and the
    private sizes scikit-learn's own methods read."""
    names = ("oob_score_", "oob_decision_function_", "oob_prediction_", "_sample_weight", "_n_samples",
             "_n_samples_bootstrap")
    return {a: getattr(tl, a) for a in names if hasattr(tl, a)}


def _forest_entry(name, task):
    classifier = task == "classifier"
    params = dict(_FOREST_PARAMS)
    if classifier:
        params.update(criterion=one_of("gini", "entropy", "log_loss"), class_weight=ANY)
    else:
        params.update(criterion=one_of("squared_error", "poisson", "absolute_error"))
    attributes = ("estimators_", "n_outputs_") + (("classes_", "n_classes_") if classifier else ())
    methods = ("fit", "predict", "apply", "decision_path", "score")
    if classifier:
        methods = ("fit", "predict", "predict_proba", "predict_log_proba", "apply", "decision_path", "score")
    return Entry(
        sklearn=f"sklearn.ensemble.{name}",
        twinlearn=f"twinlearn.ensemble.{name}",
        methods=methods,
        attributes=attributes,
        params=params,
        check=_forest_check,
        check_doc=_FOREST_CHECK_DOC,
        derive=_forest_derive,
        kwargs=("sample_weight",),
        min_rows=DEFAULT_MIN_ROWS,
        task=task,
        notes=_FOREST_NOTES,
        conformance=(
            ("sklearn.ensemble.tests.test_forest", name),
            ("sklearn.tests.test_common", name),
        ),
        conformance_k=name,
    )


ENTRIES += tuple(
    _forest_entry(name, task)
    for name, task in (("RandomForestClassifier", "classifier"), ("RandomForestRegressor", "regressor"),
                       ("ExtraTreesClassifier", "classifier"), ("ExtraTreesRegressor", "regressor"))
)


# -- isolation forest -----------------------------------------------------------------
def _iforest_check(params):
    """max_features given as a float that rounds to no column is scikit-learn's to refuse."""
    mf = params.get("max_features")
    if isinstance(mf, bool):
        return "max_features as a bool"
    return None


def _iforest_derive(tl, params):
    """The private sizes scikit-learn's own methods read."""
    return {"_max_samples": tl._max_samples, "_max_features": tl._max_features}


ENTRIES += (
    Entry(
        sklearn="sklearn.ensemble.IsolationForest",
        twinlearn="twinlearn.ensemble.IsolationForest",
        methods=("fit", "predict", "decision_function", "score_samples", "fit_predict"),
        attributes=("estimators_", "estimators_samples_", "estimators_features_", "max_samples_", "offset_"),
        params={"n_estimators": ANY, "max_samples": ANY, "contamination": ANY, "max_features": ANY,
                "bootstrap": ANY, "n_jobs": ANY, "random_state": ANY, "verbose": ANY, "warm_start": ANY},
        check=_iforest_check,
        check_doc="not `max_features` as a bool; NaN in X and sparse X run scikit-learn.",
        derive=_iforest_derive,
        kwargs=("sample_weight",),
        min_rows=DEFAULT_MIN_ROWS,
        notes=("the row, feature and threshold draws come from twinlearn's counter-based generator, so for the "
               "same `random_state` the trees differ from scikit-learn's (the same in distribution); "
               "`estimators_` holds twinlearn's light trees (`tree_` arrays, apply, decision_path)."),
        conformance=(("sklearn.ensemble.tests.test_iforest", ""),),
        conformance_k="iforest",
    ),
)
