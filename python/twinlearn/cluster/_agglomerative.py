"""Agglomerative (hierarchical) clustering on the CPU and CUDA backends."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.metrics.pairwise import _VALID_METRICS
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .. import _io, identity
from ..base import TL_PARAMETER_CONSTRAINTS, TwinlearnEstimatorMixin

#: The metrics the native fit serves (besides 'precomputed'), each with the
#: backend's name for it.
AGGLOMERATIVE_METRICS = {
    "euclidean": "euclidean", "l2": "euclidean",
    "manhattan": "manhattan", "l1": "manhattan", "cityblock": "manhattan",
    "cosine": "cosine",
}
#: The linkages of scikit-learn.
LINKAGES = ("ward", "complete", "average", "single")
#: The largest n of the linkages that hold the condensed distance matrix
#: (complete, average, ward): n (n - 1) / 2 float64 values, 6.4 GB at 40000
#: (twinlearn/cluster/agglomerative.hpp kAggloMaxCondensedSamples).
MAX_CONDENSED_SAMPLES = 40000


class AgglomerativeClustering(TwinlearnEstimatorMixin, ClusterMixin, BaseEstimator):
    """Agglomerative clustering on the CPU backend or a GPU.

    scikit-learn's :class:`sklearn.cluster.AgglomerativeClustering` without a
    connectivity matrix: same parameters, defaults and fitted attributes, and
    the same tree: ``children_`` equal to scikit-learn's (the same merge
    order and node numbering), ``distances_`` within a few ulps of its
    float64 heights, and ``labels_`` from scikit-learn's cut (``_hc_cut``,
    whose cluster numbering follows the order of its heap).

    The trees are the ones scikit-learn takes from SciPy and from its own
    Cython code, computed the same way (docs/NUMERICS.md "Agglomerative
    clustering"):

    - ``linkage='single'``: Prim's minimum spanning tree with the distances
      computed on the fly (memory linear in the number of samples), the next
      vertex being the lowest index among the nearest to the tree; the edges
      stably sorted by length and merged by union-find. On a GPU the scan
      runs on the device.
    - ``'complete'``, ``'average'``, ``'ward'``: SciPy's nearest-neighbour
      chain with its Lance-Williams updates, on the condensed float64
      distance matrix: ``n (n - 1) / 2`` values, so at most
      :data:`MAX_CONDENSED_SAMPLES` (40000) samples; beyond that fit raises
      ValueError. The distances are computed on the selected backend.

    Equal merge heights (ties) are resolved exactly as scikit-learn resolves
    them, because the scans, comparisons and sort are the same; it needs the
    distances' bits to agree with SciPy's, which is so wherever they are exact
    in float64 (integer grids under euclidean or manhattan distances). For
    distances that round, a tie or near-tie within an ulp may be ordered
    differently from scikit-learn. Distances are always float64 (a float32 X
    is upcast, as scikit-learn does) and euclidean distances are computed by
    differences; the merges are exact comparisons and integer bookkeeping, so
    the tree and labels are the same bits on the CPU (any thread count) and on
    any GPU: every numeric mode delivers ``identical``.

    Parameters
    ----------
    n_clusters : int or None, default=2
        The number of clusters; None when ``distance_threshold`` is set.
    metric : str, default='euclidean'
        'euclidean' ('l2'), 'manhattan' ('l1', 'cityblock'), 'cosine' or
        'precomputed' (X is a square distance matrix, of which the entries
        above the diagonal are read, as SciPy reads them). 'ward' takes
        'euclidean' / 'l2' only. Other metrics of scikit-learn and callables
        raise ValueError.
    memory : str or object with the joblib.Memory interface, default=None
        Accepted for compatibility; no caching is done.
    connectivity : array-like, sparse matrix or callable, default=None
        Only None: a connectivity constraint raises ValueError.
    compute_full_tree : 'auto' or bool, default='auto'
        Without connectivity the full tree is always built (as in
        scikit-learn); must not be False with ``distance_threshold``.
    linkage : {'ward', 'complete', 'average', 'single'}, default='ward'
    distance_threshold : float, default=None
        Merges at heights >= this are not taken: ``n_clusters_`` is the number
        of such merges plus one.
    compute_distances : bool, default=False
        Keep the merge heights in ``distances_`` (always kept with
        ``distance_threshold``).
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    n_clusters_ : int
    labels_ : ndarray of shape (n_samples,)
    n_leaves_ : int
    n_connected_components_ : int
        Always 1 (no connectivity).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
    children_ : ndarray of shape (n_samples - 1, 2)
        The nodes merged into node ``n_samples + i`` at step i.
    distances_ : ndarray of shape (n_samples - 1,)
        Merge heights; only with ``distance_threshold`` or
        ``compute_distances=True``.

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.cluster import AgglomerativeClustering
    >>> X = np.array([[1, 2], [1, 4], [1, 0], [4, 2], [4, 4], [4, 0]], dtype=float)
    >>> clustering = AgglomerativeClustering(device="cpu").fit(X)
    >>> clustering.labels_
    array([1, 1, 1, 0, 0, 0])
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(Integral, 1, None, closed="left"), None],
        "metric": [StrOptions(set(_VALID_METRICS) | {"precomputed"}), callable],
        "memory": [str, HasMethods("cache"), None],
        "connectivity": ["array-like", "sparse matrix", callable, None],
        "compute_full_tree": [StrOptions({"auto"}), "boolean"],
        "linkage": [StrOptions(set(LINKAGES))],
        "distance_threshold": [Interval(Real, 0, None, closed="left"), None],
        "compute_distances": ["boolean"],
        **TL_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, n_clusters=2, *, metric="euclidean", memory=None, connectivity=None,
                 compute_full_tree="auto", linkage="ward", distance_threshold=None, compute_distances=False,
                 device=None, numeric_mode=None):
        self.n_clusters = n_clusters
        self.distance_threshold = distance_threshold
        self.memory = memory
        self.connectivity = connectivity
        self.compute_full_tree = compute_full_tree
        self.linkage = linkage
        self.metric = metric
        self.compute_distances = compute_distances
        self.device = device
        self.numeric_mode = numeric_mode

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.metric == "precomputed"
        return tags

    # -- checks ------------------------------------------------------------------
    def _check_params(self):
        if not ((self.n_clusters is None) ^ (self.distance_threshold is None)):
            raise ValueError("Exactly one of n_clusters and distance_threshold has to be set, and the other "
                             "needs to be None.")
        if self.distance_threshold is not None and not self.compute_full_tree:
            raise ValueError("compute_full_tree must be True if distance_threshold is set.")
        if self.linkage == "ward" and self.metric not in ("euclidean", "l2"):
            raise ValueError(f"{self.metric} was provided as metric. Ward can only work with euclidean distances "
                             "(i.e. 'euclidean' and 'l2').")
        if self.connectivity is not None:
            raise ValueError("AgglomerativeClustering: connectivity is not supported (only connectivity=None); "
                             "use sklearn.cluster.AgglomerativeClustering for structured clustering")
        if callable(self.metric):
            raise ValueError("AgglomerativeClustering: callable metrics are not supported; use one of "
                             f"{sorted(AGGLOMERATIVE_METRICS)} or 'precomputed'")
        if self.metric != "precomputed" and self.metric not in AGGLOMERATIVE_METRICS:
            raise ValueError(f"AgglomerativeClustering: metric={self.metric!r} is not supported; use one of "
                             f"{sorted(AGGLOMERATIVE_METRICS)} or 'precomputed'")

    @staticmethod
    def _check_min_samples(X):
        if X.shape[0] < 2:
            raise ValueError(f"Found array with {X.shape[0]} sample(s) (shape={tuple(X.shape)}) while a minimum of 2 "
                             "is required by AgglomerativeClustering.")

    def _check_size(self, n):
        if self.linkage != "single" and n > MAX_CONDENSED_SAMPLES:
            raise ValueError(
                f"AgglomerativeClustering: linkage={self.linkage!r} holds the n * (n - 1) / 2 float64 distances "
                f"({n * (n - 1) * 4 / 1e9:.1f} GB for n = {n}); at most {MAX_CONDENSED_SAMPLES} samples are "
                "supported (linkage='single' takes any n)")

    # -- fit -----------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the hierarchical clustering from features, or distance matrix.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
            Training instances (NumPy, or CuPy / PyTorch device arrays), or
            distances between instances if ``metric='precomputed'``.
        y : Ignored

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        device = self._tl_device(X)
        if self.metric == "precomputed":
            X = _io.validate_host(self, _io.to_numpy(X) if _io.is_device_array(X) else X, dtype=np.float64,
                                  order="C", reset=True)
        else:
            X = _io.check_finite_X(self, X, device, reset=True)
        self._check_min_samples(X)
        self._check_params()
        n = X.shape[0]
        if self.metric == "precomputed" and X.shape[0] != X.shape[1]:
            raise ValueError(f"Distance matrix should be square, got matrix of shape {X.shape}")
        self._check_size(n)
        if self.metric == "precomputed":
            mod, ctx = self._tl_context(device)
            children, distances = mod.agglomerative_tree_precomputed(ctx, X, self.linkage)
        else:
            if self.metric == "cosine" and not np.all(np.any(_io.to_numpy(X), axis=1)):
                raise ValueError("Cosine affinity cannot be used when X contains zero vectors")
            Xd = X if str(X.dtype).endswith("float64") else _io.as_dtype(X, np.float64)  # exact upcast
            mod, ctx = self._tl_context(device, Xd)
            children, distances = mod.agglomerative_tree(ctx, Xd, AGGLOMERATIVE_METRICS[self.metric], self.linkage)
        children = np.asarray(children).astype(np.intp)
        distances = np.asarray(distances)
        self.children_ = children
        self.n_connected_components_ = 1
        self.n_leaves_ = n
        if self.distance_threshold is not None or self.compute_distances:
            self.distances_ = distances
        else:
            self._tl_forget("distances_")
        if self.distance_threshold is not None:
            self.n_clusters_ = int(np.count_nonzero(distances >= self.distance_threshold)) + 1
        else:
            self.n_clusters_ = self.n_clusters
        labels = mod.agglomerative_cut(np.ascontiguousarray(children, dtype=np.int64), int(self.n_clusters_), n)
        self.labels_ = np.asarray(labels).astype(np.intp)
        identity.record("AgglomerativeClustering.children_", self.children_)
        identity.record("AgglomerativeClustering.labels_", self.labels_)
        self._tl_record_fit(device, "identical")
        return self

    def fit_predict(self, X, y=None):
        """Fit and return the cluster of each sample (= ``fit(X).labels_``).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
        y : Ignored

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        return super().fit_predict(X, y)
