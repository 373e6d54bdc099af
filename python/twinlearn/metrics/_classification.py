"""Classification metrics with scikit-learn's signatures, results, errors and warnings.

Host input outside identical mode is scikit-learn's own computation. On the
own path (device input, or ``numeric_mode='identical'``) the label metrics
start from exact counts: the sorted unique labels of y_true and y_pred
(small, to the host), each sample's (true, predicted) cell of the k x k
table counted on the array's device with an integer bincount and, with
sample_weight, each cell's weight as a canonical sum of its samples'
weights (in sample order). The table is then *replayed*: scikit-learn's own
function runs on one sample per non-empty cell, weighted by the cell's count
(or weight sum). Every label metric here is a function of those cell totals
and of the label sets (which the replay keeps), and integer counts are
exact in float64 (below 2**53), so unweighted results are scikit-learn's
bits; weighted ones differ from them only by the order of each cell's sum,
and are the same on a CPU and a GPU. Multilabel indicator input, and the
score-based losses (log_loss, brier_score_loss, hinge_loss) take
scikit-learn's function on a host copy (docs/SUPPORT_MATRIX.md).
"""

from __future__ import annotations

import numpy as np
import sklearn.metrics as _sk

from . import _common
from ._common import COMMON_PARAMS, Run, check_consistent_length, host, validate_params

# Above this many cells (k * k) the table is not built; scikit-learn's function runs on a host copy.
MAX_CELLS = 1 << 24


def _as_labels(run, y):
    """y as a 1-D label array of the run's kind, or None when the own path
    does not take it (multilabel / 2-D, empty, object dtype, not an array)."""
    if y is None:
        return None
    y = run.place(y)
    if not hasattr(y, "shape"):
        y = np.asarray(y)
    if run.ops.kind == "numpy":
        y = np.asarray(y)
        if y.dtype.kind not in "biuf":
            return None  # strings and objects: scikit-learn on the host
    elif not run.of_kind(y):
        return None  # host strings beside device arrays: scikit-learn on the host
    if y.ndim == 2 and y.shape[1] == 1:
        y = y.reshape(-1)
    if y.ndim != 1 or y.shape[0] == 0:
        return None
    return y


def _label_type(u):
    """scikit-learn's type_of_target of labels whose unique values are u
    (the type depends only on the set of values); None when it raises."""
    from sklearn.utils.multiclass import type_of_target

    if u.dtype.kind == "f" and not np.all(np.isfinite(u)):
        return None  # scikit-learn's NaN / infinity error (and warnings), on the host copy
    try:
        return type_of_target(u)
    except (ValueError, TypeError):
        return None


def cell_table(run, y_true, y_pred, sample_weight):
    """(labels, counts, weight_sums) of the (true, predicted) table over the
    sorted union of the labels present: counts[i, j] the number of samples
    with y_true == labels[i] and y_pred == labels[j] (int64), weight_sums
    their canonical weight sums (float64, int64 for integer weights; None
    without sample_weight). None
    when the own path does not take the input (see _as_labels, MAX_CELLS)."""
    check_consistent_length(y_true, y_pred, sample_weight)
    yt, yp = _as_labels(run, y_true), _as_labels(run, y_pred)
    if yt is None or yp is None:
        return None
    ops = run.ops
    u_true, u_pred = ops.unique(yt), ops.unique(yp)
    if _label_type(u_true) not in ("binary", "multiclass") or _label_type(u_pred) not in ("binary", "multiclass"):
        return None  # scikit-learn raises its own error on the host copy
    try:
        labels = np.union1d(u_true, u_pred)
    except TypeError:
        return None
    k = labels.shape[0]
    if k * k > MAX_CELLS:
        return None
    lab = ops.asarray(labels, yt) if ops.kind != "numpy" else labels
    code = ops.searchsorted(lab, yt) * k + ops.searchsorted(lab, yp)
    counts = ops.bincount(code, k * k)
    wsum = None
    if sample_weight is not None:
        w = run.place(sample_weight)
        if not hasattr(w, "shape") or ops.kind == "numpy":
            w = np.asarray(w)
        if not run.of_kind(w) or w.ndim != 1 or w.shape[0] != yt.shape[0]:
            return None  # scikit-learn's shape error on the host copy
        dtype = str(w.dtype).split(".")[-1]
        if dtype.startswith("bool"):
            return None  # boolean weights: scikit-learn's own (and odd) arithmetic on the host
        integral = dtype.startswith(("int", "uint"))
        w = ops.f64(w)
        if integral and run.sum(ops.abs(w)) >= 2.0**53:
            return None  # integer weight sums past float64's exact range: scikit-learn on the host
        ws = w[ops.argsort(code)]  # each cell's weights together, in sample order
        ends = np.cumsum(counts)
        wsum = np.zeros(k * k)
        for c in np.flatnonzero(counts):
            wsum[c] = run.sum(ws[int(ends[c] - counts[c]):int(ends[c])])
        # integer weights: exact sums, kept integers as scikit-learn keeps them
        wsum = wsum.reshape(k, k).astype(np.int64) if integral else wsum.reshape(k, k)
    return labels, counts.reshape(k, k), wsum


def replay(run, y_true, y_pred, sample_weight):
    """(y_true, y_pred, sample_weight) on the host, one sample per non-empty
    cell of :func:`cell_table` weighted by its count (int64) or weight sum;
    None when the own path does not take the input."""
    table = cell_table(run, y_true, y_pred, sample_weight)
    if table is None:
        return None
    labels, counts, wsum = table
    i, j = np.nonzero(counts)
    w = counts[i, j] if wsum is None else wsum[i, j]
    return labels[i], labels[j], w


def _counting(sk_func, y_true, y_pred, sample_weight, device, numeric_mode, params, fix=None):
    """A label metric: scikit-learn's function on the host input, or on the
    replayed table on the own path; `fix(result)` undoes what only the
    replay's weights change (integer supports for unweighted input)."""
    run = Run(device, numeric_mode, (y_true, y_pred, sample_weight))
    if run.own:
        validate_params(sk_func, {"y_true": y_true, "y_pred": y_pred, "sample_weight": sample_weight, **params})
        rep = replay(run, y_true, y_pred, sample_weight)
        if rep is not None:
            out = sk_func(rep[0], rep[1], sample_weight=rep[2], **params)
            # scikit-learn's unweighted tables are int64 unless no sample is
            # predicted right (then its true-positive sums start as float zeros)
            if fix is not None and sample_weight is None and np.any(rep[0] == rep[1]):
                out = fix(out)
            return out
    yt, yp, sw = host(y_true, y_pred, sample_weight)
    return sk_func(yt, yp, sample_weight=sw, **params)


def _int_support(out):
    """precision_recall_fscore_support's support as integers (unweighted input)."""
    p, r, f, s = out
    return p, r, f, (s if s is None else np.asarray(s).astype(np.int64))


def accuracy_score(y_true, y_pred, *, normalize=True, sample_weight=None, device=None, numeric_mode=None):
    """Accuracy classification score (:func:`sklearn.metrics.accuracy_score`).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_labels)
        Labels (or label indicator matrices); NumPy or device arrays.
    normalize : bool, default=True
        The fraction of correct predictions, else their number (or weight).
    sample_weight : array-like of shape (n_samples,), default=None
    {common}

    Returns
    -------
    score : float

    Examples
    --------
    >>> from twinlearn.metrics import accuracy_score
    >>> accuracy_score([0, 2, 1, 3], [0, 1, 2, 3])
    0.5
    >>> accuracy_score([0, 2, 1, 3], [0, 1, 2, 3], numeric_mode="identical")
    0.5
    """
    return _counting(_sk.accuracy_score, y_true, y_pred, sample_weight, device, numeric_mode,
                     {"normalize": normalize})


def balanced_accuracy_score(y_true, y_pred, *, sample_weight=None, adjusted=False, device=None, numeric_mode=None):
    """Balanced accuracy (:func:`sklearn.metrics.balanced_accuracy_score`).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), default=None
    adjusted : bool, default=False
        Rescale so that random performance scores 0.
    {common}

    Returns
    -------
    balanced_accuracy : float
    """
    return _counting(_sk.balanced_accuracy_score, y_true, y_pred, sample_weight, device, numeric_mode,
                     {"adjusted": adjusted})


def confusion_matrix(y_true, y_pred, *, labels=None, sample_weight=None, normalize=None, device=None,
                     numeric_mode=None):
    """Confusion matrix (:func:`sklearn.metrics.confusion_matrix`).

    Counted exactly on the input's device; the (n_classes, n_classes) result
    is a NumPy array (int64, float64 with sample_weight or ``normalize``).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
    labels : array-like of shape (n_classes,), default=None
        Row and column order; None: the sorted labels present.
    sample_weight : array-like of shape (n_samples,), default=None
    normalize : {{'true', 'pred', 'all'}}, default=None
    {common}

    Returns
    -------
    C : ndarray of shape (n_classes, n_classes)

    Examples
    --------
    >>> from twinlearn.metrics import confusion_matrix
    >>> confusion_matrix([2, 0, 2, 2, 0, 1], [0, 0, 2, 2, 0, 2], numeric_mode="identical")
    array([[2, 0, 0],
           [0, 0, 1],
           [1, 0, 2]])
    """
    return _counting(_sk.confusion_matrix, y_true, y_pred, sample_weight, device, numeric_mode,
                     {"labels": labels, "normalize": normalize})


def multilabel_confusion_matrix(y_true, y_pred, *, sample_weight=None, labels=None, samplewise=False, device=None,
                                numeric_mode=None):
    """One 2 x 2 confusion matrix per class
    (:func:`sklearn.metrics.multilabel_confusion_matrix`).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
        Multiclass labels (own path) or multilabel indicators (host copy).
    sample_weight : array-like of shape (n_samples,), default=None
    labels : array-like, default=None
    samplewise : bool, default=False
    {common}

    Returns
    -------
    multi_confusion : ndarray of shape (n_outputs, 2, 2)
    """
    return _counting(_sk.multilabel_confusion_matrix, y_true, y_pred, sample_weight, device, numeric_mode,
                     {"labels": labels, "samplewise": samplewise},
                     fix=lambda m: np.asarray(m).astype(np.int64))


def precision_recall_fscore_support(y_true, y_pred, *, beta=1.0, labels=None, pos_label=1, average=None,
                                    warn_for=("precision", "recall", "f-score"), sample_weight=None,
                                    zero_division="warn", device=None, numeric_mode=None):
    """Precision, recall, F-beta and support
    (:func:`sklearn.metrics.precision_recall_fscore_support`).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_labels)
    beta : float, default=1.0
    labels : array-like, default=None
    pos_label : int, float, bool or str, default=1
    average : {{'binary', 'micro', 'macro', 'samples', 'weighted'}} or None, default=None
    warn_for : tuple or set
    sample_weight : array-like of shape (n_samples,), default=None
    zero_division : {{'warn', 0.0, 1.0, np.nan}}, default='warn'
    {common}

    Returns
    -------
    precision, recall, fbeta_score : float or ndarray of shape (n_unique_labels,)
    support : None or ndarray of shape (n_unique_labels,)
    """
    return _counting(_sk.precision_recall_fscore_support, y_true, y_pred, sample_weight, device, numeric_mode,
                     {"beta": beta, "labels": labels, "pos_label": pos_label, "average": average,
                      "warn_for": warn_for, "zero_division": zero_division}, fix=_int_support)


def _prf_one(sk_func, y_true, y_pred, sample_weight, device, numeric_mode, params):
    return _counting(sk_func, y_true, y_pred, sample_weight, device, numeric_mode, params)


_PRF_DOC = """{what} (:func:`sklearn.metrics.{name}`).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_labels)
    {beta}labels : array-like, default=None
    pos_label : int, float, bool or str, default=1
    average : {{'micro', 'macro', 'samples', 'weighted', 'binary'}} or None, default='binary'
    sample_weight : array-like of shape (n_samples,), default=None
    zero_division : {{'warn', 0.0, 1.0, np.nan}}, default='warn'
    {common}

    Returns
    -------
    score : float or ndarray of shape (n_unique_labels,)
    """


def precision_score(y_true, y_pred, *, labels=None, pos_label=1, average="binary", sample_weight=None,
                    zero_division="warn", device=None, numeric_mode=None):
    return _prf_one(_sk.precision_score, y_true, y_pred, sample_weight, device, numeric_mode,
                    {"labels": labels, "pos_label": pos_label, "average": average, "zero_division": zero_division})


def recall_score(y_true, y_pred, *, labels=None, pos_label=1, average="binary", sample_weight=None,
                 zero_division="warn", device=None, numeric_mode=None):
    return _prf_one(_sk.recall_score, y_true, y_pred, sample_weight, device, numeric_mode,
                    {"labels": labels, "pos_label": pos_label, "average": average, "zero_division": zero_division})


def f1_score(y_true, y_pred, *, labels=None, pos_label=1, average="binary", sample_weight=None,
             zero_division="warn", device=None, numeric_mode=None):
    return _prf_one(_sk.f1_score, y_true, y_pred, sample_weight, device, numeric_mode,
                    {"labels": labels, "pos_label": pos_label, "average": average, "zero_division": zero_division})


def fbeta_score(y_true, y_pred, *, beta, labels=None, pos_label=1, average="binary", sample_weight=None,
                zero_division="warn", device=None, numeric_mode=None):
    return _prf_one(_sk.fbeta_score, y_true, y_pred, sample_weight, device, numeric_mode,
                    {"beta": beta, "labels": labels, "pos_label": pos_label, "average": average,
                     "zero_division": zero_division})


precision_score.__doc__ = _PRF_DOC.format(what="Precision", name="precision_score", beta="", common=COMMON_PARAMS)
recall_score.__doc__ = _PRF_DOC.format(what="Recall", name="recall_score", beta="", common=COMMON_PARAMS)
f1_score.__doc__ = _PRF_DOC.format(what="F1 score", name="f1_score", beta="", common=COMMON_PARAMS)
fbeta_score.__doc__ = _PRF_DOC.format(what="F-beta score", name="fbeta_score",
                                      beta="beta : float\n        Weight of recall.\n    ", common=COMMON_PARAMS)


def matthews_corrcoef(y_true, y_pred, *, sample_weight=None, device=None, numeric_mode=None):
    """Matthews correlation coefficient (:func:`sklearn.metrics.matthews_corrcoef`).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), default=None
    {common}

    Returns
    -------
    mcc : float
    """
    return _counting(_sk.matthews_corrcoef, y_true, y_pred, sample_weight, device, numeric_mode, {})


def cohen_kappa_score(y1, y2, *, labels=None, weights=None, sample_weight=None, replace_undefined_by=np.nan,
                      device=None, numeric_mode=None):
    """Cohen's kappa (:func:`sklearn.metrics.cohen_kappa_score`).

    Parameters
    ----------
    y1, y2 : array-like of shape (n_samples,)
    labels : array-like of shape (n_classes,), default=None
    weights : {{'linear', 'quadratic'}}, default=None
    sample_weight : array-like of shape (n_samples,), default=None
    replace_undefined_by : np.nan, float in [-1.0, 1.0], default=np.nan
    {common}

    Returns
    -------
    kappa : float
    """
    run = Run(device, numeric_mode, (y1, y2, sample_weight))
    params = {"labels": labels, "weights": weights, "replace_undefined_by": replace_undefined_by}
    if run.own:
        validate_params(_sk.cohen_kappa_score, {"y1": y1, "y2": y2, "sample_weight": sample_weight, **params})
        rep = replay(run, y1, y2, sample_weight)
        if rep is not None:
            return _sk.cohen_kappa_score(rep[0], rep[1], sample_weight=rep[2], **params)
    a, b, sw = host(y1, y2, sample_weight)
    return _sk.cohen_kappa_score(a, b, sample_weight=sw, **params)


def classification_report(y_true, y_pred, *, labels=None, target_names=None, sample_weight=None, digits=2,
                          output_dict=False, zero_division="warn", device=None, numeric_mode=None):
    """Text (or dict) report of the main classification metrics
    (:func:`sklearn.metrics.classification_report`).

    Computed by scikit-learn on the host (device input is copied there).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_labels)
    labels, target_names : array-like, default=None
    sample_weight : array-like of shape (n_samples,), default=None
    digits : int, default=2
    output_dict : bool, default=False
    zero_division : {{'warn', 0.0, 1.0, np.nan}}, default='warn'
    {common}

    Returns
    -------
    report : str or dict
    """
    Run(device, numeric_mode, (y_true, y_pred, sample_weight))  # validates device and numeric_mode
    yt, yp, sw = host(y_true, y_pred, sample_weight)
    return _sk.classification_report(yt, yp, labels=labels, target_names=target_names, sample_weight=sw,
                                     digits=digits, output_dict=output_dict, zero_division=zero_division)


def log_loss(y_true, y_proba=None, *, normalize=True, sample_weight=None, labels=None, y_pred="deprecated",
             device=None, numeric_mode=None):
    """Log loss (:func:`sklearn.metrics.log_loss`); scikit-learn on the host
    (device input is copied there).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_proba : array-like of shape (n_samples, n_classes) or (n_samples,)
    normalize : bool, default=True
    sample_weight : array-like of shape (n_samples,), default=None
    labels : array-like, default=None
    y_pred : deprecated
    {common}

    Returns
    -------
    loss : float
    """
    Run(device, numeric_mode, (y_true, y_proba, sample_weight))
    yt, yp, sw = host(y_true, y_proba, sample_weight)
    kw = {} if isinstance(y_pred, str) and y_pred == "deprecated" else {"y_pred": _common.host(y_pred)[0]}
    return _sk.log_loss(yt, yp, normalize=normalize, sample_weight=sw, labels=labels, **kw)


def brier_score_loss(y_true, y_proba, *, sample_weight=None, pos_label=None, labels=None, scale_by_half="auto",
                     device=None, numeric_mode=None):
    """Brier score loss (:func:`sklearn.metrics.brier_score_loss`); scikit-learn
    on the host (device input is copied there).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_proba : array-like of shape (n_samples,) or (n_samples, n_classes)
    sample_weight : array-like of shape (n_samples,), default=None
    pos_label : int, float, bool or str, default=None
    labels : array-like of shape (n_classes,), default=None
    scale_by_half : bool or "auto", default="auto"
    {common}

    Returns
    -------
    score : float
    """
    Run(device, numeric_mode, (y_true, y_proba, sample_weight))
    yt, yp, sw = host(y_true, y_proba, sample_weight)
    return _sk.brier_score_loss(yt, yp, sample_weight=sw, pos_label=pos_label, labels=labels,
                                scale_by_half=scale_by_half)


def hinge_loss(y_true, pred_decision, *, labels=None, sample_weight=None, device=None, numeric_mode=None):
    """Average hinge loss (:func:`sklearn.metrics.hinge_loss`); scikit-learn on
    the host (device input is copied there).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    pred_decision : array-like of shape (n_samples,) or (n_samples, n_classes)
    labels : array-like, default=None
    sample_weight : array-like of shape (n_samples,), default=None
    {common}

    Returns
    -------
    loss : float
    """
    Run(device, numeric_mode, (y_true, pred_decision, sample_weight))
    yt, pd, sw = host(y_true, pred_decision, sample_weight)
    return _sk.hinge_loss(yt, pd, labels=labels, sample_weight=sw)


for _f in (accuracy_score, balanced_accuracy_score, confusion_matrix, multilabel_confusion_matrix,
           precision_recall_fscore_support, matthews_corrcoef, cohen_kappa_score, classification_report,
           log_loss, brier_score_loss, hinge_loss):
    _f.__doc__ = _f.__doc__.replace("{common}", COMMON_PARAMS).replace("{{", "{").replace("}}", "}")


#: The own path of each function (device input, identical mode) for
#: docs/SUPPORT_MATRIX.md; 'host copy': scikit-learn on a host copy.
SUPPORT = {
    'accuracy_score': 'exact label counts; multilabel input: host copy',
    'balanced_accuracy_score': 'exact label counts',
    'confusion_matrix': 'exact label counts (weights: canonical cell sums)',
    'multilabel_confusion_matrix': 'exact label counts for multiclass labels; multilabel input: host copy',
    'precision_recall_fscore_support': "exact label counts; average='samples' / multilabel input: host copy",
    'precision_score': 'as precision_recall_fscore_support',
    'recall_score': 'as precision_recall_fscore_support',
    'f1_score': 'as precision_recall_fscore_support',
    'fbeta_score': 'as precision_recall_fscore_support',
    'matthews_corrcoef': 'exact label counts',
    'cohen_kappa_score': 'exact label counts',
    'classification_report': 'host copy',
    'log_loss': 'host copy',
    'brier_score_loss': 'host copy',
    'hinge_loss': 'host copy',
}
