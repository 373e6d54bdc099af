"""Hostile data: the inputs where numeric rules and input checks are tested.

Every function draws from ``numpy.random.default_rng(seed)``, so a fixture is
the same array on every run and machine.
"""

from __future__ import annotations

import numpy as np

#: Row counts that are not multiples of any chunk, block or warp size.
ODD_SIZES = (1, 7, 33, 1025)


def _rng(seed):
    return np.random.default_rng(seed)


def dense(n=64, d=5, *, dtype=np.float64, seed=0):
    """Well-scaled normal data with features of different scales and offsets."""
    rng = _rng(seed)
    return (rng.standard_normal((n, d)) * rng.uniform(0.5, 3.0, d) + rng.uniform(-2.0, 2.0, d)).astype(dtype)


def regression(n=64, d=5, *, dtype=np.float64, seed=0, n_targets=None):
    """(X, y): a linear target of the first features plus noise."""
    X = dense(n, d, dtype=dtype, seed=seed)
    rng = _rng(seed + 1)
    w = rng.standard_normal((d,) if n_targets is None else (d, n_targets))
    y = X @ w + 0.1 * rng.standard_normal((n,) if n_targets is None else (n, n_targets))
    return X, y.astype(dtype)


def classification(n=64, d=5, *, n_classes=3, dtype=np.float64, seed=0):
    """(X, y): integer labels 0..n_classes-1 from a linear score, every class present."""
    X = dense(n, d, dtype=dtype, seed=seed)
    score = X[:, 0] + 0.5 * X[:, min(1, d - 1)]
    edges = np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])
    y = np.searchsorted(edges, score).astype(np.int64)
    y[:n_classes] = np.arange(min(n, n_classes))[: min(n, n_classes)]
    return X, y


def ties(n=64, d=5, *, levels=3, dtype=np.float64, seed=0):
    """Values on a few levels only: equal distances, equal split gains, equal
    order statistics everywhere (the tie rules decide)."""
    return _rng(seed).integers(0, levels, (n, d)).astype(dtype)


def duplicate_rows(n=64, d=5, *, dtype=np.float64, seed=0):
    """Every row twice, the copies interleaved (row 2i and 2i+1 are equal)."""
    X = dense((n + 1) // 2, d, dtype=dtype, seed=seed)
    return np.repeat(X, 2, axis=0)[:n]


def signed_zeros(n=64, d=5, *, dtype=np.float64, seed=0):
    """Data where half the zeros are -0.0 (sums, minima and signs of zero matter)."""
    rng = _rng(seed)
    X = dense(n, d, dtype=dtype, seed=seed)
    X[rng.random((n, d)) < 0.3] = 0.0
    neg = (X == 0) & (rng.random((n, d)) < 0.5)
    X[neg] = -0.0
    return X


def denormals(n=64, d=5, *, dtype=np.float64, seed=0):
    """Data with subnormal values beside normal ones (flush-to-zero changes the bits)."""
    rng = _rng(seed)
    X = dense(n, d, dtype=dtype, seed=seed)
    tiny = np.finfo(dtype).smallest_subnormal
    mask = rng.random((n, d)) < 0.2
    X[mask] = (tiny * rng.integers(1, 1000, mask.sum())).astype(dtype) * np.where(rng.random(mask.sum()) < 0.5, -1, 1)
    return X


def wide(n=7, d=200, *, dtype=np.float64, seed=0):
    """More features than rows."""
    return dense(n, d, dtype=dtype, seed=seed)


def with_nonfinite(X, *, nan=0.0, inf=0.0, seed=0):
    """A copy of X with a share `nan` of NaNs and a share `inf` of ±inf (at least
    one of each asked for)."""
    X = np.array(X, dtype=np.result_type(X, np.float32), copy=True)
    rng = _rng(seed)
    flat = X.reshape(-1)
    for share, value in ((nan, np.nan), (inf, np.inf)):
        if share:
            k = max(1, int(share * flat.size))
            idx = rng.choice(flat.size, k, replace=False)
            flat[idx] = value * (np.where(rng.random(k) < 0.5, -1, 1) if value == np.inf else 1)
    return X


def hostile(n=64, d=5, *, dtype=np.float64, seed=0):
    """One matrix with all the finite hazards: ties, duplicate rows, ±0 and
    subnormals beside large and small normal values."""
    X = dense(n, d, dtype=dtype, seed=seed)
    X[: n // 4] = ties(n // 4, d, dtype=dtype, seed=seed + 1)
    half = n // 2
    X[half: half + n // 8] = X[: n // 8]
    X = np.where(signed_zeros(n, d, dtype=dtype, seed=seed + 2) == 0, signed_zeros(n, d, dtype=dtype, seed=seed + 2), X)
    mask = _rng(seed + 3).random((n, d)) < 0.05
    X[mask] = denormals(n, d, dtype=dtype, seed=seed + 3)[mask]
    return X.astype(dtype)


CASES = {
    "dense": dense,
    "ties": ties,
    "duplicate_rows": duplicate_rows,
    "signed_zeros": signed_zeros,
    "denormals": denormals,
    "hostile": hostile,
}
"""Name → fixture of every finite hostile matrix (``fixture(n, d, dtype=..., seed=...)``)."""
