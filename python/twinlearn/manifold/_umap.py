"""UMAP (Uniform Manifold Approximation and Projection) with umap-learn's
parameters and behaviour.

The pipeline follows umap-learn 0.5: exact k-nearest neighbours from
twinlearn's own search (:class:`twinlearn.neighbors.NearestNeighbors`, the
point itself counted as its first neighbour), the per-point binary search
for sigma and rho (smooth_knn_dist), the membership strengths and their
fuzzy union (scipy.sparse, float32), the initial layout ('spectral', 'pca',
'random' or an array), then the layout optimisation in the core
(twinlearn/manifold/umap.hpp) on the CPU or a GPU. The optimisation is a
synchronous scheme -- every epoch each vertex moves by the sum of its own
edges' gradient terms, computed from the positions at the start of the
epoch, in a fixed order -- with negative samples from the counter-based
generator keyed by (seed, epoch, edge, k): the embedding is the same bits
for any thread count and on the CPU and a GPU (umap-learn's Hogwild SGD is
not reproducible). docs/NUMERICS.md says why the scheme has umap-learn's
expected update.
"""

from __future__ import annotations

import hashlib
from numbers import Integral, Real

import numpy as np
import scipy.sparse as sp
from scipy.optimize import curve_fit
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import eigsh
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, _fit_context
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_is_fitted

from .. import _native as native
from .. import identity
from .._io import check_X, to_host
from ..base import TL_PARAMETER_CONSTRAINTS, TwinlearnEstimatorMixin

__all__ = ["UMAP"]

_METRICS = ("euclidean", "l2", "manhattan", "l1", "cityblock", "taxicab", "cosine", "correlation", "chebyshev",
            "linfinity", "minkowski")
_KNN_METRIC = {"l2": "euclidean", "l1": "manhattan", "cityblock": "manhattan", "taxicab": "manhattan",
               "linfinity": "chebyshev", "correlation": "cosine"}
_MAX_SEED = np.iinfo(np.int32).max
_SMOOTH_K_TOLERANCE = 1e-5
_MIN_K_DIST_SCALE = 1e-3

# Streams of the host-side draws (the layout's negative samples use purpose 3, umap.hpp).
_STREAM_INIT_NOISE = 1 << 60
_STREAM_RANDOM_INIT = (1 << 60) + 1
_STREAM_COMPONENT = (1 << 60) + 2


def find_ab_params(spread, min_dist):
    """umap-learn's (a, b): the least-squares fit of ``1 / (1 + a x^(2b))`` to
    1 below ``min_dist`` and ``exp(-(x - min_dist) / spread)`` above, on 300
    points of [0, 3 spread]."""
    def curve(x, a, b):
        return 1.0 / (1.0 + a * x ** (2 * b))

    xv = np.linspace(0, spread * 3, 300)
    yv = np.zeros(xv.shape)
    yv[xv < min_dist] = 1.0
    yv[xv >= min_dist] = np.exp(-(xv[xv >= min_dist] - min_dist) / spread)
    params, _ = curve_fit(curve, xv, yv)
    return float(params[0]), float(params[1])


def smooth_knn_dist(distances, k, n_iter=64, local_connectivity=1.0, bandwidth=1.0):
    """umap-learn's per-point (sigma, rho), all points at once.

    rho is the distance to the ``local_connectivity``-th nearest non-zero
    neighbour (interpolated); sigma the binary-search solution of
    ``sum_j exp(-max(d_j - rho, 0) / sigma) = log2(k) * bandwidth`` over the
    neighbours but the first, to 1e-5, floored at 1e-3 times the mean
    distance (the row's when rho > 0, else all rows'). Float64 arithmetic,
    elementwise NumPy: the same bits whatever the thread count.
    """
    d = np.asarray(distances, dtype=np.float64)
    n, kk = d.shape
    target = np.log2(k) * bandwidth
    rho = np.zeros(n)
    index = int(np.floor(local_connectivity))
    interp = local_connectivity - index
    pos = d > 0.0
    n_pos = pos.sum(axis=1)
    # the non-zero distances of each row, first (sorted rows: they come last)
    nz = np.where(pos, d, np.inf)
    nz = np.sort(nz, axis=1)
    enough = n_pos >= local_connectivity
    if index > 0:
        base = nz[:, min(index - 1, kk - 1)]
        r = np.where(enough, base, 0.0)
        if interp > _SMOOTH_K_TOLERANCE and index < kk:
            nxt = nz[:, index]
            r = np.where(enough & np.isfinite(nxt), base + interp * (nxt - base), r)
        rho = r
    else:
        rho = np.where(enough, interp * nz[:, 0], 0.0)
    some = (~enough) & (n_pos > 0)
    rho = np.where(some, np.where(pos, d, 0.0).max(axis=1), rho)
    rho = np.where(np.isfinite(rho), rho, 0.0)

    lo = np.zeros(n)
    hi = np.full(n, np.inf)
    mid = np.ones(n)
    active = np.ones(n, dtype=bool)
    tail = d[:, 1:]
    for _ in range(n_iter):
        dd = tail - rho[:, None]
        psum = np.where(dd > 0, np.exp(-(np.maximum(dd, 0.0) / mid[:, None])), 1.0).sum(axis=1)
        done = np.abs(psum - target) < _SMOOTH_K_TOLERANCE
        active &= ~done
        if not active.any():
            break
        over = active & (psum > target)
        under = active & ~(psum > target)
        hi = np.where(over, mid, hi)
        mid_over = (lo + hi) / 2.0
        lo = np.where(under, mid, lo)
        mid_under = np.where(np.isinf(hi), mid * 2, (lo + hi) / 2.0)
        mid = np.where(over, mid_over, np.where(under, mid_under, mid))
    mean_all = d.mean()
    mean_row = d.mean(axis=1)
    floor = np.where(rho > 0.0, _MIN_K_DIST_SCALE * mean_row, _MIN_K_DIST_SCALE * mean_all)
    sigma = np.maximum(mid, floor)
    return sigma.astype(np.float32), rho.astype(np.float32)


def membership_strengths(knn_indices, knn_dists, sigmas, rhos, *, bipartite=False):
    """(rows, cols, vals): umap-learn's exp(-(d - rho) / sigma), 1 within rho,
    0 for a point and itself (unless ``bipartite``)."""
    n, k = knn_indices.shape
    d = knn_dists.astype(np.float32)
    rows = np.repeat(np.arange(n, dtype=np.int64), k)
    cols = knn_indices.reshape(-1).astype(np.int64)
    dr = d - rhos[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        v = np.exp(-(dr / sigmas[:, None])).astype(np.float32)
    v = np.where((dr <= 0.0) | (sigmas[:, None] == 0.0), np.float32(1.0), v).astype(np.float32)
    if not bipartite:
        v = np.where(knn_indices == np.arange(n)[:, None], np.float32(0.0), v)
    return rows, cols, v.reshape(-1)


def fuzzy_union(graph, set_op_mix_ratio):
    """mix (G + G^T - G o G^T) + (1 - mix) G o G^T, zeros removed, float32 CSR."""
    graph = graph.tocsr()
    graph.eliminate_zeros()
    t = graph.transpose().tocsr()
    prod = graph.multiply(t)
    out = set_op_mix_ratio * (graph + t - prod) + (1.0 - set_op_mix_ratio) * prod
    out = sp.csr_matrix(out, dtype=np.float32)
    out.eliminate_zeros()
    out.sort_indices()
    return out


def _reset_local_connectivity(graph):
    """Rows scaled to a maximum of 1, then the fuzzy union (umap-learn's)."""
    graph = graph.tocsr().astype(np.float64)
    mx = np.zeros(graph.shape[0])
    nz = np.diff(graph.indptr) > 0
    mx[nz] = np.maximum.reduceat(graph.data, graph.indptr[:-1][nz]) if graph.nnz else 0
    mx[mx == 0] = 1.0
    graph = sp.diags(1.0 / mx) @ graph
    return fuzzy_union(graph, 1.0)


def _categorical_intersection(graph, y, far_dist, unknown_dist=1.0):
    """umap-learn's discrete_metric_simplicial_set_intersection for labels."""
    g = graph.tocoo()
    yr, yc = y[g.row], y[g.col]
    unknown = (yr == -1) | (yc == -1)
    scale = np.where(unknown, np.exp(-unknown_dist), np.where(yr != yc, np.exp(-far_dist), 1.0))
    out = sp.csr_matrix((g.data * scale, (g.row, g.col)), shape=g.shape)
    out.eliminate_zeros()
    return _reset_local_connectivity(out)


def _epochs_per_sample(weights, n_epochs):
    """umap-learn's make_epochs_per_sample: n_epochs / (n_epochs w / max w), -1 where 0."""
    w = np.asarray(weights, dtype=np.float64)
    out = -1.0 * np.ones(w.shape[0], dtype=np.float64)
    n_samples = n_epochs * (w / w.max())
    out[n_samples > 0] = float(n_epochs) / n_samples[n_samples > 0]
    return out


class UMAP(ClassNamePrefixFeaturesOutMixin, TransformerMixin, TwinlearnEstimatorMixin, BaseEstimator):
    """Uniform Manifold Approximation and Projection (umap-learn's UMAP).

    Builds the fuzzy k-nearest-neighbour graph of the data (twinlearn's exact
    neighbour search, memory linear in n) and lays it out in
    ``n_components`` dimensions by minimising the fuzzy cross-entropy with
    umap-learn's sampled stochastic gradient scheme, here made
    synchronous: every epoch each vertex moves by the sum of its edges'
    clipped gradient terms, all computed from the start-of-epoch
    positions, so the embedding is the same bits for any thread count and
    on the CPU and a GPU.

    Parameters
    ----------
    n_neighbors : int, default=15
        Neighbours of each point, the point itself included (umap-learn's).
    n_components : int, default=2
    metric : str, default='euclidean'
        'euclidean' ('l2'), 'manhattan' ('l1', 'cityblock', 'taxicab'),
        'cosine', 'correlation', 'chebyshev' ('linfinity'), 'minkowski'
        (with ``metric_kwds={'p': p}``).
    metric_kwds : dict, default=None
        Only ``p`` for 'minkowski'.
    n_epochs : int, default=None
        None: 500 for at most 10 000 samples, else 200 (umap-learn's rule).
    learning_rate : float, default=1.0
    init : {'spectral', 'pca', 'random'} or ndarray of shape (n_samples, n_components), default='spectral'
    min_dist : float, default=0.1
    spread : float, default=1.0
    set_op_mix_ratio : float in [0, 1], default=1.0
    local_connectivity : float, default=1.0
    repulsion_strength : float, default=1.0
    negative_sample_rate : int, default=5
    transform_queue_size : float, default=4.0
        Accepted (umap-learn's approximate search parameter; the search here is exact).
    a, b : float, default=None
        The curve's parameters; None fits them from ``min_dist`` and ``spread``.
    random_state : int, RandomState instance or None, default=None
        An int is the seed of the counter-based generator.
    target_n_neighbors : int, default=-1
        Accepted for umap-learn compatibility (used only by non-categorical targets, which are not supported).
    target_metric : {'categorical'}, default='categorical'
    target_weight : float in [0, 1], default=0.5
    transform_seed : int, default=42
        Seed of the transform's negative samples.
    verbose : bool, default=False
    n_jobs : int, default=-1
        Accepted; the CPU backend uses :func:`twinlearn.set_n_threads`' threads.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
        Where the neighbour search and the layout optimisation run.
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None
        Every mode delivers ``identical`` (in 'fast' mode a GPU neighbour search of
        65 536 float32 rows or more may use the tensor cores, as NearestNeighbors).

    Attributes
    ----------
    embedding_ : ndarray of shape (n_samples, n_components), float32
    graph_ : scipy.sparse.csr_matrix of shape (n_samples, n_samples), float32
        The fuzzy simplicial set (after the supervised intersection when y is given).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.manifold import UMAP
    >>> X = np.random.RandomState(0).normal(size=(60, 4))
    >>> UMAP(n_neighbors=5, n_epochs=50, random_state=0, device="cpu").fit_transform(X).shape
    (60, 2)
    """

    _parameter_constraints: dict = {
        "n_neighbors": [Interval(Integral, 2, None, closed="left")],
        "n_components": [Interval(Integral, 1, None, closed="left")],
        "metric": [StrOptions(set(_METRICS))],
        "metric_kwds": [dict, None],
        "n_epochs": [Interval(Integral, 0, None, closed="left"), None],
        "learning_rate": [Interval(Real, 0, None, closed="neither")],
        "init": [StrOptions({"spectral", "pca", "random"}), "array-like"],
        "min_dist": [Interval(Real, 0, None, closed="left")],
        "spread": [Interval(Real, 0, None, closed="neither")],
        "set_op_mix_ratio": [Interval(Real, 0, 1, closed="both")],
        "local_connectivity": [Interval(Real, 0, None, closed="left")],
        "repulsion_strength": [Interval(Real, 0, None, closed="left")],
        "negative_sample_rate": [Interval(Integral, 0, None, closed="left")],
        "transform_queue_size": [Interval(Real, 0, None, closed="left")],
        "a": [Interval(Real, 0, None, closed="neither"), None],
        "b": [Interval(Real, 0, None, closed="neither"), None],
        "random_state": ["random_state"],
        "target_n_neighbors": [Integral],
        "target_metric": [StrOptions({"categorical"})],
        "target_weight": [Interval(Real, 0, 1, closed="both")],
        "transform_seed": [Integral],
        "verbose": ["verbose"],
        "n_jobs": [Integral, None],
        **TL_PARAMETER_CONSTRAINTS,
    }

    _tl_native = (
        native.Spec(
            "UmapLayoutParams",
            fields={"a": "a", "b": "b", "repulsion_strength": "gamma", "learning_rate": "initial_alpha",
                    "negative_sample_rate": "negative_sample_rate", "n_epochs": "n_epochs",
                    "random_state": "seed"},
            python_only={p: "the graph and the initial layout are built in Python" for p in (
                "n_neighbors", "n_components", "metric", "metric_kwds", "init", "min_dist", "spread",
                "set_op_mix_ratio", "local_connectivity", "transform_queue_size", "target_n_neighbors",
                "target_metric", "target_weight", "transform_seed")}
            | {"verbose": "printed by Python", "n_jobs": "accepted; the thread count is twinlearn.set_n_threads'"},
            derived={"move_other": "True for fit (both ends move), False for transform (the training points stay)"},
        ),
    )

    def __init__(self, n_neighbors=15, n_components=2, metric="euclidean", metric_kwds=None, n_epochs=None,
                 learning_rate=1.0, init="spectral", min_dist=0.1, spread=1.0, set_op_mix_ratio=1.0,
                 local_connectivity=1.0, repulsion_strength=1.0, negative_sample_rate=5, transform_queue_size=4.0,
                 a=None, b=None, random_state=None, target_n_neighbors=-1, target_metric="categorical",
                 target_weight=0.5, transform_seed=42, verbose=False, n_jobs=-1, device=None, numeric_mode=None):
        self.n_neighbors = n_neighbors
        self.n_components = n_components
        self.metric = metric
        self.metric_kwds = metric_kwds
        self.n_epochs = n_epochs
        self.learning_rate = learning_rate
        self.init = init
        self.min_dist = min_dist
        self.spread = spread
        self.set_op_mix_ratio = set_op_mix_ratio
        self.local_connectivity = local_connectivity
        self.repulsion_strength = repulsion_strength
        self.negative_sample_rate = negative_sample_rate
        self.transform_queue_size = transform_queue_size
        self.a = a
        self.b = b
        self.random_state = random_state
        self.target_n_neighbors = target_n_neighbors
        self.target_metric = target_metric
        self.target_weight = target_weight
        self.transform_seed = transform_seed
        self.verbose = verbose
        self.n_jobs = n_jobs
        self.device = device
        self.numeric_mode = numeric_mode

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = False
        tags.non_deterministic = False
        tags.transformer_tags.preserves_dtype = ["float32"]  # the embedding is float32, as umap-learn's
        return tags

    # -- neighbours -------------------------------------------------------------
    def _knn_metric(self):
        name = _KNN_METRIC.get(self.metric, self.metric)
        kw = dict(self.metric_kwds or {})
        p = 2
        if name == "minkowski":
            p = kw.pop("p", 2)
            if not (isinstance(p, Real) and p >= 1):
                raise ValueError(f"UMAP: metric='minkowski' needs metric_kwds={{'p': p}} with p >= 1, got {p!r}")
        if kw:
            raise ValueError(f"UMAP: metric_kwds {sorted(kw)} are not supported for metric={self.metric!r}")
        return name, p

    def _prep(self, X):
        """X for the neighbour search: rows centred for 'correlation'."""
        if self.metric == "correlation":
            X = X - X.mean(axis=1, keepdims=True)
        return np.ascontiguousarray(X)

    def _knn_index(self, X):
        from ..neighbors import NearestNeighbors

        name, p = self._knn_metric()
        nn = NearestNeighbors(n_neighbors=1, metric=name, p=p, device=self._tl_dev,
                              numeric_mode=self.numeric_mode)
        return nn.fit(self._prep(X))

    # -- fit ----------------------------------------------------------------------
    def _ab(self):
        if self.a is None or self.b is None:
            return find_ab_params(self.spread, self.min_dist)
        return float(self.a), float(self.b)

    def _layout(self, head, tail, graph, n_epochs, alpha, seed, rev=None):
        """Runs the core's layout on `head` (float32, in place)."""
        mod, ctx = self._tl_context(self._tl_dev)
        g = graph.tocsr()
        eps = _epochs_per_sample(g.data, n_epochs) if g.nnz else np.zeros(0)
        params = native.params(mod.UmapLayoutParams, a=self._a, b=self._b, gamma=float(self.repulsion_strength),
                               initial_alpha=float(alpha), negative_sample_rate=float(self.negative_sample_rate),
                               n_epochs=int(n_epochs), seed=int(seed), move_other=tail is None)
        indptr = g.indptr.astype(np.int64)
        indices = g.indices.astype(np.int64)
        rindptr = redges = None
        if tail is None:  # the reverse CSR: edge ids grouped by tail, increasing within a group
            redges = np.argsort(indices, kind="stable").astype(np.int64)
            rindptr = np.concatenate([[0], np.cumsum(np.bincount(indices, minlength=head.shape[0]))]).astype(np.int64)
        mod.umap_layout(ctx, head, tail, indptr, indices, np.ascontiguousarray(eps, dtype=np.float64), rindptr,
                        redges, params)
        return head

    def _fuzzy_graph(self, X, n):
        k = min(int(self.n_neighbors), n)
        dist, ind = self._tl_knn.kneighbors(self._prep(X), n_neighbors=k)
        dist, ind = np.asarray(to_host(dist), dtype=np.float32), np.asarray(to_host(ind))
        sigmas, rhos = smooth_knn_dist(dist, float(k), local_connectivity=float(self.local_connectivity))
        rows, cols, vals = membership_strengths(ind, dist, sigmas, rhos)
        g = sp.csr_matrix((vals, (rows, cols)), shape=(n, n), dtype=np.float32)
        identity.record("UMAP.knn_dists", dist)
        return fuzzy_union(g, float(self.set_op_mix_ratio)), dist, ind

    def _noise(self, ctx, mod, shape, stream, scale):
        z = np.asarray(mod.rng_normal(ctx, int(self._tl_seed), stream, 0, int(np.prod(shape)), "float64"))
        return (z * scale).reshape(shape)

    def _spectral(self, X, graph, dim, mod, ctx):
        n = graph.shape[0]
        n_comp, labels = connected_components(graph, directed=False)
        if n_comp == 1:
            return _spectral_component(graph, dim)
        # umap-learn's multi-component layout: components placed by a meta layout,
        # each one's own spectral layout scaled to half the gap to the nearest other.
        if n_comp <= 2 * dim:
            kk = int(np.ceil(n_comp / 2.0))
            base = np.hstack([np.eye(kk), np.zeros((kk, max(dim - kk, 0)))])[:, :dim]
            meta = np.vstack([base, -base])[:n_comp]
        else:
            cent = np.vstack([X[labels == c].mean(axis=0) for c in range(n_comp)])
            cent = cent - cent.mean(axis=0)
            u, s, _ = np.linalg.svd(cent, full_matrices=False)
            meta = u[:, :dim] * s[:dim]
            if meta.shape[1] < dim:
                meta = np.hstack([meta, np.zeros((n_comp, dim - meta.shape[1]))])
            meta = meta / max(np.abs(meta).max(), 1e-12)
        out = np.zeros((n, dim))
        g = graph.tocsr()
        for c in range(n_comp):
            idx = np.flatnonzero(labels == c)
            others = np.delete(meta, c, axis=0)
            dd = np.sqrt(((others - meta[c]) ** 2).sum(axis=1))
            dd = dd[dd > 0]
            half = dd.min() / 2.0 if dd.size else 1.0
            if idx.size < 2 * dim or idx.size <= dim + 1:
                u = np.asarray(mod.rng_uniform(ctx, int(self._tl_seed), _STREAM_COMPONENT + c, 0, idx.size * dim,
                                               "float64")).reshape(idx.size, dim)
                out[idx] = (2.0 * u - 1.0) * half + meta[c]
                continue
            emb = _spectral_component(g[idx][:, idx], dim)
            out[idx] = emb * (half / max(np.abs(emb).max(), 1e-12)) + meta[c]
        return out

    def _init_embedding(self, X, graph, n, dim):
        mod, ctx = self._tl_context("cpu")
        init = self.init
        if isinstance(init, str) and init == "random":
            u = np.asarray(mod.rng_uniform(ctx, int(self._tl_seed), _STREAM_RANDOM_INIT, 0, n * dim, "float64"))
            emb = (20.0 * u - 10.0).reshape(n, dim).astype(np.float32)
        elif isinstance(init, str) and init in ("pca", "spectral"):
            if init == "pca":
                from ..decomposition import PCA

                emb = np.asarray(to_host(PCA(n_components=dim, svd_solver="full", device="cpu").fit_transform(X)),
                                 dtype=np.float64)
            else:
                emb = self._spectral(X, graph, dim, mod, ctx)
            emb = emb * (10.0 / max(np.abs(emb).max(), 1e-12))
            emb = emb.astype(np.float32) + self._noise(ctx, mod, (n, dim), _STREAM_INIT_NOISE, 1e-4).astype(np.float32)
        else:
            emb = np.asarray(init, dtype=np.float32)
            if emb.shape != (n, dim):
                raise ValueError(f"UMAP: init array has shape {emb.shape}, expected ({n}, {dim})")
            if not np.isfinite(emb).all():
                raise ValueError("UMAP: init array contains NaN or infinity")
        lo, hi = emb.min(axis=0), emb.max(axis=0)
        span = np.where(hi > lo, hi - lo, 1.0)
        return np.ascontiguousarray((10.0 * (emb - lo) / span).astype(np.float32))

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, ensure_all_finite=True):
        """Fit the embedding of X (and of the labels y when given).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), default=None
            Integer class labels for a supervised fit ('categorical'), -1 for unlabelled samples.
        ensure_all_finite : bool, default=True
            Accepted for umap-learn compatibility; X must be finite.

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        device = self._tl_device(X)
        self._tl_dev = device
        X = check_X(self, X, device, reset=True, for_fit=True, allow_nan=False)
        Xh = np.ascontiguousarray(to_host(X))
        n = Xh.shape[0]
        if n < 2:
            raise ValueError(f"UMAP needs at least 2 samples, got n_samples={n}")
        dim = int(self.n_components)
        rs = self.random_state
        self._tl_seed = int(rs) if isinstance(rs, Integral) else int(check_random_state(rs).randint(_MAX_SEED))
        self._a, self._b = self._ab()
        self._tl_knn = self._knn_index(Xh)
        self._n_neighbors = min(int(self.n_neighbors), n)
        graph, _, _ = self._fuzzy_graph(Xh, n)
        if y is not None:
            y = np.asarray(y)
            if y.shape != (n,):
                raise ValueError(f"UMAP: y must have shape ({n},), got {y.shape}")
            far = 2.5 * (1.0 / (1.0 - self.target_weight)) if self.target_weight < 1.0 else 1.0e12
            graph = _categorical_intersection(graph, y, far)
        self.graph_ = graph
        n_epochs = self.n_epochs
        if n_epochs is None:
            n_epochs = 500 if n <= 10000 else 200
        self._n_epochs_used = int(n_epochs)
        lg = graph.copy()
        if lg.nnz:
            thr = lg.data.max() / float(n_epochs if n_epochs > 10 else (500 if n <= 10000 else 200))
            lg.data[lg.data < thr] = 0.0
            lg.eliminate_zeros()
        emb = self._init_embedding(Xh, lg, n, dim)
        identity.record("UMAP.init", emb)
        if n_epochs > 0 and lg.nnz:
            self._layout(emb, None, lg, n_epochs, float(self.learning_rate), self._tl_seed)
        self.embedding_ = emb
        identity.record("UMAP.embedding", emb)
        self._fit_dtype = X.dtype
        self._input_hash = _hash(Xh)
        if self.verbose:
            print(f"UMAP: {n} samples, {graph.nnz} edges, {n_epochs} epochs")
        self._tl_record_fit(device, "identical")
        return self

    def fit_transform(self, X, y=None, ensure_all_finite=True):
        """Fit X and return its embedding.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,), default=None
        ensure_all_finite : bool, default=True

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components), float32
        """
        return self.fit(X, y, ensure_all_finite=ensure_all_finite).embedding_

    def transform(self, X):
        """Embed new samples into the fitted space (umap-learn's rule).

        Each new point's neighbours among the training samples and their
        membership strengths (local connectivity reduced by one), an initial
        position at the strength-weighted mean of the neighbours' embeddings,
        then ``n_epochs // 3`` epochs (None: 100 for at most 10 000 new
        points, else 30) at a quarter of the learning rate moving only the
        new points. The training data itself (the same bytes) gets
        ``embedding_`` back, as umap-learn.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_new : ndarray of shape (n_samples, n_components), float32
        """
        check_is_fitted(self, "embedding_")
        if not getattr(self, "_tl_knn", None):
            raise ValueError("UMAP: this model was fitted without its training data; it cannot transform")
        device = self._tl_device(X)
        X = check_X(self, X, device, reset=False, allow_nan=False)
        Xh = np.ascontiguousarray(to_host(X)).astype(self._fit_dtype, copy=False)
        if _hash(Xh) == self._input_hash:  # the training data itself: its embedding (umap-learn's shortcut)
            return self.embedding_.copy()
        m = Xh.shape[0]
        n_fit = self.embedding_.shape[0]
        k = self._n_neighbors
        dist, ind = self._tl_knn.kneighbors(self._prep(Xh), n_neighbors=k)
        dist, ind = np.asarray(to_host(dist), dtype=np.float32), np.asarray(to_host(ind))
        sigmas, rhos = smooth_knn_dist(dist, float(k), local_connectivity=max(0.0, self.local_connectivity - 1.0))
        rows, cols, vals = membership_strengths(ind, dist, sigmas, rhos, bipartite=True)
        graph = sp.csr_matrix((vals, (rows, cols)), shape=(m, n_fit), dtype=np.float32)
        graph.eliminate_zeros()
        graph.sort_indices()
        emb = _init_graph_transform(graph, self.embedding_)
        if self.n_epochs is None:
            n_epochs = 100 if m <= 10000 else 30
        else:
            n_epochs = int(self.n_epochs // 3.0)
        if graph.nnz and n_epochs > 0:
            graph.data[graph.data < (graph.data.max() / float(n_epochs))] = 0.0
            graph.eliminate_zeros()
            saved = self._tl_dev
            self._tl_dev = device
            try:
                self._layout(emb, np.ascontiguousarray(self.embedding_, dtype=np.float32), graph, n_epochs,
                             float(self.learning_rate) / 4.0, int(self.transform_seed))
            finally:
                self._tl_dev = saved
        return emb



def _hash(X):
    """Digest of an array's shape, dtype and bytes."""
    h = hashlib.sha256(f"{X.shape}{X.dtype}".encode())
    h.update(np.ascontiguousarray(X).tobytes())
    return h.hexdigest()


def _spectral_component(graph, dim):
    """umap-learn's spectral layout of one connected graph: the eigenvectors 1..dim
    of the normalised Laplacian I - D^-1/2 W D^-1/2 (ARPACK from the all-ones start)."""
    n = graph.shape[0]
    k = dim + 1
    deg = np.asarray(graph.sum(axis=0)).ravel()
    dinv = sp.diags(1.0 / np.sqrt(deg))
    L = sp.identity(n, dtype=np.float64) - dinv @ graph.astype(np.float64) @ dinv
    if n <= k + 1 or n < 64:
        w, v = np.linalg.eigh(L.toarray())
    else:
        ncv = max(2 * k + 1, int(np.sqrt(n)))
        try:
            w, v = eigsh(L, k, which="SM", ncv=ncv, tol=1e-4, v0=np.ones(n), maxiter=n * 5)
        except Exception:  # ARPACK did not converge: umap-learn falls back to random; the dense solver is exact
            w, v = np.linalg.eigh(L.toarray()) if n <= 4096 else (np.zeros(k), np.zeros((n, k)))
    order = np.argsort(w, kind="stable")[1:k]
    out = v[:, order]
    if out.shape[1] < dim:
        out = np.hstack([out, np.zeros((n, dim - out.shape[1]))])
    return out


def _init_graph_transform(graph, embedding):
    """Strength-weighted mean of the neighbours' embeddings; a new point equal to a
    training point (strength 1 at distance 0) sits on it; no neighbours: NaN."""
    m = graph.shape[0]
    s = np.asarray(graph.sum(axis=1)).ravel()
    out = np.full((m, embedding.shape[1]), np.nan, dtype=np.float32)
    ok = s > 0
    W = sp.diags(np.where(ok, 1.0 / np.where(ok, s, 1.0), 0.0)) @ graph.astype(np.float64)
    out[ok] = (W @ embedding.astype(np.float64))[ok].astype(np.float32)
    return np.ascontiguousarray(out)
