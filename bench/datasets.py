"""Synthetic data, reproducible from (generator, scale, seed, dtype).

Every generator returns a :class:`Dataset`: named host arrays (``X``, and as the
workload needs ``y``, ``X_test``, ``y_test``, ``Q``, ``init``) that every
contender of a workload receives. Data is made once per workload and size, in
the requested dtype, never inside a timed region.
"""

from __future__ import annotations

import numpy as np

from .registry import Scale


class Dataset(dict):
    """Named host arrays, plus a cache of reference results (exact neighbours,
    float64 statistics...) that quality metrics share across contenders."""

    def __init__(self, arrays: dict):
        super().__init__(arrays)
        self._refs: dict = {}

    def reference(self, key: str, compute):
        if key not in self._refs:
            self._refs[key] = compute()
        return self._refs[key]

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.values() if isinstance(a, np.ndarray))


def held_out_rows(n: int) -> int:
    """Held-out rows for a training set of n rows: a tenth, within [100, 100k]."""
    return int(min(max(n // 10, 100), 100_000))


def _normal(rng, shape, dtype):
    return rng.standard_normal(shape, dtype=np.dtype(dtype).type)


def gaussian(scale: Scale, seed: int, dtype) -> Dataset:
    """Independent normal columns with different means and spreads."""
    rng = np.random.default_rng(seed)
    X = _normal(rng, (scale.rows, scale.cols), dtype)
    X *= np.exp(rng.uniform(-2.0, 2.0, scale.cols)).astype(dtype)
    X += rng.uniform(-10.0, 10.0, scale.cols).astype(dtype)
    return Dataset({"X": X})


def _blob_draws(rng, centers, n, dtype):
    X = centers[rng.integers(len(centers), size=n)]
    X += _normal(rng, X.shape, dtype)
    return X


def blobs(scale: Scale, seed: int, dtype) -> Dataset:
    """Overlapping Gaussian blobs (unit noise, centres spread by ``spread``), so
    that Lloyd's algorithm keeps moving for many iterations.

    extra: ``centers`` (number of blobs), optional ``n_queries`` (query rows Q
    drawn from the same blobs) and ``k`` (initial centres ``init``: k data rows).
    """
    rng = np.random.default_rng(seed)
    spread = float(scale.extra.get("spread", 1.5))
    centers = (_normal(rng, (scale.extra["centers"], scale.cols), dtype) * spread).astype(dtype)
    data = {"X": _blob_draws(rng, centers, scale.rows, dtype)}
    if "n_queries" in scale.extra:
        data["Q"] = _blob_draws(rng, centers, scale.extra["n_queries"], dtype)
    if "k" in scale.extra:
        pick = np.sort(rng.choice(scale.rows, size=scale.extra["k"], replace=False))
        data["init"] = np.ascontiguousarray(data["X"][pick])
    return Dataset(data)


def _split(X, y, n: int) -> Dataset:
    """The first n rows for training, the rest held out."""
    return Dataset({"X": X[:n], "y": y[:n], "X_test": X[n:], "y_test": y[n:]})


def regression(scale: Scale, seed: int, dtype) -> Dataset:
    """y = X w + 3 + noise (noise at a tenth of the signal), with a held-out set."""
    rng = np.random.default_rng(seed)
    n_test = held_out_rows(scale.rows)
    X = _normal(rng, (scale.rows + n_test, scale.cols), dtype)
    w = rng.standard_normal(scale.cols).astype(dtype)
    y = X @ w
    y += _normal(rng, y.shape, dtype) * dtype_cast(0.1 * np.sqrt(scale.cols), dtype)
    y += dtype_cast(3.0, dtype)
    return _split(X, y, scale.rows)


def classification(scale: Scale, seed: int, dtype) -> Dataset:
    """Binary labels (int32) from a noisy logistic model. With extra
    ``nonlinear=True`` the logit also has interactions and thresholds, which
    trees can learn and a linear model cannot (a HIGGS-like task)."""
    rng = np.random.default_rng(seed)
    n_test = held_out_rows(scale.rows)
    X = _normal(rng, (scale.rows + n_test, scale.cols), dtype)
    w = rng.standard_normal(scale.cols) / np.sqrt(scale.cols)
    logit = (X @ w.astype(dtype)).astype(np.float64)
    if scale.extra.get("nonlinear") and scale.cols >= 4:
        logit += 1.5 * np.sin(2.0 * X[:, 0] * X[:, 1]) + 1.0 * (np.abs(X[:, 2]) > 1.0) - 0.8 * (X[:, 3] > 0.5)
    logit *= 3.0
    y = (logit + rng.logistic(size=logit.shape) > 0).astype(np.int32)
    return _split(X, y, scale.rows)


#: Categories of the categorical columns of categorical_classification.
CATEGORY_COUNTS = (4, 32, 200)


def categorical_classification(scale: Scale, seed: int, dtype) -> Dataset:
    """Binary labels from numeric columns and, in the last len(CATEGORY_COUNTS)
    columns, category codes 0..m-1 (as floats) whose effects are random per
    category (at most 200 categories: scikit-learn's limit is 255)."""
    rng = np.random.default_rng(seed)
    n_test = held_out_rows(scale.rows)
    n = scale.rows + n_test
    n_num = scale.cols - len(CATEGORY_COUNTS)
    X = np.empty((n, scale.cols), dtype=dtype)
    X[:, :n_num] = _normal(rng, (n, n_num), dtype)
    logit = X[:, :n_num].astype(np.float64) @ (rng.standard_normal(n_num) / np.sqrt(n_num))
    for i, m in enumerate(CATEGORY_COUNTS):
        codes = rng.integers(0, m, n)
        X[:, n_num + i] = codes
        logit += rng.standard_normal(m)[codes]
    y = (2.0 * logit + rng.logistic(size=n) > 0).astype(np.int32)
    return _split(X, y, scale.rows)


def low_rank(scale: Scale, seed: int, dtype) -> Dataset:
    """Columns with a decaying spectrum under a random rotation (for PCA)."""
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((scale.cols, scale.cols)))
    spectrum = 1.0 / np.sqrt(1.0 + np.arange(scale.cols))
    basis = (spectrum[:, None] * q.T).astype(dtype)
    X = _normal(rng, (scale.rows, scale.cols), dtype) @ basis
    X += rng.uniform(-5.0, 5.0, scale.cols).astype(dtype)
    return Dataset({"X": X})


def dtype_cast(value: float, dtype):
    return np.dtype(dtype).type(value)


_cache: dict = {}


def load(generator, scale: Scale, seed: int, dtype) -> Dataset:
    """The dataset for (generator, scale, seed, dtype); the last two made are
    kept, so workloads on the same data (LinearRegression, Ridge) share it."""
    key = (generator, scale.key(), seed, str(dtype))
    if key not in _cache:
        while len(_cache) >= 2:
            _cache.pop(next(iter(_cache)))
        _cache[key] = generator(scale, seed, dtype)
    return _cache[key]


def clear_cache():
    _cache.clear()


def arima_series(scale: Scale, seed: int, dtype) -> Dataset:
    """``cols`` ARIMA(1, 1, 1) series of ``rows`` values each, one per column
    (ar drawn in [0.2, 0.8], ma in [-0.5, 0.5], unit shocks, 100 values of
    burn-in), for the batched ARIMA workloads."""
    rng = np.random.default_rng(seed)
    n, m, burn = scale.rows, scale.cols, 100
    ar = rng.uniform(0.2, 0.8, m)
    ma = rng.uniform(-0.5, 0.5, m)
    e = rng.standard_normal((n + burn, m))
    w = np.zeros((n + burn, m))
    for t in range(1, n + burn):
        w[t] = ar * w[t - 1] + e[t] + ma * e[t - 1]
    return Dataset({"X": np.ascontiguousarray(np.cumsum(w[burn:], axis=0), dtype=np.float64)})
