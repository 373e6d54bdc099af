"""HDBSCAN on the CPU and CUDA backends."""

from __future__ import annotations

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.cluster._hdbscan.hdbscan import FAST_METRICS
from sklearn.metrics.pairwise import _VALID_METRICS
from sklearn.utils._param_validation import Hidden, Interval, StrOptions

from .. import _io, _native as native, identity
from .._config import n_threads_context
from ..base import TL_PARAMETER_CONSTRAINTS, TwinlearnEstimatorMixin
from ..metrics._pairwise import METRICS, resolve_metric

#: The metrics the native fit serves (besides 'precomputed').
HDBSCAN_METRICS = METRICS

# scikit-learn's labels and probabilities of rows with non-finite values.
_INFINITE_LABEL, _MISSING_LABEL = -2, -3


class HDBSCAN(TwinlearnEstimatorMixin, ClusterMixin, BaseEstimator):
    """Hierarchical density-based clustering, on the CPU backend or a GPU.

    scikit-learn's :class:`sklearn.cluster.HDBSCAN` (1.3+): same parameters,
    defaults and fitted attributes, and the same labels and probabilities.
    The pipeline is scikit-learn's:

    - core distances: the distance of each sample to its ``min_samples``-th
      nearest sample, the sample itself included (ties by lowest index);
    - the minimum spanning tree of the mutual reachability
      ``max(core_i, core_j, d(i, j) / alpha)`` by Prim's algorithm from
      sample 0, distances computed on the fly (memory linear in the number
      of samples), the next sample the one of smallest (reachability, index)
      -- scikit-learn's first strict minimum;
    - the single-linkage tree, the condensed tree, the stabilities and the
      'eom' or 'leaf' selection, labels and probabilities, written step by
      step after ``sklearn/cluster/_hdbscan/_tree.pyx`` (host code).

    The first two steps run on the chosen device; each of their values is
    one function shared by both backends and the argmin follows a fixed
    (value, index) order, so every numeric mode delivers ``identical``: the
    same tree, labels and probabilities on the CPU, for any thread count, and
    on any GPU (docs/NUMERICS.md "HDBSCAN"). Distances are computed in
    float64 whatever X's dtype (scikit-learn converts to float64 too),
    euclidean ones by differences; they may differ from scikit-learn's by a
    few ulps, which changes a result only where two reachabilities tie within
    that margin.

    Where scikit-learn takes its brute-force path (``metric='precomputed'``,
    sparse X, ``algorithm='brute'`` or a metric that its trees do not serve,
    such as 'cosine'), twinlearn follows that path's rules: the core
    distances come from the distances divided by ``alpha``, and each
    spanning-tree edge starts at the sample added just before.

    Parameters
    ----------
    min_cluster_size : int, default=5
        The smallest group of samples that counts as a cluster (>= 2).
    min_samples : int, default=None
        The ``k`` of the core distances (the sample itself included); None:
        ``min_cluster_size``.
    cluster_selection_epsilon : float, default=0.0
        Clusters that split below this distance are merged (>= 0).
    max_cluster_size : int, default=None
        The largest cluster 'eom' may select (None: no limit).
    metric : str, default='euclidean'
        'euclidean' ('l2'), 'sqeuclidean', 'manhattan' ('cityblock', 'l1'),
        'cosine', 'chebyshev', 'minkowski' (``p`` in ``metric_params``) or
        'precomputed' (X is a dense square distance matrix). Other metrics,
        callables and sparse precomputed graphs raise ValueError.
    metric_params : dict, default=None
        Only ``{'p': value}`` for 'minkowski'.
    alpha : float, default=1.0
        The distance scaling of robust single linkage (> 0).
    algorithm : {'auto', 'brute', 'kd_tree', 'ball_tree'}, default='auto'
        No tree is built; 'brute' selects scikit-learn's brute-path rules
        (see above), the others its tree-path rules.
    leaf_size : int, default=40
        Accepted for compatibility; no effect.
    n_jobs : int, default=None
        CPU threads of the fit (None: :func:`twinlearn.get_n_threads`).
    cluster_selection_method : {'eom', 'leaf'}, default='eom'
    allow_single_cluster : bool, default=False
    store_centers : {None, 'centroid', 'medoid', 'both'}, default=None
        Which cluster centers to compute (scikit-learn's weighted centroids
        and medoids).
    copy : bool, default=False
        Accepted for compatibility: X is never modified.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    labels_ : ndarray of shape (n_samples,)
        Cluster of each sample; -1 noise, -2 a sample with an infinite
        value, -3 a sample with a missing (NaN) value.
    probabilities_ : ndarray of shape (n_samples,)
        Membership strength; 0 for noise and infinite samples, NaN for
        missing ones.
    centroids_ : ndarray of shape (n_clusters, n_features)
        With ``store_centers`` 'centroid' or 'both'.
    medoids_ : ndarray of shape (n_clusters, n_features)
        With ``store_centers`` 'medoid' or 'both'.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.cluster import HDBSCAN
    >>> X = np.array([[0, 0], [0, 1], [1, 0], [1, 1], [10, 10], [10, 11], [11, 10], [11, 11]], dtype=float)
    >>> HDBSCAN(min_cluster_size=3, device="cpu").fit(X).labels_
    array([0, 0, 0, 0, 1, 1, 1, 1])
    """

    _parameter_constraints: dict = {
        "min_cluster_size": [Interval(numbers.Integral, 2, None, closed="left")],
        "min_samples": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "cluster_selection_epsilon": [Interval(numbers.Real, 0, None, closed="left")],
        "max_cluster_size": [None, Interval(numbers.Integral, 1, None, closed="left")],
        "metric": [StrOptions(FAST_METRICS | set(_VALID_METRICS) | {"precomputed"}), callable],
        "metric_params": [dict, None],
        "alpha": [Interval(numbers.Real, 0, None, closed="neither")],
        "algorithm": [StrOptions({"auto", "brute", "kd_tree", "ball_tree"})],
        "leaf_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_jobs": [numbers.Integral, None],
        "cluster_selection_method": [StrOptions({"eom", "leaf"})],
        "allow_single_cluster": ["boolean"],
        "store_centers": [None, StrOptions({"centroid", "medoid", "both"})],
        "copy": ["boolean", Hidden(StrOptions({"warn"}))],
        **TL_PARAMETER_CONSTRAINTS,
    }

    #: Rows with infinite or missing values are labelled, not refused (scikit-learn's convention).
    _tl_nonfinite_outlier_labels = {"inf": _INFINITE_LABEL, "nan": _MISSING_LABEL}

    _tl_native = (
        native.Spec(
            "HdbscanParams",
            fields={
                "min_cluster_size": "min_cluster_size",
                "cluster_selection_epsilon": "cluster_selection_epsilon",
                "max_cluster_size": "max_cluster_size",
                "cluster_selection_method": "cluster_selection_method",
                "allow_single_cluster": "allow_single_cluster",
            },
            python_only={
                "min_samples": "hdbscan_fit's min_samples argument",
                "metric": "hdbscan_fit's metric and precomputed arguments",
                "metric_params": "only minkowski's p: hdbscan_fit's p argument",
                "alpha": "hdbscan_fit's alpha argument",
                "algorithm": "'brute' sets hdbscan_fit's brute argument; no tree is built",
                "leaf_size": "no tree is built",
                "n_jobs": "the thread count of the backend's Context",
                "store_centers": "centers computed in Python from the labels",
                "copy": "X is never modified",
            },
        ),
    )

    def __init__(self, min_cluster_size=5, min_samples=None, cluster_selection_epsilon=0.0, max_cluster_size=None,
                 metric="euclidean", metric_params=None, alpha=1.0, algorithm="auto", leaf_size=40, n_jobs=None,
                 cluster_selection_method="eom", allow_single_cluster=False, store_centers=None, copy=False,
                 device=None, numeric_mode=None):
        self.min_cluster_size = min_cluster_size
        self.min_samples = min_samples
        self.cluster_selection_epsilon = cluster_selection_epsilon
        self.max_cluster_size = max_cluster_size
        self.metric = metric
        self.metric_params = metric_params
        self.alpha = alpha
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.n_jobs = n_jobs
        self.cluster_selection_method = cluster_selection_method
        self.allow_single_cluster = allow_single_cluster
        self.store_centers = store_centers
        self.copy = copy
        self.device = device
        self.numeric_mode = numeric_mode

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.allow_nan = self.metric != "precomputed"
        return tags

    def _metric(self):
        """(name, p) for hdbscan_fit; ValueError for what the backend does not serve."""
        if callable(self.metric):
            raise ValueError(f"HDBSCAN: callable metrics are not supported; use one of {HDBSCAN_METRICS} or "
                             "'precomputed'")
        return resolve_metric(self.metric, None, self.metric_params, where="HDBSCAN metric")

    # -- fit -----------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Find the clusters of X.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or (n_samples, n_samples)
            Training instances (NumPy, device arrays or a sparse matrix,
            densified), or with ``metric='precomputed'`` a dense square
            distance matrix.
        y : Ignored

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        device = self._tl_device(X)
        precomputed = self.metric == "precomputed"
        if precomputed and self.store_centers is not None:
            raise ValueError("Cannot store centers when using a precomputed distance matrix.")
        from sklearn.neighbors import BallTree, KDTree

        trees = {"kd_tree": ("KDTree", KDTree.valid_metrics), "ball_tree": ("BallTree", BallTree.valid_metrics)}
        if self.algorithm in trees and self.metric not in trees[self.algorithm][1]:
            raise ValueError(f"{self.metric} is not a valid metric for a {trees[self.algorithm][0]}-based algorithm."
                             " Please select a different metric.")
        if _io.is_device_array(X):
            X = _io.to_numpy(X)
        finite_index = None
        if precomputed:
            if self.metric_params:
                raise ValueError("metric_params are not supported with metric='precomputed'")
            if sp.issparse(X):
                raise ValueError("HDBSCAN: sparse precomputed distance graphs are not supported; pass a dense "
                                 "square matrix")
            X = _io.validate_host(self, X, ensure_all_finite=False, dtype=np.float64, reset=True)
            if np.isnan(X).any():
                raise ValueError("np.nan values found in precomputed-dense")
            if X.shape[0] != X.shape[1]:
                raise ValueError("The precomputed distance matrix is expected to be square, however it has shape "
                                 f"{X.shape}.")
            if not np.allclose(X, X.T):
                raise ValueError("The precomputed distance matrix is expected to be symmetric, however its values "
                                 "appear to be asymmetric.")
            name, p = "euclidean", 2.0
            Xf = np.ascontiguousarray(X)
            brute = True
        else:
            name, p = self._metric()
            X = _io.validate_host(self, X, accept_sparse=["csr", "lil"], ensure_all_finite=False, dtype=np.float64,
                                  reset=True)
            brute = sp.issparse(X) or self.algorithm == "brute" or self.metric not in FAST_METRICS
            Xd = np.ascontiguousarray(X.toarray()) if sp.issparse(X) else np.ascontiguousarray(X)
            sums = Xd.sum(axis=1)
            missing_index = np.flatnonzero(np.isnan(sums))
            infinite_index = np.flatnonzero(np.isinf(sums))
            if len(missing_index) or len(infinite_index):
                finite_index = np.flatnonzero(np.isfinite(Xd).all(axis=1))
                Xd = np.ascontiguousarray(Xd[finite_index])
            Xf = Xd
        n = Xf.shape[0]
        if n == 1 or (finite_index is None and X.shape[0] == 1):
            raise ValueError("n_samples=1 while HDBSCAN requires more than one sample")
        min_samples = self.min_cluster_size if self.min_samples is None else self.min_samples
        if min_samples > n:
            raise ValueError(f"min_samples ({min_samples}) must be at most the number of samples in X ({n})")
        with n_threads_context(self.n_jobs):
            mod, ctx = self._tl_context(device)
            params = native.params(
                mod.HdbscanParams, min_cluster_size=int(self.min_cluster_size),
                cluster_selection_epsilon=float(self.cluster_selection_epsilon),
                max_cluster_size=int(self.max_cluster_size or 0),
                cluster_selection_method=self.cluster_selection_method,
                allow_single_cluster=bool(self.allow_single_cluster))
            r = mod.hdbscan_fit(ctx, Xf, name, float(p), precomputed, int(min_samples), float(self.alpha), brute,
                                params)
        # The edges in scikit-learn's order: NumPy's default argsort of the
        # weights (_process_mst), which decides among equal weights.
        src, dst, w = np.asarray(r.mst_src), np.asarray(r.mst_dst), np.asarray(r.mst_weight)
        order = np.argsort(w)
        src, dst, w = (np.ascontiguousarray(a[order]) for a in (src, dst, w))
        labels, probabilities = mod.hdbscan_tree(src, dst, w, params)
        labels = np.asarray(labels).astype(np.intp)
        probabilities = np.asarray(probabilities)
        self._mst = (src, dst, w)
        self._core_distances = np.asarray(r.core_distances)
        if finite_index is not None:
            full = np.empty(X.shape[0], dtype=np.intp)
            full[finite_index] = labels
            full[infinite_index] = _INFINITE_LABEL
            full[missing_index] = _MISSING_LABEL
            prob = np.zeros(X.shape[0], dtype=np.float64)
            prob[finite_index] = probabilities
            prob[missing_index] = np.nan
            labels, probabilities = full, prob
        self.labels_ = labels
        self.probabilities_ = probabilities
        self._tl_nonfinite = None if finite_index is None else (finite_index, infinite_index, missing_index)
        if self.store_centers:
            self._weighted_cluster_center(Xf, labels if finite_index is None else labels[finite_index],
                                          probabilities if finite_index is None else probabilities[finite_index])
        identity.record("HDBSCAN.labels_", self.labels_)
        identity.record("HDBSCAN.probabilities_", self.probabilities_)
        self._tl_record_fit(device, "identical")
        return self

    def _weighted_cluster_center(self, X, labels, strength_all):
        """scikit-learn's centroids (probability-weighted means) and medoids
        (the sample of least probability-weighted distance sum)."""
        n_clusters = len(set(labels.tolist()) - {-1, -2, -3})
        make_centroids = self.store_centers in ("centroid", "both")
        make_medoids = self.store_centers in ("medoid", "both")
        if make_centroids:
            self.centroids_ = np.empty((n_clusters, X.shape[1]), dtype=np.float64)
        if make_medoids:
            self.medoids_ = np.empty((n_clusters, X.shape[1]), dtype=np.float64)
            from ..metrics import pairwise_distances
            name, p = self._metric()
        for idx in range(n_clusters):
            mask = labels == idx
            data = X[mask]
            strength = strength_all[mask]
            if make_centroids:
                self.centroids_[idx] = np.average(data, weights=strength, axis=0)
            if make_medoids:
                kw = {"p": p} if name == "minkowski" else {}
                dist_mat = np.asarray(pairwise_distances(data, metric=name, device="cpu", **kw)) * strength
                self.medoids_[idx] = data[np.argmin(dist_mat.sum(axis=1))]

    def fit_predict(self, X, y=None):
        """Cluster X and return the labels (= ``fit(X).labels_``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or (n_samples, n_samples)
        y : Ignored

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        self.fit(X)
        return self.labels_
