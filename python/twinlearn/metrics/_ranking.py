"""Ranking metrics: ROC and precision-recall curves, their areas, top-k accuracy.

Host input outside identical mode is scikit-learn's own computation. The own
path (device input, or ``numeric_mode='identical'``) takes binary y_true
with one score per sample and follows scikit-learn's
``confusion_matrix_at_thresholds``: zero-weight samples dropped, a stable
sort by descending score (ties keep sample order), one threshold per
distinct score (the last sample of each tie group). Unweighted and
integer-weighted cumulative counts are exact (every partial sum is an
integer below 2**53), so any scan order gives scikit-learn's values; other
weights are accumulated in sample order as scikit-learn does (np.cumsum)
on the host, the one step that copies an n-vector. Areas (the trapezoids of
``auc``, the steps of average precision) are canonical sums. Multiclass ROC
AUC ('ovr', 'ovo') is scikit-learn's average of such binary areas;
multilabel areas and multiclass average precision take scikit-learn's
function on a host copy.
"""

from __future__ import annotations

import warnings

import numpy as np
import sklearn.metrics as _sk
from sklearn.exceptions import UndefinedMetricWarning

from ._classification import _as_labels, _label_type
from ._common import COMMON_PARAMS, Run, assert_finite, check_consistent_length, host, validate_params


def _scores_1d(run, y_score):
    """y_score as a 1-D float array of the run's kind, or None."""
    y_score = run.place(y_score)
    if not hasattr(y_score, "shape") or run.ops.kind == "numpy":
        y_score = np.asarray(y_score)
        if y_score.dtype.kind not in "biuf":
            return None
    if not run.of_kind(y_score):
        return None
    if y_score.ndim == 2 and y_score.shape[1] == 1:
        y_score = y_score.reshape(-1)
    if y_score.ndim != 1:
        return None
    if "float" not in str(y_score.dtype):
        y_score = run.ops.astype_f64(y_score)
    return y_score


def _weights(run, sample_weight, n):
    if sample_weight is None:
        return None
    w = run.place(sample_weight)
    w = np.asarray(w) if (run.ops.kind == "numpy" or not hasattr(w, "shape")) else w
    if not run.of_kind(w) or w.ndim != 1 or w.shape[0] != n:
        return None
    return run.ops.f64(w)


def _weighted_cumsum(run, v, w):
    """Cumulative sums of v (float64) as scikit-learn's sequential cumsum
    gives them: on the device when w holds integers whose absolute sum is
    below 2**53 (every partial sum exact), else np.cumsum on a host copy."""
    ops = run.ops
    if ops.all(w % 1 == 0) and run.sum(ops.abs(w)) < 2.0**53:
        return ops.cumsum(v)
    return run.result(np.cumsum(ops.asnumpy(v)))


def _curve_inputs(run, y_true, y_score, sample_weight, types=("binary", "multiclass")):
    """(y_true labels, y_score, weights, unique labels) for the own path, or
    None (then scikit-learn runs on a host copy, raising its own errors):
    y_true must be of one of `types` (scikit-learn checks the type first)."""
    yt, ys = _as_labels(run, y_true), _scores_1d(run, y_score)
    if yt is None or ys is None or _label_type(run.ops.unique(yt)) not in types:
        return None
    check_consistent_length(y_true, y_score, sample_weight)
    w = _weights(run, sample_weight, yt.shape[0])
    if sample_weight is not None and w is None:
        return None
    return yt, ys, w, run.ops.unique(yt)


def _clf_curve(run, yt, ys, w, u, pos_label):
    """(fps, tps, thresholds) of scikit-learn's confusion_matrix_at_thresholds
    on the run's arrays (float64 counts; thresholds in y_score's dtype)."""
    from sklearn.utils.validation import _check_pos_label_consistency

    y_type = _label_type(u)
    if not (y_type == "binary" or (y_type == "multiclass" and pos_label is not None)):
        raise ValueError("{0} format is not supported".format(y_type))
    pos_label = _check_pos_label_consistency(pos_label, u)
    if isinstance(pos_label, np.generic):
        pos_label = pos_label.item()  # compared with device arrays below
    ops = run.ops
    assert_finite(run, ys, "")
    if w is not None:
        assert_finite(run, w, "sample_weight")
        keep = w != 0
        yt, ys, w = yt[keep], ys[keep], w[keep]
    t = ops.astype_f64(yt == pos_label)
    order = ops.argsort_desc(ys)
    ys, t = ys[order], t[order]
    n = t.shape[0]
    idx = ops.concat([ops.nonzero(ops.diff(ys) != 0), ops.asarray([n - 1], ys, dtype=np.int64)])
    if w is None:
        tps = ops.cumsum(t)[idx]
        fps = 1 + ops.astype_f64(idx) - tps
    else:
        w = w[order]
        tps = _weighted_cumsum(run, t * w, w)[idx]
        fps = _weighted_cumsum(run, (1 - t) * w, w)[idx]
    return fps, tps, ys[idx]


def _keep(ops, a, b):
    """Indices scikit-learn's drop_intermediate keeps: both ends and every
    point where a or b changes slope (``diff(., 2) != 0``, given as the masks)."""
    true = ops.asarray([True], a)
    return ops.nonzero(ops.concat([true, (a != 0) | (b != 0), true]))


def roc_curve(y_true, y_score, *, pos_label=None, sample_weight=None, drop_intermediate=True, device=None,
              numeric_mode=None):
    """Receiver operating characteristic (:func:`sklearn.metrics.roc_curve`).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
        Binary labels (or multiclass with ``pos_label``).
    y_score : array-like of shape (n_samples,)
    pos_label : int, float, bool or str, default=None
    sample_weight : array-like of shape (n_samples,), default=None
    drop_intermediate : bool, default=True
    {common}

    Returns
    -------
    fpr, tpr, thresholds : arrays of shape (n_thresholds,), the input's kind

    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.metrics import roc_curve
    >>> fpr, tpr, thr = roc_curve(np.array([0, 0, 1, 1]), np.array([0.1, 0.4, 0.35, 0.8]),
    ...                           numeric_mode="identical")
    >>> fpr, tpr
    (array([0. , 0. , 0.5, 0.5, 1. ]), array([0. , 0.5, 0.5, 1. , 1. ]))
    """
    run = Run(device, numeric_mode, (y_true, y_score, sample_weight))
    params = {"pos_label": pos_label, "drop_intermediate": drop_intermediate}
    if run.own:
        validate_params(_sk.roc_curve, {"y_true": y_true, "y_score": y_score, "sample_weight": sample_weight,
                                        **params})
        inputs = _curve_inputs(run, y_true, y_score, sample_weight)
        if inputs is not None:
            return _roc(run, *inputs, pos_label, drop_intermediate)
    yt, ys, sw = host(y_true, y_score, sample_weight)
    return _sk.roc_curve(yt, ys, sample_weight=sw, **params)


def _roc(run, yt, ys, w, u, pos_label, drop_intermediate):
    ops = run.ops
    fps, tps, thr = _clf_curve(run, yt, ys, w, u, pos_label)
    if drop_intermediate and fps.shape[0] > 2:
        keep = _keep(ops, ops.diff(fps, 2), ops.diff(tps, 2))
        fps, tps, thr = fps[keep], tps[keep], thr[keep]
    zero = ops.asarray([0.0], fps)
    tps, fps = ops.concat([zero, tps]), ops.concat([zero, fps])
    thr = ops.concat([ops.asarray([np.inf], fps), ops.astype_f64(thr)])
    if float(fps[-1]) <= 0:
        warnings.warn("No negative samples in y_true, false positive value should be meaningless",
                      UndefinedMetricWarning)
        fpr = ops.full(fps.shape[0], np.nan, fps)
    else:
        fpr = fps / fps[-1]
    if float(tps[-1]) <= 0:
        warnings.warn("No positive samples in y_true, true positive value should be meaningless",
                      UndefinedMetricWarning)
        tpr = ops.full(tps.shape[0], np.nan, tps)
    else:
        tpr = tps / tps[-1]
    return fpr, tpr, thr


def precision_recall_curve(y_true, y_score, *, pos_label=None, sample_weight=None, drop_intermediate=False,
                           device=None, numeric_mode=None):
    """Precision-recall pairs for different thresholds
    (:func:`sklearn.metrics.precision_recall_curve`).

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_score : array-like of shape (n_samples,)
    pos_label : int, float, bool or str, default=None
    sample_weight : array-like of shape (n_samples,), default=None
    drop_intermediate : bool, default=False
    {common}

    Returns
    -------
    precision, recall : arrays of shape (n_thresholds + 1,)
    thresholds : array of shape (n_thresholds,)
    """
    run = Run(device, numeric_mode, (y_true, y_score, sample_weight))
    params = {"pos_label": pos_label, "drop_intermediate": drop_intermediate}
    if run.own:
        validate_params(_sk.precision_recall_curve, {"y_true": y_true, "y_score": y_score,
                                                     "sample_weight": sample_weight, **params})
        inputs = _curve_inputs(run, y_true, y_score, sample_weight)
        if inputs is not None:
            return _pr(run, *inputs, pos_label, drop_intermediate)
    yt, ys, sw = host(y_true, y_score, sample_weight)
    return _sk.precision_recall_curve(yt, ys, sample_weight=sw, **params)


def _pr(run, yt, ys, w, u, pos_label, drop_intermediate):
    ops = run.ops
    fps, tps, thr = _clf_curve(run, yt, ys, w, u, pos_label)
    if drop_intermediate and fps.shape[0] > 2:
        keep = _keep(ops, ops.diff(tps[:-1]), ops.diff(tps[1:]))
        fps, tps, thr = fps[keep], tps[keep], thr[keep]
    ps = tps + fps
    nonzero = ps != 0
    precision = ops.where(nonzero, tps / ops.where(nonzero, ps, 1.0), 0.0)
    if float(tps[-1]) == 0:
        warnings.warn("No positive class found in y_true, recall is set to one for all thresholds.")
        recall = ops.full(tps.shape[0], 1.0, tps)
    else:
        recall = tps / tps[-1]
    return (ops.concat([ops.flip(precision), ops.asarray([1.0], tps)]),
            ops.concat([ops.flip(recall), ops.asarray([0.0], tps)]), ops.flip(thr))


def _auc(run, x, y):
    """scikit-learn's auc (direction check, trapezoids) with a canonical sum."""
    ops = run.ops
    if x.shape[0] < 2:
        raise ValueError("At least 2 points are needed to compute area under curve, but x.shape = %s"
                         % (tuple(x.shape),))
    direction = 1
    dx = ops.diff(x)
    if ops.any(dx < 0):
        if ops.all(dx <= 0):
            direction = -1
        else:
            raise ValueError("x is neither increasing nor decreasing : {}.".format(ops.asnumpy(x)))
    return float(direction * run.sum(dx * (y[1:] + y[:-1]) / 2.0))


def _binary_roc_auc(run, yt, ys, w, u, max_fpr):
    if u.shape[0] != 2:
        warnings.warn("Only one class is present in y_true. ROC AUC score is not defined in that case.",
                      UndefinedMetricWarning)
        return np.nan
    fpr, tpr, _ = _roc(run, yt, ys, w, u, u[1], True)
    if max_fpr is None or max_fpr == 1:
        return _auc(run, fpr, tpr)
    if max_fpr <= 0 or max_fpr > 1:
        raise ValueError("Expected max_fpr in range (0, 1], got: %r" % max_fpr)
    ops = run.ops
    stop = int(ops.searchsorted(fpr, ops.asarray([max_fpr], fpr), side="right")[0])
    x_interp = [float(fpr[stop - 1]), float(fpr[stop])]
    y_interp = [float(tpr[stop - 1]), float(tpr[stop])]
    tpr = ops.concat([tpr[:stop], ops.asarray([np.interp(max_fpr, x_interp, y_interp)], tpr)])
    fpr = ops.concat([fpr[:stop], ops.asarray([max_fpr], fpr, dtype=np.float64)])
    partial_auc = _auc(run, fpr, tpr)
    min_area = 0.5 * max_fpr**2
    max_area = max_fpr
    return 0.5 * (1 + (partial_auc - min_area) / (max_area - min_area))


def roc_auc_score(y_true, y_score, *, average="macro", sample_weight=None, max_fpr=None, multi_class="raise",
                  labels=None, device=None, numeric_mode=None):
    """Area under the ROC curve (:func:`sklearn.metrics.roc_auc_score`).

    The own path takes binary y_true with one score per sample (``max_fpr``
    included) and multiclass y_true ('ovr', 'ovo': scikit-learn's averages
    of binary areas); multilabel input takes scikit-learn's function on a
    host copy.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_classes)
    y_score : array-like of shape (n_samples,) or (n_samples, n_classes)
    average : {{'micro', 'macro', 'samples', 'weighted'}} or None, default='macro'
    sample_weight : array-like of shape (n_samples,), default=None
    max_fpr : float > 0 and <= 1, default=None
    multi_class : {{'raise', 'ovr', 'ovo'}}, default='raise'
    labels : array-like of shape (n_classes,), default=None
    {common}

    Returns
    -------
    auc : float

    Examples
    --------
    >>> from twinlearn.metrics import roc_auc_score
    >>> roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8], numeric_mode="identical")
    0.75
    """
    run = Run(device, numeric_mode, (y_true, y_score, sample_weight))
    params = {"average": average, "max_fpr": max_fpr, "multi_class": multi_class, "labels": labels}
    if run.own:
        validate_params(_sk.roc_auc_score, {"y_true": y_true, "y_score": y_score, "sample_weight": sample_weight,
                                            **params})
        inputs = _curve_inputs(run, y_true, y_score, sample_weight, ("binary",))
        if inputs is not None:
            return _binary_roc_auc(run, *inputs, max_fpr)
        out = _multiclass_roc_auc(run, y_true, y_score, sample_weight, params)
        if out is not None:
            return out
    yt, ys, sw = host(y_true, y_score, sample_weight)
    return _sk.roc_auc_score(yt, ys, sample_weight=sw, **params)


def _multiclass_roc_auc(run, y_true, y_score, sample_weight, params):
    """scikit-learn's one-vs-rest and one-vs-one areas of multiclass y_true
    from binary areas on the device; None when the own path does not take
    the input. scikit-learn's checks and warnings run on a surrogate with
    the same label set, score shape and parameters (one sample per label,
    uniform probabilities); the probability check reads the row sums."""
    ops = run.ops
    yt = _as_labels(run, y_true)
    S = run.place(y_score)
    if run.ops.kind == "numpy":
        S = np.asarray(S)
        if S.dtype.kind not in "biuf":
            return None
    if yt is None or not run.of_kind(S) or S.ndim != 2 or params["multi_class"] not in ("ovr", "ovo"):
        return None
    u = ops.unique(yt)
    if _label_type(u) != "multiclass" and not (_label_type(u) == "binary" and S.shape[1] > 2):
        return None
    assert_finite(run, S, "")
    c = S.shape[1]
    sw = None if sample_weight is None else np.ones(u.shape[0])
    with warnings.catch_warnings():  # its errors only: the warnings come from the areas below
        warnings.simplefilter("ignore")
        _sk.roc_auc_score(u, np.full((u.shape[0], c), 1.0 / c), sample_weight=sw, **params)
    check_consistent_length(yt, S, sample_weight)
    w = _weights(run, sample_weight, yt.shape[0])
    if sample_weight is not None and w is None:
        return None
    row = ops.row_sums(ops.f64(S))
    if not ops.all(ops.abs(1 - row) <= 1e-8 + 1e-5 * ops.abs(row)):  # np.allclose(1, row sums)
        raise ValueError("Target scores need to be probabilities for multiclass roc_auc, i.e. they should sum "
                         "up to 1.0 over classes")
    labels, average, max_fpr = params["labels"], params["average"], params["max_fpr"]
    classes = u if labels is None else np.asarray(labels)
    enc = ops.searchsorted(ops.asarray(classes, yt) if ops.kind != "numpy" else classes, yt)
    counts = ops.bincount(enc, c)
    present = np.array([0.0, 1.0])

    def binary(mask, scores, weights, n_pos, n):
        u_c = present if 0 < n_pos < n else present[[int(n_pos > 0)]]
        return _binary_roc_auc(run, ops.astype_f64(mask), scores, weights, u_c, max_fpr)

    n = yt.shape[0]
    if params["multi_class"] == "ovo":
        from itertools import combinations

        pairs = list(combinations(np.flatnonzero(counts), 2))
        scores, prevalence = np.empty(len(pairs)), np.empty(len(pairs)) if average == "weighted" else None
        for ix, (a, b) in enumerate(pairs):
            a_mask, b_mask = enc == int(a), enc == int(b)
            ab = a_mask | b_mask
            n_ab = int(counts[a] + counts[b])
            if prevalence is not None:
                prevalence[ix] = n_ab / n
            scores[ix] = (binary(a_mask[ab], S[ab, int(a)], None, counts[a], n_ab)
                          + binary(b_mask[ab], S[ab, int(b)], None, counts[b], n_ab)) / 2
        return float(np.average(scores, weights=prevalence))
    if average == "micro":
        Y = enc.reshape(-1, 1) == ops.arange(c, S).reshape(1, -1)
        wr = None if w is None else ops.repeat(w, c)
        return binary(ops.ravel(Y), ops.ravel(run.ops.f64(S)), wr, 1, 2)
    score = np.array([binary(enc == j, S[:, j], w, counts[j], n) for j in range(c)])
    if average is None:
        return score
    weight = None
    if average == "weighted":
        weight = counts.astype(np.float64) if w is None else np.array([run.sum(w[enc == j]) for j in range(c)])
        if np.isclose(weight.sum(), 0.0):
            return 0
        score[weight == 0] = 0
    return float(np.average(score, weights=weight))


def average_precision_score(y_true, y_score, *, average="macro", pos_label=1, sample_weight=None, device=None,
                            numeric_mode=None):
    """Average precision (:func:`sklearn.metrics.average_precision_score`).

    The own path takes binary y_true with one score per sample; multiclass
    and multilabel input take scikit-learn's function on a host copy.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,) or (n_samples, n_classes)
    y_score : array-like of shape (n_samples,) or (n_samples, n_classes)
    average : {{'micro', 'samples', 'weighted', 'macro'}} or None, default='macro'
    pos_label : int, float, bool or str, default=1
    sample_weight : array-like of shape (n_samples,), default=None
    {common}

    Returns
    -------
    average_precision : float
    """
    run = Run(device, numeric_mode, (y_true, y_score, sample_weight))
    params = {"average": average, "pos_label": pos_label}
    if run.own:
        validate_params(_sk.average_precision_score, {"y_true": y_true, "y_score": y_score,
                                                      "sample_weight": sample_weight, **params})
        inputs = _curve_inputs(run, y_true, y_score, sample_weight, ("binary",))
        if inputs is not None:
            u = inputs[3]
            if u.shape[0] == 2 and pos_label not in u:
                raise ValueError(f"pos_label={pos_label} is not a valid label. It should be one of {u}")
            precision, recall, _ = _pr(run, *inputs, pos_label, False)
            return float(max(0.0, -run.sum(run.ops.diff(recall) * precision[:-1])))
    yt, ys, sw = host(y_true, y_score, sample_weight)
    return _sk.average_precision_score(yt, ys, sample_weight=sw, **params)


def top_k_accuracy_score(y_true, y_score, *, k=2, normalize=True, sample_weight=None, labels=None, device=None,
                         numeric_mode=None):
    """Top-k accuracy (:func:`sklearn.metrics.top_k_accuracy_score`).

    The own path takes multiclass scores of shape (n_samples, n_classes):
    the true class is among the k best when fewer than k classes rank
    before it (a higher score, or an equal score and a higher class index:
    scikit-learn's reversed stable sort), an exact count per sample.

    Parameters
    ----------
    y_true : array-like of shape (n_samples,)
    y_score : array-like of shape (n_samples,) or (n_samples, n_classes)
    k : int, default=2
    normalize : bool, default=True
    sample_weight : array-like of shape (n_samples,), default=None
    labels : array-like of shape (n_classes,), default=None
    {common}

    Returns
    -------
    score : float
    """
    run = Run(device, numeric_mode, (y_true, y_score, sample_weight))
    params = {"k": k, "normalize": normalize, "labels": labels}
    if run.own:
        validate_params(_sk.top_k_accuracy_score, {"y_true": y_true, "y_score": y_score,
                                                   "sample_weight": sample_weight, **params})
        out = _top_k(run, y_true, y_score, sample_weight, k, normalize, labels)
        if out is not None:
            return out
    yt, ys, sw = host(y_true, y_score, sample_weight)
    return _sk.top_k_accuracy_score(yt, ys, sample_weight=sw, **params)


def _ranks_before(S, s_true, col, true_col):
    """Which classes rank before the true one in scikit-learn's order (a
    stable ascending argsort, reversed): a higher score, or an equal score
    and a higher class index."""
    return (S > s_true) | ((S == s_true) & (col > true_col))


def _top_k(run, y_true, y_score, sample_weight, k, normalize, labels):
    yt = _as_labels(run, y_true)
    S = run.place(y_score)
    if run.ops.kind == "numpy":
        S = np.asarray(S)
        if S.dtype.kind not in "biuf":
            return None
    if yt is None or not run.of_kind(S) or S.ndim != 2 or S.shape[1] < 3:
        return None
    check_consistent_length(yt, S, sample_weight)
    w = _weights(run, sample_weight, yt.shape[0])
    if sample_weight is not None and w is None:
        return None
    ops = run.ops
    u = ops.unique(yt)
    if _label_type(u) != "multiclass" and not (labels is not None and len(labels) > 2):
        return None
    assert_finite(run, S, "")
    # scikit-learn's checks and warnings on the same label set (one sample per label)
    _sk.top_k_accuracy_score(u, np.zeros((u.shape[0], S.shape[1])), k=k, labels=labels)
    classes = u if labels is None else np.unique(np.asarray(labels))
    enc = ops.searchsorted(ops.asarray(classes, yt) if ops.kind != "numpy" else classes, yt)
    s_true = ops.take_along_rows(S, enc).reshape(-1, 1)
    col = ops.arange(S.shape[1], S).reshape(1, -1)
    hits = ops.astype_f64(ops.count_true_rows(_ranks_before(S, s_true, col, enc.reshape(-1, 1))) < k)
    if normalize:
        return float(run.average(hits, w))
    return float(run.sum(hits if w is None else hits * w))


for _f in (roc_curve, precision_recall_curve, roc_auc_score, average_precision_score, top_k_accuracy_score):
    _f.__doc__ = _f.__doc__.replace("{common}", COMMON_PARAMS).replace("{{", "{").replace("}}", "}")


#: The own path of each function (device input, identical mode) for
#: docs/SUPPORT_MATRIX.md; 'host copy': scikit-learn on a host copy.
SUPPORT = {
    'roc_curve': 'binary: stable device sort, exact cumulative counts (non-integer weights: host cumsum)',
    'precision_recall_curve': 'as roc_curve',
    'roc_auc_score': 'binary (and max_fpr): as roc_curve, canonical trapezoid sum; multiclass / multilabel: host copy',
    'average_precision_score': 'binary: as roc_curve, canonical sum; multiclass / multilabel: host copy',
    'top_k_accuracy_score': 'multiclass scores: exact per-sample ranks, canonical sums; binary scores: host copy',
}
