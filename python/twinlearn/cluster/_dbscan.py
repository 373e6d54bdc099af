"""DBSCAN on the CPU and CUDA backends."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.metrics.pairwise import _VALID_METRICS
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight

from .. import _io, _native as native, identity
from .._config import n_threads_context
from ..base import TL_PARAMETER_CONSTRAINTS, TwinlearnEstimatorMixin
from ..metrics._pairwise import METRICS, resolve_metric

#: The metrics the native fit serves (besides 'precomputed').
DBSCAN_METRICS = METRICS


class DBSCAN(TwinlearnEstimatorMixin, ClusterMixin, BaseEstimator):
    """Density-Based Spatial Clustering of Applications with Noise, on the CPU backend or a GPU.

    scikit-learn's :class:`sklearn.cluster.DBSCAN`: same parameters, defaults
    and fitted attributes, and the same labels. With ``N(i)`` the samples
    within ``eps`` of sample ``i`` (distance ``<= eps``, ``i`` itself
    included), scikit-learn's rule (``sklearn/cluster/_dbscan_inner.pyx``) is:

    - ``i`` is a core sample when ``|N(i)|`` (with ``sample_weight``: the sum
      of the weights of ``N(i)``) is at least ``min_samples``;
    - clusters grow from the lowest-index unlabelled core sample over core
      samples: a cluster is a connected component of the core samples'
      neighbourhood graph, and cluster ids are numbered in the order of the
      components' lowest core index;
    - a non-core sample joins the first cluster that reaches it, i.e. the
      lowest cluster id among its core neighbours; with none it is noise (-1).

    twinlearn computes that rule without any order dependence (connected
    components by union-find on the CPU, by min-label hooking on the GPU;
    ids by the rank of each component's lowest core index; border samples by
    an integer minimum), so every numeric mode delivers ``identical``: the
    same labels on the CPU, for any thread count, and on any GPU
    (docs/NUMERICS.md "DBSCAN"). A precomputed relation that is not symmetric
    is labelled by scikit-learn's own sequential expansion on the host.

    Neighbourhoods come from the exact tiled distance kernels of
    :mod:`twinlearn.metrics` (a brute-force scan, memory linear in the number
    of samples plus neighbour pairs; the distance matrix is never held
    whole), computed in float64 whatever X's dtype (scikit-learn's trees
    compute in float64 too), euclidean distances by differences. A pair at a
    distance that equals ``eps`` in exact arithmetic is a neighbour when its
    computed distance rounds to at most ``eps``: for data whose distances are
    exact in float64 (integer grids, say) that is exactly scikit-learn's
    answer; otherwise a pair within a few ulps of ``eps`` may be decided
    differently from scikit-learn, whose trees compare ``sum (x - y)^2`` with
    ``eps**2``.

    Parameters
    ----------
    eps : float, default=0.5
        The maximum distance between two samples for one to be in the
        neighbourhood of the other.
    min_samples : int, default=5
        The number of samples (or total weight) in a neighbourhood for a point
        to be a core point, the point itself included.
    metric : str, default='euclidean'
        'euclidean' ('l2'), 'sqeuclidean', 'manhattan' ('cityblock', 'l1'),
        'cosine', 'chebyshev', 'minkowski' (with ``p``) or
        'precomputed' (X is a square distance matrix, dense or a sparse graph
        whose stored entries are the only candidate neighbours). Other
        metrics of scikit-learn and callables raise ValueError.
    metric_params : dict, default=None
        Only ``{'p': value}`` for 'minkowski'; anything else raises ValueError.
    algorithm : {'auto', 'ball_tree', 'kd_tree', 'brute'}, default='auto'
        Accepted for compatibility; no effect (every algorithm gives the same
        exact neighbourhoods here).
    leaf_size : int, default=30
        Accepted for compatibility; no effect (no tree is built).
    p : float, default=None
        Minkowski's power (None: 2); must be >= 1.
    n_jobs : int, default=None
        CPU threads of the fit (None: :func:`twinlearn.get_n_threads`).
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    core_sample_indices_ : ndarray of shape (n_core_samples,)
        Indices of the core samples, ascending.
    components_ : ndarray or sparse matrix of shape (n_core_samples, n_features)
        Copy of each core sample (X's rows, dtype and format).
    labels_ : ndarray of shape (n_samples,)
        Cluster of each sample; -1 for noise.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.cluster import DBSCAN
    >>> X = np.array([[1, 2], [2, 2], [2, 3], [8, 7], [8, 8], [25, 80]], dtype=float)
    >>> clustering = DBSCAN(eps=3, min_samples=2, device="cpu").fit(X)
    >>> clustering.labels_
    array([ 0,  0,  0,  1,  1, -1])
    >>> clustering.core_sample_indices_
    array([0, 1, 2, 3, 4])
    """

    _parameter_constraints: dict = {
        "eps": [Interval(numbers.Real, 0.0, None, closed="neither")],
        "min_samples": [Interval(numbers.Integral, 1, None, closed="left")],
        "metric": [StrOptions(set(_VALID_METRICS) | {"precomputed"}), callable],
        "metric_params": [dict, None],
        "algorithm": [StrOptions({"auto", "ball_tree", "kd_tree", "brute"})],
        "leaf_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "p": [Interval(numbers.Real, 0.0, None, closed="left"), None],
        "n_jobs": [numbers.Integral, None],
        **TL_PARAMETER_CONSTRAINTS,
    }

    _tl_native = (
        native.Spec(
            "DbscanParams",
            fields={"eps": "eps", "min_samples": "min_samples"},
            python_only={
                "metric": "dbscan_fit's metric argument ('precomputed': dbscan_graph)",
                "metric_params": "only minkowski's p: dbscan_fit's p argument",
                "p": "dbscan_fit's p argument",
                "algorithm": "every algorithm runs the exact brute-force scan",
                "leaf_size": "no tree is built",
                "n_jobs": "the thread count of the backend's Context",
            },
        ),
    )

    def __init__(self, eps=0.5, *, min_samples=5, metric="euclidean", metric_params=None, algorithm="auto",
                 leaf_size=30, p=None, n_jobs=None, device=None, numeric_mode=None):
        self.eps = eps
        self.min_samples = min_samples
        self.metric = metric
        self.metric_params = metric_params
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.p = p
        self.n_jobs = n_jobs
        self.device = device
        self.numeric_mode = numeric_mode

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.metric == "precomputed"
        tags.input_tags.sparse = True
        return tags

    # -- helpers -----------------------------------------------------------------
    def _metric(self):
        """(name, p) for dbscan_fit; ValueError for what the backend does not serve."""
        metric = self.metric
        if callable(metric):
            raise ValueError(f"DBSCAN: callable metrics are not supported; use one of {DBSCAN_METRICS} or "
                             "'precomputed'")
        params = dict(self.metric_params or {})
        if metric == "minkowski" and "p" in params and self.p is not None:
            warnings.warn("Parameter p is found in metric_params. The corresponding parameter from __init__ "
                          "is ignored.", SyntaxWarning, stacklevel=3)
            p = None
        else:
            p = self.p if metric == "minkowski" else None
        return resolve_metric(metric, p, params, where="DBSCAN metric")

    @staticmethod
    def _graph_of_dense(D, eps):
        """CSR rows (ascending) of the entries of the square matrix D that are <= eps."""
        rows, cols = np.nonzero(D <= eps)
        offsets = np.zeros(D.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=D.shape[0]), out=offsets[1:])
        return offsets, np.ascontiguousarray(cols, dtype=np.int64)

    @staticmethod
    def _graph_of_sparse(G, eps):
        """CSR rows (ascending) of the stored entries of G (diagonal made
        explicit, as scikit-learn) that are <= eps."""
        G = G.tocsr(copy=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", sp.SparseEfficiencyWarning)
            G.setdiag(G.diagonal())
        G.sum_duplicates()  # sorts the indices too
        G.sort_indices()
        keep = G.data <= eps
        rows = np.repeat(np.arange(G.shape[0]), np.diff(G.indptr))[keep]
        offsets = np.zeros(G.shape[0] + 1, dtype=np.int64)
        np.cumsum(np.bincount(rows, minlength=G.shape[0]), out=offsets[1:])
        return offsets, np.ascontiguousarray(G.indices[keep], dtype=np.int64)

    def _check_precomputed(self, X):
        X = _io.validate_host(self, _io.to_numpy(X) if _io.is_device_array(X) else X, accept_sparse="csr",
                              dtype=np.float64, reset=True)
        if X.shape[0] != X.shape[1]:
            raise ValueError(f"Precomputed matrix must be square. Input is a {X.shape[0]}x{X.shape[1]} matrix.")
        if np.any((X.data if sp.issparse(X) else X) < 0):
            raise ValueError("Negative values in data passed to precomputed distance matrix.")
        return X

    # -- fit -----------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Perform DBSCAN clustering from features or a distance matrix.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or (n_samples, n_samples)
            Training instances (NumPy, CuPy / PyTorch device arrays, or a
            sparse matrix, densified for the distances), or distances between
            instances if ``metric='precomputed'`` (dense, or a sparse graph).
        y : Ignored
        sample_weight : array-like of shape (n_samples,), default=None
            Weight of each sample; a sample of weight >= min_samples is a core
            sample by itself; negative weights may keep a neighbour from being
            core. Summed in float64.

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        device = self._tl_device(X)
        precomputed = self.metric == "precomputed"
        if precomputed:
            if self.metric_params:
                raise ValueError("metric_params are not supported with metric='precomputed'")
            X = self._check_precomputed(X)
        else:
            name, p = self._metric()
            if sp.issparse(X):
                X = _io.validate_host(self, X, accept_sparse="csr", dtype=[np.float64, np.float32], reset=True)
            else:
                X = _io.check_finite_X(self, X, device, reset=True)
        n = X.shape[0]
        sw = None
        if sample_weight is not None:
            sw = np.ascontiguousarray(_check_sample_weight(_io.to_host(sample_weight), np.empty((n, 0)),
                                                           dtype=np.float64))
        params_for = lambda mod: native.params(mod.DbscanParams, eps=float(self.eps),  # noqa: E731
                                               min_samples=int(self.min_samples))
        with n_threads_context(self.n_jobs):
            if precomputed:
                offsets, ind = (self._graph_of_sparse if sp.issparse(X) else self._graph_of_dense)(X, self.eps)
                mod, ctx = self._tl_context(device)
                r = mod.dbscan_graph(ctx, offsets, ind, sw, params_for(mod))
            else:
                Xd = np.ascontiguousarray(X.toarray()) if sp.issparse(X) else X
                if str(Xd.dtype).endswith("float32"):  # neighbourhoods in float64 (exact upcast)
                    Xd = _io.as_dtype(Xd, np.float64)
                mod, ctx = self._tl_context(device, Xd)
                r = mod.dbscan_fit(ctx, Xd, sw, name, float(p), params_for(mod))
        labels = np.asarray(r.labels).astype(np.intp)
        core = np.asarray(r.core_sample_indices).astype(np.intp)
        self.core_sample_indices_ = core
        self.labels_ = labels
        if len(core):
            Xh = X if sp.issparse(X) else _io.to_host(X)
            self.components_ = Xh[core].copy()
        else:
            self.components_ = np.empty((0, X.shape[1]))
        identity.record("DBSCAN.labels_", self.labels_)
        identity.record("DBSCAN.core_sample_indices_", self.core_sample_indices_)
        self._tl_record_fit(device, "identical")
        return self

    def fit_predict(self, X, y=None, sample_weight=None):
        """Compute clusters and return the labels (= ``fit(X).labels_``).

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or (n_samples, n_samples)
        y : Ignored
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        labels : ndarray of shape (n_samples,)
            Cluster labels; -1 for noise.
        """
        self.fit(X, sample_weight=sample_weight)
        return self.labels_
