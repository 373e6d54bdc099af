"""Regression metrics with scikit-learn's signatures, results, errors and warnings.

Host input outside identical mode is scikit-learn's own computation. On the
own path (device input, or ``numeric_mode='identical'``) the per-sample
terms are scikit-learn's expressions evaluated elementwise on the input's
device in float64, every sum over samples is a canonical column sum
(weighted means ``sum(x * w) / sum(w)``, unweighted ``sum(x) / n``), and the
few per-output values then go through scikit-learn's own final steps on
the host (``_assemble_fraction_of_explained_deviance``, ``_average`` over
outputs). The results differ from scikit-learn's by the order of the sums
only (docs/NUMERICS.md, "Metrics") and are the same bits on a CPU and a
GPU. Medians and weighted percentiles (median_absolute_error,
d2_absolute_error_score, d2_pinball_score) take scikit-learn's function on
a host copy.
"""

from __future__ import annotations

import warnings

import numpy as np
import sklearn.metrics as _sk
from sklearn.exceptions import UndefinedMetricWarning

from ._common import COMMON_PARAMS, Run, assert_finite, check_consistent_length, host, validate_params

_MULTIOUTPUT = ("raw_values", "uniform_average", "variance_weighted")


def _targets(run, y_true, y_pred, sample_weight, multioutput):
    """scikit-learn's _check_reg_targets on the own path: (y_true, y_pred)
    as float64 (n_samples, n_outputs) arrays of the run's kind, the weights
    (float64, or None) and multioutput (a string, None or a host array)."""
    if run.ops.kind == "numpy":
        from sklearn.metrics._regression import _check_reg_targets

        _, yt, yp, sw, mo = _check_reg_targets(run.place(y_true), run.place(y_pred), run.place(sample_weight),
                                               multioutput, dtype=np.float64)
        return yt, yp, (None if sw is None else np.ascontiguousarray(sw, dtype=np.float64)), mo
    # Device arrays: the same checks and messages, reading only shapes and flags.
    ops = run.ops
    check_consistent_length(y_true, y_pred, sample_weight)
    yt, yp = run.place(y_true), run.place(y_pred)
    for y in (yt, yp):
        if not run.of_kind(y):
            raise TypeError(f"{type(y).__name__} input beside {run.ops.kind} arrays: give numeric arrays")
        if y.ndim > 2:
            raise ValueError(f"Found array with dim {y.ndim}, while dim <= 2 is required.")
        assert_finite(run, y, "")
    yt, yp = ops.f64(yt), ops.f64(yp)
    yt = yt.reshape(-1, 1) if yt.ndim == 1 else yt
    yp = yp.reshape(-1, 1) if yp.ndim == 1 else yp
    if yt.shape[1] != yp.shape[1]:
        raise ValueError(f"y_true and y_pred have different number of output ({yt.shape[1]}!={yp.shape[1]})")
    w = None
    if sample_weight is not None:
        w = run.place(sample_weight)
        if not hasattr(w, "shape") or not run.of_kind(w) or w.ndim != 1:
            from sklearn.utils.validation import _check_sample_weight  # its error, on a host copy

            _check_sample_weight(host(sample_weight)[0], np.empty(yt.shape[0]))
        assert_finite(run, w, "sample_weight")
        w = ops.f64(w)
    n_outputs = yt.shape[1]
    if isinstance(multioutput, str):
        if multioutput not in _MULTIOUTPUT:
            raise ValueError(f"Allowed 'multioutput' string values are {_MULTIOUTPUT}. "
                             f"You provided multioutput={multioutput!r}")
    elif multioutput is not None:
        multioutput = np.asarray(host(multioutput)[0], dtype=np.float64)
        if n_outputs == 1:
            raise ValueError("Custom weights are useful only in multi-output cases.")
        elif n_outputs != multioutput.shape[0]:
            raise ValueError(f"There must be equally many custom weights ({multioutput.shape[0]}) as outputs "
                             f"({n_outputs}).")
    return yt, yp, w, multioutput


def _output_average(run, errors, multioutput):
    """scikit-learn's last step over the per-output values (host, small)."""
    from sklearn.utils._array_api import _average

    if isinstance(multioutput, str):
        if multioutput == "raw_values":
            return run.result(errors)
        elif multioutput == "uniform_average":
            multioutput = None
    return float(_average(errors, weights=multioutput, xp=np))


def _fraction(run, numerator, denominator, multioutput, force_finite):
    from sklearn.metrics._regression import _assemble_fraction_of_explained_deviance

    out = _assemble_fraction_of_explained_deviance(numerator, denominator, numerator.shape[0], multioutput,
                                                   force_finite, np, None)
    return run.result(out) if isinstance(out, np.ndarray) else out


def _start(sk_func, y_true, y_pred, sample_weight, device, numeric_mode, params):
    run = Run(device, numeric_mode, (y_true, y_pred, sample_weight))
    if run.own:
        args = {"y_true": y_true, "y_pred": y_pred, **params}
        if "sample_weight" in sk_func._skl_parameter_constraints:
            args["sample_weight"] = sample_weight
        validate_params(sk_func, args)
    return run


def _sk_call(sk_func, y_true, y_pred, sample_weight, params):
    yt, yp, sw = host(y_true, y_pred, sample_weight)
    return sk_func(yt, yp, sample_weight=sw, **params)


def _error_metric(sk_func, term, y_true, y_pred, sample_weight, multioutput, device, numeric_mode, extra=None):
    """A mean per-sample error: term(y_true, y_pred) averaged over samples
    per output, then over outputs."""
    params = {"multioutput": multioutput, **(extra or {})}
    run = _start(sk_func, y_true, y_pred, sample_weight, device, numeric_mode, params)
    if not run.own:
        return _sk_call(sk_func, y_true, y_pred, sample_weight, params)
    yt, yp, w, mo = _targets(run, y_true, y_pred, sample_weight, multioutput)
    return _output_average(run, run.column_average(term(run.ops, yt, yp), w), mo)


_ERR_DOC = """{what} (:func:`sklearn.metrics.{name}`).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
    sample_weight : array-like of shape (n_samples,), default=None
    {extra}multioutput : {{'raw_values', 'uniform_average'}} or array-like of shape (n_outputs,), \
default='uniform_average'
    {common}

    Returns
    -------
    loss : float or ndarray of shape (n_outputs,)
    """


def mean_squared_error(y_true, y_pred, *, sample_weight=None, multioutput="uniform_average", device=None,
                       numeric_mode=None):
    return _error_metric(_sk.mean_squared_error, lambda ops, t, p: (t - p) ** 2, y_true, y_pred, sample_weight,
                         multioutput, device, numeric_mode)


def root_mean_squared_error(y_true, y_pred, *, sample_weight=None, multioutput="uniform_average", device=None,
                            numeric_mode=None):
    params = {"multioutput": multioutput}
    run = _start(_sk.root_mean_squared_error, y_true, y_pred, sample_weight, device, numeric_mode, params)
    if not run.own:
        return _sk_call(_sk.root_mean_squared_error, y_true, y_pred, sample_weight, params)
    yt, yp, w, mo = _targets(run, y_true, y_pred, sample_weight, multioutput)
    return _output_average(run, np.sqrt(run.column_average((yt - yp) ** 2, w)), mo)


def mean_absolute_error(y_true, y_pred, *, sample_weight=None, multioutput="uniform_average", device=None,
                        numeric_mode=None):
    return _error_metric(_sk.mean_absolute_error, lambda ops, t, p: ops.abs(p - t), y_true, y_pred, sample_weight,
                         multioutput, device, numeric_mode)


def mean_absolute_percentage_error(y_true, y_pred, *, sample_weight=None, multioutput="uniform_average",
                                   device=None, numeric_mode=None):
    eps = np.finfo(np.float64).eps
    return _error_metric(_sk.mean_absolute_percentage_error,
                         lambda ops, t, p: ops.abs(p - t) / ops.maximum_scalar(ops.abs(t), eps),
                         y_true, y_pred, sample_weight, multioutput, device, numeric_mode)


def mean_pinball_loss(y_true, y_pred, *, sample_weight=None, alpha=0.5, multioutput="uniform_average", device=None,
                      numeric_mode=None):
    def term(ops, t, p):
        diff = t - p
        sign = ops.astype_f64(diff >= 0)
        return alpha * sign * diff - (1 - alpha) * (1 - sign) * diff

    return _error_metric(_sk.mean_pinball_loss, term, y_true, y_pred, sample_weight, multioutput, device,
                         numeric_mode, {"alpha": alpha})


mean_squared_error.__doc__ = _ERR_DOC.format(what="Mean squared error", name="mean_squared_error", extra="",
                                             common=COMMON_PARAMS)
root_mean_squared_error.__doc__ = _ERR_DOC.format(what="Root mean squared error", name="root_mean_squared_error",
                                                  extra="", common=COMMON_PARAMS)
mean_absolute_error.__doc__ = _ERR_DOC.format(what="Mean absolute error", name="mean_absolute_error", extra="",
                                              common=COMMON_PARAMS)
mean_absolute_percentage_error.__doc__ = _ERR_DOC.format(
    what="Mean absolute percentage error", name="mean_absolute_percentage_error", extra="", common=COMMON_PARAMS)
mean_pinball_loss.__doc__ = _ERR_DOC.format(what="Pinball loss", name="mean_pinball_loss",
                                            extra="alpha : float, default=0.5\n    ", common=COMMON_PARAMS)


def r2_score(y_true, y_pred, *, sample_weight=None, multioutput="uniform_average", force_finite=True, device=None,
             numeric_mode=None):
    """R^2, the coefficient of determination (:func:`sklearn.metrics.r2_score`).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
    sample_weight : array-like of shape (n_samples,), default=None
    multioutput : {{'raw_values', 'uniform_average', 'variance_weighted'}} or array-like, \
default='uniform_average'
    force_finite : bool, default=True
    {common}

    Returns
    -------
    z : float or ndarray of shape (n_outputs,)

    Examples
    --------
    >>> from twinlearn.metrics import r2_score
    >>> r2_score([3, -0.5, 2, 7], [2.5, 0.0, 2, 8], numeric_mode="identical")
    0.9486081370449679
    """
    params = {"multioutput": multioutput, "force_finite": force_finite}
    run = _start(_sk.r2_score, y_true, y_pred, sample_weight, device, numeric_mode, params)
    if not run.own:
        return _sk_call(_sk.r2_score, y_true, y_pred, sample_weight, params)
    yt, yp, w, mo = _targets(run, y_true, y_pred, sample_weight, multioutput)
    if yp.shape[0] < 2:
        warnings.warn("R^2 score is not well-defined with less than two samples.", UndefinedMetricWarning)
        return float("nan")
    ops = run.ops
    weight = 1.0 if w is None else w.reshape(-1, 1)
    numerator = run.column_sums(weight * (yt - yp) ** 2)
    mean = ops.asarray(run.column_average(yt, w), yt).reshape(1, -1)
    denominator = run.column_sums(weight * (yt - mean) ** 2)
    return _fraction(run, numerator, denominator, mo, force_finite)


def explained_variance_score(y_true, y_pred, *, sample_weight=None, multioutput="uniform_average",
                             force_finite=True, device=None, numeric_mode=None):
    """Explained variance (:func:`sklearn.metrics.explained_variance_score`).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
    sample_weight : array-like of shape (n_samples,), default=None
    multioutput : {{'raw_values', 'uniform_average', 'variance_weighted'}} or array-like, \
default='uniform_average'
    force_finite : bool, default=True
    {common}

    Returns
    -------
    score : float or ndarray of shape (n_outputs,)
    """
    params = {"multioutput": multioutput, "force_finite": force_finite}
    run = _start(_sk.explained_variance_score, y_true, y_pred, sample_weight, device, numeric_mode, params)
    if not run.own:
        return _sk_call(_sk.explained_variance_score, y_true, y_pred, sample_weight, params)
    yt, yp, w, mo = _targets(run, y_true, y_pred, sample_weight, multioutput)
    ops = run.ops
    diff = yt - yp
    diff_avg = ops.asarray(run.column_average(diff, w), yt).reshape(1, -1)
    numerator = run.column_average((diff - diff_avg) ** 2, w)
    true_avg = ops.asarray(run.column_average(yt, w), yt).reshape(1, -1)
    denominator = run.column_average((yt - true_avg) ** 2, w)
    return _fraction(run, numerator, denominator, mo, force_finite)


def max_error(y_true, y_pred, *, device=None, numeric_mode=None):
    """The largest absolute residual (:func:`sklearn.metrics.max_error`); exact
    (a selection) on every device.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
    {common}

    Returns
    -------
    max_error : float
    """
    run = _start(_sk.max_error, y_true, y_pred, None, device, numeric_mode, {})
    if not run.own:
        yt, yp = host(y_true, y_pred)
        return _sk.max_error(yt, yp)
    yt, yp, _, _ = _targets(run, y_true, y_pred, None, None)
    if yt.shape[1] > 1:
        raise ValueError("Multioutput not supported in max_error")
    return run.ops.max(run.ops.abs(yt - yp))


def _tweedie_check(ops, yt, yp, power, name):
    if yt.shape[1] > 1:
        raise ValueError(f"Multioutput not supported in {name}")
    message = f"Mean Tweedie deviance error with power={power} can only be used on "
    if power < 0:
        if ops.any(yp <= 0):
            raise ValueError(message + "strictly positive y_pred.")
    elif 1 <= power < 2:
        if ops.any(yt < 0) or ops.any(yp <= 0):
            raise ValueError(message + "non-negative y and strictly positive y_pred.")
    elif power >= 2:
        if ops.any(yt <= 0) or ops.any(yp <= 0):
            raise ValueError(message + "strictly positive y and y_pred.")


def _deviance(run, yt, yp, p):
    """scikit-learn's per-sample Tweedie deviance (yp an array or a float),
    its log and powers by the project's own functions (Run.math, Run.pow)."""
    ops = run.ops
    yp = yp if hasattr(yp, "shape") else ops.full(yt.shape[0], float(yp), yt)
    if p < 0:
        return 2 * (run.pow(ops.where(yt > 0, yt, 0.0), 2 - p) / ((1 - p) * (2 - p))
                    - yt * run.pow(yp, 1 - p) / (1 - p) + run.pow(yp, 2 - p) / (2 - p))
    if p == 0:
        return (yt - yp) ** 2
    if p == 1:
        return 2 * (run.xlogy(yt, yt / yp) - yt + yp)
    if p == 2:
        return 2 * (run.math("log", yp / yt) + yt / yp - 1)
    return 2 * (run.pow(yt, 2 - p) / ((1 - p) * (2 - p)) - yt * run.pow(yp, 1 - p) / (1 - p)
                + run.pow(yp, 2 - p) / (2 - p))


def _tweedie(sk_func, y_true, y_pred, sample_weight, power, device, numeric_mode, params, name):
    run = _start(sk_func, y_true, y_pred, sample_weight, device, numeric_mode, params)
    if not run.own:
        return None, _sk_call(sk_func, y_true, y_pred, sample_weight, params)
    yt, yp, w, _ = _targets(run, y_true, y_pred, sample_weight, None)
    _tweedie_check(run.ops, yt, yp, power, name)
    return (run, yt[:, 0], yp[:, 0], w), None


def mean_tweedie_deviance(y_true, y_pred, *, sample_weight=None, power=0, device=None, numeric_mode=None):
    """Mean Tweedie deviance (:func:`sklearn.metrics.mean_tweedie_deviance`).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), default=None
    power : float, default=0
    {common}

    Returns
    -------
    loss : float
    """
    own, out = _tweedie(_sk.mean_tweedie_deviance, y_true, y_pred, sample_weight, power, device, numeric_mode,
                        {"power": power}, "mean_tweedie_deviance")
    if own is None:
        return out
    run, yt, yp, w = own
    return float(run.average(_deviance(run, yt, yp, power), w))


def mean_poisson_deviance(y_true, y_pred, *, sample_weight=None, device=None, numeric_mode=None):
    """Mean Poisson deviance (:func:`sklearn.metrics.mean_poisson_deviance`),
    the Tweedie deviance with power 1.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), default=None
    {common}

    Returns
    -------
    loss : float
    """
    return mean_tweedie_deviance(y_true, y_pred, sample_weight=sample_weight, power=1, device=device,
                                 numeric_mode=numeric_mode)


def mean_gamma_deviance(y_true, y_pred, *, sample_weight=None, device=None, numeric_mode=None):
    """Mean Gamma deviance (:func:`sklearn.metrics.mean_gamma_deviance`), the
    Tweedie deviance with power 2.

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), default=None
    {common}

    Returns
    -------
    loss : float
    """
    return mean_tweedie_deviance(y_true, y_pred, sample_weight=sample_weight, power=2, device=device,
                                 numeric_mode=numeric_mode)


def d2_tweedie_score(y_true, y_pred, *, sample_weight=None, power=0, device=None, numeric_mode=None):
    """D^2 regression score with the Tweedie deviance
    (:func:`sklearn.metrics.d2_tweedie_score`).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,)
    sample_weight : array-like of shape (n_samples,), default=None
    power : float, default=0
    {common}

    Returns
    -------
    z : float
    """
    run = _start(_sk.d2_tweedie_score, y_true, y_pred, sample_weight, device, numeric_mode, {"power": power})
    if not run.own:
        return _sk_call(_sk.d2_tweedie_score, y_true, y_pred, sample_weight, {"power": power})
    yt, yp, w, _ = _targets(run, y_true, y_pred, sample_weight, None)
    if yt.shape[1] > 1:
        raise ValueError("Multioutput not supported in d2_tweedie_score")
    if yp.shape[0] < 2:
        warnings.warn("D^2 score is not well-defined with less than two samples.", UndefinedMetricWarning)
        return float("nan")
    _tweedie_check(run.ops, yt, yp, power, "mean_tweedie_deviance")
    yt, yp = yt[:, 0], yp[:, 0]
    numerator = run.average(_deviance(run, yt, yp, power), w)
    # scikit-learn's scalar mean, as an array of it (the same operations per element)
    y_avg = run.ops.full(yt.shape[0], run.average(yt, w), yt)
    denominator = run.average(_deviance(run, yt, y_avg, power), w)
    return 1 - numerator / denominator


def _host_only(sk_func, y_true, y_pred, sample_weight, device, numeric_mode, params):
    Run(device, numeric_mode, (y_true, y_pred, sample_weight))
    return _sk_call(sk_func, y_true, y_pred, sample_weight, params)


def median_absolute_error(y_true, y_pred, *, multioutput="uniform_average", sample_weight=None, device=None,
                          numeric_mode=None):
    """Median absolute error (:func:`sklearn.metrics.median_absolute_error`);
    scikit-learn on the host (device input is copied there).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
    multioutput : {{'raw_values', 'uniform_average'}} or array-like, default='uniform_average'
    sample_weight : array-like of shape (n_samples,), default=None
    {common}

    Returns
    -------
    loss : float or ndarray of shape (n_outputs,)
    """
    return _host_only(_sk.median_absolute_error, y_true, y_pred, sample_weight, device, numeric_mode,
                      {"multioutput": multioutput})


def d2_pinball_score(y_true, y_pred, *, sample_weight=None, alpha=0.5, multioutput="uniform_average", device=None,
                     numeric_mode=None):
    """D^2 regression score with the pinball loss
    (:func:`sklearn.metrics.d2_pinball_score`); scikit-learn on the host
    (device input is copied there).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
    sample_weight : array-like of shape (n_samples,), default=None
    alpha : float, default=0.5
    multioutput : {{'raw_values', 'uniform_average'}} or array-like, default='uniform_average'
    {common}

    Returns
    -------
    score : float or ndarray
    """
    return _host_only(_sk.d2_pinball_score, y_true, y_pred, sample_weight, device, numeric_mode,
                      {"alpha": alpha, "multioutput": multioutput})


def d2_absolute_error_score(y_true, y_pred, *, sample_weight=None, multioutput="uniform_average", device=None,
                            numeric_mode=None):
    """D^2 regression score with the absolute error
    (:func:`sklearn.metrics.d2_absolute_error_score`); scikit-learn on the
    host (device input is copied there).

    Parameters
    ----------
    y_true, y_pred : array-like of shape (n_samples,) or (n_samples, n_outputs)
    sample_weight : array-like of shape (n_samples,), default=None
    multioutput : {{'raw_values', 'uniform_average'}} or array-like, default='uniform_average'
    {common}

    Returns
    -------
    score : float or ndarray
    """
    return _host_only(_sk.d2_absolute_error_score, y_true, y_pred, sample_weight, device, numeric_mode,
                      {"multioutput": multioutput})


for _f in (r2_score, explained_variance_score, max_error, mean_tweedie_deviance, mean_poisson_deviance,
           mean_gamma_deviance, d2_tweedie_score, median_absolute_error, d2_pinball_score, d2_absolute_error_score,
           mean_squared_error, root_mean_squared_error, mean_absolute_error, mean_absolute_percentage_error,
           mean_pinball_loss):
    _f.__doc__ = _f.__doc__.replace("{common}", COMMON_PARAMS).replace("{{", "{").replace("}}", "}")


#: The own path of each function (device input, identical mode) for
#: docs/SUPPORT_MATRIX.md; 'host copy': scikit-learn on a host copy.
SUPPORT = {
    'r2_score': 'device elementwise terms, canonical column sums',
    'explained_variance_score': 'device elementwise terms, canonical column sums',
    'mean_squared_error': 'device elementwise terms, canonical column sums',
    'root_mean_squared_error': 'device elementwise terms, canonical column sums',
    'mean_absolute_error': 'device elementwise terms, canonical column sums',
    'mean_absolute_percentage_error': 'device elementwise terms, canonical column sums',
    'mean_pinball_loss': 'device elementwise terms, canonical column sums',
    'mean_tweedie_deviance': 'device elementwise terms, canonical column sums',
    'mean_poisson_deviance': 'device elementwise terms, canonical column sums',
    'mean_gamma_deviance': 'device elementwise terms, canonical column sums',
    'd2_tweedie_score': 'device elementwise terms, canonical column sums',
    'max_error': 'device selection (exact)',
    'median_absolute_error': 'host copy (medians, weighted percentiles)',
    'd2_absolute_error_score': 'host copy (medians, weighted percentiles)',
    'd2_pinball_score': 'host copy (medians, weighted percentiles)',
}
