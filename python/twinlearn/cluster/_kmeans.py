"""KMeans on the CPU and CUDA backends."""

from __future__ import annotations

import numbers
import warnings

import numpy as np
from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, ClusterMixin, TransformerMixin, _fit_context
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import check_array, check_is_fitted

from .. import _array, identity
from ..base import TL_PARAMETER_CONSTRAINTS, TwinlearnEstimatorMixin
from ..neighbors._input import check_plain, check_X, host_weights


def _seed(random_state):
    """A 63-bit seed for the counter-based draws, from scikit-learn's random_state."""
    return int(check_random_state(random_state).randint(np.iinfo(np.int64).max, dtype=np.int64))


def _host_matrix(X):
    return _array.to_numpy(X) if _array.is_device_array(X) else X


class KMeans(TwinlearnEstimatorMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin, BaseEstimator):
    """K-Means clustering (Lloyd's algorithm) on the CPU backend or a GPU.

    scikit-learn's :class:`sklearn.cluster.KMeans`: same parameters, defaults,
    fitted attributes and steps (centering, k-means++ with
    ``2 + int(log(n_clusters))`` local trials, Lloyd iterations, scikit-learn's
    convergence test and empty-cluster relocation, best of ``n_init`` runs).
    Every numeric mode delivers ``identical``: labels, centers and inertia are
    the same bits on the CPU and on any GPU, for any thread count
    (docs/NUMERICS.md; the arithmetic is described in
    cpp/include/twinlearn/cluster/kmeans.hpp). Initialisations draw from a
    counter-based generator seeded from ``random_state``, so the chosen
    initial centers differ from scikit-learn's for the same ``random_state``;
    from the same initial centers (``init=array``) the fit follows
    scikit-learn's.

    Parameters
    ----------
    n_clusters : int, default=8
    init : {'k-means++', 'random'}, callable or array-like of shape (n_clusters, n_features), default='k-means++'
        A callable is called as ``init(X_centered, n_clusters, random_state=...)``
        with a NumPy copy of the centered data.
    n_init : 'auto' or int, default='auto'
        'auto': 1 run for 'k-means++' or an array, 10 for 'random' or a callable.
    max_iter : int, default=300
    tol : float, default=1e-4
        Relative to the mean of the feature variances; convergence is declared
        when the sum of squared center shifts is at most ``tol * mean(var(X))``.
    verbose : int, default=0
        When > 0, prints one line per run (its inertia and iterations).
    random_state : int, RandomState instance or None, default=None
    copy_x : bool, default=True
        The data is never modified: centering works on a copy either way.
    algorithm : {'lloyd', 'elkan'}, default='lloyd'
        'elkan' runs Lloyd's algorithm: Elkan's is an exact acceleration of
        the same iteration, so the result is the same.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    labels_ : ndarray of shape (n_samples,), int32
    inertia_ : float
    n_iter_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.cluster import KMeans
    >>> X = np.array([[1, 2], [1, 4], [1, 0], [10, 2], [10, 4], [10, 0]], dtype=float)
    >>> km = KMeans(n_clusters=2, init=np.array([[0.0, 0.0], [9.0, 9.0]]), device="cpu").fit(X)
    >>> km.labels_
    array([0, 0, 0, 1, 1, 1], dtype=int32)
    >>> km.cluster_centers_
    array([[ 1.,  2.],
           [10.,  2.]])
    >>> km.predict(np.array([[0.0, 0.0], [12.0, 3.0]]))
    array([0, 1], dtype=int32)
    """

    _parameter_constraints: dict = {
        "n_clusters": [Interval(numbers.Integral, 1, None, closed="left")],
        "init": [StrOptions({"k-means++", "random"}), callable, "array-like"],
        "n_init": [StrOptions({"auto"}), Interval(numbers.Integral, 1, None, closed="left")],
        "max_iter": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        "copy_x": ["boolean"],
        "algorithm": [StrOptions({"lloyd", "elkan"})],
        **TL_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, n_clusters=8, *, init="k-means++", n_init="auto", max_iter=300, tol=1e-4, verbose=0,
                 random_state=None, copy_x=True, algorithm="lloyd", device=None, numeric_mode=None):
        self.n_clusters = n_clusters
        self.init = init
        self.n_init = n_init
        self.max_iter = max_iter
        self.tol = tol
        self.verbose = verbose
        self.random_state = random_state
        self.copy_x = copy_x
        self.algorithm = algorithm
        self.device = device
        self.numeric_mode = numeric_mode

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.transformer_tags.preserves_dtype = ["float64", "float32"]
        return tags

    # -- helpers ---------------------------------------------------------------
    def _resolve_n_init(self):
        init = self.init
        if self.n_init == "auto":
            if isinstance(init, str) and init == "k-means++":
                n_init = 1
            elif isinstance(init, str) and init == "random" or callable(init):
                n_init = 10
            else:
                n_init = 1
        else:
            n_init = self.n_init
        if not isinstance(init, str) and not callable(init) and n_init != 1:
            warnings.warn(
                "Explicit initial center position passed: performing only one init in "
                f"{type(self).__name__} instead of n_init={n_init}.",
                RuntimeWarning,
                stacklevel=3,
            )
            n_init = 1
        return n_init

    def _check_centers(self, centers, X, dtype, what="initial centers"):
        centers = check_array(centers, dtype=dtype, copy=True, order="C")
        if centers.shape[0] != self.n_clusters:
            raise ValueError(
                f"The shape of the {what} {centers.shape} does not match the number of clusters {self.n_clusters}."
            )
        if centers.shape[1] != X.shape[1]:
            raise ValueError(
                f"The shape of the {what} {centers.shape} does not match the number of features of the data "
                f"{X.shape[1]}."
            )
        return centers

    def _stats(self, mod, ctx, X):
        """(mean, mean of variances) of X's features, by the canonical column reduction."""
        w, mean, m2, _, _ = np.asarray(mod.column_stats(ctx, X, None))
        return np.ascontiguousarray(mean), float(np.mean(m2 / w))

    # -- fit ---------------------------------------------------------------------
    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Compute k-means clustering.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NumPy arrays, or CuPy / PyTorch device arrays (used in place).
        y : Ignored
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        device = self._tl_device(X)
        X = check_X(self, X, device, reset=True)
        n, d = X.shape
        if n < self.n_clusters:
            raise ValueError(f"n_samples={n} should be >= n_clusters={self.n_clusters}.")
        dtype = np.float32 if str(X.dtype).endswith("float32") else np.float64
        sw = host_weights(sample_weight, n, dtype)
        n_init = self._resolve_n_init()
        mod, ctx = self._tl_context(device, X)
        x_mean, mean_var = self._stats(mod, ctx, X)
        tol = mean_var * self.tol if self.tol else 0.0
        seed = _seed(self.random_state)
        init_centers = None
        if isinstance(self.init, str):
            kind = self.init
        elif callable(self.init):
            kind = "array"
            rs = check_random_state(self.random_state)
            Xc = _host_matrix(X) - x_mean.astype(dtype)
            runs = [self._check_centers(self.init(Xc, self.n_clusters, random_state=rs), X, dtype) for _ in
                    range(n_init)]
            init_centers = np.ascontiguousarray(np.stack(runs) + x_mean.astype(dtype))
        else:
            kind = "array"
            init_centers = self._check_centers(self.init, X, dtype)[None]
        centers, labels, inertia, n_iter, best = mod.kmeans_fit(
            ctx, X, sw, x_mean, init_centers, int(self.n_clusters), kind, int(n_init), int(self.max_iter),
            float(tol), seed, 0,
        )
        if self.verbose:
            print(f"{type(self).__name__}: best of {n_init} run(s) is run {best}: inertia {inertia}, "
                  f"{n_iter} iteration(s)")
        labels = np.asarray(labels)
        distinct = len(np.unique(labels))
        if distinct < self.n_clusters:
            warnings.warn(
                f"Number of distinct clusters ({distinct}) found smaller than n_clusters ({self.n_clusters}). "
                "Possibly due to duplicate points in X.",
                ConvergenceWarning,
                stacklevel=2,
            )
        self.cluster_centers_ = np.asarray(centers)
        self.labels_ = labels
        self.inertia_ = float(inertia)
        self.n_iter_ = int(n_iter)
        self._n_features_out = self.cluster_centers_.shape[0]
        identity.record("KMeans.cluster_centers_", self.cluster_centers_)
        identity.record("KMeans.labels_", self.labels_)
        identity.record("KMeans.inertia_", np.array([self.inertia_]))
        self._tl_record_fit(device, "identical")
        return self

    # -- inference ---------------------------------------------------------------
    def _check_test_data(self, X):
        check_is_fitted(self)
        device = self._tl_device(X)
        X = check_X(self, X, device, reset=False)
        return X, device

    def _labels_inertia(self, X, sample_weight, want_inertia):
        orig = X
        X, device = self._check_test_data(X)
        dtype = np.float32 if str(X.dtype).endswith("float32") else np.float64
        sw = host_weights(sample_weight, X.shape[0], dtype)
        centers = np.ascontiguousarray(self.cluster_centers_, dtype=dtype)
        mod, ctx = self._tl_context(device, X)
        labels, inertia = mod.kmeans_predict(ctx, X, sw, centers, want_inertia)
        labels = np.asarray(labels)
        if _array.is_device_array(orig):
            labels = _array.from_numpy_like(orig, labels)
        return labels, inertia

    def predict(self, X):
        """Predict the closest cluster each sample in X belongs to.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,), int32
        """
        return self._labels_inertia(X, None, False)[0]

    def fit_predict(self, X, y=None, sample_weight=None):
        """Compute cluster centers and predict the cluster index of each sample (= ``fit(X).labels_``)."""
        return self.fit(X, sample_weight=sample_weight).labels_

    def score(self, X, y=None, sample_weight=None):
        """Opposite of the value of X on the K-means objective.

        Returns
        -------
        score : float
        """
        return -float(self._labels_inertia(X, sample_weight, True)[1])

    def _transform(self, X, device):
        dtype = np.float32 if str(X.dtype).endswith("float32") else np.float64
        centers = np.ascontiguousarray(self.cluster_centers_, dtype=dtype)
        mod, ctx = self._tl_context(device, X)
        out = _array.empty_like_kind(X, (X.shape[0], centers.shape[0]), X.dtype)
        mod.pairwise_distances(ctx, X, centers, "euclidean", 2.0, out)
        return out

    def transform(self, X):
        """Transform X to a cluster-distance space (euclidean distance to every center).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        X_new : array of shape (n_samples, n_clusters), the caller's array type
        """
        X, device = self._check_test_data(X)
        return self._transform(X, device)

    def fit_transform(self, X, y=None, sample_weight=None):
        """Compute clustering and transform X to cluster-distance space."""
        self.fit(X, sample_weight=sample_weight)
        device = self._tl_device(X)
        return self._transform(check_X(self, X, device, reset=False), device)


def kmeans_plusplus(X, n_clusters, *, sample_weight=None, x_squared_norms=None, random_state=None,
                    n_local_trials=None, device=None, numeric_mode=None):
    """Initial KMeans centers by greedy k-means++ (scikit-learn's algorithm,
    this project's counter-based draws).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    n_clusters : int
    sample_weight : array-like of shape (n_samples,), default=None
    x_squared_norms : ignored (the norms are computed by the kernels)
    random_state : int, RandomState instance or None, default=None
    n_local_trials : int, default=None
        None means ``2 + int(log(n_clusters))``.

    Returns
    -------
    centers : ndarray of shape (n_clusters, n_features)
    indices : ndarray of shape (n_clusters,)
    """
    from ..metrics._pairwise import _Runner

    runner = _Runner(device, numeric_mode)
    runner._tl_validate_params()
    dev = runner._tl_device(X)
    X = check_plain(X, dev, "X")
    if X.shape[0] < n_clusters:
        raise ValueError(f"n_samples={X.shape[0]} should be >= n_clusters={n_clusters}.")
    if n_local_trials is not None and n_local_trials < 1:
        raise ValueError(f"n_local_trials is set to {n_local_trials} but should be an integer value greater than zero.")
    dtype = np.float32 if str(X.dtype).endswith("float32") else np.float64
    sw = host_weights(sample_weight, X.shape[0], dtype)
    mod, ctx = runner._tl_context(dev, X)
    centers, indices = mod.kmeans_plusplus(ctx, X, sw, int(n_clusters), _seed(random_state), int(n_local_trials or 0))
    return np.asarray(centers), np.asarray(indices)


__all__ = ["KMeans", "kmeans_plusplus"]
