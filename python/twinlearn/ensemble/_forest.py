"""Random forests and extremely randomized trees on the CPU and CUDA backends.

The trees are grown by the core (twinlearn/ensemble/forest.hpp): one
sequential, depth-first pass per tree, the same code on CPU threads and in a
GPU thread, every random draw keyed by (seed, tree, node) in the
counter-based generator. Everything after the fit -- normalising the leaf
values, averaging the trees, feature importances, out-of-bag estimates -- is
NumPy on the host, in a fixed order, for every backend.
"""

from __future__ import annotations

import math
import warnings
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.ensemble import (
    ExtraTreesClassifier as _SkETC,
    ExtraTreesRegressor as _SkETR,
    RandomForestClassifier as _SkRFC,
    RandomForestRegressor as _SkRFR,
)
from sklearn.exceptions import DataConversionWarning
from sklearn.utils import check_random_state, compute_sample_weight
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from .. import _native as native
from .. import identity
from .._config import get_device
from .._io import check_X, check_X_y, host_weights, is_device_array, to_host
from ..base import TL_PARAMETER_CONSTRAINTS, DeviceScoreMixin, TwinlearnEstimatorMixin

__all__ = ["RandomForestClassifier", "RandomForestRegressor", "ExtraTreesClassifier", "ExtraTreesRegressor"]

_CLASSIFIER_CRITERIA = ("gini", "entropy", "log_loss")
_REGRESSOR_CRITERIA = ("squared_error", "poisson", "absolute_error")
_MAX_SEED = np.iinfo(np.int32).max


# -- the trees ---------------------------------------------------------------------
class ForestTreeArrays:
    """The arrays of one fitted tree, shaped like scikit-learn's ``tree_``.

    Attributes
    ----------
    node_count : int
    children_left, children_right : ndarray of shape (node_count,), int64
        Child node ids (within the tree); -1 at a leaf.
    feature : ndarray of shape (node_count,), int64
        Feature split on; -2 at a leaf.
    threshold : ndarray of shape (node_count,), float64
        Rows go left where ``X[:, feature] <= threshold``; -2 at a leaf.
    value : ndarray of shape (node_count, n_outputs, max_n_classes or 1), float64
        Class fractions of the (weighted, in-bag) training rows at the node
        for a classifier, as scikit-learn >= 1.4 stores them (per output,
        zero past the output's own class count); the weighted mean of y for
        a regressor (the weighted median with absolute_error).
    impurity : ndarray of shape (node_count,), float64
    n_node_samples : ndarray of shape (node_count,), int64
        Distinct in-bag training rows reaching the node.
    weighted_n_node_samples : ndarray of shape (node_count,), float64
        Their weight (sample_weight x class weight x bootstrap count).
    max_depth, n_leaves, n_features, n_outputs, n_classes
    """

    def __init__(self, *, children_left, children_right, feature, threshold, value, impurity, n_node_samples,
                 weighted_n_node_samples, n_features, n_classes, n_outputs=1):
        self.children_left = children_left
        self.children_right = children_right
        self.feature = feature
        self.threshold = threshold
        self.value = value
        self.impurity = impurity
        self.n_node_samples = n_node_samples
        self.weighted_n_node_samples = weighted_n_node_samples
        self.node_count = int(children_left.shape[0])
        self.n_features = int(n_features)
        self.n_outputs = int(n_outputs)
        counts = list(n_classes) if n_classes else [1] * self.n_outputs  # regression: ones
        self.n_classes = np.array(counts, dtype=np.intp)
        self.max_n_classes = int(self.n_classes.max())
        self.n_leaves = int(np.count_nonzero(children_left < 0))
        depth = np.zeros(self.node_count, dtype=np.int64)
        for k in range(self.node_count):  # children come after their parent
            if children_left[k] >= 0:
                depth[children_left[k]] = depth[k] + 1
                depth[children_right[k]] = depth[k] + 1
        self.max_depth = int(depth.max()) if self.node_count else 0

    def apply(self, X):
        """Leaf id of each row of a host float matrix X (int64)."""
        node = np.zeros(X.shape[0], dtype=np.int64)
        active = np.nonzero(self.children_left[node] >= 0)[0]
        while active.size:
            k = node[active]
            go_left = X[active, self.feature[k]].astype(np.float64) <= self.threshold[k]
            node[active] = np.where(go_left, self.children_left[k], self.children_right[k])
            active = active[self.children_left[node[active]] >= 0]
        return node

    def decision_path(self, X):
        """CSR indicator (n_samples, node_count) of the nodes each row visits."""
        n = X.shape[0]
        rows, cols = [np.arange(n)], [np.zeros(n, dtype=np.int64)]
        node = np.zeros(n, dtype=np.int64)
        active = np.nonzero(self.children_left[node] >= 0)[0]
        while active.size:
            k = node[active]
            go_left = X[active, self.feature[k]].astype(np.float64) <= self.threshold[k]
            node[active] = np.where(go_left, self.children_left[k], self.children_right[k])
            rows.append(active)
            cols.append(node[active])
            active = active[self.children_left[node[active]] >= 0]
        r, c = np.concatenate(rows), np.concatenate(cols)
        return sp.csr_matrix((np.ones(r.shape[0], dtype=np.intp), (r, c)), shape=(n, self.node_count))

    def compute_feature_importances(self, normalize=True):
        """scikit-learn's impurity-based importances of this tree."""
        imp = np.zeros(self.n_features, dtype=np.float64)
        wn, im = self.weighted_n_node_samples, self.impurity
        for k in np.nonzero(self.children_left >= 0)[0]:
            l, r = self.children_left[k], self.children_right[k]
            imp[self.feature[k]] += wn[k] * im[k] - wn[l] * im[l] - wn[r] * im[r]
        imp /= wn[0]
        if normalize:
            s = imp.sum()
            if s > 0.0:
                imp /= s
        return imp


class ForestTree:
    """One tree of a fitted twinlearn forest (an entry of ``estimators_``).

    A light stand-in for scikit-learn's DecisionTreeClassifier /
    DecisionTreeRegressor: ``tree_`` (:class:`ForestTreeArrays`), and
    ``apply``, ``decision_path``, ``predict`` (and, for a classifier,
    ``predict_proba``) computed with NumPy on the host.
    """

    def __init__(self, tree_, classes=None, n_features_in=None):
        self.tree_ = tree_
        self.classes_ = classes  # a list of arrays with several outputs
        self.n_features_in_ = n_features_in
        self.n_outputs_ = tree_.n_outputs
        if classes is not None:
            self.n_classes_ = int(len(classes)) if self.n_outputs_ == 1 else [int(len(c)) for c in classes]

    def _X(self, X):
        X = np.asarray(to_host(X))
        if X.ndim != 2 or X.shape[1] != self.n_features_in_:
            raise ValueError(f"X has {X.shape[-1] if X.ndim else 0} features, but this tree is expecting "
                             f"{self.n_features_in_} features as input")
        return X

    def apply(self, X, check_input=True):
        """Leaf id of each row."""
        return self.tree_.apply(self._X(X))

    def decision_path(self, X, check_input=True):
        """Sparse indicator of the nodes each row goes through."""
        return self.tree_.decision_path(self._X(X))

    def _support_missing_values(self, X):
        return False  # NaN is refused at fit and predict

    def get_depth(self):
        return self.tree_.max_depth

    def get_n_leaves(self):
        return self.tree_.n_leaves

    @property
    def feature_importances_(self):
        return self.tree_.compute_feature_importances()

    def predict_proba(self, X, check_input=True):
        """Class fractions at each row's leaf (classifier trees); a list,
        one array per output, with several outputs."""
        if self.classes_ is None:
            raise AttributeError("predict_proba is only available on classification trees")
        v = self.tree_.value[self.apply(X)]
        if self.n_outputs_ == 1:
            return v[:, 0, :]
        return [v[:, k, :len(c)] for k, c in enumerate(self.classes_)]

    def predict(self, X, check_input=True):
        """Most frequent class (classifier) or mean target (regressor) at
        each row's leaf; (n_samples, n_outputs) with several outputs."""
        v = self.tree_.value[self.apply(X)]
        if self.classes_ is None:
            return v[:, 0, 0] if self.n_outputs_ == 1 else v[:, :, 0]
        if self.n_outputs_ == 1:
            return self.classes_[np.argmax(v[:, 0, :], axis=1)]
        out = np.empty((v.shape[0], self.n_outputs_), dtype=self.classes_[0].dtype)
        for k, c in enumerate(self.classes_):
            out[:, k] = c[np.argmax(v[:, k, :len(c)], axis=1)]
        return out


# -- the shared forest ---------------------------------------------------------------
def _resolve_max_features(max_features, n_features):
    if max_features == "sqrt":
        return max(1, int(np.sqrt(n_features)))
    if max_features == "log2":
        return max(1, int(np.log2(n_features)))
    if max_features is None:
        return n_features
    if isinstance(max_features, Integral):
        if max_features > n_features:
            raise ValueError(f"max_features must be <= n_features ({n_features}), got {max_features}")
        return int(max_features)
    return max(1, int(max_features * n_features))


def _n_samples_bootstrap(n_samples, max_samples, sample_weight):
    """scikit-learn's _get_n_samples_bootstrap (a fraction of the weight sum)."""
    if max_samples is None:
        return n_samples
    if isinstance(max_samples, Integral):
        return int(max_samples)
    weighted = n_samples if sample_weight is None else float(sample_weight.sum())
    n_boot = max(int(max_samples * weighted), 1)
    if n_boot < max(10, n_samples ** (1 / 3)):
        warnings.warn(f"Using the fractional value max_samples={max_samples} results in a low number "
                      f"({n_boot}) of bootstrap samples. We recommend passing `max_samples` as an integer "
                      "instead.", UserWarning)
    return n_boot


_FOREST_DOC_PARAMS = """
    Numerics: every tree is built by one sequential depth-first pass
    (twinlearn/ensemble/forest.hpp), run unchanged on CPU threads and in a
    GPU thread: node statistics are summed in a fixed order, impurities are
    spelled out with the project's arithmetic (its own ``log`` for entropy),
    ties between splits go to the first found, and the bootstrap rows, the
    per-node feature order (and extra trees' thresholds) are drawn from the
    counter-based generator keyed by (seed, tree, node); so every numeric
    mode delivers ``identical`` for any thread count, and a ``warm_start``
    fit grows the trees a single larger fit would. The trees are not
    scikit-learn's (its generator differs), only alike in distribution.
"""


class _BaseForest(TwinlearnEstimatorMixin, BaseEstimator):
    _tl_splitter = "best"
    _tl_classifier = True

    def _tl_fit_device(self, X):
        """Where fit builds the trees. The GPU builder grows one tree per GPU
        thread: the CPU's trees bit for bit, but not yet faster than the CPU
        builder, so 'auto' (and None under the default 'auto') builds host
        input on the CPU; device='cuda' or device input builds on the GPU."""
        dev = self._tl_device(X)
        asked = self.device if self.device is not None else get_device()
        if dev != "cpu" and asked == "auto" and not is_device_array(X):
            return "cpu"
        return dev

    def __init__(self, n_estimators=100, *, criterion, max_depth=None, min_samples_split=2, min_samples_leaf=1,
                 min_weight_fraction_leaf=0.0, max_features, max_leaf_nodes=None, min_impurity_decrease=0.0,
                 bootstrap, oob_score=False, n_jobs=None, random_state=None, verbose=0, warm_start=False,
                 class_weight=None, ccp_alpha=0.0, max_samples=None, monotonic_cst=None, device=None,
                 numeric_mode=None):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.bootstrap = bootstrap
        self.oob_score = oob_score
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.class_weight = class_weight
        self.ccp_alpha = ccp_alpha
        self.max_samples = max_samples
        self.monotonic_cst = monotonic_cst
        self.device = device
        self.numeric_mode = numeric_mode

    _tl_native = (
        native.Spec(
            "ForestParams",
            fields={"criterion": "criterion", "n_estimators": "n_trees", "max_depth": "max_depth",
                    "min_samples_split": "min_samples_split", "min_samples_leaf": "min_samples_leaf",
                    "min_weight_fraction_leaf": "min_weight_fraction_leaf",
                    "min_impurity_decrease": "min_impurity_decrease", "max_features": "max_features",
                    "max_leaf_nodes": "max_leaf_nodes",
                    "bootstrap": "bootstrap", "max_samples": "n_samples_bootstrap", "random_state": "seed",
                    "class_weight": "balanced_subsample", "oob_score": "keep_in_bag", "warm_start": "first_tree"},
            python_only={"n_jobs": "accepted; the thread count is twinlearn.set_n_threads'",
                         "verbose": "printed by Python after the fit",
                         "ccp_alpha": "only 0.0; others raise",
                         "monotonic_cst": "only None; others raise"},
            derived={"splitter": "'best' for random forests, 'random' for extra trees"},
        ),
    )

    # -- checks ---------------------------------------------------------------------
    def _tl_check_supported(self):
        name = type(self).__name__
        allowed = _CLASSIFIER_CRITERIA if self._tl_classifier else _REGRESSOR_CRITERIA
        if self.criterion not in allowed:
            raise ValueError(f"{name}: criterion={self.criterion!r} is not supported by twinlearn yet "
                             f"(supported: {', '.join(map(repr, allowed))})")
        if self.ccp_alpha != 0.0:
            raise ValueError(f"{name}: ccp_alpha={self.ccp_alpha!r} is not supported by twinlearn yet (only 0.0)")
        if self.monotonic_cst is not None:
            raise ValueError(f"{name}: monotonic_cst is not supported by twinlearn yet (only None)")
        if not self.bootstrap and self.max_samples is not None:
            raise ValueError("`max_sample` cannot be set if `bootstrap=False`. Either switch to "
                             "`bootstrap=True` or set `max_sample=None`.")
        if self.oob_score and not self.bootstrap:
            raise ValueError("Out of bag estimation only available if bootstrap=True")

    def _tl_targets(self, y):
        """y as (n_samples,) for one output, (n_samples, n_outputs) for several."""
        y = np.asarray(y)
        if y.ndim == 2 and y.shape[1] == 1:
            warnings.warn("A column-vector y was passed when a 1d array was expected. Please change the shape "
                          "of y to (n_samples,), for example using ravel().", DataConversionWarning, stacklevel=3)
            y = y[:, 0]
        if y.ndim not in (1, 2) or (y.ndim == 2 and y.shape[1] == 0):
            raise ValueError(f"{type(self).__name__}: y must be 1-D or 2-D with at least one column, got shape "
                             f"{y.shape}")
        return y

    # -- fit ------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Build a forest of trees from the training set (X, y).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NumPy arrays, or CuPy / PyTorch / DLPack device arrays (NaN is not
            supported).
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)
            Class labels (classifier) or targets (regressor); several
            columns fit one forest of multi-output trees (scikit-learn's
            criteria averaged over the outputs).
        sample_weight : array-like of shape (n_samples,), default=None
            As scikit-learn >= 1.9: with bootstrap, the probabilities of
            the rows' draws (times the class weights), each tree being
            fitted on its draw counts; without, the trees' row weights.

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        self._tl_check_supported()
        device = self._tl_fit_device(X)
        X, y = check_X_y(self, X, y, device, labels=True, multi_output=True)
        y = self._tl_targets(to_host(y))
        n, d = X.shape
        # float64 weights whatever X's dtype, as scikit-learn's trees
        sw = host_weights(sample_weight, n, np.float64)
        if sw is not None and (sw < 0).any():
            raise ValueError("Negative values in data passed to `sample_weight`")

        n_outputs = 1 if y.ndim == 1 else y.shape[1]
        if self._tl_classifier:
            check_classification_targets(y)
            y2 = y.reshape(n, n_outputs)
            classes, y_enc = [], np.empty((n, n_outputs), dtype=np.int32)
            for k in range(n_outputs):
                c, y_enc[:, k] = np.unique(y2[:, k], return_inverse=True)
                classes.append(c)
            y_cls, y_reg = np.ascontiguousarray(y_enc if n_outputs > 1 else y_enc[:, 0]), None
            n_classes = [len(c) for c in classes]
            cw = self.class_weight
            if cw is not None:
                subsample = isinstance(cw, str) and cw == "balanced_subsample"
                if not subsample or not self.bootstrap:
                    # scikit-learn's: a dict, 'balanced', or a list of dicts (one per output)
                    expanded = compute_sample_weight("balanced" if subsample else cw, y)
                    sw = expanded if sw is None else sw * expanded
        else:
            y_reg = np.ascontiguousarray(y, dtype=np.float64)
            if not np.isfinite(y_reg).all():
                raise ValueError("Input y contains NaN or infinity.")
            if self.criterion == "poisson":
                if (y_reg < 0).any():
                    raise ValueError("Some value(s) of y are negative which is not allowed for Poisson "
                                     "regression.")
                if not y_reg.sum() > 0:
                    raise ValueError("Sum of y is not strictly positive which is necessary for Poisson "
                                     "regression.")
            y_cls, n_classes, classes = None, [], None
        if sw is not None and not sw.sum() > 0:
            raise ValueError("Sample weights sum to zero: nothing to fit.")
        sw = None if sw is None else np.ascontiguousarray(sw, dtype=np.float64)

        if self.oob_score and self.warm_start and len(getattr(self, "estimators_", ())) > 0:
            raise ValueError(f"{type(self).__name__}: oob_score with warm_start is not supported by twinlearn "
                             "yet (the earlier trees' bootstrap is not kept); refit from scratch")
        n_new, first = self._tl_trees_to_grow(classes, d, n_outputs)
        if n_new == 0:
            return self

        msl = self.min_samples_leaf
        msl = int(msl) if isinstance(msl, Integral) else int(math.ceil(msl * n))
        mss = self.min_samples_split
        mss = int(mss) if isinstance(mss, Integral) else max(2, int(math.ceil(mss * n)))
        mss = max(mss, 2 * msl)
        n_boot = _n_samples_bootstrap(n, self.max_samples, sw) if self.bootstrap else 0
        self._sample_weight = sw
        self._n_samples = n
        self._n_samples_bootstrap = n_boot if self.bootstrap else None
        want_oob = bool(self.oob_score)
        mod, ctx = self._tl_context(device, X)
        p = native.params(
            mod.ForestParams,
            criterion=self.criterion if not self._tl_classifier else
            ("gini" if self.criterion == "gini" else "entropy"),
            splitter=self._tl_splitter,
            n_trees=int(n_new),
            first_tree=int(first),
            max_depth=-1 if self.max_depth is None else int(self.max_depth),
            max_leaf_nodes=-1 if self.max_leaf_nodes is None else int(self.max_leaf_nodes),
            min_samples_split=mss,
            min_samples_leaf=msl,
            min_weight_fraction_leaf=float(self.min_weight_fraction_leaf),
            min_impurity_decrease=float(self.min_impurity_decrease),
            max_features=_resolve_max_features(self.max_features, d),
            bootstrap=bool(self.bootstrap),
            n_samples_bootstrap=int(n_boot),
            balanced_subsample=bool(self._tl_classifier and isinstance(self.class_weight, str)
                                    and self.class_weight == "balanced_subsample" and self.bootstrap),
            seed=int(self._tl_seed),
            keep_in_bag=want_oob,
        )
        fit = mod.forest_fit(ctx, X, y_cls, y_reg, sw, n_classes, p)
        identity.record(f"{type(self).__name__}.threshold", np.asarray(fit.threshold))
        identity.record(f"{type(self).__name__}.value", np.asarray(fit.value))
        self._tl_add_trees(fit, d, n_classes, n_outputs)
        if want_oob:
            self._tl_set_oob(X, y, y_cls, fit)
        elif hasattr(self, "oob_score_") and first == 0:
            self._tl_forget("oob_score_", "oob_decision_function_", "oob_prediction_")
        if self.verbose:
            print(f"{type(self).__name__}: built {n_new} trees ({len(self.estimators_)} in all)")
        self._tl_record_fit(device, "identical")
        return self

    def _tl_trees_to_grow(self, classes, d, n_outputs):
        """(new trees, global index of the first); resets the forest unless warm starting."""
        fitted = self.warm_start and hasattr(self, "estimators_") and len(self.estimators_) > 0
        if fitted and (classes is not None) != hasattr(self, "classes_"):
            fitted = False
        if fitted and n_outputs != self.n_outputs_:
            raise ValueError(f"warm_start: y has {n_outputs} outputs, the previous fit {self.n_outputs_}")
        if fitted and classes is not None:
            before = [self.classes_] if n_outputs == 1 else self.classes_
            if any(not np.array_equal(a, b) for a, b in zip(classes, before)):
                raise ValueError("warm_start: the classes of y differ from those of the previous fit")
        if fitted and d != self._tl_forest["n_features"]:
            raise ValueError(f"X has {d} features, but the forest was fitted with {self._tl_forest['n_features']}")
        if not fitted:
            rs = self.random_state
            self._tl_seed = int(rs) if isinstance(rs, Integral) else int(check_random_state(rs).randint(_MAX_SEED))
            self.estimators_ = []
            self._tl_forest = {"n_features": d, "offsets": np.zeros(1, dtype=np.int64)}
            for key in ("children_left", "children_right", "feature", "threshold"):
                self._tl_forest[key] = np.zeros(0, dtype=np.float64 if key == "threshold" else np.int64)
            self._tl_forest["value"] = None
            if classes is not None:  # scikit-learn's: lists with several outputs
                self.classes_ = classes[0] if n_outputs == 1 else classes
                self.n_classes_ = len(classes[0]) if n_outputs == 1 else [len(c) for c in classes]
            self.n_outputs_ = n_outputs
        n_more = self.n_estimators - len(self.estimators_)
        if n_more < 0:
            raise ValueError(f"n_estimators={self.n_estimators} must be larger or equal to "
                             f"len(estimators_)={len(self.estimators_)} when warm_start==True")
        if n_more == 0:
            warnings.warn("Warm-start fitting without increasing n_estimators does not fit new trees.", UserWarning)
        return n_more, len(self.estimators_)

    def _tl_add_trees(self, fit, d, n_classes, n_outputs):
        off = np.asarray(fit.offsets)
        value = np.asarray(fit.value, dtype=np.float64)
        value = value.reshape(value.shape[0], n_outputs, -1)  # (nodes, outputs, classes or 1)
        if n_classes:  # class fractions per node and output, as scikit-learn's tree_.value
            wsum = value.sum(axis=2, keepdims=True)
            value = np.divide(value, wsum, out=np.zeros_like(value), where=wsum > 0)
        arrays = {k: np.asarray(getattr(fit, k)) for k in ("children_left", "children_right", "feature",
                                                           "threshold", "impurity", "n_node_samples",
                                                           "weighted_n_node_samples")}
        for t in range(off.shape[0] - 1):
            s = slice(off[t], off[t + 1])
            tree = ForestTreeArrays(**{k: a[s].copy() for k, a in arrays.items()}, value=value[s].copy(),
                                    n_features=d, n_classes=n_classes, n_outputs=n_outputs)
            self.estimators_.append(ForestTree(tree, getattr(self, "classes_", None) if n_classes else None, d))
        F = self._tl_forest
        base = F["offsets"][-1]
        F["offsets"] = np.concatenate([F["offsets"], base + off[1:]])
        for k in ("children_left", "children_right", "feature", "threshold"):
            F[k] = np.concatenate([F[k], arrays[k]])
        F["value"] = value if F["value"] is None else np.concatenate([F["value"], value])

    # -- prediction -----------------------------------------------------------------
    def _tl_apply(self, X, fitted_only=False):
        """(leaves (n, n_trees) int64 from the core, the checked X)."""
        check_is_fitted(self, "estimators_")
        device = self._tl_device(X)
        X = check_X(self, X, device, reset=False, allow_nan=False)
        F = self._tl_forest
        mod, ctx = self._tl_context(device, X)
        leaves = np.asarray(mod.forest_apply(ctx, X, F["offsets"], F["children_left"], F["children_right"],
                                             F["feature"], F["threshold"]))
        return leaves

    def _tl_mean_value(self, leaves):
        """Mean over the trees of the leaf values (n, n_outputs, classes or 1),
        summed in tree order (float64)."""
        F = self._tl_forest
        off, value = F["offsets"], F["value"]
        acc = np.zeros((leaves.shape[0],) + value.shape[1:], dtype=np.float64)
        for t in range(leaves.shape[1]):
            acc += value[off[t] + leaves[:, t]]
        return acc / leaves.shape[1]

    def apply(self, X):
        """Apply the trees to X, returning leaf indices.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_leaves : ndarray of shape (n_samples, n_estimators)
            The leaf each row ends in, in each tree (tree-local node ids).
        """
        return self._tl_apply(X).astype(np.intp, copy=False)

    def decision_path(self, X):
        """The nodes each row visits in each tree.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        indicator : sparse matrix of shape (n_samples, n_nodes)
            Nonzero where the row goes through the node; the trees' node
            ranges side by side.
        n_nodes_ptr : ndarray of shape (n_estimators + 1,)
            Columns n_nodes_ptr[i]:n_nodes_ptr[i + 1] are tree i's nodes.
        """
        check_is_fitted(self, "estimators_")
        X = np.asarray(to_host(check_X(self, X, "cpu", reset=False, allow_nan=False)))
        paths = [e.tree_.decision_path(X) for e in self.estimators_]
        ptr = np.zeros(len(paths) + 1, dtype=np.intp)
        ptr[1:] = np.cumsum([p.shape[1] for p in paths])
        return sp.hstack(paths).tocsr(), ptr

    @property
    def feature_importances_(self):
        """Impurity-based feature importances (scikit-learn's: each tree's
        normalised importances averaged over the trees with a split, then
        normalised to sum 1)."""
        check_is_fitted(self, "estimators_")
        imps = [e.tree_.compute_feature_importances(normalize=False) for e in self.estimators_
                if e.tree_.node_count > 1]
        if not imps:
            return np.zeros(self.n_features_in_, dtype=np.float64)
        imps = [i / s if (s := i.sum()) > 0 else i for i in imps]
        all_imp = np.mean(imps, axis=0, dtype=np.float64)
        return all_imp / np.sum(all_imp)

    @property
    def estimators_samples_(self):
        raise AttributeError("estimators_samples_ is not kept by twinlearn forests")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.target_tags.multi_output = True  # 2-D y: multi-output trees
        return tags

    def _tl_set_oob(self, X, y, y_cls, fit):
        """scikit-learn's out-of-bag estimates from each tree's bootstrap counts."""
        in_bag = np.asarray(fit.in_bag)
        leaves = self._tl_apply(X)[:, -in_bag.shape[0]:]
        F = self._tl_forest
        first = len(self.estimators_) - in_bag.shape[0]  # 0: oob_score refuses warm starts
        n = X.shape[0]
        acc = np.zeros((n,) + F["value"].shape[1:], dtype=np.float64)  # (n, outputs, classes or 1)
        n_oob = np.zeros(n, dtype=np.float64)
        for t in range(in_bag.shape[0]):
            oob = in_bag[t] == 0
            acc[oob] += F["value"][F["offsets"][first + t] + leaves[oob, t]]
            n_oob[oob] += 1
        if (n_oob == 0).any():
            warnings.warn("Some inputs do not have OOB scores. This probably means too few trees were used to "
                          "compute any reliable OOB estimates.", UserWarning)
            n_oob[n_oob == 0] = 1
        pred = acc / n_oob[:, None, None]
        scorer = self.oob_score if callable(self.oob_score) else None
        single = self.n_outputs_ == 1
        if self._tl_classifier:
            # scikit-learn's layouts: (n, n_classes), or (n, n_classes, n_outputs)
            self.oob_decision_function_ = pred[:, 0, :] if single else np.ascontiguousarray(pred.transpose(0, 2, 1))
            if scorer is None:
                from sklearn.metrics import accuracy_score as scorer
            if single:
                self.oob_score_ = scorer(y, self.classes_[np.argmax(pred[:, 0, :], axis=1)])
            else:  # as scikit-learn: the encoded labels against the argmax per output
                self.oob_score_ = scorer(y_cls, np.argmax(self.oob_decision_function_, axis=1))
        else:
            self.oob_prediction_ = pred[:, 0, 0] if single else pred[:, :, 0]
            if scorer is None:
                from sklearn.metrics import r2_score as scorer
            self.oob_score_ = scorer(y, self.oob_prediction_)


class _ForestClassifier(DeviceScoreMixin, ClassifierMixin, _BaseForest):
    _tl_classifier = True

    def predict_proba(self, X):
        """Mean class fractions of the rows' leaves over the trees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        p : ndarray of shape (n_samples, n_classes), or a list of n_outputs such arrays
            In the order of ``classes_`` (of ``classes_[k]`` for output k).
        """
        mean = self._tl_mean_value(self._tl_apply(X))
        if self.n_outputs_ == 1:
            return mean[:, 0, :]
        return [mean[:, k, :len(c)] for k, c in enumerate(self.classes_)]

    def predict_log_proba(self, X):
        """Log of :meth:`predict_proba` (-inf where a probability is 0)."""
        proba = self.predict_proba(X)
        with np.errstate(divide="ignore"):
            return np.log(proba) if self.n_outputs_ == 1 else [np.log(p) for p in proba]

    def predict(self, X):
        """The class of highest mean probability (lowest index on ties), per
        output: (n_samples,) or (n_samples, n_outputs)."""
        proba = self.predict_proba(X)
        if self.n_outputs_ == 1:
            return self.classes_[np.argmax(proba, axis=1)]
        out = np.empty((proba[0].shape[0], self.n_outputs_), dtype=self.classes_[0].dtype)
        for k, (c, p) in enumerate(zip(self.classes_, proba)):
            out[:, k] = c[np.argmax(p, axis=1)]
        return out


def _regression_criterion(criterion):
    """scikit-learn >= 1.9: 'friedman_mse' is 'squared_error', with a FutureWarning."""
    if isinstance(criterion, str) and criterion == "friedman_mse":
        warnings.warn('Value `"friedman_mse"` for `criterion` is deprecated and will be removed in 1.11. It maps '
                      'to `"squared_error"` as both were always equivalent. Use `criterion="squared_error"` to '
                      "remove this warning.", FutureWarning, stacklevel=3)
        return "squared_error"
    return criterion


def _regressor_native(spec):
    """A regressor's declaration: no class_weight (balanced_subsample is derived)."""
    fields = {k: v for k, v in spec.fields.items() if k != "class_weight"}
    return native.Spec(spec.struct, fields=fields, python_only=spec.python_only,
                       derived={**spec.derived, "balanced_subsample": "False (no class weights in regression)"})


class _ForestRegressor(DeviceScoreMixin, RegressorMixin, _BaseForest):
    _tl_classifier = False
    _tl_native = (_regressor_native(_BaseForest._tl_native[0]),)

    def predict(self, X):
        """Mean over the trees of the leaf means.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        y : ndarray of shape (n_samples,) or (n_samples, n_outputs)
        """
        mean = self._tl_mean_value(self._tl_apply(X))
        return mean[:, 0, 0] if self.n_outputs_ == 1 else mean[:, :, 0]


_COMMON_PARAMS = """
    Parameters
    ----------
    n_estimators : int, default=100
    criterion : {criteria}, default={criterion_default!r}
        Supported: {criteria}. Not supported yet (raise ValueError):
        {unsupported}.
    max_depth : int, default=None
    min_samples_split : int or float, default=2
    min_samples_leaf : int or float, default=1
    min_weight_fraction_leaf : float, default=0.0
    max_features : {{'sqrt', 'log2', None}}, int or float, default={max_features_default!r}
    max_leaf_nodes : int, default=None
        None: trees grow depth first. An int: scikit-learn's best-first
        growth, the frontier leaf of largest weighted impurity improvement
        split next (the one created first on exact ties), until that many
        leaves.
    min_impurity_decrease : float, default=0.0
    bootstrap : bool, default={bootstrap_default}
    oob_score : bool or callable, default=False
        Needs bootstrap=True; sets ``oob_score_`` and
        ``{oob_attr}``.
    n_jobs : int, default=None
        Accepted; the CPU backend uses :func:`twinlearn.set_n_threads`'
        threads (the trees are the same for any count).
    random_state : int, RandomState instance or None, default=None
        An int is the seed of the counter-based generator.
    verbose : int, default=0
    warm_start : bool, default=False
        Adds trees ``len(estimators_)`` .. ``n_estimators - 1``: the same
        trees as one fit of ``n_estimators``. Not with oob_score (raises).
    {class_weight_doc}ccp_alpha : 0.0
        Only 0.0; other values raise ValueError.
    max_samples : int or float, default=None
        Rows drawn (with replacement) per tree when bootstrap=True.
    monotonic_cst : None
        Only None; other values raise ValueError.
    device : {{None, 'auto', 'cpu', 'cuda', 'cuda:N'}}, default=None
        'auto' builds NumPy input on the CPU (the GPU builder, one tree per
        GPU thread, gives the same trees but is not yet the faster one) and
        device input on its GPU; 'cuda' builds on the GPU.
    numeric_mode : {{None, 'fast', 'deterministic', 'identical'}}, default=None
        Every mode delivers ``identical``.

    Attributes
    ----------
    estimators_ : list of ForestTree
        The trees: ``tree_`` holds scikit-learn-shaped arrays
        (children_left, children_right, feature, threshold, value,
        impurity, n_node_samples, weighted_n_node_samples); each tree has
        apply, decision_path, predict{tree_proba}.
    {class_attrs}n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
    n_outputs_ : int
        The columns of y (1 for a 1-D y).
    feature_importances_ : ndarray of shape (n_features,)
    oob_score_ : float
    {oob_attr} : ndarray
        {oob_shape}
"""

_CLS_FMT = dict(criteria="'gini', 'entropy', 'log_loss' (= 'entropy')", criterion_default="gini",
                unsupported="none", max_features_default="sqrt", oob_attr="oob_decision_function_",
                class_weight_doc=("class_weight : {'balanced', 'balanced_subsample'}, dict or None, default=None\n"
                                  "        scikit-learn's; a list of dicts (one per output) for multi-output y.\n    "),
                tree_proba=" and predict_proba",
                class_attrs=("classes_ : ndarray of shape (n_classes,) or list of such arrays (multi-output)\n"
                             "    n_classes_ : int or list of int (multi-output)\n    "),
                oob_shape="(n_samples, n_classes), or (n_samples, n_classes, n_outputs) with several outputs.")
_REG_FMT = dict(criteria=("'squared_error', 'poisson' (y >= 0 with a positive sum), 'absolute_error'\n"
                          "        (scikit-learn's MAE: weighted-median leaves, impurity the mean absolute\n"
                          "        deviation from the median; O(n log n) per candidate feature and node, several\n"
                          "        times squared_error's cost); 'friedman_mse' is, as in\n"
                          "        scikit-learn >= 1.9, 'squared_error' with a FutureWarning"),
                criterion_default="squared_error", unsupported="none", max_features_default=1.0,
                oob_attr="oob_prediction_", class_weight_doc="", tree_proba="", class_attrs="",
                oob_shape="(n_samples,), or (n_samples, n_outputs) with several outputs.")


def _doc(head, fmt, bootstrap):
    return head + _FOREST_DOC_PARAMS + _COMMON_PARAMS.format(bootstrap_default=bootstrap, **fmt)


class RandomForestClassifier(_ForestClassifier):
    __doc__ = _doc("""A random forest classifier.

    scikit-learn's :class:`sklearn.ensemble.RandomForestClassifier` on the
    CPU backend or a GPU: bootstrap samples, ``max_features`` features
    tried per node, the best split of each on its sorted values (thresholds
    at midpoints, as scikit-learn).
""", _CLS_FMT, True) + """
    Examples
    --------
    >>> from sklearn.datasets import load_iris
    >>> from twinlearn.ensemble import RandomForestClassifier
    >>> X, y = load_iris(return_X_y=True)
    >>> clf = RandomForestClassifier(n_estimators=10, random_state=0, device="cpu").fit(X, y)
    >>> clf.score(X, y) > 0.95
    True
"""
    _parameter_constraints: dict = {**_SkRFC._parameter_constraints, **TL_PARAMETER_CONSTRAINTS}
    _tl_splitter = "best"

    def __init__(self, n_estimators=100, *, criterion="gini", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features="sqrt", max_leaf_nodes=None,
                 min_impurity_decrease=0.0, bootstrap=True, oob_score=False, n_jobs=None, random_state=None,
                 verbose=0, warm_start=False, class_weight=None, ccp_alpha=0.0, max_samples=None,
                 monotonic_cst=None, device=None, numeric_mode=None):
        super().__init__(n_estimators, criterion=criterion, max_depth=max_depth,
                         min_samples_split=min_samples_split, min_samples_leaf=min_samples_leaf,
                         min_weight_fraction_leaf=min_weight_fraction_leaf, max_features=max_features,
                         max_leaf_nodes=max_leaf_nodes, min_impurity_decrease=min_impurity_decrease,
                         bootstrap=bootstrap, oob_score=oob_score, n_jobs=n_jobs, random_state=random_state,
                         verbose=verbose, warm_start=warm_start, class_weight=class_weight, ccp_alpha=ccp_alpha,
                         max_samples=max_samples, monotonic_cst=monotonic_cst, device=device,
                         numeric_mode=numeric_mode)


class ExtraTreesClassifier(_ForestClassifier):
    __doc__ = _doc("""An extra-trees classifier.

    scikit-learn's :class:`sklearn.ensemble.ExtraTreesClassifier` on the
    CPU backend or a GPU: at each node, for each of ``max_features``
    features, one threshold drawn uniformly between the node's smallest
    and largest value (``lo + u (hi - lo)`` in float64, u from the
    counter-based generator); the best of those splits is kept.
""", _CLS_FMT, False)
    _parameter_constraints: dict = {**_SkETC._parameter_constraints, **TL_PARAMETER_CONSTRAINTS}
    _tl_splitter = "random"

    def __init__(self, n_estimators=100, *, criterion="gini", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features="sqrt", max_leaf_nodes=None,
                 min_impurity_decrease=0.0, bootstrap=False, oob_score=False, n_jobs=None, random_state=None,
                 verbose=0, warm_start=False, class_weight=None, ccp_alpha=0.0, max_samples=None,
                 monotonic_cst=None, device=None, numeric_mode=None):
        super().__init__(n_estimators, criterion=criterion, max_depth=max_depth,
                         min_samples_split=min_samples_split, min_samples_leaf=min_samples_leaf,
                         min_weight_fraction_leaf=min_weight_fraction_leaf, max_features=max_features,
                         max_leaf_nodes=max_leaf_nodes, min_impurity_decrease=min_impurity_decrease,
                         bootstrap=bootstrap, oob_score=oob_score, n_jobs=n_jobs, random_state=random_state,
                         verbose=verbose, warm_start=warm_start, class_weight=class_weight, ccp_alpha=ccp_alpha,
                         max_samples=max_samples, monotonic_cst=monotonic_cst, device=device,
                         numeric_mode=numeric_mode)


class RandomForestRegressor(_ForestRegressor):
    __doc__ = _doc("""A random forest regressor.

    scikit-learn's :class:`sklearn.ensemble.RandomForestRegressor` on the
    CPU backend or a GPU (squared error, Poisson deviance or absolute
    error; see RandomForestClassifier for the splits).
""", _REG_FMT, True)
    _parameter_constraints: dict = {**_SkRFR._parameter_constraints, **TL_PARAMETER_CONSTRAINTS}
    _tl_splitter = "best"

    def __init__(self, n_estimators=100, *, criterion="squared_error", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features=1.0, max_leaf_nodes=None,
                 min_impurity_decrease=0.0, bootstrap=True, oob_score=False, n_jobs=None, random_state=None,
                 verbose=0, warm_start=False, ccp_alpha=0.0, max_samples=None, monotonic_cst=None, device=None,
                 numeric_mode=None):
        super().__init__(n_estimators, criterion=_regression_criterion(criterion), max_depth=max_depth,
                         min_samples_split=min_samples_split, min_samples_leaf=min_samples_leaf,
                         min_weight_fraction_leaf=min_weight_fraction_leaf, max_features=max_features,
                         max_leaf_nodes=max_leaf_nodes, min_impurity_decrease=min_impurity_decrease,
                         bootstrap=bootstrap, oob_score=oob_score, n_jobs=n_jobs, random_state=random_state,
                         verbose=verbose, warm_start=warm_start, class_weight=None, ccp_alpha=ccp_alpha,
                         max_samples=max_samples, monotonic_cst=monotonic_cst, device=device,
                         numeric_mode=numeric_mode)
        del self.class_weight


class ExtraTreesRegressor(_ForestRegressor):
    __doc__ = _doc("""An extra-trees regressor.

    scikit-learn's :class:`sklearn.ensemble.ExtraTreesRegressor` on the CPU
    backend or a GPU (squared error, Poisson deviance or absolute error;
    random thresholds as ExtraTreesClassifier).
""", _REG_FMT, False)
    _parameter_constraints: dict = {**_SkETR._parameter_constraints, **TL_PARAMETER_CONSTRAINTS}
    _tl_splitter = "random"

    def __init__(self, n_estimators=100, *, criterion="squared_error", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features=1.0, max_leaf_nodes=None,
                 min_impurity_decrease=0.0, bootstrap=False, oob_score=False, n_jobs=None, random_state=None,
                 verbose=0, warm_start=False, ccp_alpha=0.0, max_samples=None, monotonic_cst=None, device=None,
                 numeric_mode=None):
        super().__init__(n_estimators, criterion=_regression_criterion(criterion), max_depth=max_depth,
                         min_samples_split=min_samples_split, min_samples_leaf=min_samples_leaf,
                         min_weight_fraction_leaf=min_weight_fraction_leaf, max_features=max_features,
                         max_leaf_nodes=max_leaf_nodes, min_impurity_decrease=min_impurity_decrease,
                         bootstrap=bootstrap, oob_score=oob_score, n_jobs=n_jobs, random_state=random_state,
                         verbose=verbose, warm_start=warm_start, class_weight=None, ccp_alpha=ccp_alpha,
                         max_samples=max_samples, monotonic_cst=monotonic_cst, device=device,
                         numeric_mode=numeric_mode)
        del self.class_weight
