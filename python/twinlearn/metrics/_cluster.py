"""Clustering metrics that compare two labelings (sklearn.metrics.cluster).

Every metric here is a function of the contingency table of the two
labelings: how many samples carry class i in ``labels_true`` and cluster j in
``labels_pred``. The table is counted exactly, in integers (on the device for
CuPy / PyTorch labels: only its nonzero cells, at most n_samples of them,
come to the host). What follows the counts is scikit-learn's own float
arithmetic, spelled with the same NumPy operations on the same values in the
same order, so every score has scikit-learn's bits (docs/NUMERICS.md,
"Clustering metrics").

The nonzero cells are held in row-major order with increasing columns within
a row: the order in which scikit-learn's sparse contingency matrix (CSR,
canonical) gives them to ``scipy.sparse.find``, which fixes the order of the
float sums below.
"""

from __future__ import annotations

import warnings
from math import log
from numbers import Real

import numpy as np
from scipy import sparse as sp
from sklearn.metrics.cluster import expected_mutual_information
from sklearn.utils._param_validation import Interval, StrOptions, validate_params
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_array, check_consistent_length

from .. import _io

try:  # scikit-learn >= 1.8: the sparse interface (sparray / spmatrix) follows the config
    from sklearn.utils import _align_api_if_sparse
except ImportError:  # pragma: no cover - older scikit-learn returns what SciPy gives
    def _align_api_if_sparse(X):
        return X

#: docs/SUPPORT_MATRIX.md rows: (scikit-learn, twinlearn, computed by twinlearn,
#: computed by scikit-learn, numbers).
SUPPORT = tuple(
    (f"sklearn.metrics.{name}", f"twinlearn.metrics.{name}",
     "NumPy and CuPy / PyTorch labels (counted on their device)", "-", "scikit-learn's bits")
    for name in ("adjusted_rand_score", "rand_score", "adjusted_mutual_info_score", "normalized_mutual_info_score",
                 "mutual_info_score", "homogeneity_score", "completeness_score", "v_measure_score",
                 "homogeneity_completeness_v_measure", "fowlkes_mallows_score", "contingency_matrix",
                 "pair_confusion_matrix")
)

#: The parameters every function takes beside scikit-learn's.
_TL = {"device": "no_validation", "numeric_mode": "no_validation"}
_LABELS = {"labels_true": ["array-like"], "labels_pred": ["array-like"], **_TL}
_AVERAGES = ("min", "geometric", "arithmetic", "max")


class _Table:
    """The exact contingency table of two labelings.

    n: samples. n_rows, n_cols: distinct labels of each side (sorted, as
    np.unique). rows, cols, counts: the nonzero cells, int64, row-major.
    row_sums, col_sums: samples per class / per cluster, int64.
    """

    __slots__ = ("n", "n_rows", "n_cols", "rows", "cols", "counts", "row_sums", "col_sums")

    def __init__(self, n, n_rows, n_cols, keys, counts):
        self.n, self.n_rows, self.n_cols = int(n), int(n_rows), int(n_cols)
        keys = np.asarray(keys, dtype=np.int64)
        self.counts = np.asarray(counts, dtype=np.int64)
        if self.n_cols:
            self.rows, self.cols = keys // self.n_cols, keys % self.n_cols
        else:
            self.rows = self.cols = keys
        self.row_sums = np.zeros(self.n_rows, dtype=np.int64)
        np.add.at(self.row_sums, self.rows, self.counts)
        self.col_sums = np.zeros(self.n_cols, dtype=np.int64)
        np.add.at(self.col_sums, self.cols, self.counts)

    def sparse(self, dtype=np.int64):
        """The table as scikit-learn's contingency_matrix(sparse=True) gives it."""
        m = sp.csr_array((self.counts.astype(dtype), (self.rows, self.cols)), shape=(self.n_rows, self.n_cols))
        m.sum_duplicates()
        return _align_api_if_sparse(m)


def _host_codes(labels):
    classes, idx = np.unique(labels, return_inverse=True)
    return classes.shape[0], idx.reshape(-1).astype(np.int64)


def _device_table(a, b):
    """The table of two device labelings, counted on their device: their
    codes (np.unique's order), then one count per distinct (code, code) pair.
    Integer work only; the nonzero cells (at most n) come to the host."""
    if _io.kind(a) == "torch":
        import torch

        ua, ia = torch.unique(a, sorted=True, return_inverse=True)
        ub, ib = torch.unique(b, sorted=True, return_inverse=True)
        keys, counts = torch.unique(ia.to(torch.int64) * ub.numel() + ib.to(torch.int64), sorted=True,
                                    return_counts=True)
        na, nb = ua.numel(), ub.numel()
    else:
        import cupy

        a, b = cupy.asarray(a), cupy.asarray(b)
        ua, ia = cupy.unique(a, return_inverse=True)
        ub, ib = cupy.unique(b, return_inverse=True)
        keys, counts = cupy.unique(ia.ravel().astype(cupy.int64) * ub.size + ib.ravel(), return_counts=True)
        na, nb = ua.size, ub.size
    return _Table(a.shape[0], na, nb, _io.to_numpy(keys), _io.to_numpy(counts))


def _host_table(a, b):
    na, ia = _host_codes(a)
    nb, ib = _host_codes(b)
    keys, counts = np.unique(ia * nb + ib, return_counts=True)
    return _Table(a.shape[0], na, nb, keys, counts)


def _check_device_labels(a, name):
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1D: shape is {tuple(a.shape)!r}")
    return a


def _table(labels_true, labels_pred):
    """check_clusterings, then the table. Labels on one device (both CuPy or
    both PyTorch) are counted there; anything else on the host."""
    both_device = (_io.is_device_array(labels_true) and _io.is_device_array(labels_pred)
                   and _io.kind(labels_true) == _io.kind(labels_pred))
    if both_device:
        a = _check_device_labels(labels_true, "labels_true")
        b = _check_device_labels(labels_pred, "labels_pred")
        if a.shape[0] != b.shape[0]:
            raise ValueError(
                "Found input variables with inconsistent numbers of samples: "
                f"[{a.shape[0]}, {b.shape[0]}]"
            )
        return _device_table(a, b)
    a, b = check_clusterings(_io.to_host(labels_true), _io.to_host(labels_pred))
    return _host_table(a, b)


def check_clusterings(labels_true, labels_pred):
    """scikit-learn's check of two labelings: 1-D, one length (and a warning
    for continuous values). Returns them as NumPy arrays."""
    labels_true = check_array(labels_true, ensure_2d=False, ensure_min_samples=0, dtype=None)
    labels_pred = check_array(labels_pred, ensure_2d=False, ensure_min_samples=0, dtype=None)
    type_label = type_of_target(labels_true)
    type_pred = type_of_target(labels_pred)
    if "continuous" in (type_pred, type_label):
        warnings.warn(
            f"Clustering metrics expects discrete values but received {type_label} values for label, "
            f"and {type_pred} values for target",
            UserWarning,
        )
    if labels_true.ndim != 1:
        raise ValueError("labels_true must be 1D: shape is %r" % (labels_true.shape,))
    if labels_pred.ndim != 1:
        raise ValueError("labels_pred must be 1D: shape is %r" % (labels_pred.shape,))
    check_consistent_length(labels_true, labels_pred)
    return labels_true, labels_pred


# -- scikit-learn's float steps on the counts --------------------------------------
def _entropy_of_counts(counts, n):
    """scikit-learn's _entropy of a labeling whose label counts (sorted by
    label) are `counts`, of n samples."""
    if n == 0:
        return 1.0
    pi = np.asarray(counts).astype(np.float64)
    if pi.size == 1:
        return 0.0
    pi_sum = np.sum(pi)
    return float(-np.sum(pi / pi_sum * (np.log(pi) - log(pi_sum))))


def _mi_of_cells(nzx, nzy, nz_val, contingency_sum, pi, pj):
    """scikit-learn's mutual_info_score from the nonzero cells (in find order)
    and the margins of a contingency table."""
    if pi.size == 1 or pj.size == 1:
        return 0.0
    log_contingency_nm = np.log(nz_val)
    contingency_nm = nz_val / contingency_sum
    outer = pi.take(nzx).astype(np.int64, copy=False) * pj.take(nzy).astype(np.int64, copy=False)
    log_outer = -np.log(outer) + log(pi.sum()) + log(pj.sum())
    mi = contingency_nm * (log_contingency_nm - log(contingency_sum)) + contingency_nm * log_outer
    mi = np.where(np.abs(mi) < np.finfo(mi.dtype).eps, 0.0, mi)
    return float(np.clip(mi.sum(), 0.0, None))


def _mi_of_table(t):
    return _mi_of_cells(t.rows, t.cols, t.counts, t.counts.sum(), t.row_sums, t.col_sums)


def _generalized_average(U, V, average_method):
    if average_method == "min":
        return min(U, V)
    if average_method == "geometric":
        return np.sqrt(U * V)
    if average_method == "arithmetic":
        return np.mean([U, V])
    if average_method == "max":
        return max(U, V)
    raise ValueError("'average_method' must be 'min', 'geometric', 'arithmetic', or 'max'")


def _pair_confusion(t):
    n_samples = np.int64(t.n)
    sum_squares = (t.counts ** 2).sum()
    C = np.empty((2, 2), dtype=np.int64)
    C[1, 1] = sum_squares - n_samples
    C[0, 1] = (t.counts * t.col_sums[t.cols]).sum() - sum_squares
    C[1, 0] = (t.counts * t.row_sums[t.rows]).sum() - sum_squares
    C[0, 0] = n_samples ** 2 - C[0, 1] - C[1, 0] - sum_squares
    return C


# -- public functions ---------------------------------------------------------------
_DEVICE_DOC = """device, numeric_mode : accepted for a uniform signature; the counts
        are exact on every device and the float steps run on the host, so
        every device and mode gives scikit-learn's bits."""


@validate_params(
    {"labels_true": ["array-like", None], "labels_pred": ["array-like", None],
     "eps": [Interval(Real, 0, None, closed="left"), None], "sparse": ["boolean"], "dtype": "no_validation", **_TL},
    prefer_skip_nested_validation=True,
)
def contingency_matrix(labels_true, labels_pred, *, eps=None, sparse=False, dtype=np.int64, device=None,
                       numeric_mode=None):
    """Contingency matrix of two labelings, counted exactly.

    Parameters
    ----------
    labels_true : array-like of shape (n_samples,)
        Ground-truth class labels (NumPy, or a CuPy / PyTorch device array).
    labels_pred : array-like of shape (n_samples,)
        Cluster labels.
    eps : float, default=None
        Added to every cell of the dense result (not with ``sparse=True``).
    sparse : bool, default=False
        Return a SciPy CSR matrix.
    dtype : numeric type, default=np.int64
        The result's dtype.
    device, numeric_mode : accepted for a uniform signature (exact counts).

    Returns
    -------
    contingency : {ndarray, sparse matrix} of shape (n_classes_true, n_classes_pred)
        ``contingency[i, j]``: samples of class i (sorted labels) in cluster j.

    Examples
    --------
    >>> from twinlearn.metrics import contingency_matrix
    >>> contingency_matrix([0, 0, 1, 1], [1, 1, 1, 0])
    array([[0, 2],
           [1, 1]])
    """
    if eps is not None and sparse:
        raise ValueError("Cannot set 'eps' when sparse=True")
    if _io.is_device_array(labels_true) and _io.is_device_array(labels_pred):
        t = _table(labels_true, labels_pred)
    else:  # as scikit-learn: no label checks here, np.unique flattens
        a, b = np.asarray(_io.to_host(labels_true)), np.asarray(_io.to_host(labels_pred))
        t = _host_table(a.reshape(-1), b.reshape(-1))
    if sparse:
        return t.sparse(dtype)
    out = np.zeros((t.n_rows, t.n_cols), dtype=dtype)
    out[t.rows, t.cols] = t.counts
    if eps is not None:
        out = out + eps
    return out


@validate_params(_LABELS, prefer_skip_nested_validation=True)
def pair_confusion_matrix(labels_true, labels_pred, *, device=None, numeric_mode=None):
    """Pair confusion matrix: sample pairs put together / apart by each labeling.

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_samples,)
    device, numeric_mode : accepted for a uniform signature (exact counts).

    Returns
    -------
    C : ndarray of shape (2, 2), int64
        ``C[0, 0]`` pairs apart in both, ``C[1, 1]`` together in both,
        ``C[0, 1]`` apart in labels_true only, ``C[1, 0]`` together in
        labels_true only (ordered pairs).

    Examples
    --------
    >>> from twinlearn.metrics import pair_confusion_matrix
    >>> pair_confusion_matrix([0, 0, 1, 1], [1, 1, 0, 0])
    array([[8, 0],
           [0, 4]])
    """
    return _pair_confusion(_table(labels_true, labels_pred))


@validate_params(_LABELS, prefer_skip_nested_validation=True)
def rand_score(labels_true, labels_pred, *, device=None, numeric_mode=None):
    """Rand index: the fraction of sample pairs on which two labelings agree.

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_samples,)
    device, numeric_mode : accepted for a uniform signature (exact counts).

    Returns
    -------
    RI : float in [0, 1]

    Examples
    --------
    >>> from twinlearn.metrics import rand_score
    >>> rand_score([0, 0, 1, 2], [0, 0, 1, 1])
    0.8333333333333334
    """
    contingency = pair_confusion_matrix(labels_true, labels_pred)
    numerator = contingency.diagonal().sum()
    denominator = contingency.sum()
    if numerator == denominator or denominator == 0:
        return 1.0
    return float(numerator / denominator)


@validate_params(_LABELS, prefer_skip_nested_validation=True)
def adjusted_rand_score(labels_true, labels_pred, *, device=None, numeric_mode=None):
    """Rand index adjusted for chance.

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_samples,)
    device, numeric_mode : accepted for a uniform signature (exact counts).

    Returns
    -------
    ARI : float in [-0.5, 1]

    Examples
    --------
    >>> from twinlearn.metrics import adjusted_rand_score
    >>> adjusted_rand_score([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    (tn, fp), (fn, tp) = pair_confusion_matrix(labels_true, labels_pred)
    tn, fp, fn, tp = int(tn), int(fp), int(fn), int(tp)
    if fn == 0 and fp == 0:
        return 1.0
    return 2.0 * (tp * tn - fn * fp) / ((tp + fn) * (fn + tn) + (tp + fp) * (fp + tn))


def _hcv(t, beta):
    if t.n == 0:
        return 1.0, 1.0, 1.0
    entropy_C = _entropy_of_counts(t.row_sums, t.n)
    entropy_K = _entropy_of_counts(t.col_sums, t.n)
    MI = _mi_of_table(t)
    homogeneity = MI / entropy_C if entropy_C else 1.0
    completeness = MI / entropy_K if entropy_K else 1.0
    if homogeneity + completeness == 0.0:
        v_measure_score = 0.0
    else:
        v_measure_score = (1 + beta) * homogeneity * completeness / (beta * homogeneity + completeness)
    return float(homogeneity), float(completeness), float(v_measure_score)


_BETA = {**_LABELS, "beta": [Interval(Real, 0, None, closed="left")]}


@validate_params(_BETA, prefer_skip_nested_validation=True)
def homogeneity_completeness_v_measure(labels_true, labels_pred, *, beta=1.0, device=None, numeric_mode=None):
    """Homogeneity, completeness and V-measure of a clustering, in one pass.

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_samples,)
    beta : float, default=1.0
        Weight of homogeneity against completeness in the V-measure.
    device, numeric_mode : accepted for a uniform signature (exact counts).

    Returns
    -------
    homogeneity, completeness, v_measure : float

    Examples
    --------
    >>> from twinlearn.metrics import homogeneity_completeness_v_measure
    >>> homogeneity_completeness_v_measure([0, 0, 1, 1], [0, 0, 0, 0])
    (0.0, 1.0, 0.0)
    """
    return _hcv(_table(labels_true, labels_pred), beta)


@validate_params(_LABELS, prefer_skip_nested_validation=True)
def homogeneity_score(labels_true, labels_pred, *, device=None, numeric_mode=None):
    """Homogeneity: each cluster holds members of a single class.

    Returns
    -------
    homogeneity : float in [0, 1]

    Examples
    --------
    >>> from twinlearn.metrics import homogeneity_score
    >>> homogeneity_score([0, 0, 1, 1], [0, 0, 1, 2])  # scikit-learn's bits
    0.9999999999999999
    """
    return homogeneity_completeness_v_measure(labels_true, labels_pred)[0]


@validate_params(_LABELS, prefer_skip_nested_validation=True)
def completeness_score(labels_true, labels_pred, *, device=None, numeric_mode=None):
    """Completeness: all members of a class are in one cluster.

    Returns
    -------
    completeness : float in [0, 1]

    Examples
    --------
    >>> from twinlearn.metrics import completeness_score
    >>> completeness_score([0, 0, 1, 1], [0, 0, 0, 0])
    1.0
    """
    return homogeneity_completeness_v_measure(labels_true, labels_pred)[1]


@validate_params(_BETA, prefer_skip_nested_validation=True)
def v_measure_score(labels_true, labels_pred, *, beta=1.0, device=None, numeric_mode=None):
    """V-measure: the weighted harmonic mean of homogeneity and completeness.

    Returns
    -------
    v_measure : float in [0, 1]

    Examples
    --------
    >>> from twinlearn.metrics import v_measure_score
    >>> v_measure_score([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    return homogeneity_completeness_v_measure(labels_true, labels_pred, beta=beta)[2]


@validate_params(
    {"labels_true": ["array-like", None], "labels_pred": ["array-like", None],
     "contingency": ["array-like", "sparse matrix", None], **_TL},
    prefer_skip_nested_validation=True,
)
def mutual_info_score(labels_true, labels_pred, *, contingency=None, device=None, numeric_mode=None):
    """Mutual information of two labelings (natural logarithm).

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_samples,)
        Ignored when ``contingency`` is given.
    contingency : {array-like, sparse matrix} of shape (n_classes_true, n_classes_pred), default=None
        A precomputed contingency matrix.
    device, numeric_mode : accepted for a uniform signature (exact counts).

    Returns
    -------
    mi : float, non-negative

    Examples
    --------
    >>> from twinlearn.metrics import mutual_info_score
    >>> round(mutual_info_score([0, 0, 1, 1], [0, 0, 1, 1]), 6)
    0.693147
    """
    if contingency is None:
        return _mi_of_table(_table(labels_true, labels_pred))
    contingency = check_array(_io.to_host(contingency), accept_sparse=["csr", "csc", "coo"],
                              dtype=[int, np.int32, np.int64])
    if isinstance(contingency, np.ndarray):
        nzx, nzy = np.nonzero(contingency)
        nz_val = contingency[nzx, nzy]
    else:
        nzx, nzy, nz_val = sp.find(contingency)
    return _mi_of_cells(nzx, nzy, nz_val, contingency.sum(), np.ravel(contingency.sum(axis=1)),
                        np.ravel(contingency.sum(axis=0)))


_AVERAGE = {**_LABELS, "average_method": [StrOptions(set(_AVERAGES))]}


@validate_params(_AVERAGE, prefer_skip_nested_validation=True)
def adjusted_mutual_info_score(labels_true, labels_pred, *, average_method="arithmetic", device=None,
                               numeric_mode=None):
    """Mutual information adjusted for chance.

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_samples,)
    average_method : {'min', 'geometric', 'arithmetic', 'max'}, default='arithmetic'
        How the two entropies are averaged into the normalizer.
    device, numeric_mode : accepted for a uniform signature (exact counts).

    Returns
    -------
    ami : float, at most 1

    Examples
    --------
    >>> from twinlearn.metrics import adjusted_mutual_info_score
    >>> adjusted_mutual_info_score([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    t = _table(labels_true, labels_pred)
    if t.n_rows == t.n_cols == 1 or t.n_rows == t.n_cols == 0:
        return 1.0
    if t.n_rows == 1 or t.n_cols == 1:
        return 0.0
    mi = _mi_of_table(t)
    emi = expected_mutual_information(t.sparse(), t.n)
    h_true, h_pred = _entropy_of_counts(t.row_sums, t.n), _entropy_of_counts(t.col_sums, t.n)
    normalizer = _generalized_average(h_true, h_pred, average_method)
    eps = np.finfo("float64").eps
    denominator = normalizer - emi
    denominator = min(denominator, -eps) if denominator < 0 else max(denominator, eps)
    numerator = mi - emi
    numerator = min(numerator, -eps) if numerator < 0 else max(numerator, eps)
    return float(numerator / denominator)


@validate_params(_AVERAGE, prefer_skip_nested_validation=True)
def normalized_mutual_info_score(labels_true, labels_pred, *, average_method="arithmetic", device=None,
                                 numeric_mode=None):
    """Mutual information normalized by an average of the two entropies.

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_samples,)
    average_method : {'min', 'geometric', 'arithmetic', 'max'}, default='arithmetic'
    device, numeric_mode : accepted for a uniform signature (exact counts).

    Returns
    -------
    nmi : float in [0, 1]

    Examples
    --------
    >>> from twinlearn.metrics import normalized_mutual_info_score
    >>> normalized_mutual_info_score([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    t = _table(labels_true, labels_pred)
    if t.n_rows == t.n_cols == 1 or t.n_rows == t.n_cols == 0:
        return 1.0
    # scikit-learn computes this MI from a float64 table: the same values,
    # hence the same bits as from the integer one.
    mi = _mi_of_table(t)
    if mi == 0:
        return 0.0
    h_true, h_pred = _entropy_of_counts(t.row_sums, t.n), _entropy_of_counts(t.col_sums, t.n)
    normalizer = _generalized_average(h_true, h_pred, average_method)
    return float(mi / normalizer)


@validate_params(_LABELS, prefer_skip_nested_validation=True)
def fowlkes_mallows_score(labels_true, labels_pred, *, device=None, numeric_mode=None):
    """Fowlkes-Mallows index: the geometric mean of pairwise precision and recall.

    Parameters
    ----------
    labels_true, labels_pred : array-like of shape (n_samples,)
    device, numeric_mode : accepted for a uniform signature (exact counts).

    Returns
    -------
    score : float in [0, 1]

    Examples
    --------
    >>> from twinlearn.metrics import fowlkes_mallows_score
    >>> fowlkes_mallows_score([0, 0, 1, 1], [1, 1, 0, 0])
    1.0
    """
    t = _table(labels_true, labels_pred)
    n_samples = t.n
    tk = np.dot(t.counts, t.counts) - n_samples
    pk = np.sum(t.col_sums ** 2) - n_samples
    qk = np.sum(t.row_sums ** 2) - n_samples
    return float(np.sqrt(tk / pk) * np.sqrt(tk / qk)) if tk != 0.0 else 0.0
