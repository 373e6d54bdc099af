"""Kernel matrices, their gradients and the dense solves of Gaussian-process
regression on twinlearn's backends.

:func:`evaluate` walks a scikit-learn kernel: the kernels of
:data:`NATIVE` are computed here, in scikit-learn's formulas, from
twinlearn's distance and product kernels (:class:`Ops`: the backend of the
estimator's device) and the project's own exp, log, sin, cos and pow, with
the remaining steps single IEEE operations on NumPy arrays (one rounding
each, never fused). Any other kernel is evaluated by its own ``__call__``.
:class:`Solver` holds the linear algebra: the fixed-order host Cholesky and
solves of tl::gp with canonical sums (deterministic and identical mode), or
LAPACK (fast mode on the CPU) and cuSOLVER (fast mode on a GPU).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg
from sklearn.gaussian_process import kernels as K

from .. import _backend
from .._config import get_n_threads
from .._hostmath import row_sums
from ..metrics._pairwise import metric_struct

#: log(2 pi), the constant of the Gaussian log-likelihood (as a literal: no
#: libm call).
LOG_2PI = 1.8378770664093453
_MATERN_NU = (0.5, 1.5, 2.5, np.inf)


def foreign_kernel(kernel):
    """The first part of `kernel` twinlearn does not compute, or None."""
    t = type(kernel)
    if t in (K.Sum, K.Product):
        return foreign_kernel(kernel.k1) or foreign_kernel(kernel.k2)
    if t is K.Exponentiation:
        return foreign_kernel(kernel.kernel)
    if t is K.Matern:
        return None if kernel.nu in _MATERN_NU else kernel
    if t is K.RationalQuadratic:
        return None if np.ndim(kernel.length_scale) == 0 else kernel
    if t in (K.ConstantKernel, K.WhiteKernel, K.DotProduct, K.ExpSineSquared):
        scalars = [getattr(kernel, h.name) for h in kernel.hyperparameters]
        return None if all(np.ndim(v) == 0 for v in scalars) else kernel
    if t is K.RBF:
        return None
    return kernel


class Ops:
    """The elementwise functions and matrix kernels of one backend, on
    float64 host arrays (a GPU backend copies them in and out)."""

    def __init__(self, mod, ctx):
        self.mod, self.ctx = mod, ctx

    def dist(self, X, Y, metric):
        D = np.empty((X.shape[0], Y.shape[0]))
        self.mod.pairwise_distances(self.ctx, np.ascontiguousarray(X), np.ascontiguousarray(Y),
                                    metric_struct(self.mod, metric, 2.0, direct=True), D)
        return D

    def fn(self, name, A):
        A = np.ascontiguousarray(A, dtype=np.float64)
        out = np.empty_like(A)
        if A.size:
            self.mod.math_apply(self.ctx, name, A.reshape(-1), out.reshape(-1))
        return out

    def pow(self, A, p):
        A = np.ascontiguousarray(A, dtype=np.float64)
        out = np.empty_like(A)
        if A.size:
            self.mod.math_pow(self.ctx, A.reshape(-1), np.full(A.size, float(p)), out.reshape(-1))
        return out

    def inner(self, X, Y):
        out = np.empty((X.shape[0], Y.shape[0]))
        self.mod.gemm(self.ctx, np.ascontiguousarray(X), np.ascontiguousarray(Y), True, out)
        return out


def _empty_gradient(n):
    return np.empty((n, n, 0))


def _sum_last(D):
    """D summed over its last axis, the terms added in increasing index."""
    out = D[..., 0].copy()
    for j in range(1, D.shape[-1]):
        out += D[..., j]
    return out


def _sq_diffs(X, ls):
    return (X[:, np.newaxis, :] - X[np.newaxis, :, :]) ** 2 / (ls**2)


def _rbf(k, X, Y, grad, ops):
    ls = K._check_length_scale(X, k.length_scale)
    D = ops.dist(X / ls, (X if Y is None else Y) / ls, "sqeuclidean")
    Km = ops.fn("exp", -0.5 * D)
    if Y is None:
        np.fill_diagonal(Km, 1)
    if not grad:
        return Km
    if k.hyperparameter_length_scale.fixed:
        return Km, _empty_gradient(X.shape[0])
    if np.ndim(ls) == 0:
        return Km, (Km * D)[:, :, np.newaxis]
    G = _sq_diffs(X, ls)
    G *= Km[..., np.newaxis]
    return Km, G


def _matern(k, X, Y, grad, ops):
    ls = K._check_length_scale(X, k.length_scale)
    D = ops.dist(X / ls, (X if Y is None else Y) / ls, "euclidean")
    nu = k.nu
    if nu == 0.5:
        Km = ops.fn("exp", -D)
    elif nu == 1.5:
        T = D * math.sqrt(3)
        Km = (1.0 + T) * ops.fn("exp", -T)
    elif nu == 2.5:
        T = D * math.sqrt(5)
        Km = (1.0 + T + T**2 / 3.0) * ops.fn("exp", -T)
    else:
        Km = ops.fn("exp", -(D**2) / 2.0)
    if Y is None:
        np.fill_diagonal(Km, 1)
    if not grad:
        return Km
    if k.hyperparameter_length_scale.fixed:
        return Km, _empty_gradient(X.shape[0])
    Dg = _sq_diffs(X, ls) if np.ndim(ls) > 0 else (D**2)[:, :, np.newaxis]
    if nu == 0.5:
        den = np.sqrt(_sum_last(Dg))[:, :, np.newaxis]
        div = np.zeros_like(Dg)
        np.divide(Dg, den, out=div, where=den != 0)
        G = Km[..., np.newaxis] * div
    elif nu == 1.5:
        G = 3 * Dg * ops.fn("exp", -np.sqrt(3 * _sum_last(Dg)))[..., np.newaxis]
    elif nu == 2.5:
        tmp = np.sqrt(5 * _sum_last(Dg))[..., np.newaxis]
        G = 5.0 / 3.0 * Dg * (tmp + 1) * ops.fn("exp", -tmp)
    else:
        G = Dg * Km[..., np.newaxis]
    return Km, G


def _rational_quadratic(k, X, Y, grad, ops):
    ls, a = float(k.length_scale), float(k.alpha)
    D = ops.dist(X, X if Y is None else Y, "sqeuclidean")
    base = 1 + D / (2 * a * (ls * ls))
    Km = ops.pow(base, -a)
    if Y is None:
        np.fill_diagonal(Km, 1)
    if not grad:
        return Km
    n = X.shape[0]
    g_ls = (D * Km / ((ls * ls) * base))[..., np.newaxis] if not k.hyperparameter_length_scale.fixed \
        else _empty_gradient(n)
    if not k.hyperparameter_alpha.fixed:
        g_a = (Km * (-a * ops.fn("log", base) + D / (2 * (ls * ls) * base)))[..., np.newaxis]
    else:
        g_a = _empty_gradient(n)
    return Km, np.dstack((g_a, g_ls))


def _exp_sine_squared(k, X, Y, grad, ops):
    ls, p = float(k.length_scale), float(k.periodicity)
    D = ops.dist(X, X if Y is None else Y, "euclidean")
    arg = np.pi * D / p
    s = ops.fn("sin", arg)
    Km = ops.fn("exp", -2 * (s / ls) ** 2)
    if not grad:
        return Km
    n = X.shape[0]
    c = ops.fn("cos", arg)
    g_ls = (4 / (ls * ls) * s**2 * Km)[..., np.newaxis] if not k.hyperparameter_length_scale.fixed \
        else _empty_gradient(n)
    g_p = (4 * arg / (ls * ls) * c * s * Km)[..., np.newaxis] if not k.hyperparameter_periodicity.fixed \
        else _empty_gradient(n)
    return Km, np.dstack((g_ls, g_p))


def _dot_product(k, X, Y, grad, ops):
    s0 = float(k.sigma_0)
    Km = ops.inner(X, X if Y is None else Y) + s0 * s0
    if not grad:
        return Km
    if k.hyperparameter_sigma_0.fixed:
        return Km, _empty_gradient(X.shape[0])
    return Km, np.full((X.shape[0], X.shape[0], 1), 2 * (s0 * s0))


def _white(k, X, Y, grad, ops):
    noise = float(k.noise_level)
    if Y is not None:
        return np.zeros((X.shape[0], Y.shape[0]))
    Km = noise * np.eye(X.shape[0])
    if not grad:
        return Km
    if k.hyperparameter_noise_level.fixed:
        return Km, _empty_gradient(X.shape[0])
    return Km, noise * np.eye(X.shape[0])[:, :, np.newaxis]


def _constant(k, X, Y, grad, ops):
    c = float(k.constant_value)
    Km = np.full((X.shape[0], X.shape[0] if Y is None else Y.shape[0]), c)
    if not grad:
        return Km
    if k.hyperparameter_constant_value.fixed:
        return Km, _empty_gradient(X.shape[0])
    return Km, np.full((X.shape[0], X.shape[0], 1), c)


def _sum(k, X, Y, grad, ops):
    a, b = evaluate(k.k1, X, Y, grad, ops), evaluate(k.k2, X, Y, grad, ops)
    if not grad:
        return a + b
    return a[0] + b[0], np.dstack((a[1], b[1]))


def _product(k, X, Y, grad, ops):
    a, b = evaluate(k.k1, X, Y, grad, ops), evaluate(k.k2, X, Y, grad, ops)
    if not grad:
        return a * b
    return a[0] * b[0], np.dstack((a[1] * b[0][:, :, np.newaxis], b[1] * a[0][:, :, np.newaxis]))


def _exponentiation(k, X, Y, grad, ops):
    e = float(k.exponent)
    r = evaluate(k.kernel, X, Y, grad, ops)
    if not grad:
        return ops.pow(r, e)
    Km, G = r
    G = G * (e * ops.pow(Km, e - 1)[:, :, np.newaxis])
    return ops.pow(Km, e), G


_EVALUATORS = {
    K.RBF: _rbf,
    K.Matern: _matern,
    K.RationalQuadratic: _rational_quadratic,
    K.ExpSineSquared: _exp_sine_squared,
    K.DotProduct: _dot_product,
    K.WhiteKernel: _white,
    K.ConstantKernel: _constant,
    K.Sum: _sum,
    K.Product: _product,
    K.Exponentiation: _exponentiation,
}


def evaluate(kernel, X, Y=None, eval_gradient=False, ops=None):
    """``kernel(X, Y, eval_gradient)`` with twinlearn's backends where
    twinlearn computes the kernel (X, Y: float64 host matrices), else the
    kernel's own call. Returns K, or (K, K_gradient)."""
    if eval_gradient and Y is not None:
        raise ValueError("Gradient can only be evaluated when Y is None.")
    fn = _EVALUATORS.get(type(kernel))
    if fn is None or ops is None or (type(kernel) not in (K.Sum, K.Product, K.Exponentiation)
                                      and foreign_kernel(kernel) is not None):
        return kernel(X, Y, eval_gradient=eval_gradient) if eval_gradient else kernel(X, Y)
    if np.ndim(X) == 1:
        X = X.reshape(-1, 1)
    return fn(kernel, X, Y, eval_gradient, ops)


def diag(kernel, X, ops=None):
    """``kernel.diag(X)``, computed as :func:`evaluate` computes the kernel."""
    t = type(kernel)
    if ops is None or (t not in (K.Sum, K.Product, K.Exponentiation) and foreign_kernel(kernel) is not None) \
            or t not in _EVALUATORS:
        return kernel.diag(X)
    n = X.shape[0]
    if t in (K.RBF, K.Matern, K.RationalQuadratic, K.ExpSineSquared):
        return np.ones(n)
    if t is K.DotProduct:
        s0 = float(kernel.sigma_0)
        return row_sums(X * X) + s0 * s0
    if t is K.WhiteKernel:
        return np.full(n, float(kernel.noise_level))
    if t is K.ConstantKernel:
        return np.full(n, float(kernel.constant_value))
    if t is K.Sum:
        return diag(kernel.k1, X, ops) + diag(kernel.k2, X, ops)
    if t is K.Product:
        return diag(kernel.k1, X, ops) * diag(kernel.k2, X, ops)
    return ops.pow(diag(kernel.kernel, X, ops), float(kernel.exponent))


class Solver:
    """The dense linear algebra of one fit or prediction.

    The factor is U, upper triangular (K = Uᵀ U; scikit-learn's L_ = Uᵀ).
    ``fast`` on the CPU: LAPACK through SciPy and NumPy's products and sums,
    as scikit-learn. Otherwise tl::gp (fixed-order host factorization and
    solves; cuSOLVER in fast mode on a GPU) with the canonical GEMM, dot
    products and column sums of the host backend.
    """

    def __init__(self, mod, ctx, mode, device):
        self.mod, self.ctx = mod, ctx
        self.lapack = mode == "fast" and device == "cpu"
        self.canonical = mode != "fast"
        core = _backend.core()
        self.host_mod = core
        self.host_ctx = core.Context("cpu", get_n_threads(), mode, 0, 0)

    def factor(self, A):
        """U with A = Uᵀ U (A is overwritten), or None when A is not positive definite."""
        if self.lapack:
            try:
                return scipy.linalg.cholesky(A, lower=False, check_finite=False, overwrite_a=True)
            except np.linalg.LinAlgError:
                return None
        A = np.ascontiguousarray(A, dtype=np.float64)
        if not np.isfinite(A).all():
            return None
        return A if self.mod.gp_cholesky(self.ctx, A) else None

    def cho_solve(self, U, B):
        """(Uᵀ U)⁻¹ B (B: n or n x m)."""
        if self.lapack:
            return scipy.linalg.cho_solve((U, False), B, check_finite=False)
        X = np.array(B, dtype=np.float64, order="C", copy=True)
        self.mod.gp_cho_solve(self.ctx, U, X.reshape(X.shape[0], -1))
        return X

    def inverse(self, U):
        if self.lapack:
            return scipy.linalg.cho_solve((U, False), np.eye(U.shape[0]), check_finite=False)
        out = np.empty_like(U)
        self.mod.gp_cho_inverse(self.ctx, U, out)
        return out

    def solve_lower(self, U, B):
        """U⁻ᵀ B = L⁻¹ B."""
        if self.lapack:
            return scipy.linalg.solve_triangular(U, B, trans="T", lower=False, check_finite=False)
        X = np.array(B, dtype=np.float64, order="C", copy=True)
        self.mod.gp_solve_lower(self.ctx, U, X)
        return X

    def dot(self, a, b):
        """Σ a ⊙ b over every entry (canonical order unless fast)."""
        a = np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
        b = np.ascontiguousarray(b, dtype=np.float64).reshape(-1)
        if not self.canonical:
            return float(a @ b)
        return float(self.host_mod.reduce_dot(self.host_ctx, a, b))

    def total(self, a):
        a = np.ascontiguousarray(a, dtype=np.float64).reshape(-1)
        if not self.canonical:
            return float(a.sum())
        return float(self.host_mod.reduce_sum(self.host_ctx, a))

    def column_sums(self, A):
        if not self.canonical:
            return A.sum(axis=0)
        return np.asarray(self.host_mod.column_sums(self.host_ctx, np.ascontiguousarray(A)), dtype=np.float64)

    def matmul(self, A, B, ops):
        """A @ B (B: n or n x m); the canonical GEMM of `ops`' backend unless fast on the CPU."""
        if self.lapack:
            return A @ B
        B2 = B.reshape(B.shape[0], -1)
        out = ops.inner(A, np.ascontiguousarray(B2.T))
        return out.reshape(A.shape[0]) if B.ndim == 1 else out

    def gram_t(self, V, ops):
        """Vᵀ V."""
        if self.lapack:
            return V.T @ V
        Vt = np.ascontiguousarray(V.T)
        return ops.inner(Vt, Vt)
