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

from .. import _io, _native as native, identity
from ..base import TL_PARAMETER_CONSTRAINTS, TwinlearnEstimatorMixin
from ..metrics._pairwise import _Runner, metric_struct
from ._minibatch import MiniBatchSteps


def _seed(random_state):
    """A 63-bit seed for the counter-based draws, from scikit-learn's random_state."""
    return int(check_random_state(random_state).randint(np.iinfo(np.int64).max, dtype=np.int64))


class KMeans(TwinlearnEstimatorMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin, ClusterMixin, BaseEstimator):
    """K-Means clustering (Lloyd's algorithm) on the CPU backend or a GPU.

    scikit-learn's :class:`sklearn.cluster.KMeans`: same parameters, defaults,
    fitted attributes and steps (centering, k-means++ with
    ``2 + int(log(n_clusters))`` local trials, Lloyd iterations, scikit-learn's
    convergence test and empty-cluster relocation, best of ``n_init`` runs).
    ``deterministic`` and ``identical`` deliver ``identical``: labels, centers
    and inertia are the same bits on the CPU and on any GPU, for any thread
    count (docs/NUMERICS.md; the arithmetic is described in
    cpp/include/twinlearn/cluster/kmeans.hpp). ``fast`` on a GPU, float32 data
    of at least 65 536 rows on the device, computes the assignment's dot
    products on the tensor cores with split operands (3xTF32, about float32's
    accuracy) and delivers ``fast``; elsewhere it delivers ``identical`` too.
    Initialisations draw from a counter-based generator seeded from
    ``random_state``, so the chosen initial centers differ from scikit-learn's
    for the same ``random_state``; from the same initial centers
    (``init=array``) the fit follows scikit-learn's.

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

    _tl_native = (
        native.Spec(
            "KMeansParams",
            fields={"n_clusters": "n_clusters", "init": "init", "n_init": "n_init", "max_iter": "max_iter",
                    "tol": "tol", "random_state": "seed"},
            python_only={"verbose": "printed by Python after the fit",
                         "copy_x": "X is never written (the core centres a copy when it centres)",
                         "algorithm": "every algorithm runs Lloyd's (the same fixed point)"},
            derived={"n_local_trials": "0: scikit-learn's rule, 2 + int(log(k))"},
        ),
        native.Spec(
            "MetricParams",
            derived={"metric": "'euclidean': transform's distances to the centers", "p": "2 (unused by euclidean)",
                     "direct": "True: by differences, as pairwise_distances"},
        ),
    )

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
    def _resolve_n_init(self, auto_random=10, stacklevel=3):
        """n_init in force: 'auto' is 1 for k-means++ or given centers and
        `auto_random` for random or callable inits; given centers run once
        (with scikit-learn's warning, `stacklevel` frames up)."""
        init = self.init
        explicit = not isinstance(init, str) and not callable(init)
        if self.n_init == "auto":
            n_init = 1 if explicit or init == "k-means++" else auto_random
        else:
            n_init = self.n_init
        if explicit and n_init != 1:
            warnings.warn(
                "Explicit initial center position passed: performing only one init in "
                f"{type(self).__name__} instead of n_init={n_init}.",
                RuntimeWarning,
                stacklevel=stacklevel,
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
        """(mean, mean of variances) of X's features, by the canonical column
        reduction (the same bits on either backend; large host data is reduced
        where it lives rather than copied to the GPU first)."""
        if isinstance(X, np.ndarray) and X.nbytes > (2 << 30):
            from .. import _backend

            core = _backend.core()
            mod, ctx = core, core.Context("cpu", ctx.n_threads, ctx.mode, 0)
        w, mean, m2, _, _ = np.asarray(mod.column_stats(ctx, X, None))
        return np.ascontiguousarray(mean), float(np.mean(m2 / w))

    def _check_overflow(self, X, *results):
        """The overflow error when centers, inertia or distances computed from
        the finite X are not finite (squared distances summed over features)."""
        _io.check_no_overflow(type(self).__name__, "its centers or squared distances overflow", *results,
                              dtype=_io.np_float_dtype(X), power=2, terms=X.shape[1])

    # -- fit ---------------------------------------------------------------------
    def _fit_input(self, X, sample_weight):
        """(X, device, dtype, host sample weights) of a fit, its parameters and
        X checked (at least n_clusters rows)."""
        self._tl_validate_params()
        device = self._tl_device(X)
        X = _io.check_finite_X(self, X, device, reset=True)
        n = X.shape[0]
        if n < self.n_clusters:
            raise ValueError(f"n_samples={n} should be >= n_clusters={self.n_clusters}.")
        dtype = _io.np_float_dtype(X)
        return X, device, dtype, _io.host_weights(sample_weight, n, dtype, ensure_non_negative=True)

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
        X, device, dtype, sw = self._fit_input(X, sample_weight)
        n = X.shape[0]
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
            Xc = _io.to_host(X) - x_mean.astype(dtype)
            runs = [self._check_centers(self.init(Xc, self.n_clusters, random_state=rs), X, dtype) for _ in
                    range(n_init)]
            init_centers = np.ascontiguousarray(np.stack(runs) + x_mean.astype(dtype))
        else:
            kind = "array"
            init_centers = self._check_centers(self.init, X, dtype)[None]
        p = native.params(mod.KMeansParams, n_clusters=int(self.n_clusters), init=kind, n_init=int(n_init),
                          max_iter=int(self.max_iter), tol=float(tol), seed=seed, n_local_trials=0)
        r = mod.kmeans_fit(ctx, X, sw, x_mean, init_centers, p)
        centers, labels, inertia, n_iter, best, delivered, distinct = (
            r.centers, r.labels, r.inertia, r.n_iter, r.best_init, r.delivered, r.n_distinct)
        if self.verbose:
            print(f"{type(self).__name__}: best of {n_init} run(s) is run {best}: inertia {inertia}, "
                  f"{n_iter} iteration(s)")
        labels = np.asarray(labels)
        self._check_overflow(X, np.asarray(centers), np.asarray(inertia))
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
        self._tl_record_fit(device, delivered)
        return self

    # -- inference ---------------------------------------------------------------
    def _check_test_data(self, X):
        check_is_fitted(self)
        device = self._tl_device(X)
        X = _io.check_finite_X(self, X, device, reset=False)
        return X, device

    def _labels_inertia(self, X, sample_weight):
        X, device = self._check_test_data(X)
        dtype = _io.np_float_dtype(X)
        sw = _io.host_weights(sample_weight, X.shape[0], dtype)
        centers = np.ascontiguousarray(self.cluster_centers_, dtype=dtype)
        mod, ctx = self._tl_context(device, X)
        # The inertia comes with the labels' distances: when it overflows, so did they.
        r = mod.kmeans_predict(ctx, X, sw, centers, True)
        self._check_overflow(X, np.asarray(r.inertia))
        return np.asarray(r.labels), r.inertia

    def predict(self, X):
        """Predict the closest cluster each sample in X belongs to.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        labels : ndarray of shape (n_samples,), int32
        """
        return self._labels_inertia(X, None)[0]

    def fit_predict(self, X, y=None, sample_weight=None):
        """Compute cluster centers and predict the cluster index of each sample (= ``fit(X).labels_``)."""
        return self.fit(X, sample_weight=sample_weight).labels_

    def score(self, X, y=None, sample_weight=None):
        """Opposite of the value of X on the K-means objective.

        Returns
        -------
        score : float
        """
        return -float(self._labels_inertia(X, sample_weight)[1])

    def _transform(self, X, device):
        centers = np.ascontiguousarray(self.cluster_centers_, dtype=_io.np_float_dtype(X))
        mod, ctx = self._tl_context(device, X)
        out = _io.empty_like_kind(X, (X.shape[0], centers.shape[0]), X.dtype)
        mod.pairwise_distances(ctx, X, centers, metric_struct(mod, "euclidean", 2.0, direct=True), out)
        self._check_overflow(X, out)
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
        return self._transform(_io.check_finite_X(self, X, device, reset=False), device)


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
    runner = _Runner(device, numeric_mode)
    runner._tl_validate_params()
    dev = runner._tl_device(X)
    X = _io.check_array(X, dev, "X")
    if X.shape[0] < n_clusters:
        raise ValueError(f"n_samples={X.shape[0]} should be >= n_clusters={n_clusters}.")
    if n_local_trials is not None and n_local_trials < 1:
        raise ValueError(f"n_local_trials is set to {n_local_trials} but should be an integer value greater than zero.")
    sw = _io.host_weights(sample_weight, X.shape[0], _io.np_float_dtype(X), ensure_non_negative=True)
    mod, ctx = runner._tl_context(dev, X)
    r = mod.kmeans_plusplus(ctx, X, sw, int(n_clusters), _seed(random_state), int(n_local_trials or 0))
    return np.asarray(r.centers), np.asarray(r.indices)


class MiniBatchKMeans(MiniBatchSteps, KMeans):
    """Mini-Batch K-Means clustering on the CPU backend or a GPU.

    scikit-learn's :class:`sklearn.cluster.MiniBatchKMeans`: same parameters,
    steps (initialisation on ``init_size`` rows, the best of ``n_init`` by
    inertia on a validation sample, batches drawn with probability
    proportional to ``sample_weight``, per-center learning rates, random
    reassignment of low-count centers, early stopping on the smoothed batch
    inertia) and fitted attributes. Every draw (init and validation samples,
    batches, reassignments) comes from the project's counter-based generator
    seeded from ``random_state``, so a fit is the same bits on the CPU and on
    any GPU; each batch's assignment, inertia and per-cluster sums run on the
    KMeans kernels, and the center update is float64 NumPy arithmetic.

    Parameters
    ----------
    n_clusters : int, default=8
    init : {'k-means++', 'random'}, callable or array-like of shape (n_clusters, n_features), default='k-means++'
    max_iter : int, default=100
        Passes over the data (``max_iter * n_samples // batch_size`` steps).
    batch_size : int, default=1024
    verbose : int, default=0
    compute_labels : bool, default=True
    random_state : int, RandomState instance or None, default=None
    tol : float, default=0.0
    max_no_improvement : int or None, default=10
    init_size : int, default=None
    n_init : 'auto' or int, default='auto'
        'auto': 1 run for 'k-means++' or an array, 3 otherwise.
    reassignment_ratio : float, default=0.01
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    cluster_centers_ : ndarray of shape (n_clusters, n_features)
    labels_ : ndarray of shape (n_samples,), int32 (when compute_labels)
    inertia_ : float
    n_iter_ : int
    n_steps_ : int
    n_features_in_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.cluster import MiniBatchKMeans
    >>> X = np.array([[1, 2], [1, 4], [1, 0], [4, 2], [4, 0], [4, 4],
    ...               [4, 5], [0, 1], [2, 2], [3, 2], [5, 5], [1, -1]], dtype=float)
    >>> km = MiniBatchKMeans(n_clusters=2, random_state=0, batch_size=6, n_init=3, device="cpu").fit(X)
    >>> km.cluster_centers_.shape
    (2, 2)
    """

    _parameter_constraints: dict = {
        **{k: v for k, v in KMeans._parameter_constraints.items() if k not in ("copy_x", "algorithm")},
        "batch_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "compute_labels": ["boolean"],
        "max_no_improvement": [Interval(numbers.Integral, 0, None, closed="left"), None],
        "init_size": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "reassignment_ratio": [Interval(numbers.Real, 0, None, closed="left")],
    }
    _tl_native = ()  # its steps call the assignment kernels directly; no parameter struct

    def __init__(self, n_clusters=8, *, init="k-means++", max_iter=100, batch_size=1024, verbose=0,
                 compute_labels=True, random_state=None, tol=0.0, max_no_improvement=10, init_size=None,
                 n_init="auto", reassignment_ratio=0.01, device=None, numeric_mode=None):
        self.n_clusters = n_clusters
        self.init = init
        self.max_iter = max_iter
        self.batch_size = batch_size
        self.verbose = verbose
        self.compute_labels = compute_labels
        self.random_state = random_state
        self.tol = tol
        self.max_no_improvement = max_no_improvement
        self.init_size = init_size
        self.n_init = n_init
        self.reassignment_ratio = reassignment_ratio
        self.device = device
        self.numeric_mode = numeric_mode

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None, sample_weight=None):
        """Compute the centroids on X by chunking it into mini-batches.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : Ignored
        sample_weight : array-like of shape (n_samples,), default=None
            Batches are drawn with probability proportional to the weights.

        Returns
        -------
        self : object
        """
        X, device, dtype, sw = self._fit_input(X, sample_weight)
        if sw is not None and np.all(sw == 1):
            # Unit weights are no weights (every weighted sum is then exact):
            # the same batches, centers and inertia as without, as in scikit-learn.
            sw = None
        n = X.shape[0]
        self._check_params(n)
        mod, ctx = self._tl_context(device, X)
        seed = _seed(self.random_state)
        self._tl_seed = seed  # for the reassignments of a later partial_fit
        self._tol = self._stats(mod, ctx, X)[1] * self.tol if self.tol else 0.0
        valid = self._draw("rng_integers", seed, self._S_VALID, 0, self._init_size, n)
        Xv = _io.take_rows(X, valid)
        swv = None if sw is None else np.ascontiguousarray(sw[valid])
        best = None
        for run in range(self._n_init):
            subset = (np.arange(n) if self._init_size >= n else
                      self._draw("rng_integers", seed, self._S_INIT_ROWS * 1000003 + run, 0, self._init_size, n))
            centers = self._init_centroids(mod, ctx, X, sw, dtype, seed, run, subset)
            inertia = mod.kmeans_predict(ctx, Xv, swv, np.ascontiguousarray(centers, dtype=dtype), True).inertia
            if self.verbose:
                print(f"Inertia for init {run + 1}/{self._n_init}: {inertia}")
            if best is None or inertia < best[0]:
                best = (inertia, centers)
        centers = np.ascontiguousarray(best[1], dtype=dtype)
        self._counts = np.zeros(self.n_clusters, dtype=dtype)
        self._ewa_inertia = None
        self._ewa_inertia_min = None
        self._no_improvement = 0
        self._n_since_last_reassign = 0
        n_steps = (self.max_iter * n) // self._batch_size
        for i in range(n_steps):
            if sw is None:
                idx = self._draw("rng_integers", seed, self._S_BATCH, i * self._batch_size, self._batch_size, n)
            else:
                idx = self._draw("rng_weighted_choice", seed, self._S_BATCH * 1000003 + i, sw, self._batch_size, True)
            reassign = self._random_reassign()
            new, batch_inertia = self._step(mod, ctx, _io.take_rows(X, idx), centers, dtype, seed, i, reassign)
            diff = float(np.sum((new.astype(np.float64) - centers) ** 2)) if self._tol > 0.0 else 0.0
            centers = new
            if self._convergence(i, n_steps, n, diff, batch_inertia):
                break
        else:
            i = max(n_steps - 1, 0)
        self.cluster_centers_ = centers
        self._n_features_out = centers.shape[0]
        self.n_steps_ = i + 1
        self.n_iter_ = int(np.ceil(((i + 1) * self._batch_size) / n))
        if self.compute_labels:
            r = mod.kmeans_predict(ctx, X, sw, centers, True)
            self.labels_ = np.asarray(r.labels)
            self.inertia_ = float(r.inertia)
        else:
            self.inertia_ = float(self._ewa_inertia * (np.sum(sw) if sw is not None else n)) \
                if self._ewa_inertia is not None else 0.0
        self._check_overflow(X, self.cluster_centers_, np.asarray(self.inertia_))
        identity.record("MiniBatchKMeans.cluster_centers_", self.cluster_centers_)
        self._tl_record_fit(device, "identical")
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, sample_weight=None):
        """Update the k means estimate on a single mini-batch X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : Ignored
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        has_centers = hasattr(self, "cluster_centers_")
        if not has_centers:
            self._tl_validate_params()
        device = self._tl_device(X)
        X = _io.check_finite_X(self, X, device, reset=not has_centers)
        n = X.shape[0]
        dtype = _io.np_float_dtype(X)
        sw = _io.host_weights(sample_weight, n, dtype, ensure_non_negative=True)
        mod, ctx = self._tl_context(device, X)
        if not has_centers:
            if n < self.n_clusters:
                raise ValueError(f"n_samples={n} should be >= n_clusters={self.n_clusters}.")
            self._check_params(n)
            self._tl_seed = _seed(self.random_state)
            self.n_steps_ = 0
            subset = np.arange(n) if self._init_size >= n else self._draw(
                "rng_integers", self._tl_seed, self._S_INIT_ROWS * 1000003, 0, self._init_size, n)
            self.cluster_centers_ = np.ascontiguousarray(
                self._init_centroids(mod, ctx, X, sw, dtype, self._tl_seed, 0, subset), dtype=dtype)
            self._counts = np.zeros(self.n_clusters, dtype=dtype)
            self._n_since_last_reassign = 0
            self._batch_size = n
        self._batch_size = n
        centers = np.ascontiguousarray(self.cluster_centers_, dtype=dtype)
        # A weighted batch: scikit-learn's update with the given weights.
        new, _ = self._update_centers(mod, ctx, X, sw, centers, dtype)
        if self._random_reassign() and self.reassignment_ratio > 0:
            self._reassign_centers(X, new, None, self.n_steps_, False)
        self.cluster_centers_ = np.ascontiguousarray(new)
        self._n_features_out = self.cluster_centers_.shape[0]
        self.n_steps_ += 1
        if self.compute_labels:
            r = mod.kmeans_predict(ctx, X, sw, self.cluster_centers_, True)
            self.labels_ = np.asarray(r.labels)
            self.inertia_ = float(r.inertia)
        self._check_overflow(X, self.cluster_centers_, np.asarray(getattr(self, "inertia_", 0.0)))
        self._tl_record_fit(device, "identical")
        return self


__all__ = ["KMeans", "MiniBatchKMeans", "kmeans_plusplus"]
