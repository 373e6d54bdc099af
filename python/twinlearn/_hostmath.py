"""Host arithmetic with the same bits on any CPU, for identical mode.

NumPy's matrix products and SciPy's factorizations call BLAS/LAPACK, whose
kernels (chosen per CPU model) sum in different orders, so their bits differ
between machines. The functions here use only elementwise IEEE operations
(each correctly rounded, whatever the SIMD width) in a fixed order, so they
give the same bits on every CPU. They cost more than BLAS: estimators use
them for the small host-side steps of identical mode only.
"""

from __future__ import annotations

import math

import numpy as np


def matmul(A, B):
    """A @ B (float64), summed over the inner index in increasing order."""
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"matmul: shapes {A.shape} and {B.shape} do not align")
    out = np.zeros((A.shape[0], B.shape[1]))
    for j in range(A.shape[1]):
        out += A[:, j : j + 1] * B[j : j + 1, :]
    return out


def row_sums(A):
    """The sum of each row of A, its columns added left to right."""
    A = np.asarray(A, dtype=np.float64)
    out = np.zeros(A.shape[0])
    for j in range(A.shape[1]):
        out += A[:, j]
    return out


def cholesky(M):
    """The lower Cholesky factor of the symmetric matrix M (right-looking,
    one column at a time), or None when M is not positive definite."""
    A = np.array(M, dtype=np.float64, copy=True)
    n = A.shape[0]
    L = np.zeros_like(A)
    for j in range(n):
        pivot = A[j, j]
        if not pivot > 0.0 or not math.isfinite(pivot):
            return None
        d = math.sqrt(pivot)
        L[j, j] = d
        col = A[j + 1 :, j] / d
        L[j + 1 :, j] = col
        A[j + 1 :, j + 1 :] -= np.multiply.outer(col, col)
    return L


def spd_inverse(L):
    """M⁻¹ from M's Cholesky factor L: L⁻¹ by forward substitution, then L⁻ᵀL⁻¹."""
    n = L.shape[0]
    Y = np.eye(n)
    for p in range(n):
        Y[p] /= L[p, p]
        Y[p + 1 :] -= np.multiply.outer(L[p + 1 :, p], Y[p])
    return matmul(Y.T, Y)


def logdet_from_cholesky(L):
    """log det M from M's Cholesky factor: 2 Σ log L[i, i], added in order."""
    total = 0.0
    for v in np.diag(L):
        total += math.log(float(v))
    return 2.0 * total
