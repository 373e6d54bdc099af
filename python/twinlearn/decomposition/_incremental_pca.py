"""IncrementalPCA on the CPU and CUDA backends."""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.base import _fit_context
from sklearn.utils import gen_batches
from sklearn.utils._param_validation import Interval

from .._io import check_X, np_float_dtype
from ..base import TL_PARAMETER_CONSTRAINTS
from ..preprocessing._data import _merge_stats
from . import _solvers
from ._base import BasePCA, fit_input


class IncrementalPCA(BasePCA):
    """Incremental principal component analysis.

    scikit-learn's :class:`sklearn.decomposition.IncrementalPCA` on the CPU
    backend or a GPU. Each batch is processed on the backend: its column
    statistics (canonical order) and the Gram matrix of the centred batch.
    scikit-learn's update takes the SVD of the stacked matrix
    ``[diag(S) V; X_batch - mean_batch; mean correction]``; its right
    singular vectors and singular values are the eigenvectors and square
    roots of the eigenvalues of that matrix's Gram matrix,
    ``Vᵀ S² V + (X_batch - mean_batch)ᵀ (X_batch - mean_batch) + c cᵀ``, which
    is what is computed: the batch's Gram on the backend, the small sum and
    its eigendecomposition on the host in float64 (docs/NUMERICS.md,
    "Decompositions"): LAPACK and BLAS in ``deterministic`` and ``fast``
    mode, fixed-order code in ``identical`` mode (the cyclic Jacobi
    eigensolver and the canonical product: the same bits on every machine).
    Components follow scikit-learn's sign rule.

    Parameters
    ----------
    n_components : int or None, default=None
    whiten : bool, default=False
    copy : bool, default=True
        Accepted for compatibility; the input is never modified.
    batch_size : int or None, default=None
        Rows per batch in :meth:`fit` (None: 5 * n_features).
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None

    Attributes
    ----------
    components_ : ndarray of shape (n_components_, n_features)
    explained_variance_ : ndarray of shape (n_components_,)
    explained_variance_ratio_ : ndarray of shape (n_components_,)
    singular_values_ : ndarray of shape (n_components_,)
    mean_ : ndarray of shape (n_features,)
    var_ : ndarray of shape (n_features,)
    noise_variance_ : float
    n_components_ : int
    n_samples_seen_ : int
    batch_size_ : int
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn import IncrementalPCA
    >>> X = np.array([[-1, -1], [-2, -1], [-3, -2], [1, 1], [2, 1], [3, 2]])
    >>> ipca = IncrementalPCA(n_components=2, batch_size=3, device="cpu").fit(X)
    >>> ipca.explained_variance_ratio_.round(4)
    array([0.9924, 0.0076])
    """

    _parameter_constraints: dict = {
        "n_components": [Interval(Integral, 1, None, closed="left"), None],
        "whiten": ["boolean"],
        "copy": ["boolean"],
        "batch_size": [Interval(Integral, 1, None, closed="left"), None],
        **TL_PARAMETER_CONSTRAINTS,
    }

    def __init__(self, n_components=None, *, whiten=False, copy=True, batch_size=None, device=None,
                 numeric_mode=None):
        self.n_components = n_components
        self.whiten = whiten
        self.copy = copy
        self.batch_size = batch_size
        self.device = device
        self.numeric_mode = numeric_mode

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the model with X, in batches of batch_size rows.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NumPy arrays, or CuPy / PyTorch CUDA arrays (kept on their device).
        y : None
            Ignored.

        Returns
        -------
        self : object
        """
        self._tl_forget("components_", "n_samples_seen_", "mean_", "var_", "singular_values_", "explained_variance_",
                        "explained_variance_ratio_", "noise_variance_", "_tl_w", "_tl_fast")
        X, backend, device = fit_input(self, X, stage=False)
        n, d = X.shape
        self.batch_size_ = 5 * d if self.batch_size is None else self.batch_size
        for batch in gen_batches(n, self.batch_size_, min_batch_size=self.n_components or 0):
            self._partial_fit(backend, X[batch], device)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def partial_fit(self, X, y=None, check_input=True):
        """Update the model with the batch X.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.
        check_input : bool, default=True
            Accepted for compatibility; X is always checked.

        Returns
        -------
        self : object
        """
        self._tl_validate_params()
        first = not hasattr(self, "components_")
        device = self._tl_device(X)
        X = check_X(self, X, device, reset=first, for_fit=True, allow_nan=False)
        mod, ctx = self._tl_context(device, X)
        self._partial_fit(_solvers.Backend(mod, ctx, type(self).__name__), X, device)
        return self

    def _partial_fit(self, backend, X, device):
        X = backend.stage(X)
        n, d = X.shape
        first = not hasattr(self, "components_") or self.components_ is None
        if first:
            self.components_ = None
        if self.n_components is None:
            self.n_components_ = min(n, d) if self.components_ is None else self.components_.shape[0]
        elif not self.n_components <= d:
            raise ValueError(
                f"n_components={self.n_components!r} invalid for n_features={d}, need more rows than "
                "columns for IncrementalPCA processing"
            )
        elif self.n_components > n and first:
            raise ValueError(
                f"n_components={self.n_components} must be less or equal to the batch number of samples {n} "
                "for the first partial_fit call."
            )
        else:
            self.n_components_ = self.n_components
        if self.components_ is not None and self.components_.shape[0] != self.n_components_:
            raise ValueError(
                "Number of input features has changed from %i to %i between calls to partial_fit! Try "
                "setting n_components to a fixed value." % (self.components_.shape[0], self.n_components_)
            )
        dtype = np_float_dtype(X).type

        # The batch's statistics and its Gram matrix centred at its mean (the
        # Gram matrix of the stacked matrix of scikit-learn's update, below).
        count_b, mean_b, m2_b, G = backend.stats_with_gram(X, center=True)
        backend.record("batch_stats", np.stack([mean_b, m2_b]))
        if first:
            seen, w, mean, m2 = 0, count_b, mean_b, m2_b
        else:
            seen = int(self.n_samples_seen_)
            w, mean, m2 = _merge_stats(self._tl_w, self.mean_, self.var_ * self._tl_w, count_b, mean_b, m2_b)
        n_total = seen + n
        col_var = m2 / n_total

        backend.record("gram", G)
        rows = n
        if not first:
            SV = np.asarray(self.singular_values_, dtype=np.float64)[:, None] * np.asarray(
                self.components_, dtype=np.float64
            )
            correction = np.sqrt((seen / n_total) * n) * (self.mean_ - mean_b)
            G = G + _solvers.host_matmul(SV.T, SV, backend.exact_host) + np.outer(correction, correction)
            rows = SV.shape[0] + n + 1
        lam, V = _solvers.eigh_desc(0.5 * (G + G.T), owner=backend.tag, exact=backend.exact_host)
        r = min(rows, d)
        lam = np.where(lam[:r] < 0.0, 0.0, lam[:r])
        Vt = V[:, :r].T.copy()
        _solvers.svd_flip_rows(Vt)
        S = np.sqrt(lam)
        with np.errstate(divide="ignore", invalid="ignore"):
            explained_variance = lam / (n_total - 1)
            explained_variance_ratio = lam / np.sum(col_var * n_total)
        k = self.n_components_
        self.n_samples_seen_ = n_total
        self._tl_w = w
        self.components_ = np.ascontiguousarray(Vt[:k], dtype=dtype)
        self.singular_values_ = S[:k].astype(dtype)
        self.mean_ = mean
        self.var_ = col_var
        self.explained_variance_ = explained_variance[:k].astype(dtype)
        self.explained_variance_ratio_ = explained_variance_ratio[:k].astype(dtype)
        if k not in (n, d):
            with np.errstate(invalid="ignore"):
                self.noise_variance_ = dtype(explained_variance[k:].mean()) if r > k else dtype(np.nan)
        else:
            self.noise_variance_ = dtype(0.0)
        backend.check_overflow(X, "its singular values or variances overflow", self.components_,
                               self.explained_variance_, self.singular_values_,
                               find_nan=False)
        backend.record("components_", self.components_)
        # Across batches the weakest mode delivered counts.
        fast = getattr(self, "_tl_fast", False) and not first
        self._tl_fast = fast or backend.delivered == "fast"
        self._tl_record_fit(device, "fast" if self._tl_fast else "identical")
