"""PCA on the CPU and CUDA backends."""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np
from scipy import linalg
from sklearn.base import _fit_context
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions

from .._io import np_float_dtype
from ..base import TL_PARAMETER_CONSTRAINTS
from . import _solvers
from ._base import BasePCA, fit_input


def select_solver(svd_solver, n_samples, n_features, n_components):
    """scikit-learn's 'auto' policy; the solver a fit uses for `svd_solver`."""
    if svd_solver != "auto":
        return svd_solver
    if n_features <= 1_000 and n_samples >= 10 * n_features:
        return "covariance_eigh"
    if max(n_samples, n_features) <= 500 or n_components == "mle":
        return "full"
    if 1 <= n_components < 0.8 * min(n_samples, n_features):
        return "randomized"
    return "full"


class PCA(BasePCA):
    """Principal component analysis.

    scikit-learn's :class:`sklearn.decomposition.PCA` on the CPU backend or a
    GPU: the data are centred, reduced to their covariance (a Gram matrix) or
    projected (randomized solver) on the backend, the small eigen- or singular
    value problem that remains is solved on the host in float64, and
    transform is one product on the backend. Components follow scikit-learn's
    sign rule (each component's largest-magnitude loading is positive).

    Solvers (``svd_solver``):

    - ``'covariance_eigh'``: covariance ``(X - mean)ᵀ (X - mean) / (n - 1)``
      by the canonical Gram product, eigendecomposition on the host.
    - ``'full'``: the exact SVD of the centred data (centred on the backend,
      the SVD on the host in float64).
    - ``'randomized'``: Halko et al.'s randomized SVD with the project's
      random generator (``random_state`` seeds it; the same bits on every
      backend). When min(n_samples, n_features) is small the power
      iterations run on the Gram matrix of that side; otherwise on tall
      iterates on the backend, orthonormalized through their small Gram matrix.
    - ``'arpack'``: computed exactly, by ``'covariance_eigh'`` when
      n_samples >= n_features and by ``'full'`` otherwise, with ARPACK's
      constraints (``n_components < min(n_samples, n_features)``) and its
      attribute conventions; ``tol`` is met trivially.
    - ``'auto'``: scikit-learn's policy.

    In ``identical`` and ``deterministic`` mode every step that reads the
    data is canonical (the same bits on the CPU and any GPU) and the host
    solvers are shared by both backends, so the fitted attributes and the
    transform are the same bits on both (docs/NUMERICS.md, "Decompositions").
    The host steps (eigendecomposition, SVD, QR and small products) use
    LAPACK and BLAS in ``deterministic`` and ``fast`` mode; in ``identical``
    mode fixed-order code (a cyclic Jacobi eigensolver, a one-sided Jacobi
    SVD, a Householder QR, the canonical products), so the fit gives the same
    bits on every machine, whatever its CPU or BLAS (slower at large
    n_features: about 1.4 s for the 512 x 512 eigendecomposition).
    In ``fast`` mode on a GPU the products use cuBLAS.

    Parameters
    ----------
    n_components : int, float, 'mle' or None, default=None
        Number of components to keep (None: min(n_samples, n_features)); a
        float in (0, 1) keeps enough components to explain that fraction of
        the variance; 'mle' uses Minka's MLE (needs n_samples >= n_features).
    copy : bool, default=True
        Accepted for compatibility; the input is never modified.
    whiten : bool, default=False
        Scale the projections to unit variance.
    svd_solver : {'auto', 'full', 'covariance_eigh', 'arpack', 'randomized'}, default='auto'
    tol : float, default=0.0
        ARPACK's tolerance; the mapped solver is exact.
    iterated_power : int or 'auto', default='auto'
        Power iterations of the randomized solver ('auto': 7 when
        n_components < 0.1 * min(X.shape), else 4).
    n_oversamples : int, default=10
        Extra random directions of the randomized solver.
    power_iteration_normalizer : {'auto', 'QR', 'LU', 'none'}, default='auto'
        scikit-learn's choice of normalization between power iterations;
        every choice spans the same space, and here the iterates are always
        orthonormalized (QR of the small iterates on the host, or through
        the small Gram matrix of the tall ones), the most stable choice.
    random_state : int, RandomState instance or None, default=None
        Seed of the randomized solver's projection: an int is used as the
        generator's seed; None or a RandomState draws one.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
        Where to compute; None follows :func:`twinlearn.get_device`.
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None
        The numeric contract asked for; None follows
        :func:`twinlearn.get_numeric_mode`.

    Attributes
    ----------
    components_ : ndarray of shape (n_components_, n_features)
    explained_variance_ : ndarray of shape (n_components_,)
    explained_variance_ratio_ : ndarray of shape (n_components_,)
    singular_values_ : ndarray of shape (n_components_,)
    mean_ : ndarray of shape (n_features,)
    n_components_ : int
    n_samples_ : int
    noise_variance_ : float
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn import PCA
    >>> X = np.array([[-1, -1], [-2, -1], [-3, -2], [1, 1], [2, 1], [3, 2]])
    >>> pca = PCA(n_components=2, device="cpu").fit(X)
    >>> print(pca.explained_variance_ratio_.round(4))
    [0.9924 0.0076]
    >>> print(pca.singular_values_.round(5))
    [6.30061 0.5498 ]
    """

    _parameter_constraints: dict = {
        "n_components": [
            Interval(Integral, 0, None, closed="left"),
            Interval(RealNotInt, 0, 1, closed="neither"),
            StrOptions({"mle"}),
            None,
        ],
        "copy": ["boolean"],
        "whiten": ["boolean"],
        "svd_solver": [StrOptions({"auto", "full", "covariance_eigh", "arpack", "randomized"})],
        "tol": [Interval(Real, 0, None, closed="left")],
        "iterated_power": [StrOptions({"auto"}), Interval(Integral, 0, None, closed="left")],
        "n_oversamples": [Interval(Integral, 1, None, closed="left")],
        "power_iteration_normalizer": [StrOptions({"auto", "QR", "LU", "none"})],
        "random_state": ["random_state"],
        **TL_PARAMETER_CONSTRAINTS,
    }

    def __init__(
        self,
        n_components=None,
        *,
        copy=True,
        whiten=False,
        svd_solver="auto",
        tol=0.0,
        iterated_power="auto",
        n_oversamples=10,
        power_iteration_normalizer="auto",
        random_state=None,
        device=None,
        numeric_mode=None,
    ):
        self.n_components = n_components
        self.copy = copy
        self.whiten = whiten
        self.svd_solver = svd_solver
        self.tol = tol
        self.iterated_power = iterated_power
        self.n_oversamples = n_oversamples
        self.power_iteration_normalizer = power_iteration_normalizer
        self.random_state = random_state
        self.device = device
        self.numeric_mode = numeric_mode

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y=None):
        """Fit the model with X.

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
        self._fit(X)
        return self

    @_fit_context(prefer_skip_nested_validation=True)
    def fit_transform(self, X, y=None):
        """Fit the model with X and project X on the components.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : None
            Ignored.

        Returns
        -------
        X_new : array of shape (n_samples, n_components_), the caller's array type
        """
        Xc, backend = self._fit(X)
        return backend.result(self._transform_checked(backend, Xc))

    def _fit(self, X):
        X, backend, device = fit_input(self, X, finite_by_stats=True)
        n, d = X.shape
        n_components = self.n_components
        if n_components is None:
            n_components = min(n, d) - 1 if self.svd_solver == "arpack" else min(n, d)
        solver = select_solver(self.svd_solver, n, d, n_components)
        self._fit_svd_solver = solver
        dtype = np_float_dtype(X).type

        G = None
        if solver == "covariance_eigh":
            count, mean64, m2, G = backend.stats_with_gram(X, center=True)
        else:
            count, mean64, m2 = backend.column_stats(X, require_finite=True)
        mean = mean64.astype(dtype)
        backend.record("mean_", mean)
        if solver in ("full", "covariance_eigh"):
            self._fit_full(backend, X, n_components, solver, mean, G)
        else:
            self._fit_truncated(backend, X, n_components, solver, mean, m2)
        self.mean_ = mean
        self.n_samples_ = n
        self._cast(dtype)
        backend.check_overflow(X, "its singular values or variances overflow", self.components_,
                               self.explained_variance_, self.singular_values_,
                               find_nan=False)
        backend.record("components_", self.components_)
        backend.record("explained_variance_", self.explained_variance_)
        self._tl_record_fit(device, backend.delivered)
        return X, backend

    def _cast(self, dtype):
        self.components_ = np.ascontiguousarray(self.components_, dtype=dtype)
        self.explained_variance_ = np.asarray(self.explained_variance_, dtype=dtype)
        self.explained_variance_ratio_ = np.asarray(self.explained_variance_ratio_, dtype=dtype)
        self.singular_values_ = np.asarray(self.singular_values_, dtype=dtype)
        self.noise_variance_ = dtype(self.noise_variance_)

    # -- exact solvers: all min(n, d) components, then selection --------------

    def _fit_full(self, backend, X, n_components, solver, mean, G=None):
        n, d = X.shape
        if n_components == "mle":
            if n < d:
                raise ValueError("n_components='mle' is only supported if n_samples >= n_features")
        elif not 0 <= n_components <= min(n, d):
            raise ValueError(
                f"n_components={n_components} must be between 0 and "
                f"min(n_samples, n_features)={min(n, d)} with svd_solver={solver!r}"
            )
        with np.errstate(divide="ignore", invalid="ignore"):
            if solver == "full":
                S, Vt = self._full_svd(backend, X, mean)
                explained_variance = S**2 / (n - 1)
                total_var = explained_variance.sum()
            else:
                k_wanted = n_components if isinstance(n_components, Integral) else None
                explained_variance, Vt, total_var = self._covariance_eigh(backend, X, mean, k_wanted, G)
                S = np.sqrt(explained_variance * (n - 1))
            _solvers.svd_flip_rows(Vt)
            ratio = explained_variance / total_var

            if n_components == "mle":
                # Imported here: importing sklearn.decomposition pulls in most
                # of scikit-learn, which `import twinlearn` must not do.
                from sklearn.decomposition._pca import _infer_dimension

                n_components = int(_infer_dimension(explained_variance, n))
            elif 0 < n_components < 1.0:
                cumsum = np.cumsum(ratio)
                n_components = int(min(np.searchsorted(cumsum, n_components, side="right") + 1, len(ratio)))
            n_components = int(n_components)

            if n_components < min(n, d):
                if len(explained_variance) == n_components:  # only the top ones were computed
                    rest = max(total_var - explained_variance.sum(), 0.0)
                    self.noise_variance_ = rest / (d - n_components)
                else:
                    self.noise_variance_ = explained_variance[n_components:].mean()
            else:
                self.noise_variance_ = 0.0
        self.n_components_ = n_components
        self.components_ = Vt[:n_components]
        self.explained_variance_ = explained_variance[:n_components]
        self.explained_variance_ratio_ = ratio[:n_components]
        self.singular_values_ = S[:n_components]

    def _full_svd(self, backend, X, mean):
        """Singular values and right vectors of X - mean: centred on the
        backend (exactly as scikit-learn's X - mean_ in X's dtype), SVD on the
        host (LAPACK; in identical mode the fixed-order Jacobi SVD)."""
        Xc = np.asarray(backend.host(backend.center(X, mean)), dtype=np.float64)
        backend.record("centered", Xc)
        backend.check_overflow(X, "its mean or centred values overflow", Xc)
        try:
            _, S, Vt = _solvers.host_svd(Xc, backend.exact_host, compute_u=False, owner=backend.tag)
        except linalg.LinAlgError:
            # LAPACK fails to converge when the squares of finite values overflow.
            with np.errstate(over="ignore"):
                squares = np.square(np.max(np.abs(Xc))) * len(Xc)
            backend.check_overflow(X, "its squared values overflow", squares)
            raise
        return S, Vt

    def _covariance_eigh(self, backend, X, mean, k=None, G=None):
        """Eigenvalues (clipped at 0, descending) and eigenvectors (rows) of
        the covariance, and the total variance. With k, only the top k
        eigenpairs when that saves work (the total is then the trace).
        G: the Gram matrix of X centred at mean, when the caller has it."""
        n, d = X.shape
        if G is None:
            G = backend.gram(X, offset=mean)
        backend.record("gram", G)
        C = G / (n - 1)
        lam, V = backend.eigh_desc(C, k)
        lam = np.where(lam < 0.0, 0.0, lam)
        total = lam.sum() if len(lam) == d else max(np.trace(C), 0.0)
        return lam, V.T.copy(), total

    # -- truncated solvers: randomized, and arpack computed exactly ------------

    def _fit_truncated(self, backend, X, n_components, solver, mean, m2):
        n, d = X.shape
        if isinstance(n_components, str):
            raise ValueError(
                f"n_components={n_components!r} cannot be a string with svd_solver='{solver}'"
            )
        if not 1 <= n_components <= min(n, d):
            raise ValueError(
                f"n_components={n_components!r} must be between 1 and "
                f"min(n_samples, n_features)={min(n, d)!r} with svd_solver='{solver}'"
            )
        if solver == "arpack" and n_components == min(n, d):
            raise ValueError(
                f"n_components={n_components!r} must be strictly less than "
                f"min(n_samples, n_features)={min(n, d)!r} with svd_solver='{solver}'"
            )
        with np.errstate(divide="ignore", invalid="ignore"):
            total_var = m2.sum() / (n - 1)
            if solver == "arpack":
                if n >= d:
                    lam, Vt, _ = self._covariance_eigh(backend, X, mean, n_components)
                    S = np.sqrt(lam[:n_components] * (n - 1))
                    Vt = Vt[:n_components]
                else:
                    S, Vt = self._full_svd(backend, X, mean)
                    S, Vt = S[:n_components], Vt[:n_components]
            else:
                seed = _solvers.seed_from(self.random_state)
                n_iter = _solvers.auto_n_iter(self.iterated_power, n_components, n, d)
                Vt, S = self._randomized(backend, X, mean, n_components, n_iter, seed)
            _solvers.svd_flip_rows(Vt)
            self.n_components_ = int(n_components)
            self.components_ = Vt
            self.explained_variance_ = S**2 / (n - 1)
            self.explained_variance_ratio_ = self.explained_variance_ / total_var
            self.singular_values_ = S
            if n_components < min(n, d):
                self.noise_variance_ = (total_var - self.explained_variance_.sum()) / (min(n, d) - n_components)
            else:
                self.noise_variance_ = 0.0

    def _randomized(self, backend, X, mean, k, n_iter, seed):
        n, d = X.shape
        p = self.n_oversamples
        if not _solvers.use_gram_route(n, d, k, p, n_iter):
            side, G, A = "tall", None, backend.center(X, mean)
        elif n >= d:
            side, G, A = "right", backend.gram(X, offset=mean), X
        else:
            A = backend.center(X, mean)
            side, G = "left", backend.check_overflow(X, "its Gram matrix overflows", np.asarray(
                backend.host(backend.matmul(A, False, A, True, like=np.empty(0))), dtype=np.float64))
        if G is not None:
            backend.record("gram", G)
        Vt, S = _solvers.randomized_right(
            backend, A, G, side, k, p, n_iter, seed
        )
        if len(S) < k:  # data of rank below k: zero singular values, orthogonal directions
            Vt = _solvers.complete_rows(Vt, k, seed, offset=(k + p) * max(n, d), exact=backend.exact_host)
            S = np.concatenate([S, np.zeros(k - len(S))])
        return Vt, S
