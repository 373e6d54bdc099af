"""Clustering metrics from the data (sklearn.metrics.cluster) and trustworthiness.

silhouette_samples / silhouette_score walk the rows in tiles: a tile of t
rows gets its distances to all n rows from the pairwise distance kernel
(an n x t block, on the GPU when the run is there; memory O(t * n), never
n x n), and the canonical per-class column statistics of that block
(``class_column_stats``, the kernel GaussianNB's fit uses) give each tile
row's mean distance to every cluster. calinski_harabasz_score and
davies_bouldin_score use the same per-class statistics of X; trustworthiness
ranks exact kNN neighbours of the embedding among tiled distances in X.

Numbers (docs/NUMERICS.md, "Clustering metrics"): the distances are the
kernel's, equal to scikit-learn's within the distance tolerance; in
identical mode the CPU and a GPU give the same bits: the distances, the
per-class statistics and the final sums (``reduce_sum``) are canonical, and
the remaining steps are elementwise IEEE operations on the host.
"""

from __future__ import annotations

import os
from numbers import Integral

import numpy as np
from scipy import sparse as sp
from sklearn.manifold import _t_sne
from sklearn.metrics.cluster import _unsupervised as _sk_unsupervised
from sklearn.preprocessing import LabelEncoder
from sklearn.utils import assert_all_finite, check_random_state
from sklearn.utils._param_validation import Interval, validate_params
from sklearn.utils.validation import column_or_1d

from .. import _hostmath, _io
from .._config import n_threads_context
from ._pairwise import METRICS, _Runner, distance_power, metric_struct, resolve_metric

#: scikit-learn's own functions, taken at import: the fallbacks call these
#: even where twinlearn's functions have been swapped into scikit-learn.
_SK_SILHOUETTE_SAMPLES = _sk_unsupervised.silhouette_samples
_SK_TRUSTWORTHINESS = _t_sne.trustworthiness

_TL = {"device": "no_validation", "numeric_mode": "no_validation"}

_DIST = "the distance tolerance; identical: CPU = GPU bits"
#: docs/SUPPORT_MATRIX.md rows: (scikit-learn, twinlearn, computed by twinlearn,
#: computed by scikit-learn, numbers).
SUPPORT = (
    ("sklearn.metrics.silhouette_samples", "twinlearn.metrics.silhouette_samples",
     "dense X, the metrics of pairwise_distances, 'precomputed' (sparse made dense); row tiles",
     "sparse X, other metrics, callables", _DIST),
    ("sklearn.metrics.silhouette_score", "twinlearn.metrics.silhouette_score",
     "as silhouette_samples; scikit-learn's `sample_size` subset", "as silhouette_samples", _DIST),
    ("sklearn.metrics.calinski_harabasz_score", "twinlearn.metrics.calinski_harabasz_score", "dense X", "-",
     "within 1e-9 relative (float64); identical: CPU = GPU bits"),
    ("sklearn.metrics.davies_bouldin_score", "twinlearn.metrics.davies_bouldin_score", "dense X", "-",
     "within 1e-9 relative (float64); identical: CPU = GPU bits"),
    ("sklearn.manifold.trustworthiness", "twinlearn.metrics.trustworthiness",
     "dense X, the metrics of pairwise_distances, 'precomputed'; row tiles", "sparse input, other metrics",
     "exact integer ranks on the kernel's distances; identical: CPU = GPU bits"),
)

#: Bytes of distances one tile may hold, per device kind. A tile of rows is
#: as many rows as fit beside the n columns; TWINLEARN_METRICS_TILE_ROWS
#: overrides the row count (the tests use it to cross tile boundaries).
TILE_BYTES = {"cpu": 64 << 20, "cuda": 1 << 30}
TILE_ENV = "TWINLEARN_METRICS_TILE_ROWS"


def tile_rows(n_rows, n_cols, itemsize, device):
    """Rows per tile for an n_rows x n_cols problem walked in row tiles."""
    env = os.environ.get(TILE_ENV)
    if env:
        t = int(env)
        if t < 1:
            raise ValueError(f"{TILE_ENV} must be a positive integer; got {env!r}")
    else:
        budget = TILE_BYTES["cpu" if device == "cpu" else "cuda"]
        t = budget // max(1, n_cols * itemsize)
    return int(max(1, min(n_rows, t)))


def check_number_of_labels(n_labels, n_samples):
    """scikit-learn's error unless 2 <= n_labels <= n_samples - 1."""
    if not 1 < n_labels < n_samples:
        raise ValueError(
            "Number of labels is %d. Valid values are 2 to n_samples - 1 (inclusive)" % n_labels
        )


def _encode(labels, n_samples):
    """Labels as int64 codes 0..k-1 (sorted labels) and k, after scikit-learn's
    checks of their shape and length."""
    labels = column_or_1d(_io.to_host(labels), warn=True)
    if labels.dtype.kind in "fc":
        assert_all_finite(labels, input_name="y")  # scikit-learn's check_X_y on labels
    if labels.shape[0] != n_samples:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n_samples}, {labels.shape[0]}]"
        )
    le = LabelEncoder()
    codes = le.fit_transform(labels).astype(np.int64)
    return codes, len(le.classes_)


class _Work:
    """The backend, context and operands of one call: X where the kernels
    read it (NumPy input of a GPU run is copied to the device once)."""

    def __init__(self, X, device, numeric_mode, name="X"):
        runner = _Runner(device, numeric_mode)
        runner._tl_validate_params()
        self.device = runner._tl_device(X)
        self.X = _io.check_array(X, self.device, name)
        self.dtype = _io.np_float_dtype(self.X)
        self.mod, self.ctx = runner._tl_context(self.device, self.X)
        self.staged = self.device != "cpu" and isinstance(self.X, np.ndarray)
        self.Xop = self._stage(self.X) if self.staged else self.X

    def _stage(self, a):
        from ..decomposition._solvers import Staged

        a = np.ascontiguousarray(a)
        return Staged(self.mod.linalg_to_device(self.ctx, a), a.shape, a.dtype)

    def rows(self, s, e):
        """Rows s:e of X where the kernels read them."""
        return self._stage(self.X[s:e]) if self.staged else self.X[s:e]

    def device_empty(self, shape):
        """An uninitialised float matrix of X's dtype beside the operands."""
        if self.staged:
            from ..decomposition._solvers import Staged

            return Staged(self.mod.linalg_device_empty(self.ctx, shape[0], shape[1], self.dtype.name), shape,
                          self.dtype)
        return _io.empty_like_kind(self.X, shape, self.dtype)

    def canonical_sum(self, values):
        """The canonical sum (float64) of host values: the same bits on every backend."""
        return self.mod.reduce_sum(self.ctx, np.ascontiguousarray(values, dtype=np.float64))


def _fallback_reason(X, metric, kwds):
    if sp.issparse(X) and metric != "precomputed":
        return "sparse X"
    if callable(metric):
        return "a callable metric"
    if metric != "precomputed" and metric not in METRICS:
        return f"metric={metric!r}"
    if set(kwds) - {"p", "n_jobs"}:
        return f"keyword arguments {sorted(set(kwds) - {'p', 'n_jobs'})}"
    return None


def _check_precomputed(X, work_device):
    """scikit-learn's checks of a precomputed distance matrix: square,
    non-negative, zero diagonal (exact for integers, 100 eps for floats)."""
    raw = X if _io.is_device_array(X) else (X.toarray() if sp.issparse(X) else np.asarray(X))
    if raw.ndim == 2 and raw.shape[0] != raw.shape[1]:
        raise ValueError(
            "Precomputed metric requires shape (n_queries, n_indexed). Got (%d, %d) for %d indexed."
            % (raw.shape[0], raw.shape[1], raw.shape[0])
        )
    return raw


def _check_diagonal(raw, D):
    error = ValueError(
        "The precomputed distance matrix contains non-zero elements on the diagonal. Use np.fill_diagonal(X, 0)."
    )
    diag = _io.to_numpy(D.diagonal())
    kind = np.dtype(str(raw.dtype).replace("torch.", "")).kind if hasattr(raw, "dtype") else "f"
    if kind == "f":
        if np.any(np.abs(diag) > np.finfo(diag.dtype).eps * 100):
            raise error
    elif np.any(diag != 0):
        raise error
    _io.check_distances(D)


def _silhouette(X, labels, metric, device, numeric_mode, kwds, owner):
    """(values, work): silhouette values (host, float64) and the call's
    backend; values None with a fallback to scikit-learn."""
    kwds = dict(kwds)
    n_jobs = kwds.pop("n_jobs", None)
    raw = None
    if metric == "precomputed":
        X = raw = _check_precomputed(X, device)  # a sparse one made dense: it is n x n anyway
    with n_threads_context(n_jobs):
        work = _Work(X, device, numeric_mode)
        n = work.X.shape[0]
        codes, k = _encode(labels, n)
        check_number_of_labels(k, n)
        freqs = np.bincount(codes, minlength=k)
        if metric == "precomputed":
            _check_diagonal(raw, work.X)
            name, p = None, None
        else:
            name, p = resolve_metric(metric, kwds.pop("p", None), None)
            mstruct = metric_struct(work.mod, name, p, direct=True)
        intra = np.empty(n)
        inter = np.empty(n)
        t = tile_rows(n, n, work.dtype.itemsize, work.device)
        for s in range(0, n, t):
            e = min(n, s + t)
            if metric == "precomputed":
                # Row i of D holds row i's distances; the statistics want them as a column.
                D = _transpose_rows(work.X, s, e)
            else:
                D = work.device_empty((n, e - s))
                work.mod.pairwise_distances(work.ctx, work.Xop, work.rows(s, e), mstruct, D)
            st = work.mod.class_column_stats(work.ctx, D, codes, k, None)
            mean, count = np.asarray(st.mean), np.asarray(st.count)
            if np.any(count != freqs[:, None]):  # an infinite distance between finite rows
                raise _io.overflow_error(owner, "its distances overflow", work.dtype,
                                         power=distance_power(name, p) if name else 1, terms=work.X.shape[1])
            cols = np.arange(e - s)
            own = codes[s:e]
            intra[s:e] = mean[own, cols] * freqs[own]  # the sum of the distances within the own cluster
            mean[own, cols] = np.inf
            inter[s:e] = mean.min(axis=0)
    denom = (freqs - 1).take(codes, mode="clip")
    with np.errstate(divide="ignore", invalid="ignore"):
        intra /= denom
        sil = inter - intra
        sil /= np.maximum(intra, inter)
    # NaN: clusters of one sample, whose silhouette is 0 (Rousseeuw)
    return np.nan_to_num(sil), work


def _transpose_rows(D, s, e):
    """D[s:e].T as a C-contiguous matrix on D's side."""
    k = _io.kind(D)
    if k == "numpy":
        return np.ascontiguousarray(D[s:e].T)
    if k == "torch":
        return D[s:e].T.contiguous()
    import cupy

    return cupy.ascontiguousarray(cupy.asarray(D)[s:e].T)


def _sklearn_silhouette_samples(X, labels, metric, kwds):
    return _io.mirror(X, _SK_SILHOUETTE_SAMPLES(_io.to_host(X), _io.to_host(labels), metric=metric, **kwds))


@validate_params(
    {"X": ["array-like", "sparse matrix"], "labels": ["array-like"], "metric": "no_validation", **_TL},
    prefer_skip_nested_validation=True,
)
def silhouette_samples(X, labels, *, metric="euclidean", device=None, numeric_mode=None, **kwds):
    """The silhouette coefficient of every sample.

    ``s = (b - a) / max(a, b)``, with ``a`` the sample's mean distance to the
    other members of its cluster and ``b`` its mean distance to the nearest
    other cluster; 0 for a sample alone in its cluster. Computed in row tiles
    (memory O(tile * n_samples), never the n x n distance matrix).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
        The samples, or a distance matrix with ``metric='precomputed'``.
        NumPy, or a CuPy / PyTorch device array (the result is then the same kind).
    labels : array-like of shape (n_samples,)
        Cluster labels; 2 <= n_labels <= n_samples - 1.
    metric : str or callable, default='euclidean'
        'euclidean', 'l2', 'sqeuclidean', 'manhattan', 'cityblock', 'l1',
        'cosine', 'chebyshev', 'minkowski' or 'precomputed' run on twinlearn's
        kernels; other metrics, callables and sparse X are computed by
        scikit-learn (a sparse precomputed matrix is made dense: it is
        n x n anyway).
    device, numeric_mode : see :class:`twinlearn.base.TwinlearnEstimatorMixin`.
    **kwds : ``p`` for 'minkowski', ``n_jobs`` (CPU threads).

    Returns
    -------
    silhouette : array of shape (n_samples,)
        In X's float dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.metrics import silhouette_samples
    >>> X = np.array([[0.0], [1.0], [1.0], [2.0], [3.0], [3.0]])
    >>> silhouette_samples(X, [0, 1, 1, 1, 2, 2], device="cpu")
    array([0. , 0.5, 0.5, 0. , 1. , 1. ])
    """
    if _fallback_reason(X, metric, kwds):
        return _sklearn_silhouette_samples(X, labels, metric, kwds)
    values, work = _silhouette(X, labels, metric, device, numeric_mode, kwds, "silhouette_samples")
    return _io.mirror(X, values.astype(work.dtype, copy=False))


def _sample(X, labels, metric, sample_size, random_state):
    """scikit-learn's random subsample of rows (and, precomputed, columns)."""
    n = X.shape[0] if hasattr(X, "shape") else len(X)
    random_state = check_random_state(random_state)
    indices = random_state.permutation(n)[:sample_size]
    labels = np.asarray(_io.to_host(labels))
    if _io.is_device_array(X):
        rows = _io.take_rows(X, indices)
        X = _io.take_rows(rows.T, indices).T if metric == "precomputed" else rows
    else:
        X = X if sp.issparse(X) else np.asarray(X)
        X = X[indices].T[indices].T if metric == "precomputed" else X[indices]
    return X, labels[indices]


@validate_params(
    {"X": ["array-like", "sparse matrix"], "labels": ["array-like"], "metric": "no_validation",
     "sample_size": [Interval(Integral, 1, None, closed="left"), None], "random_state": ["random_state"], **_TL},
    prefer_skip_nested_validation=True,
)
def silhouette_score(X, labels, *, metric="euclidean", sample_size=None, random_state=None, device=None,
                     numeric_mode=None, **kwds):
    """The mean silhouette coefficient of all samples.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
        The samples, or a distance matrix with ``metric='precomputed'``.
    labels : array-like of shape (n_samples,)
    metric : str or callable, default='euclidean'
        See :func:`silhouette_samples`.
    sample_size : int, default=None
        Score a random subset of this many samples (drawn as scikit-learn
        draws it, so the same subset for the same random_state).
    random_state : int, RandomState instance or None, default=None
        The subset's draw.
    device, numeric_mode : see :class:`twinlearn.base.TwinlearnEstimatorMixin`.
    **kwds : ``p`` for 'minkowski', ``n_jobs``.

    Returns
    -------
    silhouette : float in [-1, 1]
        The canonical sum of the samples' values (float64) over their number.

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.metrics import silhouette_score
    >>> X = np.array([[0.0], [1.0], [1.0], [2.0], [3.0], [3.0]])
    >>> silhouette_score(X, [0, 1, 1, 1, 2, 2], device="cpu")
    0.5
    """
    if sample_size is not None:
        X, labels = _sample(X, labels, metric, sample_size, random_state)
    if _fallback_reason(X, metric, kwds):
        values = _io.to_host(_sklearn_silhouette_samples(X, labels, metric, kwds))
        return float(np.mean(values))
    values, work = _silhouette(X, labels, metric, device, numeric_mode, kwds, "silhouette_score")
    return float(work.canonical_sum(values) / values.shape[0])


def _class_stats(X, labels, device, numeric_mode):
    work = _Work(X, device, numeric_mode)
    n = work.X.shape[0]
    codes, k = _encode(labels, n)
    check_number_of_labels(k, n)
    st = work.mod.class_column_stats(work.ctx, work.Xop, codes, k, None)
    return work, codes, k, np.asarray(st.mean), np.asarray(st.m2), np.bincount(codes, minlength=k)


def _sequential_sum(values):
    """Left-to-right float64 sum (the same bits on any CPU)."""
    return float(_hostmath.row_sums(np.asarray(values, dtype=np.float64)[None, :])[0])


@validate_params({"X": ["array-like"], "labels": ["array-like"], **_TL}, prefer_skip_nested_validation=True)
def calinski_harabasz_score(X, labels, *, device=None, numeric_mode=None):
    """The Calinski-Harabasz index: between- over within-cluster dispersion.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    labels : array-like of shape (n_samples,)
    device, numeric_mode : see :class:`twinlearn.base.TwinlearnEstimatorMixin`.

    Returns
    -------
    score : float
        ``extra * (n_samples - k) / (intra * (k - 1))``; 1.0 when the
        within-cluster dispersion is 0.

    Examples
    --------
    >>> from twinlearn.metrics import calinski_harabasz_score
    >>> calinski_harabasz_score([[0.0], [1.0], [10.0], [11.0]], [0, 0, 1, 1], device="cpu")
    200.0
    """
    work, codes, k, means, m2, freqs = _class_stats(X, labels, device, numeric_mode)
    n = work.X.shape[0]
    mean = np.asarray(work.mod.column_stats(work.ctx, work.Xop, None))[1]
    spread = _hostmath.row_sums((means - mean[None, :]) ** 2)  # per cluster: |mean_k - mean|^2
    extra = _sequential_sum(freqs * spread)
    intra = _sequential_sum(_hostmath.row_sums(m2))
    if not np.isfinite(extra) or not np.isfinite(intra):
        raise _io.overflow_error("calinski_harabasz_score", "its dispersions overflow", work.dtype, power=2,
                                 terms=n * work.X.shape[1])
    return float(1.0 if intra == 0.0 else extra * (n - k) / (intra * (k - 1.0)))


@validate_params({"X": ["array-like"], "labels": ["array-like"], **_TL}, prefer_skip_nested_validation=True)
def davies_bouldin_score(X, labels, *, device=None, numeric_mode=None):
    """The Davies-Bouldin index: the mean over clusters of the largest ratio
    of within-cluster spread to between-centroid distance (lower is better).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    labels : array-like of shape (n_samples,)
    device, numeric_mode : see :class:`twinlearn.base.TwinlearnEstimatorMixin`.

    Returns
    -------
    score : float, non-negative

    Examples
    --------
    >>> from twinlearn.metrics import davies_bouldin_score
    >>> davies_bouldin_score([[0.0], [2.0], [10.0], [12.0]], [0, 0, 1, 1], device="cpu")
    0.2
    """
    work, codes, k, means, _, _ = _class_stats(X, labels, device, numeric_mode)
    n = work.X.shape[0]
    euclid = metric_struct(work.mod, "euclidean", 2.0, direct=True)
    centroids = np.ascontiguousarray(means, dtype=work.dtype)
    own = np.empty((n, 1), dtype=work.dtype)
    t = tile_rows(n, k, work.dtype.itemsize, "cpu")  # the distances come to the host
    for s in range(0, n, t):
        e = min(n, s + t)
        D = np.empty((e - s, k), dtype=work.dtype)
        work.mod.pairwise_distances(work.ctx, work.X[s:e], centroids, euclid, D)
        own[s:e, 0] = D[np.arange(e - s), codes[s:e]]
    intra_dists = np.asarray(work.mod.class_column_stats(work.ctx, own, codes, k, None).mean)[:, 0]
    means = np.ascontiguousarray(means)
    centroid_distances = np.empty((k, k))
    work.mod.pairwise_distances(work.ctx, means, means, euclid, centroid_distances)
    np.fill_diagonal(centroid_distances, 0)
    if not (np.all(np.isfinite(intra_dists)) and np.all(np.isfinite(centroid_distances))):
        raise _io.overflow_error("davies_bouldin_score", "its distances overflow", work.dtype, power=2,
                                 terms=work.X.shape[1])
    if np.allclose(intra_dists, 0) or np.allclose(centroid_distances, 0):
        return 0.0
    centroid_distances[centroid_distances == 0] = np.inf
    combined_intra_dists = intra_dists[:, None] + intra_dists
    scores = np.max(combined_intra_dists / centroid_distances, axis=1)
    return float(_sequential_sum(scores) / k)


def ranks(D, d, j, columns):
    """1-based ranks of the neighbours j (one per row, at distance d) among
    the distances D of their rows, equal distances ordered by index: exact
    counts."""
    return 1 + np.count_nonzero(D < d, axis=1) + np.count_nonzero((D == d) & (columns < j[:, None]), axis=1)


def _self_excluded(ind, n_neighbors):
    """scikit-learn's kneighbors() on the training set: each row's own index
    removed from its n_neighbors + 1 nearest (the first column where it is
    absent, i.e. hidden by duplicates)."""
    n = ind.shape[0]
    mask = ind != np.arange(n)[:, None]
    mask[:, 0][np.all(mask, axis=1)] = False
    return ind[mask].reshape(n, n_neighbors)


@validate_params(
    {"X": ["array-like", "sparse matrix"], "X_embedded": ["array-like", "sparse matrix"],
     "n_neighbors": [Interval(Integral, 1, None, closed="left")], "metric": "no_validation", **_TL},
    prefer_skip_nested_validation=True,
)
def trustworthiness(X, X_embedded, *, n_neighbors=5, metric="euclidean", device=None, numeric_mode=None):
    """How well an embedding keeps local structure (sklearn.manifold.trustworthiness).

    ``T = 1 - 2 / (n k (2n - 3k - 1)) * sum_i sum_{j in N_k(i)} max(0, r(i, j) - k)``,
    N_k(i) the k nearest neighbours of sample i in the embedding and r(i, j)
    the rank of j among i's neighbours in X. Ranks are exact integer counts
    over tiles of X's distances (memory O(tile * n_samples)); equal distances
    rank by lower index.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features) or (n_samples, n_samples)
        The original data, or its distances with ``metric='precomputed'``.
    X_embedded : array-like of shape (n_samples, n_components)
    n_neighbors : int, default=5
        k; below n_samples / 2.
    metric : str or callable, default='euclidean'
        The metric in X (twinlearn's metrics or 'precomputed'; others and
        sparse input are computed by scikit-learn). The embedding always
        uses the euclidean metric.
    device, numeric_mode : see :class:`twinlearn.base.TwinlearnEstimatorMixin`.

    Returns
    -------
    trustworthiness : float in [0, 1]

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.metrics import trustworthiness
    >>> X = np.arange(20.0).reshape(10, 2)
    >>> trustworthiness(X, X[:, :1], n_neighbors=3, device="cpu")
    1.0
    """
    if metric == "precomputed" and sp.issparse(X):
        X = X.toarray()
    if _fallback_reason(X, metric, {}) or sp.issparse(X_embedded):
        return float(_SK_TRUSTWORTHINESS(_io.to_host(X), _io.to_host(X_embedded), n_neighbors=n_neighbors, metric=metric))
    work = _Work(X, device, numeric_mode)
    n = work.X.shape[0]
    if n_neighbors >= n / 2:
        raise ValueError(f"n_neighbors ({n_neighbors}) should be less than n_samples / 2 ({n / 2})")
    E = _io.check_array(X_embedded, work.device, "X_embedded")
    if E.shape[0] != n:
        raise ValueError(
            f"Found input variables with inconsistent numbers of samples: [{n}, {E.shape[0]}]"
        )
    E = _io.as_dtype(E, work.dtype) if E.dtype != work.X.dtype else E
    euclid = metric_struct(work.mod, "euclidean", 2.0, direct=True)
    r = work.mod.knn_search(work.ctx, E, E, euclid, n_neighbors + 1)
    neighbors = _self_excluded(np.asarray(r.indices), n_neighbors)
    if metric == "precomputed":
        _io.check_distances(work.X)
    else:
        name, p = resolve_metric(metric, None, None)
        mstruct = metric_struct(work.mod, name, p, direct=True)
    t = tile_rows(n, n, work.dtype.itemsize, "cpu")  # the distances come to the host
    columns = np.arange(n)[None, :]
    penalty = 0
    for s in range(0, n, t):
        e = min(n, s + t)
        if metric == "precomputed":
            D = np.array(_io.to_numpy(work.X[s:e]), dtype=work.dtype)
        else:
            D = np.empty((e - s, n), dtype=work.dtype)
            work.mod.pairwise_distances(work.ctx, work.X[s:e], work.X, mstruct, D)
            if not np.all(np.isfinite(D)):
                raise _io.overflow_error("trustworthiness", "its distances overflow", work.dtype,
                                         power=distance_power(name, p), terms=work.X.shape[1])
        rows = np.arange(e - s)
        D[rows, s + rows] = np.inf  # a sample is not its own neighbour
        for m in range(n_neighbors):
            j = neighbors[s:e, m]
            d = D[rows, j][:, None]
            excess = ranks(D, d, j, columns) - n_neighbors
            penalty += int(excess[excess > 0].sum())
    t = np.int64(penalty)
    t = 1.0 - t * (2.0 / (n * n_neighbors * (2.0 * n - 3.0 * n_neighbors - 1.0)))
    return float(t)
