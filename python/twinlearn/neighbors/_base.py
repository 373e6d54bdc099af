"""Exact nearest neighbours on the CPU and CUDA backends.

NearestNeighbors, KNeighborsClassifier and KNeighborsRegressor with
scikit-learn's names, parameters and results. The search is an exact
brute-force scan on fused distance + top-k kernels (the distance matrix is
never written); ``algorithm='kd_tree'`` and ``'ball_tree'`` are accepted and
give the same exact neighbours. Neighbours are ordered by distance, ties by
the lowest index (scikit-learn's brute force leaves ties unordered).
"""

from __future__ import annotations

import numbers
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.exceptions import DataConversionWarning
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_array, check_is_fitted

from .. import _io, _native as native, identity
from .._config import n_threads_context
from .._labels import integral_classes
from ..base import TL_PARAMETER_CONSTRAINTS, DeviceScoreMixin, TwinlearnEstimatorMixin
from ..metrics._pairwise import METRICS, check_distances_finite, distance_power, metric_struct, resolve_metric

_EFFECTIVE = {"l2": "euclidean", "cityblock": "manhattan", "l1": "manhattan"}


def _max_abs(X) -> float:
    """The largest magnitude in the host or device matrix X (0 when empty)."""
    if X.shape[0] == 0 or X.shape[1] == 0:
        return 0.0
    if _io.is_device_array(X):
        return float(abs(X).max())
    return float(np.abs(X).max())


def _metric_spec(**python_only):
    """How a neighbours estimator's parameters reach the searches' MetricParams."""
    return native.Spec(
        "MetricParams",
        fields={"metric": "metric", "p": "p", "metric_params": "p"},
        python_only={
            "n_neighbors": "the k of each query (knn_search's argument)",
            "algorithm": "every algorithm runs the exact brute-force search",
            "leaf_size": "no tree is built",
            "n_jobs": "the thread count of the backend's Context",
            **python_only,
        },
        derived={"direct": "False: the searches rank by the dot-product form"},
    )


def _get_weights(dist, weights):
    """scikit-learn's neighbour weights: None (uniform) or 1 / distance, where
    a zero distance makes its row's weights (dist == 0)."""
    if weights == "uniform":
        return None
    with np.errstate(divide="ignore"):
        w = 1.0 / dist
    inf_mask = np.isinf(w)
    inf_row = np.any(inf_mask, axis=1)
    w[inf_row] = inf_mask[inf_row]
    return w


class _NeighborsBase(TwinlearnEstimatorMixin, BaseEstimator):
    _parameter_constraints: dict = {
        "n_neighbors": [Interval(numbers.Integral, 1, None, closed="left"), None],
        "radius": [Interval(numbers.Real, 0, None, closed="both"), None],
        "algorithm": [StrOptions({"auto", "ball_tree", "kd_tree", "brute"})],
        "leaf_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "p": [Interval(numbers.Real, 0, None, closed="right"), None],
        "metric": [StrOptions(set(METRICS) | {"precomputed"}), callable],
        "metric_params": [dict, None],
        "n_jobs": [numbers.Integral, None],
        **TL_PARAMETER_CONSTRAINTS,
    }

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.pairwise = self.metric == "precomputed"
        tags.input_tags.positive_only = self.metric == "precomputed"
        return tags

    def __getstate__(self):
        # A model fitted on GPU data pickles its data as NumPy, so it loads
        # (and predicts) on a machine without a GPU.
        state = super().__getstate__()
        if "_fit_X" in state:
            state = dict(state, _fit_X=_io.to_host(state["_fit_X"]))
        return state

    # -- fitting -----------------------------------------------------------------
    def _check_metric(self):
        if self.metric == "precomputed":
            if self.metric_params:
                raise ValueError("metric_params are not supported with metric='precomputed'")
            self.effective_metric_ = "precomputed"
            self.effective_metric_params_ = {}
            return
        name, p = resolve_metric(self.metric, self.p if self.metric == "minkowski" else None, self.metric_params,
                                 where=f"{type(self).__name__} metric")
        if self.metric != "minkowski" and self.p is not None and self.metric_params and "p" in self.metric_params:
            pass
        self._tl_metric = (name, p)
        eff = _EFFECTIVE.get(name, name)
        params = {}
        if name == "minkowski":
            if p == 1:
                eff = "manhattan"
            elif p == 2:
                eff = "euclidean"
            elif np.isinf(p):
                eff = "chebyshev"
            else:
                params = {"p": p}
        self.effective_metric_ = eff
        self.effective_metric_params_ = params

    def _fit(self, X, names_from_y_check=False):
        self._tl_validate_params()
        if callable(self.metric):
            raise ValueError(f"{type(self).__name__}: callable metrics are not supported; use one of {METRICS}")
        self._check_metric()
        if getattr(self, "weights", "uniform") not in ("uniform", "distance"):
            raise ValueError(
                f"{type(self).__name__}: weights={self.weights!r} is not supported; use 'uniform' or 'distance' "
                "(callable weights are not supported)"
            )
        device = self._tl_device(X)
        if self.metric == "precomputed":
            X = self._check_precomputed(X, reset=True)
        else:
            # A supervised fit has validated X with y already (setting the
            # column names of a DataFrame X); this second check sees the
            # array and must not forget them.
            names = getattr(self, "feature_names_in_", None) if names_from_y_check else None
            X = _io.check_finite_X(self, X, device, reset=True)
            if names is not None:
                self.feature_names_in_ = names
        self._fit_X = X
        self.n_samples_fit_ = X.shape[0]
        self._fit_method = "brute"
        # Fast mode on a GPU searches a float32 index of 65 536 rows or more
        # on the tensor cores for the dot-product metrics (3xTF32, no bit
        # promise; docs/NUMERICS.md); other metrics keep the exact kernel.
        tensor_cores = (self._tl_requested_mode() == "fast" and device != "cpu"
                        and self.effective_metric_ in ("euclidean", "sqeuclidean", "cosine")
                        and str(X.dtype).endswith("float32") and X.shape[0] >= 65536)
        self._tl_record_fit(device, "fast" if tensor_cores else "identical")
        return self

    def _check_precomputed(self, X, *, reset):
        """A precomputed distance matrix as a float64 NumPy array: square for
        a fit, one column per indexed sample for a query; no negative entries."""
        X = _io.validate_host(self, X if reset else _io.to_numpy(X), accept_sparse=False, dtype=np.float64, reset=reset)
        if reset and X.shape[0] != X.shape[1]:
            raise ValueError(f"Precomputed matrix must be square. Input is a {X.shape[0]}x{X.shape[1]} matrix.")
        if not reset and X.shape[1] != self.n_samples_fit_:
            raise ValueError(
                f"Precomputed metric requires shape (n_queries, n_indexed). Got ({X.shape[0]}, {X.shape[1]}) "
                f"for {self.n_samples_fit_} indexed."
            )
        _io.check_distances(X)
        return X

    # -- queries -----------------------------------------------------------------
    def _query_input(self, X):
        """(X, device) for a query; X=None is handled by the caller."""
        device = self._tl_device(X if X is not None else self._fit_X)
        if self.metric == "precomputed":
            return self._check_precomputed(X, reset=False), device
        X = _io.check_finite_X(self, X, device, reset=False)
        return _io.as_dtype(X, self._fit_X.dtype), device

    def _fitted_queries(self):
        """(X, device) for a query of the fitted points themselves (X=None)."""
        device = self._tl_device(self._fit_X)
        return _io.place(self._fit_X, device), device

    def _search(self, X, k, device):
        """(dist, ind) host arrays for the queries X (already checked)."""
        if self.metric == "precomputed":
            D = np.asarray(X)
            ind = np.argsort(D, axis=1, kind="stable")[:, :k]
            return np.take_along_axis(D, ind, axis=1), ind.astype(np.intp)
        name, p = self._tl_metric
        with n_threads_context(getattr(self, "n_jobs", None)):
            mod, ctx = self._tl_context(device, X)
            index = _io.place(self._fit_X, device)
            if k > 1024 and device != "cpu":
                # Past 1024 neighbours the selection runs on the CPU backend (same bits).
                index, X = _io.to_numpy(index), _io.to_numpy(X)
            r = mod.knn_search(ctx, index, X, metric_struct(mod, name, p, direct=False), int(k))
        dist = np.asarray(r.distances)
        check_distances_finite(type(self).__name__, dist, X, name, p)  # the neighbours were ranked by them
        return dist, np.asarray(r.indices).view(np.intp)

    def kneighbors(self, X=None, n_neighbors=None, return_distance=True):
        """Find the K-neighbors of a point.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), or (n_queries, n_indexed) if metric == 'precomputed', default=None
            None queries the fitted points, each one not counted as its own neighbour.
        n_neighbors : int, default=None
            None uses the constructor's value.
        return_distance : bool, default=True

        Returns
        -------
        neigh_dist : ndarray of shape (n_queries, n_neighbors)
            Only present if return_distance=True.
        neigh_ind : ndarray of shape (n_queries, n_neighbors), int64
            Nearest first; equal distances in increasing index order.
        """
        check_is_fitted(self)
        if n_neighbors is None:
            n_neighbors = self.n_neighbors
        elif not isinstance(n_neighbors, numbers.Integral):
            raise TypeError(f"n_neighbors does not take {type(n_neighbors)} value, enter integer value")
        elif n_neighbors <= 0:
            raise ValueError(f"Expected n_neighbors > 0. Got {n_neighbors}")
        query_is_train = X is None
        if query_is_train:
            X, device = self._fitted_queries()
            n_neighbors += 1
        else:
            X, device = self._query_input(X)
        n_fit = self.n_samples_fit_
        if n_neighbors > n_fit:
            if query_is_train:
                n_neighbors -= 1
                ineq = "n_neighbors < n_samples_fit"
            else:
                ineq = "n_neighbors <= n_samples_fit"
            raise ValueError(
                f"Expected {ineq}, but n_neighbors = {n_neighbors}, n_samples_fit = {n_fit}, "
                f"n_samples = {X.shape[0]}"
            )
        dist, ind = self._search(X, n_neighbors, device)
        if query_is_train:
            n_q = ind.shape[0]
            mask = ind != np.arange(n_q)[:, None]
            dup = np.all(mask, axis=1)
            mask[:, 0][dup] = False
            ind = ind[mask].reshape(n_q, n_neighbors - 1)
            dist = dist[mask].reshape(n_q, n_neighbors - 1)
        identity.record(f"{type(self).__name__}.kneighbors.indices", ind)
        identity.record(f"{type(self).__name__}.kneighbors.distances", dist)
        return (dist, ind) if return_distance else ind

    def kneighbors_graph(self, X=None, n_neighbors=None, mode="connectivity"):
        """The k-neighbours graph as a CSR matrix of shape (n_queries, n_samples_fit).

        mode='connectivity' gives ones, 'distance' the distances.
        """
        check_is_fitted(self)
        if n_neighbors is None:
            n_neighbors = self.n_neighbors
        if mode == "connectivity":
            ind = _io.to_numpy(self.kneighbors(X, n_neighbors, return_distance=False))
            data = np.ones(ind.size)
        elif mode == "distance":
            dist, ind = self.kneighbors(X, n_neighbors, return_distance=True)
            dist, ind = _io.to_numpy(dist), _io.to_numpy(ind)
            data = np.ravel(dist)
        else:
            raise ValueError(
                f'Unsupported mode, must be one of "connectivity", or "distance" but got "{mode}" instead'
            )
        n_q, k = ind.shape
        indptr = np.arange(0, n_q * k + 1, k)
        return sp.csr_matrix((data, ind.ravel(), indptr), shape=(n_q, self.n_samples_fit_))

    def _query_radius(self, radius):
        """The radius of a query: the argument, else the estimator's parameter
        (the k-neighbours estimators have none, so there it must be given)."""
        if radius is None:
            radius = getattr(self, "radius", None)
        if radius is None:
            raise TypeError(f"{type(self).__name__} has no radius parameter: pass radius= to the query")
        return radius

    def _check_radius_overflow(self, X, device):
        """kneighbors's overflow error when a distance between the queries X
        and the fitted points overflowed: the radius search leaves out the
        pairs it could not compute, so nothing else would say so. Below the
        magnitude that no distance of the metric can overflow from (the bound
        of the error message) nothing is searched; above it, every distance is
        looked at, by the k-neighbours search over all fitted points."""
        limit = _io.largest_magnitude(_io.np_float_dtype(X), distance_power(*self._tl_metric), X.shape[1])
        if max(_max_abs(X), _max_abs(self._fit_X)) <= limit:
            return
        n_fit = self.n_samples_fit_
        step = max(1, (1 << 22) // n_fit)
        for start in range(0, X.shape[0], step):
            self._search(X[start:start + step], n_fit, device)

    def radius_neighbors(self, X=None, radius=None, return_distance=True, sort_results=False):
        """Find the neighbors within a given radius (distance <= radius).

        Returns
        -------
        neigh_dist : ndarray of shape (n_queries,) of arrays
            Only present if return_distance=True.
        neigh_ind : ndarray of shape (n_queries,) of int64 arrays
            In increasing index order, or by distance (ties by index) when
            sort_results=True.
        """
        check_is_fitted(self)
        if sort_results and not return_distance:
            raise ValueError("return_distance must be True if sort_results is True.")
        radius = self._query_radius(radius)
        query_is_train = X is None
        if query_is_train:
            X, device = self._fitted_queries()
        else:
            X, device = self._query_input(X)
        if self.metric == "precomputed":
            D = np.asarray(X)
            ind_list = [np.flatnonzero(row <= radius).astype(np.int64) for row in D]
            dist_list = [D[i, ind_list[i]] for i in range(D.shape[0])]
        else:
            name, p = self._tl_metric
            with n_threads_context(getattr(self, "n_jobs", None)):
                mod, ctx = self._tl_context(device, X)
                r = mod.radius_search(ctx, _io.place(self._fit_X, device), X, metric_struct(mod, name, p, direct=False),
                                      float(radius))
            self._check_radius_overflow(X, device)
            offsets = np.asarray(r.offsets)
            ind_all, dist_all = np.asarray(r.indices).view(np.intp), np.asarray(r.distances)
            ind_list = [ind_all[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]
            dist_list = [dist_all[offsets[i]:offsets[i + 1]] for i in range(len(offsets) - 1)]
        if query_is_train:
            for i in range(len(ind_list)):
                m = ind_list[i] != i
                ind_list[i], dist_list[i] = ind_list[i][m], dist_list[i][m]
        if sort_results:
            for i in range(len(ind_list)):
                order = np.argsort(dist_list[i], kind="stable")
                ind_list[i], dist_list[i] = ind_list[i][order], dist_list[i][order]
        neigh_ind = np.empty(len(ind_list), dtype=object)
        neigh_ind[:] = ind_list
        if not return_distance:
            return neigh_ind
        neigh_dist = np.empty(len(dist_list), dtype=object)
        neigh_dist[:] = dist_list
        return neigh_dist, neigh_ind

    def radius_neighbors_graph(self, X=None, radius=None, mode="connectivity", sort_results=False):
        """The radius-neighbours graph as a CSR matrix of shape (n_queries, n_samples_fit)."""
        check_is_fitted(self)
        radius = self._query_radius(radius)
        if mode == "connectivity":
            ind = self.radius_neighbors(X, radius, return_distance=False)
            data = None
        elif mode == "distance":
            dist, ind = self.radius_neighbors(X, radius, return_distance=True, sort_results=sort_results)
            data = np.concatenate(list(dist)) if len(dist) else np.empty(0)
        else:
            raise ValueError(
                f'Unsupported mode, must be one of "connectivity", or "distance" but got "{mode}" instead'
            )
        n_q = ind.shape[0]
        counts = np.array([len(a) for a in ind], dtype=np.int64)
        indices = np.concatenate(list(ind)).astype(np.intp, copy=False) if n_q else np.empty(0, np.intp)
        if data is None:
            data = np.ones(len(indices))
        indptr = np.concatenate((np.zeros(1, dtype=np.int64), np.cumsum(counts)))
        return sp.csr_matrix((data, indices, indptr), shape=(n_q, self.n_samples_fit_))


class NearestNeighbors(_NeighborsBase):
    """Unsupervised learner for neighbor searches (exact, brute force).

    scikit-learn's :class:`sklearn.neighbors.NearestNeighbors` on the CPU
    backend or a GPU. Every numeric mode delivers ``identical``: neighbours
    and distances are the same bits on the CPU and on any GPU.

    Parameters
    ----------
    n_neighbors : int, default=5
    radius : float, default=1.0
    algorithm : {'auto', 'ball_tree', 'kd_tree', 'brute'}, default='auto'
        Every value runs the exact brute-force search (tree algorithms give
        the same exact neighbours, so the results are the same).
    leaf_size : int, default=30
        Accepted for compatibility; it has no effect on the brute-force search.
    metric : str, default='minkowski'
        'euclidean', 'sqeuclidean', 'manhattan', 'cosine', 'chebyshev',
        'minkowski' (with p) or 'precomputed'. Callables raise ValueError.
    p : float, default=2
    metric_params : dict, default=None
        Only ``{'p': value}`` is accepted.
    n_jobs : int, default=None
        CPU threads (-1: all cores); None follows :func:`twinlearn.set_n_threads`.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    effective_metric_ : str
    effective_metric_params_ : dict
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
    n_samples_fit_ : int

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.neighbors import NearestNeighbors
    >>> X = np.array([[0.0, 0.0], [0.0, 1.0], [2.0, 2.0]])
    >>> nn = NearestNeighbors(n_neighbors=2, device="cpu").fit(X)
    >>> nn.kneighbors([[0.0, 0.2]])
    (array([[0.2, 0.8]]), array([[0, 1]]))
    """

    _tl_native = (_metric_spec(radius="the radius of each query (radius_search's argument)"),)

    def __init__(self, *, n_neighbors=5, radius=1.0, algorithm="auto", leaf_size=30, metric="minkowski", p=2,
                 metric_params=None, n_jobs=None, device=None, numeric_mode=None):
        self.n_neighbors = n_neighbors
        self.radius = radius
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.metric = metric
        self.p = p
        self.metric_params = metric_params
        self.n_jobs = n_jobs
        self.device = device
        self.numeric_mode = numeric_mode

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y=None):
        """Fit the nearest neighbors estimator from the training dataset.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples) if metric='precomputed'
            NumPy arrays, or CuPy / PyTorch device arrays (kept on the device).
        y : Ignored

        Returns
        -------
        self : NearestNeighbors
        """
        return self._fit(X)


class _SupervisedNeighbors(_NeighborsBase):
    _parameter_constraints: dict = {
        **_NeighborsBase._parameter_constraints,
        "weights": [StrOptions({"uniform", "distance"}), callable, None],
    }
    _parameter_constraints.pop("radius")
    _tl_native = (_metric_spec(weights="the vote or average over the neighbours, in Python"),)

    def __init__(self, n_neighbors=5, *, weights="uniform", algorithm="auto", leaf_size=30, p=2,
                 metric="minkowski", metric_params=None, n_jobs=None, device=None, numeric_mode=None):
        self.n_neighbors = n_neighbors
        self.weights = weights
        self.algorithm = algorithm
        self.leaf_size = leaf_size
        self.p = p
        self.metric = metric
        self.metric_params = metric_params
        self.n_jobs = n_jobs
        self.device = device
        self.numeric_mode = numeric_mode

    def _check_Xy(self, X, y, *, y_finite=True, y_numeric=False):
        """(X, y) for fit: NumPy input validated together by scikit-learn,
        device X kept as it is (the search checks it) with y checked on the
        host under the same rules (numeric y keeps its dtype either way)."""
        y = _io.to_host(y)
        if _io.is_device_array(X):
            y = check_array(y, ensure_2d=False, dtype="numeric" if y_numeric else None,
                            ensure_all_finite=y_finite, input_name="y")
        else:
            X, y = _io.validate_host(self, X, y, accept_sparse=False, order="C", multi_output=True, y_numeric=y_numeric,
                                 dtype=np.float64 if self.metric == "precomputed" else [np.float64, np.float32])
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"Found input variables with inconsistent numbers of samples: [{X.shape[0]}, {y.shape[0]}]")
        return X, y

    def _neighbors_for_predict(self, X):
        if X is None:
            dist, ind = self.kneighbors(None, return_distance=True)
        else:
            dist, ind = self.kneighbors(_io.place(X, self._tl_device(X)), return_distance=True)
        return _io.to_numpy(dist), _io.to_numpy(ind)


class KNeighborsClassifier(DeviceScoreMixin, ClassifierMixin, _SupervisedNeighbors):
    """Classifier implementing the k-nearest neighbors vote (exact, brute force).

    scikit-learn's :class:`sklearn.neighbors.KNeighborsClassifier` on the CPU
    backend or a GPU. Neighbours are found as by :class:`NearestNeighbors`;
    the vote is scikit-learn's (ties between classes go to the smallest class).

    Parameters
    ----------
    n_neighbors : int, default=5
    weights : {'uniform', 'distance'}, default='uniform'
        A callable raises ValueError.
    algorithm : {'auto', 'ball_tree', 'kd_tree', 'brute'}, default='auto'
        All run the exact brute-force search.
    leaf_size : int, default=30
        Accepted for compatibility; no effect.
    p : float, default=2
    metric : str, default='minkowski'
    metric_params : dict, default=None
    n_jobs : int, default=None
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,) or list of such arrays
    effective_metric_ : str
    effective_metric_params_ : dict
    n_features_in_ : int
    n_samples_fit_ : int
    outputs_2d_ : bool

    Examples
    --------
    >>> from twinlearn.neighbors import KNeighborsClassifier
    >>> clf = KNeighborsClassifier(n_neighbors=3, device="cpu").fit([[0], [1], [2], [3]], [0, 0, 1, 1])
    >>> clf.predict([[1.1]])
    array([0])
    >>> clf.predict_proba([[0.9]])
    array([[0.66666667, 0.33333333]])
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_label = True
        return tags

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit the k-nearest neighbors classifier from the training dataset.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples) if metric='precomputed'
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        self : KNeighborsClassifier
        """
        X, y = self._check_Xy(X, y, y_finite=False)
        # Each output's (classes, codes), counted where its labels are integral
        # (and such labels pass scikit-learn's target check by construction).
        counted = [integral_classes(col) for col in y.reshape((y.shape[0], -1)).T]
        if any(c is None for c in counted):
            check_classification_targets(y)
        if y.ndim == 1 or (y.ndim == 2 and y.shape[1] == 1):
            if y.ndim != 1:
                warnings.warn(
                    "A column-vector y was passed when a 1d array was expected. Please change the shape of y to "
                    "(n_samples,), for example using ravel().",
                    DataConversionWarning,
                    stacklevel=2,
                )
            self.outputs_2d_ = False
            y = y.reshape((-1, 1))
        else:
            self.outputs_2d_ = True
        self.classes_ = []
        self._y = np.empty(y.shape, dtype=np.intp)
        for k in range(self._y.shape[1]):
            classes, self._y[:, k] = counted[k] if counted[k] is not None else np.unique(y[:, k], return_inverse=True)
            self.classes_.append(classes)
        if not self.outputs_2d_:
            self.classes_ = self.classes_[0]
            self._y = self._y.ravel()
        return self._fit(X, names_from_y_check=True)

    def _votes(self, X):
        dist, ind = self._neighbors_for_predict(X)
        w = _get_weights(dist, self.weights)
        _y = self._y if self._y.ndim == 2 else self._y.reshape((-1, 1))
        classes = self.classes_ if self.outputs_2d_ else [self.classes_]
        n_q = ind.shape[0]
        rows = np.repeat(np.arange(n_q), ind.shape[1])
        out = []
        for k, cls in enumerate(classes):
            votes = np.zeros((n_q, len(cls)))
            np.add.at(votes, (rows, _y[ind, k].ravel()), 1.0 if w is None else w.ravel())
            out.append(votes)
        return out

    def predict(self, X):
        """Predict the class labels for the provided data.

        Parameters
        ----------
        X : array-like of shape (n_queries, n_features), or (n_queries, n_indexed) if metric == 'precomputed', or None

        Returns
        -------
        y : array of shape (n_queries,) or (n_queries, n_outputs), the
            caller's array type when the classes are numeric
        """
        check_is_fitted(self, "_fit_method")
        classes = self.classes_ if self.outputs_2d_ else [self.classes_]
        votes = self._votes(X)
        y_pred = np.column_stack([cls[np.argmax(v, axis=1)] for cls, v in zip(classes, votes)])
        return y_pred.ravel() if not self.outputs_2d_ else y_pred

    def predict_proba(self, X):
        """Return probability estimates for the test data X.

        Returns
        -------
        p : array of shape (n_queries, n_classes), or a list of n_outputs such
            arrays, the caller's array type
        """
        check_is_fitted(self, "_fit_method")
        probs = []
        for votes in self._votes(X):
            norm = votes.sum(axis=1)[:, None]
            norm[norm == 0.0] = 1.0
            probs.append(votes / norm)
        return probs if self.outputs_2d_ else probs[0]


class KNeighborsRegressor(DeviceScoreMixin, RegressorMixin, _SupervisedNeighbors):
    """Regression based on k-nearest neighbors (exact, brute force).

    scikit-learn's :class:`sklearn.neighbors.KNeighborsRegressor` on the CPU
    backend or a GPU; parameters as :class:`KNeighborsClassifier`.

    Attributes
    ----------
    effective_metric_ : str
    effective_metric_params_ : dict
    n_features_in_ : int
    n_samples_fit_ : int

    Examples
    --------
    >>> from twinlearn.neighbors import KNeighborsRegressor
    >>> reg = KNeighborsRegressor(n_neighbors=2, device="cpu").fit([[0], [1], [2], [3]], [0, 0, 1, 1])
    >>> reg.predict([[1.5]])
    array([0.5])
    """

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.multi_output = True
        return tags

    @_fit_context(prefer_skip_nested_validation=False)
    def fit(self, X, y):
        """Fit the k-nearest neighbors regressor from the training dataset.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features), or (n_samples, n_samples) if metric='precomputed'
        y : array-like of shape (n_samples,) or (n_samples, n_outputs)

        Returns
        -------
        self : KNeighborsRegressor
        """
        X, y = self._check_Xy(X, y, y_numeric=True)
        self._y = np.asarray(y)
        return self._fit(X, names_from_y_check=True)

    def predict(self, X):
        """Predict the target for the provided data.

        Returns
        -------
        y : array of shape (n_queries,) or (n_queries, n_outputs), in y's dtype (float64 for integer y),
            the caller's array type
        """
        check_is_fitted(self, "_fit_method")
        dist, ind = self._neighbors_for_predict(X)
        w = _get_weights(dist, self.weights)
        _y = self._y.reshape((-1, 1)) if self._y.ndim == 1 else self._y
        if w is None:
            y_pred = np.mean(_y[ind], axis=1)
        else:
            num = np.sum(_y[ind] * w[:, :, None], axis=1)
            y_pred = num / np.sum(w, axis=1)[:, None]
        return y_pred.ravel() if self._y.ndim == 1 else y_pred
