"""Quality metrics, computed on the host in float64 from a contender's outputs.

Each metric takes an :class:`Evaluation` and returns ``{name: value}``; the
workload's :class:`bench.registry.Quality` says which value is shown in tables.
Reference results (float64 statistics, exact neighbours) are computed once per
dataset and shared by all contenders.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .arrays import to_host
from .registry import Quality

#: Rows per block when a metric walks a large matrix in float64.
_BLOCK = 1 << 16
#: Row-wise metrics look at most this many rows: beyond it, an evenly strided
#: sample (the same rows for every contender), so that checking quality does
#: not dominate a large benchmark.
QUALITY_ROWS = 1 << 18
_SAMPLED = f"(at most {QUALITY_ROWS:,} evenly spaced rows)"


def _sample(n: int) -> slice:
    return slice(0, n, max(1, -(-n // QUALITY_ROWS)))


class HostOutputs(Mapping):
    """A contender's outputs (step method -> output, wherever it lives) read
    as NumPy: each is copied to the host on first use; ``rows(key, sl)``
    copies only the rows `sl` of one (a metric that samples rows of a large
    device output moves the sample, not the whole matrix)."""

    def __init__(self, raw: Mapping):
        self._raw = raw
        self._host: dict = {}

    def __getitem__(self, key):
        if key not in self._host:
            self._host[key] = to_host(self._raw[key])
        return self._host[key]

    def rows(self, key, sl: slice) -> np.ndarray:
        if key in self._host:
            return self._host[key][sl]
        return to_host(self._raw[key][sl])

    def __iter__(self):
        return iter(self._raw)

    def __len__(self):
        return len(self._raw)


@dataclass
class Evaluation:
    data: Any  # the host Dataset
    outputs: Mapping  # step method -> output; read as NumPy (wrapped in HostOutputs)
    model: Any  # the fitted estimator of the last run
    call: Callable[..., Any]  # call("predict", "X_test") -> host output, untimed

    def __post_init__(self):
        if not isinstance(self.outputs, HostOutputs):
            self.outputs = HostOutputs(self.outputs)

    def attr(self, name: str) -> np.ndarray:
        return np.asarray(to_host(getattr(self.model, name)), dtype=np.float64)


def _blocks(n: int):
    for start in range(0, n, _BLOCK):
        yield slice(start, min(start + _BLOCK, n))


# -- scalers ---------------------------------------------------------------
def _column_stats64(X):
    n = X.shape[0]
    s = np.zeros(X.shape[1])
    for b in _blocks(n):
        s += X[b].sum(axis=0, dtype=np.float64)
    mean = s / n
    m2 = np.zeros(X.shape[1])
    for b in _blocks(n):
        m2 += ((X[b].astype(np.float64) - mean) ** 2).sum(axis=0)
    return mean, m2 / n


def _standard_reference(X):
    mean, var = _column_stats64(X)
    std = np.sqrt(var)
    std[std == 0] = 1.0
    return mean, std


def _minmax_reference(X):
    lo = np.min(X, axis=0).astype(np.float64)
    span = np.max(X, axis=0).astype(np.float64) - lo
    span[span == 0] = 1.0
    return lo, span


def _maxabs_reference(X):
    scale = np.zeros(X.shape[1])
    for b in _blocks(X.shape[0]):
        scale = np.maximum(scale, np.abs(X[b]).max(axis=0).astype(np.float64))
    scale[scale == 0] = 1.0
    return np.zeros(X.shape[1]), scale


def _robust_reference(X):
    q25, q50, q75 = np.percentile(X, [25.0, 50.0, 75.0], axis=0)  # exact, linear interpolation
    span = q75.astype(np.float64) - q25
    span[span == 0] = 1.0
    return q50.astype(np.float64), span


def _row_unit(x):
    norm = np.sqrt((x**2).sum(axis=1))
    norm[norm == 0] = 1.0
    return x / norm[:, None]


def _max_abs_error(ev: Evaluation, key: str | None, reference=None, rowwise=None):
    """max |output - reference| over the sampled rows: the reference is
    ``(x - shift) / div`` with column statistics of all rows (``reference``),
    or ``rowwise(x)`` for transforms of each row on its own."""
    X = ev.data["X"]
    if rowwise is None:
        shift, div = ev.data.reference(key, lambda: reference(X))  # statistics of all rows
        rowwise = lambda x: (x - shift) / div  # noqa: E731
    rows = _sample(X.shape[0])
    X, out = X[rows], ev.outputs.rows("fit_transform", rows)
    err = 0.0
    for b in _blocks(X.shape[0]):
        ref = rowwise(X[b].astype(np.float64))
        err = max(err, float(np.max(np.abs(out[b].astype(np.float64) - ref))))
    return {"max_abs_error": err}


def standardized_error(ev: Evaluation) -> dict:
    return _max_abs_error(ev, "standard64", _standard_reference)


def minmax_error(ev: Evaluation) -> dict:
    return _max_abs_error(ev, "minmax64", _minmax_reference)


STANDARDIZED = Quality(
    standardized_error, "max_abs_error", False,
    f"max |output - float64 NumPy standardization| {_SAMPLED}",
)
MINMAX = Quality(
    minmax_error, "max_abs_error", False,
    f"max |output - float64 NumPy min-max scaling| {_SAMPLED}",
)
MAXABS = Quality(
    lambda ev: _max_abs_error(ev, "maxabs64", _maxabs_reference), "max_abs_error", False,
    f"max |output - float64 NumPy max-abs scaling| {_SAMPLED}",
)
ROBUST = Quality(
    lambda ev: _max_abs_error(ev, "robust64", _robust_reference), "max_abs_error", False,
    f"max |output - float64 (x - median) / IQR with NumPy's exact percentiles| {_SAMPLED}",
)
ROW_NORMALIZED = Quality(
    lambda ev: _max_abs_error(ev, None, rowwise=_row_unit), "max_abs_error", False,
    f"max |output - float64 rows scaled to unit L2 norm| {_SAMPLED}",
)


# -- clustering ------------------------------------------------------------
def inertia(ev: Evaluation) -> dict:
    """Sum of squared distances of X to the nearest returned centre."""
    centers = ev.attr("cluster_centers_")
    c2 = (centers**2).sum(axis=1)
    X = ev.data["X"][_sample(ev.data["X"].shape[0])]
    total = 0.0
    for b in _blocks(X.shape[0]):
        x = X[b].astype(np.float64)
        d2 = (x**2).sum(axis=1)[:, None] - 2.0 * (x @ centers.T) + c2[None, :]
        total += float(np.maximum(d2.min(axis=1), 0.0).sum())
    out = {"inertia": total}
    n_iter = getattr(ev.model, "n_iter_", None)
    if n_iter is not None:
        out["n_iter"] = int(n_iter)
    return out


INERTIA = Quality(inertia, "inertia", False, f"k-means inertia of the returned centres, in float64 {_SAMPLED}")


# -- neighbours ------------------------------------------------------------
#: Queries whose exact neighbours are computed for recall@k.
RECALL_QUERIES = 1000


def _exact_neighbors(X, Q, k):
    Xd = X.astype(np.float64)
    x2 = (Xd**2).sum(axis=1)
    out = np.empty((Q.shape[0], k), dtype=np.int64)
    rows = max(1, (1 << 26) // X.shape[0])
    for s in range(0, Q.shape[0], rows):
        q = Q[s : s + rows].astype(np.float64)
        d2 = x2[None, :] - 2.0 * (q @ Xd.T)  # |q|^2 does not change the order
        part = np.argpartition(d2, k - 1, axis=1)[:, :k]
        out[s : s + rows] = part
    return out


def recall_at_k(ev: Evaluation) -> dict:
    """Mean fraction of the exact k nearest neighbours found, over the first
    RECALL_QUERIES queries."""
    indices = np.asarray(ev.outputs["kneighbors"][1])
    k = indices.shape[1]
    m = min(RECALL_QUERIES, indices.shape[0])
    exact = ev.data.reference(
        f"knn{k}", lambda: _exact_neighbors(ev.data["X"], ev.data["Q"][:m], k)
    )
    hits = sum(np.intersect1d(indices[i], exact[i]).size for i in range(m))
    return {f"recall@{k}": hits / (m * k)}


RECALL = Quality(
    recall_at_k, "recall@10", True,
    f"recall@k against exact float64 neighbours, first {RECALL_QUERIES} queries",
)


# -- regression and classification ---------------------------------------
def r2(ev: Evaluation) -> dict:
    from sklearn.metrics import r2_score

    y = ev.data["y_test"]
    # y's shape: (n,) predictions as (n,), several outputs as (n, n_outputs) (R² averaged over them)
    pred = np.asarray(ev.call("predict", "X_test"), dtype=np.float64).reshape(np.shape(y))
    return {"r2": float(r2_score(y, pred))}


R2 = Quality(r2, "r2", True, "R² on a held-out set")


def binary_classification(ev: Evaluation) -> dict:
    from sklearn.metrics import roc_auc_score

    proba = np.asarray(ev.call("predict_proba", "X_test"), dtype=np.float64)
    p1 = proba[:, 1] if proba.ndim == 2 else proba
    y = ev.data["y_test"]
    return {"accuracy": float(np.mean((p1 >= 0.5) == (y == 1))), "auc": float(roc_auc_score(y, p1))}


ACCURACY = Quality(
    binary_classification, "accuracy", True, "accuracy on a held-out set (AUC also recorded)"
)


def label_accuracy(ev: Evaluation) -> dict:
    pred = np.asarray(ev.call("predict", "X_test")).ravel()
    return {"accuracy": float(np.mean(pred == ev.data["y_test"]))}


LABEL_ACCURACY = Quality(label_accuracy, "accuracy", True, "accuracy of predict on a held-out set")


# -- decomposition -------------------------------------------------------
def explained_variance(ev: Evaluation) -> dict:
    """Share of the training data's variance captured by the returned
    components (assumed orthonormal), in float64."""
    comps = ev.attr("components_")
    X = ev.data["X"]
    mean, _ = ev.data.reference("standard64", lambda: _standard_reference(X))
    X = X[_sample(X.shape[0])]
    total = captured = 0.0
    for b in _blocks(X.shape[0]):
        xc = X[b].astype(np.float64) - mean
        total += float((xc**2).sum())
        captured += float(((xc @ comps.T) ** 2).sum())
    return {"explained_variance_ratio": captured / total}


EXPLAINED_VARIANCE = Quality(
    explained_variance, "explained_variance_ratio", True,
    f"share of the training variance captured by the components {_SAMPLED}",
)


# -- embeddings -------------------------------------------------------------
TRUST_ROWS = 2000


def trustworthiness(ev: Evaluation) -> dict:
    from sklearn.manifold import trustworthiness as tw

    emb = np.asarray(ev.outputs["fit_transform"])
    m = min(TRUST_ROWS, emb.shape[0])
    return {"trustworthiness": float(tw(ev.data["X"][:m], emb[:m], n_neighbors=10))}


TRUSTWORTHINESS = Quality(
    trustworthiness, "trustworthiness", True,
    f"trustworthiness (10 neighbours) of the embedding, first {TRUST_ROWS} rows",
)
