"""Isolation forest on the CPU and CUDA backends.

The isolation trees are grown by the core (twinlearn/ensemble/iforest.hpp)
on the host, in parallel over the CPU threads, every random draw keyed by
(seed, tree, node) in the counter-based generator; a tree holds at most
``max_samples`` rows (256 by default), so building them on the GPU would
not pay. Scoring -- walking every row down every tree and summing the path
lengths in tree order -- runs on the fit's device with arithmetic shared by
both backends, so the scores are the same bits on the CPU and a GPU.
``offset_`` for a float contamination is ``np.percentile`` (float64, on the
host) of those training scores.
"""

from __future__ import annotations

import numbers
import warnings
from numbers import Integral

import numpy as np
from sklearn.base import BaseEstimator, OutlierMixin, _fit_context
from sklearn.ensemble import IsolationForest as _SkIF
from sklearn.utils import check_random_state
from sklearn.utils.validation import check_is_fitted

from .. import _native as native
from .. import identity
from .._io import check_sample_weight, check_X, to_host
from ..base import TL_PARAMETER_CONSTRAINTS, TwinlearnEstimatorMixin
from ._forest import ForestTree, ForestTreeArrays

__all__ = ["IsolationForest"]

_MAX_SEED = np.iinfo(np.int32).max


class IsolationForest(OutlierMixin, TwinlearnEstimatorMixin, BaseEstimator):
    """Isolation Forest: outlier scores from random isolation trees.

    scikit-learn's :class:`sklearn.ensemble.IsolationForest` on the CPU
    backend or a GPU. Each tree is grown on ``max_samples`` rows drawn
    without replacement (with replacement when ``bootstrap``): at each node
    a random non-constant feature and a threshold drawn uniformly between
    the node's smallest and largest value, down to depth
    ``ceil(log2(max_samples))``. A row's path length in a tree is its
    leaf's depth plus ``c(n)``, the average path length of an unsuccessful
    binary-search-tree search among the ``n`` training rows left at that
    leaf; ``score_samples = -2 ** (-E[h] / c(max_samples))``.

    Numerics: the row and feature draws, the per-node feature order and
    the thresholds come from the counter-based generator keyed by (seed,
    tree, node), so the trees do not depend on the thread count, the
    device or the order they are built in (they are not scikit-learn's
    trees, whose generator differs; they agree in distribution). ``c(n)``
    uses the project's own log and the scores its own pow; each row's path
    lengths are summed in tree order. Every numeric mode delivers
    ``identical``: the same bits on the CPU and on a GPU, any thread count.

    Parameters
    ----------
    n_estimators : int, default=100
        Number of trees.
    max_samples : 'auto', int or float, default='auto'
        Rows drawn per tree: 'auto' is ``min(256, n_samples)``; an int larger
        than n_samples warns (as scikit-learn) and is clipped; a float is
        ``int(max_samples * n_samples)``.
    contamination : 'auto' or float in (0, 0.5], default='auto'
        'auto': ``offset_ = -0.5`` (the original paper's threshold); a float:
        ``offset_`` is that percentile of the training scores, so that
        fraction of the training rows is predicted an outlier.
    max_features : int or float, default=1.0
        Columns per tree (drawn without replacement; all of them, in order,
        when it equals n_features).
    bootstrap : bool, default=False
        Draw each tree's rows with replacement.
    n_jobs : int, default=None
        Accepted; the CPU backend uses :func:`twinlearn.set_n_threads`'
        threads (the trees are the same for any count).
    random_state : int, RandomState instance or None, default=None
        An int is the seed of the counter-based generator.
    verbose : int, default=0
    warm_start : bool, default=False
        Adds trees ``len(estimators_)`` .. ``n_estimators - 1``: the same
        trees as one fit of ``n_estimators`` on the same data.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
        Where the rows are scored (the trees are always built on the host).
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None
        Every mode delivers ``identical``.

    Attributes
    ----------
    estimators_ : list of ForestTree
        The trees: ``tree_`` holds scikit-learn-shaped arrays (children_left,
        children_right, feature -- an index into the tree's
        ``estimators_features_`` --, threshold, n_node_samples,
        weighted_n_node_samples; value and impurity are zeros, the trees
        fitting no target); each has ``apply`` and ``decision_path`` on
        ``X[:, estimators_features_[i]]``.
    estimators_samples_ : list of ndarray
        The rows drawn for each tree, in draw order.
    estimators_features_ : list of ndarray
        The columns of each tree.
    max_samples_ : int
    offset_ : float
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.ensemble import IsolationForest
    >>> X = np.array([[-1.1], [0.3], [0.5], [100.0]])
    >>> clf = IsolationForest(random_state=0, device="cpu").fit(X)
    >>> clf.predict([[0.1], [0.0], [90.0]])
    array([ 1,  1, -1])
    """

    _parameter_constraints: dict = {**_SkIF._parameter_constraints, **TL_PARAMETER_CONSTRAINTS}

    _tl_native = (
        native.Spec(
            "IForestParams",
            fields={"n_estimators": "n_trees", "max_samples": "max_samples", "max_features": "max_features",
                    "bootstrap": "bootstrap", "random_state": "seed", "warm_start": "first_tree"},
            python_only={"contamination": "offset_ is computed in Python from the training scores",
                         "n_jobs": "accepted; the thread count is twinlearn.set_n_threads'",
                         "verbose": "printed by Python after the fit"},
        ),
    )

    def __init__(self, *, n_estimators=100, max_samples="auto", contamination="auto", max_features=1.0,
                 bootstrap=False, n_jobs=None, random_state=None, verbose=0, warm_start=False, device=None,
                 numeric_mode=None):
        self.n_estimators = n_estimators
        self.max_samples = max_samples
        self.contamination = contamination
        self.max_features = max_features
        self.bootstrap = bootstrap
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.warm_start = warm_start
        self.device = device
        self.numeric_mode = numeric_mode

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        return tags

    # -- fit ------------------------------------------------------------------------
    def _tl_max_samples(self, n):
        ms = self.max_samples
        if isinstance(ms, str):
            out = min(256, n)
        elif isinstance(ms, numbers.Integral):
            if ms > n:
                warnings.warn(f"max_samples ({ms}) is greater than the total number of samples ({n}). "
                              "max_samples will be set to n_samples for estimation.", UserWarning)
                out = n
            else:
                out = int(ms)
        else:
            out = int(ms * n)
        if out < 1:
            raise ValueError(f"max_samples={ms!r} gives {out} rows per tree for {n} samples; it must give at least 1")
        return out

    def _tl_max_features(self, d):
        mf = self.max_features
        mf = mf if isinstance(mf, numbers.Integral) else int(mf * d)
        if mf > d:
            raise ValueError("max_features must be <= n_features")
        return max(1, int(mf))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Build the isolation trees on X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NumPy arrays, or CuPy / PyTorch / DLPack device arrays (NaN is not
            supported).
        y : Ignored
        sample_weight : array-like of shape (n_samples,), default=None
            As scikit-learn >= 1.9: the probabilities of the rows' draws.

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        device = self._tl_device(X)
        X = check_X(self, X, device, reset=True, for_fit=True, allow_nan=False)
        n, d = X.shape
        sw = check_sample_weight(sample_weight, X, ensure_non_negative=True)
        if sw is not None:
            sw = np.ascontiguousarray(to_host(sw), dtype=np.float64)
            if not sw.sum() > 0:
                raise ValueError("Sample weights sum to zero: nothing to fit.")
        max_samples = self._tl_max_samples(n)
        max_features = self._tl_max_features(d)
        if sw is not None and not self.bootstrap and np.count_nonzero(sw) < max_samples:
            raise ValueError(f"sample_weight has {np.count_nonzero(sw)} positive entries, fewer than "
                             f"max_samples={max_samples} rows to draw without replacement")

        fitted = self.warm_start and len(getattr(self, "estimators_", ())) > 0
        if fitted and (d != self._tl_forest_d or max_features != self._max_features):
            raise ValueError(f"warm_start: X has {d} features (max_features {max_features}) but the forest was "
                             f"fitted with {self._tl_forest_d} ({self._max_features})")
        if not fitted:
            rs = self.random_state
            self._tl_seed = int(rs) if isinstance(rs, Integral) else int(check_random_state(rs).randint(_MAX_SEED))
            self.estimators_, self.estimators_samples_, self.estimators_features_ = [], [], []
            self._tl_forest = {"offsets": np.zeros(1, dtype=np.int64),
                               **{k: np.zeros(0, dtype=np.int64) for k in ("children_left", "children_right",
                                                                           "feature")},
                               **{k: np.zeros(0, dtype=np.float64) for k in ("threshold", "path")}}
        n_more = self.n_estimators - len(self.estimators_)
        if n_more < 0:
            raise ValueError(f"n_estimators={self.n_estimators} must be larger or equal to "
                             f"len(estimators_)={len(self.estimators_)} when warm_start==True")
        if n_more == 0:
            warnings.warn("Warm-start fitting without increasing n_estimators does not fit new trees.", UserWarning)
            return self

        self.max_samples_ = max_samples
        self._max_samples = max_samples
        self._max_features = max_features
        self._tl_forest_d = d
        Xh = np.ascontiguousarray(to_host(X))  # the trees are built on the host
        mod, ctx = self._tl_context(device, X)
        p = native.params(mod.IForestParams, n_trees=int(n_more), first_tree=len(self.estimators_),
                          max_samples=int(max_samples), max_features=int(max_features),
                          bootstrap=bool(self.bootstrap), seed=int(self._tl_seed))
        fit = mod.iforest_fit(ctx, Xh, sw, p)
        identity.record("IsolationForest.threshold", np.asarray(fit.threshold))
        identity.record("IsolationForest.path", np.asarray(fit.path))
        self._tl_add_trees(fit, max_features)
        if self.verbose:
            print(f"IsolationForest: built {n_more} trees ({len(self.estimators_)} in all)")

        if self.contamination == "auto":
            self.offset_ = -0.5
        else:
            scores = self._tl_score(X, device)
            identity.record("IsolationForest.train_scores", scores)
            self.offset_ = float(np.percentile(scores, 100.0 * self.contamination))
        self._tl_record_fit(device, "identical")
        return self

    def _tl_add_trees(self, fit, max_features):
        off = np.asarray(fit.offsets)
        arrays = {k: np.asarray(getattr(fit, k)) for k in ("children_left", "children_right", "feature", "threshold",
                                                          "n_node_samples", "weighted_n_node_samples")}
        path = np.asarray(fit.path)
        samples, features = np.asarray(fit.samples), np.asarray(fit.features)
        global_feature = arrays["feature"].copy()
        for t in range(off.shape[0] - 1):
            s = slice(off[t], off[t + 1])
            nodes = int(off[t + 1] - off[t])
            tree = ForestTreeArrays(**{k: a[s].copy() for k, a in arrays.items()},
                                    value=np.zeros((nodes, 1, 1)), impurity=np.zeros(nodes),
                                    n_features=max_features, n_classes=0)
            est = ForestTree(tree, None, max_features)
            est.max_depth = int(np.ceil(np.log2(max(self.max_samples_, 2))))  # the growth limit, as scikit-learn's
            self.estimators_.append(est)
            self.estimators_samples_.append(samples[t].astype(np.intp))
            self.estimators_features_.append(features[t].astype(np.intp))
            local = global_feature[s]
            local[local >= 0] = features[t][local[local >= 0]]  # the tree's columns -> X's
        F = self._tl_forest
        F["offsets"] = np.concatenate([F["offsets"], F["offsets"][-1] + off[1:]])
        for k, a in (("children_left", arrays["children_left"]), ("children_right", arrays["children_right"]),
                     ("feature", global_feature), ("threshold", arrays["threshold"]), ("path", path)):
            F[k] = np.concatenate([F[k], a])

    # -- scores ---------------------------------------------------------------------
    def _tl_score(self, X, device):
        F = self._tl_forest
        mod, ctx = self._tl_context(device, X)
        return np.asarray(mod.iforest_score(ctx, X, F["offsets"], F["children_left"], F["children_right"],
                                            F["feature"], F["threshold"], F["path"], int(self._max_samples)))

    def score_samples(self, X):
        """Opposite of the anomaly score of the original paper (lower: more abnormal).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
            ``-2 ** (-E[h(x)] / c(max_samples_))``, E[h] the mean path length
            over the trees.
        """
        check_is_fitted(self, "estimators_")
        device = self._tl_device(X)
        X = check_X(self, X, device, reset=False, allow_nan=False)
        return self._tl_score(X, device)

    def decision_function(self, X):
        """``score_samples(X) - offset_``: negative for outliers.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        scores : ndarray of shape (n_samples,)
        """
        return np.asarray(to_host(self.score_samples(X))) - self.offset_

    def predict(self, X):
        """+1 for inliers, -1 for outliers (``decision_function(X) < 0``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        is_inlier : ndarray of shape (n_samples,)
        """
        dec = np.asarray(to_host(self.decision_function(X)))
        is_inlier = np.ones(dec.shape[0], dtype=int)
        is_inlier[dec < 0] = -1
        return is_inlier
