"""Agglomerative (hierarchical) clustering on the CPU and CUDA backends."""

from __future__ import annotations

import warnings
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.metrics.pairwise import _VALID_METRICS
from sklearn.utils._param_validation import HasMethods, Interval, StrOptions

from .. import _backend, _io, identity
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

    scikit-learn's :class:`sklearn.cluster.AgglomerativeClustering`, with or
    without a connectivity matrix: same parameters, defaults and fitted attributes, and
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
        The neighbours each sample may be merged with (e.g. a k-neighbours
        graph), or a callable ``connectivity(X)`` returning it. It is
        symmetrized; a graph of several connected components is completed as
        scikit-learn does (with its warning): for every pair of components,
        their closest pair of samples (twinlearn's distances) is joined.
        The tree is scikit-learn's structured one (ward_tree, linkage_tree):
        its heaps of candidate merges are reproduced on the host (Python's
        heapq algorithm, scikit-learn's merges of the cluster distances), so
        ``children_`` is scikit-learn's on data without ties in the merge
        heights; single linkage is the graph's minimum spanning tree (SciPy's
        ``minimum_spanning_tree``, as scikit-learn), labelled by union-find.
    compute_full_tree : 'auto' or bool, default='auto'
        Without connectivity the full tree is always built (as in
        scikit-learn). With connectivity, 'auto' builds it when n_clusters
        is below ``max(100, 0.02 * n_samples)``; otherwise merging stops at
        n_clusters clusters. Must not be False with ``distance_threshold``.
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
        The connected components of the connectivity graph before its
        completion (1 without connectivity).
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
        if self.connectivity is None and self.linkage != "single" and n > MAX_CONDENSED_SAMPLES:
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
        if self.connectivity is not None:
            return self._fit_structured(X, device)
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
        children = self._store_tree(children, distances, n, 1)
        labels = mod.agglomerative_cut(np.ascontiguousarray(children, dtype=np.int64), int(self.n_clusters_), n)
        self.labels_ = np.asarray(labels).astype(np.intp)
        identity.record("AgglomerativeClustering.children_", self.children_)
        identity.record("AgglomerativeClustering.labels_", self.labels_)
        self._tl_record_fit(device, "identical")
        return self

    # -- structured (connectivity-constrained) trees ----------------------------------
    def _fix_connectivity(self, X, connectivity, metric):
        """scikit-learn's _fix_connectivity: the graph symmetrized, and for
        several connected components completed with the closest pair of
        samples of every pair of components (its warning). (CSR, n_components)."""
        n = X.shape[0]
        if connectivity.shape[0] != n or connectivity.shape[1] != n:
            raise ValueError(f"Wrong shape for connectivity matrix: {connectivity.shape} when X is {X.shape}")
        connectivity = connectivity + connectivity.T
        connectivity = sp.lil_matrix(connectivity)
        n_components, labels = connected_components(connectivity)
        if n_components > 1:
            warnings.warn(f"the number of connected components of the connectivity matrix is {n_components} > 1. "
                          "Completing it to avoid stopping the tree early.", stacklevel=3)
            from ..metrics import pairwise_distances

            Xh = _io.to_numpy(X)
            for i in range(n_components):
                idx_i = np.flatnonzero(labels == i)
                for j in range(i):
                    idx_j = np.flatnonzero(labels == j)
                    if metric == "precomputed":
                        D = Xh[np.ix_(idx_i, idx_j)]
                    else:
                        D = _io.to_numpy(pairwise_distances(Xh[idx_i], Xh[idx_j], metric=metric, device="cpu"))
                    ii, jj = np.unravel_index(D.argmin(axis=None), D.shape)
                    connectivity[idx_i[ii], idx_j[jj]] = 1
                    connectivity[idx_j[jj], idx_i[ii]] = 1
        C = sp.csr_matrix(connectivity)
        C.sort_indices()
        return C, n_components

    def _fit_structured(self, X, device):
        from sklearn.utils import check_array

        n = X.shape[0]
        connectivity = self.connectivity
        if callable(connectivity):
            connectivity = connectivity(_io.to_host(X))
        connectivity = check_array(connectivity, accept_sparse=["csr", "coo", "lil"])
        # scikit-learn's paired distances of float32 data are float32: the
        # edge weights are rounded to it (ward's moments are float64 always).
        f32 = _io.np_float_dtype(X) == np.float32 and self.metric != "precomputed"
        Xh = np.ascontiguousarray(_io.to_numpy(X), dtype=np.float64)  # exact upcast; the merges run on the host
        if self.metric == "cosine" and not np.all(np.any(Xh, axis=1)):
            raise ValueError("Cosine affinity cannot be used when X contains zero vectors")
        if self.n_clusters is not None and self.n_clusters > n:
            raise ValueError(f"Cannot provide more clusters than samples. {self.n_clusters} n_clusters was asked, "
                             f"and there are {n} samples.")
        full = self.compute_full_tree
        if full == "auto":
            full = True if self.distance_threshold is not None else self.n_clusters < max(100, 0.02 * n)
        n_nodes = 2 * n - 1 if full else 2 * n - self.n_clusters
        metric = "euclidean" if self.linkage == "ward" else self.metric
        precomputed = metric == "precomputed"
        backend_metric = "euclidean" if precomputed else AGGLOMERATIVE_METRICS[metric]
        C, n_components = self._fix_connectivity(Xh, connectivity, metric)
        core = _backend.core()  # the merges and pair distances run on the host for either backend
        if self.linkage == "single":
            children, distances, parent = self._single_structured(core, Xh, C, precomputed, backend_metric, n_nodes,
                                                                  f32)
        else:
            children, distances, parent = core.agglomerative_tree_structured(
                Xh, precomputed, backend_metric, self.linkage, np.ascontiguousarray(C.indptr, dtype=np.int64),
                np.ascontiguousarray(C.indices, dtype=np.int64), int(n_nodes), f32)
        children = self._store_tree(children, distances, n, n_components)
        if full:
            labels = core.agglomerative_cut(np.ascontiguousarray(children, dtype=np.int64), int(self.n_clusters_), n)
            self.labels_ = np.asarray(labels).astype(np.intp)
        else:
            heads = _hc_get_heads(np.asarray(parent, dtype=np.intp))[:n]
            self.labels_ = np.searchsorted(np.unique(heads), heads).astype(np.intp)
        identity.record("AgglomerativeClustering.children_", self.children_)
        identity.record("AgglomerativeClustering.labels_", self.labels_)
        self._tl_record_fit(device, "identical")
        return self

    def _store_tree(self, children, distances, n, n_components):
        """Sets the fitted tree's attributes (children_, n_leaves_,
        n_connected_components_, distances_ where asked for, n_clusters_);
        returns children_."""
        children = np.asarray(children).astype(np.intp)
        distances = np.asarray(distances)
        self.children_ = children
        self.n_connected_components_ = int(n_components)
        self.n_leaves_ = n
        if self.distance_threshold is not None or self.compute_distances:
            self.distances_ = distances
        else:
            self._tl_forget("distances_")
        if self.distance_threshold is not None:
            self.n_clusters_ = int(np.count_nonzero(distances >= self.distance_threshold)) + 1
        else:
            self.n_clusters_ = self.n_clusters
        return children

    @staticmethod
    def _single_structured(core, Xh, C, precomputed, metric, n_nodes, f32):
        """scikit-learn's _single_linkage_tree: the graph's edges weighted by
        the pair distances (zero as epsilon, so SciPy keeps them), SciPy's
        minimum spanning tree, its edges labelled by union-find."""
        from scipy.sparse.csgraph import minimum_spanning_tree

        n = Xh.shape[0]
        G = C.tocoo()
        keep = G.row != G.col
        rows = np.ascontiguousarray(G.row[keep], dtype=np.int64)
        cols = np.ascontiguousarray(G.col[keep], dtype=np.int64)
        w = np.asarray(core.agglomerative_edge_distances(Xh, precomputed, metric, rows, cols, f32))
        eps = np.finfo(np.float64).eps
        w[w == 0] = eps
        mst = minimum_spanning_tree(sp.csr_matrix((w, (rows, cols)), shape=(n, n))).tocoo()
        data = mst.data.copy()
        data[data == eps] = 0
        children, distances = core.agglomerative_label_edges(n, np.ascontiguousarray(mst.row, dtype=np.int64),
                                                             np.ascontiguousarray(mst.col, dtype=np.int64),
                                                             np.ascontiguousarray(data, dtype=np.float64))
        children = np.asarray(children)
        parent = np.arange(n_nodes, dtype=np.intp)
        for i, (left, right) in enumerate(children, n):
            if i >= n_nodes:
                break
            if left < n_nodes:
                parent[left] = i
            if right < n_nodes:
                parent[right] = i
        return children, np.asarray(distances), parent

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


def _hc_get_heads(parents):
    """scikit-learn's hc_get_heads: the root of every node of a (partial) tree."""
    parents = parents.copy()
    for node0 in range(parents.size - 1, -1, -1):
        node = node0
        parent = parents[node]
        while parent != node:
            parents[node0] = parent
            node = parent
            parent = parents[node]
    return parents
