"""Spectral clustering on the CPU and CUDA backends.

The steps are scikit-learn's (sklearn.cluster.SpectralClustering,
sklearn.manifold.spectral_embedding with norm_laplacian=True and
drop_first=False):

1. the affinity matrix: twinlearn's pairwise kernels (rbf and the other
   kernels on the backend, docs/NUMERICS.md "Pairwise kernels"), or a
   symmetrized k-neighbours graph from twinlearn's exact neighbour search;
2. S = 2 I - L, L the normalized Laplacian with its diagonal set to 1
   (spectral_normalize, twinlearn/cluster/spectral.hpp), whose largest
   eigenvectors are L's smallest;
3. the n_components leading eigenvectors of S: a dense symmetric
   eigensolver, or for large graphs block subspace iteration with
   Rayleigh-Ritz steps whose products are the backend's canonical GEMM;
4. the embedding V / dd (dd: square roots of the degrees), each vector's
   sign fixed by scikit-learn's rule (_deterministic_vector_sign_flip:
   its largest-magnitude entry, the first on ties, made positive);
5. labels by twinlearn's KMeans, scikit-learn's discretization or
   cluster_qr.
"""

from __future__ import annotations

import warnings
from numbers import Integral

import numpy as np
import scipy.sparse as sp
from scipy import linalg
from scipy.sparse.csgraph import connected_components
from sklearn.base import BaseEstimator, ClusterMixin, _fit_context
from sklearn.cluster import SpectralClustering as _SkSpectralClustering
from sklearn.utils import check_random_state

from .. import _io, identity
from .._config import n_threads_context
from ..base import TL_PARAMETER_CONSTRAINTS, TwinlearnEstimatorMixin
from ..decomposition._solvers import (Backend, eigh_desc, host_matmul, host_qr, normal_matrix, seed_from,
                                      svd_flip_rows)

#: Up to this many nodes eigen_solver='arpack' (and None) diagonalizes S
#: densely; above it, subspace iteration.
DENSE_MAX = 1024
#: In identical mode the dense eigensolver is the fixed-order Jacobi one,
#: O(n^3) a sweep: up to this many nodes; above it, subspace iteration.
JACOBI_MAX = 384
#: eigen_tol='auto': the largest residual |S v - theta v| of a converged
#: Ritz pair in the subspace iteration (S has norm at most 2).
AUTO_TOL = 1e-8
#: Subspace iterations before the solver gives up (ConvergenceWarning).
MAX_SUBSPACE_ITER = 5000
#: The Philox offset of the subspace iteration's starting block.
_START_OFFSET = 0x5350


def _is_sparse(A):
    return sp.issparse(A)


def _symmetrize_graph(C):
    """0.5 (C + Cᵀ) as CSR float64 (scikit-learn's affinity of a k-neighbours graph)."""
    C = sp.csr_matrix(C, dtype=np.float64)
    return (0.5 * (C + C.T)).tocsr()


def _check_connected(A):
    """scikit-learn's warning when the affinity graph has several connected components."""
    n = A.shape[0]
    if not _is_sparse(A) and np.count_nonzero(A) == n * n:
        return
    graph = A if _is_sparse(A) else sp.csr_matrix(A)
    if connected_components(graph, directed=False)[0] > 1:
        warnings.warn("Graph is not fully connected, spectral embedding may not work as expected.")


def _normalize_sparse(A):
    """(S, dd) of spectral_normalize for a sparse affinity (host, float64):
    degrees summed in CSR storage order after the diagonal is dropped (exact
    for the 0.5 / 1 entries of a symmetrized k-neighbours graph)."""
    A = sp.csr_matrix(A, dtype=np.float64, copy=True)
    A.setdiag(0)
    A.eliminate_zeros()
    A.sort_indices()
    deg = np.add.reduceat(np.append(A.data, 0.0), np.minimum(A.indptr[:-1], A.data.size)) * (np.diff(A.indptr) > 0)
    if not np.isfinite(deg).all() or (deg < 0).any():
        raise ValueError("SpectralClustering: the affinity matrix must be finite with non-negative row sums")
    dd = np.where(deg == 0, 1.0, np.sqrt(deg))
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    A.data = (A.data / dd[A.indices]) / dd[rows]
    return (A + sp.identity(A.shape[0], format="csr")).tocsr(), dd


def _subspace_iteration(product, n, k, seed, tol, exact, max_iter=MAX_SUBSPACE_ITER):
    """The k leading eigenvectors (n x k, float64) of the positive
    semi-definite S given by `product(Q) = S Q`, by block subspace iteration:
    a block of p = min(n, 2k + 8) columns, orthonormalized (QR) after every
    product, with a Rayleigh-Ritz step (the p x p matrix Qᵀ S Q diagonalized)
    each iteration; converged when each of the k leading Ritz pairs has
    residual ``|S v - theta v|`` <= tol. The start is p columns of the project's
    normal draws (seed), so the result is a function of S and the seed. With
    `exact` (identical mode) the host products, QR and eigensolver are the
    fixed-order ones."""
    p = min(n, 2 * k + 8)
    Q = host_qr(np.array(normal_matrix(seed, n, p, _START_OFFSET)), exact)
    res = np.inf
    for _ in range(max_iter):
        H = product(Q)
        M = host_matmul(Q.T, H, exact)
        M = 0.5 * (M + M.T)
        theta, W = eigh_desc(M, exact=exact)
        HW = host_matmul(H, W, exact)
        V = host_matmul(Q, W, exact)
        R = HW[:, :k] - V[:, :k] * theta[:k]
        res = np.sqrt((R * R).sum(axis=0)).max()
        if res <= tol:
            return V[:, :k]
        Q = host_qr(HW, exact)
    from sklearn.exceptions import ConvergenceWarning

    warnings.warn(f"SpectralClustering: subspace iteration did not converge in {max_iter} iterations "
                  f"(largest residual {res:.3g}, tolerance {tol:.3g})", ConvergenceWarning)
    return V[:, :k]


def _discretize(vectors, random_state, max_svd_restarts=30, n_iter_max=20):
    """Labels from the spectral embedding by the multiclass spectral
    clustering of Yu and Shi (2003), as scikit-learn's ``discretize``: the
    embedding is normalized, then a rotation to the nearest discrete
    partition is sought by alternating a labelling and an SVD."""
    eps = np.finfo(float).eps
    n, k = vectors.shape
    vectors = vectors / np.linalg.norm(vectors, axis=0) * np.sqrt(n)
    for i in range(k):
        if vectors[0, i] != 0:
            vectors[:, i] = -np.sign(vectors[0, i]) * vectors[:, i]
    vectors = vectors / (np.sqrt((vectors**2).sum(axis=1))[:, None] + eps)
    restarts = 0
    has_converged = False
    labels = np.zeros(n, dtype=np.intp)
    while restarts < max_svd_restarts and not has_converged:
        rotation = np.zeros((k, k))
        rotation[:, 0] = vectors[random_state.randint(n), :].T
        c = np.zeros(n)
        for j in range(1, k):
            c += np.abs(vectors @ rotation[:, j - 1])
            rotation[:, j] = vectors[c.argmin(), :].T
        last_ncut = 0.0
        n_iter = 0
        while not has_converged:
            n_iter += 1
            labels = (vectors @ rotation).argmax(axis=1)
            onehot = sp.coo_matrix((np.ones(n), (np.arange(n), labels)), shape=(n, k)).tocsr()
            t_svd = np.asarray(onehot.T @ vectors)
            try:
                U, S, Vh = np.linalg.svd(t_svd)
            except np.linalg.LinAlgError:
                restarts += 1
                break
            ncut = 2.0 * (n - S.sum())
            if abs(ncut - last_ncut) < eps or n_iter > n_iter_max:
                has_converged = True
            else:
                last_ncut = ncut
                rotation = Vh.T @ U.T
    if not has_converged:
        raise np.linalg.LinAlgError("SVD did not converge")
    return labels


def _cluster_qr(vectors):
    """Labels from the spectral embedding by the column-pivoted QR of Damle,
    Minden and Ying (2019), as scikit-learn's ``cluster_qr``: the k rows the
    pivoting picks define, through an SVD, the rotation whose largest
    absolute coordinate labels each sample."""
    k = vectors.shape[1]
    _, _, piv = linalg.qr(vectors.T, pivoting=True)
    ut, _, v = linalg.svd(vectors[piv[:k], :].T)
    return np.abs(vectors @ (ut @ v.conj())).argmax(axis=1)


class SpectralClustering(TwinlearnEstimatorMixin, ClusterMixin, BaseEstimator):
    """Spectral clustering on the CPU backend or a GPU.

    scikit-learn's :class:`sklearn.cluster.SpectralClustering`: same
    parameters, defaults and fitted attributes. The embedding is the
    normalized Laplacian's as in scikit-learn (the degrees without self-loops,
    the eigenvectors divided by the square roots of the degrees, the signs
    fixed by scikit-learn's rule), so the labels agree with scikit-learn's up
    to a permutation wherever the clustering is well defined (adjusted Rand
    index >= 0.99 on the shapes of the tests). The eigenvectors are computed
    by twinlearn's own solvers (see ``eigen_solver``), the labels by
    twinlearn's :class:`~twinlearn.cluster.KMeans`, whose k-means++ draws
    differ from scikit-learn's.

    In ``identical`` mode every step is a fixed sequence of operations (the
    canonical GEMM and distance kernels, the project's exp, the fixed-order
    Jacobi eigensolver and QR on the host, KMeans' identical mode), so the
    labels are the same bits on the CPU at any thread count and on a GPU
    (docs/NUMERICS.md "SpectralClustering").

    Parameters
    ----------
    n_clusters : int, default=8
        The dimension of the projection subspace.
    eigen_solver : {'arpack', 'lobpcg', 'amg'}, default=None
        How the leading eigenvectors of ``S = 2 I - L`` are found:

        - None, 'arpack': a dense symmetric eigensolver for up to 1024 nodes
          (LAPACK on the host; cuSOLVER in fast mode on a GPU; in identical
          mode the fixed-order Jacobi eigensolver, up to 384 nodes), above
          that block subspace iteration (below);
        - 'lobpcg': block subspace iteration with Rayleigh-Ritz steps, whose
          products with S run on the backend (the canonical GEMM; a sparse
          graph's products on the host), for graphs of at least
          ``5 * n_components + 1`` nodes (smaller ones: dense, as
          scikit-learn);
        - 'amg': raises ValueError (pyamg's preconditioned solver is not
          reproduced).
    n_components : int, default=None
        Number of eigenvectors of the embedding; None: n_clusters.
    random_state : int, RandomState instance or None, default=None
        Seeds the subspace iteration's start (the project's Philox draws),
        KMeans' initialization and the discretization's rotations.
    n_init : int, default=10
        KMeans' number of initializations.
    gamma : float, default=1.0
        Kernel coefficient of rbf, poly, sigmoid, laplacian and chi2 kernels.
        Ignored for ``affinity='nearest_neighbors'``.
    affinity : str or callable, default='rbf'
        'rbf', 'nearest_neighbors' (the symmetrized connectivity graph of the
        n_neighbors nearest neighbours, the sample itself included),
        'precomputed' (X is the affinity matrix, dense or sparse),
        'precomputed_nearest_neighbors' (X is a sparse distance graph whose
        n_neighbors nearest entries per row are kept), one of
        scikit-learn's pairwise kernels ('linear', 'poly', 'polynomial',
        'sigmoid', 'laplacian', 'cosine' on twinlearn's kernels; 'chi2',
        'additive_chi2' computed by scikit-learn) or a callable
        ``f(X, Y, **kernel_params)`` (computed by scikit-learn).
    n_neighbors : int, default=10
        Neighbours of the nearest_neighbors affinity.
    eigen_tol : float, default='auto'
        Residual ``|S v - theta v|`` at which the subspace iteration stops
        ('auto': 1e-8); the dense solvers ignore it.
    assign_labels : {'kmeans', 'discretize', 'cluster_qr'}, default='kmeans'
        How labels are assigned in the embedding space (the discretization
        and cluster_qr on the host, in float64, the same code for both
        backends).
    degree : float, default=3
        Degree of the polynomial kernel.
    coef0 : float, default=1
        Zero coefficient of the polynomial and sigmoid kernels.
    kernel_params : dict, default=None
        Extra parameters of a callable affinity (or kernel).
    n_jobs : int, default=None
        CPU threads of the fit (None: :func:`twinlearn.get_n_threads`).
    verbose : bool, default=False
        KMeans' verbosity.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    affinity_matrix_ : array-like of shape (n_samples, n_samples)
        The affinity matrix (dense NumPy, or CSR for the neighbour graphs
        and sparse precomputed input).
    labels_ : ndarray of shape (n_samples,)
        Labels of each point.
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.cluster import SpectralClustering
    >>> X = np.array([[1, 1], [2, 1], [1, 0], [4, 7], [3, 5], [3, 6]], dtype=float)
    >>> sc = SpectralClustering(n_clusters=2, random_state=0, device="cpu").fit(X)
    >>> len(set(sc.labels_[:3])), len(set(sc.labels_[3:])), bool(sc.labels_[0] != sc.labels_[3])
    (1, 1, True)
    """

    _parameter_constraints: dict = {**_SkSpectralClustering._parameter_constraints, **TL_PARAMETER_CONSTRAINTS}

    def __init__(self, n_clusters=8, *, eigen_solver=None, n_components=None, random_state=None, n_init=10,
                 gamma=1.0, affinity="rbf", n_neighbors=10, eigen_tol="auto", assign_labels="kmeans", degree=3,
                 coef0=1, kernel_params=None, n_jobs=None, verbose=False, device=None, numeric_mode=None):
        self.n_clusters = n_clusters
        self.eigen_solver = eigen_solver
        self.n_components = n_components
        self.random_state = random_state
        self.n_init = n_init
        self.gamma = gamma
        self.affinity = affinity
        self.n_neighbors = n_neighbors
        self.eigen_tol = eigen_tol
        self.assign_labels = assign_labels
        self.degree = degree
        self.coef0 = coef0
        self.kernel_params = kernel_params
        self.n_jobs = n_jobs
        self.verbose = verbose
        self.device = device
        self.numeric_mode = numeric_mode

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.pairwise = self.affinity in ["precomputed", "precomputed_nearest_neighbors"]
        return tags

    # -- the affinity ----------------------------------------------------------------
    def _check_input(self, X, device):
        if _is_sparse(X):
            X = _io.validate_host(self, X, accept_sparse=["csr", "csc", "coo"], dtype=np.float64,
                                  ensure_min_samples=2, reset=True)
        else:
            X = _io.check_finite_X(self, X, device, reset=True)
            if X.shape[0] < 2:
                raise ValueError(f"Found array with {X.shape[0]} sample(s) (shape={tuple(X.shape)}) while a minimum "
                                 "of 2 is required by SpectralClustering.")
            X = _io.as_dtype(X, np.float64)
        return X

    def _affinity(self, X, device):
        """The affinity matrix: dense (NumPy, or the input's device kind) or CSR."""
        from ..metrics import pairwise_kernels
        from ..neighbors import NearestNeighbors

        affinity = self.affinity
        if affinity == "nearest_neighbors":
            if _is_sparse(X):
                from sklearn.neighbors import kneighbors_graph

                C = kneighbors_graph(X, n_neighbors=self.n_neighbors, include_self=True, n_jobs=self.n_jobs)
            else:
                nn = NearestNeighbors(n_neighbors=self.n_neighbors, device=device,
                                      numeric_mode=self.numeric_mode).fit(X)
                C = nn.kneighbors_graph(X, mode="connectivity")
            return _symmetrize_graph(C)
        if affinity == "precomputed_nearest_neighbors":
            from sklearn.neighbors import NearestNeighbors as _SkNN

            est = _SkNN(n_neighbors=self.n_neighbors, n_jobs=self.n_jobs, metric="precomputed").fit(_io.to_host(X))
            return _symmetrize_graph(est.kneighbors_graph(X=_io.to_host(X), mode="connectivity"))
        if affinity == "precomputed":
            if _is_sparse(X):
                return sp.csr_matrix(X, dtype=np.float64)
            if X.shape[0] != X.shape[1]:
                raise ValueError(f"SpectralClustering: a precomputed affinity matrix must be square, got shape "
                                 f"{tuple(X.shape)}")
            return X
        params = dict(self.kernel_params or {})
        if not callable(affinity):
            params["gamma"] = self.gamma
            params["degree"] = self.degree
            params["coef0"] = self.coef0
        return pairwise_kernels(X, metric=affinity, filter_params=True, device=device,
                                numeric_mode=self.numeric_mode, **params)

    # -- the embedding -----------------------------------------------------------------
    def _use_subspace(self, n, k, exact):
        if self.eigen_solver == "lobpcg":
            return n >= 5 * k + 1
        return n > (JACOBI_MAX if exact else DENSE_MAX)

    def _embedding(self, A, k, device, seed):
        """The n x k spectral embedding (float64 NumPy) of the affinity A."""
        n = A.shape[0]
        mod, ctx = self._tl_context(device, None if _is_sparse(A) else A)
        backend = Backend(mod, ctx, "SpectralClustering")
        exact = backend.exact_host
        tol = AUTO_TOL if self.eigen_tol == "auto" else max(float(self.eigen_tol), 1e-14)
        subspace = self._use_subspace(n, k, exact)
        if _is_sparse(A) and (subspace or n > DENSE_MAX):
            S, dd = _normalize_sparse(A)
            backend.record("S", S.toarray() if n <= 512 else S.data)
            V = _subspace_iteration(lambda Q: np.asarray(S @ Q), n, k, seed, tol, exact)
        else:
            if _is_sparse(A):
                A = np.ascontiguousarray(A.toarray())
            A = np.ascontiguousarray(A) if isinstance(A, np.ndarray) else A
            S = _io.empty_like_kind(A, (n, n), np.float64)
            dd = np.asarray(mod.spectral_normalize(ctx, A, S))
            backend.record("S", S)
            if subspace:
                Sd = backend.stage(S)
                V = _subspace_iteration(
                    lambda Q: np.asarray(backend.host(backend.matmul(Sd, False, Q, False, like=np.empty(0))),
                                         dtype=np.float64), n, k, seed, tol, exact)
            else:
                _, V = backend.eigh_desc(np.ascontiguousarray(backend.host(S), dtype=np.float64), k)
                V = V[:, :k]
        emb = np.ascontiguousarray((V / dd[:, None]).T)
        svd_flip_rows(emb)
        backend.record("embedding", emb)
        return emb.T.copy()

    # -- fit -------------------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Perform spectral clustering from features, or an affinity matrix.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or (n_samples, n_samples)
            Training instances, or the affinity matrix (``affinity='precomputed'``)
            or a sparse distance graph (``affinity='precomputed_nearest_neighbors'``).
        y : Ignored

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        if self.eigen_solver == "amg":
            raise ValueError("SpectralClustering: eigen_solver='amg' is not supported (pyamg's preconditioned "
                             "LOBPCG is not reproduced); use 'arpack' or 'lobpcg'")
        device = self._tl_device(X)
        X = self._check_input(X, device)
        if X.shape[0] == X.shape[1] and self.affinity not in ("precomputed", "precomputed_nearest_neighbors"):
            warnings.warn("The spectral clustering API has changed. ``fit``now constructs an affinity matrix from "
                          "data. To use a custom affinity matrix, set ``affinity=precomputed``.")
        random_state = check_random_state(self.random_state)
        k = self.n_clusters if self.n_components is None else self.n_components
        with n_threads_context(self.n_jobs):
            A = self._affinity(X, device)
            _check_connected(A if _is_sparse(A) else _io.to_host(A))
            seed = seed_from(self.random_state if isinstance(self.random_state, Integral) else random_state)
            maps = self._embedding(A, k, device, seed)
            labels = self._assign(maps, random_state, device)
        self.affinity_matrix_ = A if _is_sparse(A) else _io.to_host(A)
        self.labels_ = np.asarray(labels)
        identity.record("SpectralClustering.labels_", self.labels_)
        self._tl_record_fit(device, self._tl_requested_mode())
        return self

    def _assign(self, maps, random_state, device):
        if self.verbose:
            print(f"Computing label assignment using {self.assign_labels}")
        if self.assign_labels == "kmeans":
            from ._kmeans import KMeans

            rs = self.random_state if isinstance(self.random_state, Integral) else random_state
            km = KMeans(n_clusters=self.n_clusters, random_state=rs, n_init=self.n_init, verbose=self.verbose,
                        device=device, numeric_mode=self.numeric_mode).fit(maps)
            return _io.to_host(km.labels_)
        if self.assign_labels == "cluster_qr":
            return _cluster_qr(maps)
        return _discretize(maps, random_state)

    def fit_predict(self, X, y=None):
        """Perform spectral clustering on X and return the cluster labels.

        Parameters
        ----------
        X : {array-like, sparse matrix} of shape (n_samples, n_features), or (n_samples, n_samples)
        y : Ignored

        Returns
        -------
        labels : ndarray of shape (n_samples,)
        """
        return super().fit_predict(X, y)
