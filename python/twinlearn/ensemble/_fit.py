"""The fit of gradient boosting: checked inputs, the core's parameters, one
call of the core's gbdt_fit, and the fitted attributes it leaves."""

from __future__ import annotations

import numpy as np

from .. import _labels, _native as native, identity
from ._categorical import encode, encode_fit
from ._checks import check_eval_set, check_input, encode_target, fit_weights
from ._model import set_model, truncate
from ._params import MULTICLASS_LOSSES, draws, sampling_seed
from ._progress import FitProgress
from ._warm import NOTHING_TO_DO, check_compatible, check_no_categorical, previous_model


def core_params(est, loss_name, n_classes, early_stopping_rounds, metric):
    """Every GbdtParams field of this fit, by name (a dict for
    twinlearn._native.params): the estimator's (``_core_params``) and the fit's."""
    params = est._core_params()
    if draws(params):
        params["seed"] = sampling_seed(est.random_state)
    params.update(
        loss=loss_name,
        loss_param=est._core_loss_param(),
        n_classes=max(n_classes, 2),
        early_stopping_rounds=int(early_stopping_rounds or 0),
        eval_metric=metric,
    )
    if params["boost_from_average"] is None:
        params["boost_from_average"] = loss_name not in MULTICLASS_LOSSES
    return params


def fit(est, X, y, sample_weight=None, eval_set=None, early_stopping_rounds=None, use_best_model=None,
        init_model=None):
    """Fits est (a _BoostingCore) and returns it. init_model, or est itself
    under warm_start: the fitted model to continue (_warm)."""
    est._tl_validate_params()
    est._check_core_params()
    prev = previous_model(est, init_model)
    if prev is NOTHING_TO_DO:
        return est
    check_no_categorical(est, prev)
    device = est._tl_device(X)
    X, y = check_input(est, X, device, reset=True, y=y)
    y = np.asarray(y)
    counted = None
    if est._is_classifier():
        counted = _labels.integral_classes(y)
        loss_name = est._core_loss(len(counted[0]) if counted is not None else len(np.unique(y)))
    else:
        loss_name = est._core_loss(0)
    y_codes, n_classes = encode_target(est, y, loss_name, counted)
    sw = fit_weights(est, y, sample_weight, X.shape[0])
    # The scikit-learn-shaped boosters' early stopping and verbose lines (None for GradientBoosting).
    monitor = est._round_monitor(X.shape[0], loss_name, n_classes)
    if prev is not None and monitor is not None and monitor.stopping:
        # HistGradientBoosting carries the scores of the earlier fit on; here a
        # continued fit's scores would restart at its first new tree.
        raise ValueError("warm_start=True with early stopping is not supported (early_stopping=True, or 'auto' "
                         "with more than 10 000 rows): pass early_stopping=False to add trees to the model")
    if monitor is not None:
        X, y_codes, sw = monitor.split(X, y_codes, sw)
    X = encode_fit(est, X, y_codes, n_classes, loss_name)
    eX = ey = ew = None
    if eval_set is not None:
        eX, ey, ew = check_eval_set(est, eval_set, device, loss_name)
        eX = encode(est, eX)
    elif monitor is not None:
        eX, ey, ew = monitor.eval_set(X, y_codes, sw, lambda A: encode(est, A))
        monitor.prepare_scorers(y_codes, sw)
    metric = est._core_eval_metric(loss_name) if monitor is None else monitor.core_metric
    params = core_params(est, loss_name, n_classes, early_stopping_rounds, metric)
    init = None
    if prev is not None:
        check_compatible(est, prev, X, loss_name, n_classes if loss_name in MULTICLASS_LOSSES else 1, params)
        params["n_estimators"] = est._tl_new_trees
        init = prev._model_dict()
    mod, ctx = est._tl_context(device, X)
    period = est._verbose_period()
    progress = callback = None
    train_loss_every = 0
    if period:
        progress = callback = FitProgress(period, show_learn=eX is None or metric == "Loss")
        train_loss_every = period if progress.show_learn else 0
    if monitor is not None:
        callback, train_loss_every = monitor, monitor.train_loss_every
        monitor.begin()
    try:
        result = mod.gbdt_fit(ctx, X, y_codes, sw, native.params(mod.GbdtParams, **params), eval_X=eX, eval_y=ey,
                              eval_weight=ew, callback=callback, train_loss_every=train_loss_every,
                              init_model=init)
    finally:
        if progress is not None:
            progress.close()
    set_model(est, result)
    if est.grow_policy_ != params["grow_policy"]:
        raise RuntimeError(f"the core fitted grow_policy {est.grow_policy_!r}, not the "
                           f"{params['grow_policy']!r} requested")
    est._loss_name = loss_name
    est._nan_mode = params["nan_mode"]
    est.evals_result_ = {}
    est.best_iteration_ = None
    if monitor is not None:
        monitor.finish(est)
    elif eX is not None:
        _keep_best(est, result, metric, loss_name, use_best_model, early_stopping_rounds, progress,
                   0 if init is None else len(init["tree_depth"]))
    est.n_estimators_ = int(len(est.tree_depth_))
    for key in ("borders_", "split_feature_", "split_bin_", "split_nan_right_", "leaf_values_", "base_score_",
                "leaf_count_"):
        identity.record(f"{type(est).__name__}.{key}", getattr(est, key))
    est._tl_record_fit(device, "identical")
    return est


def _keep_best(est, result, metric, loss_name, use_best_model, early_stopping_rounds, progress, n_init=0):
    """The eval history, the best iteration, the model cut there (unless
    use_best_model is False) and the verbose summary of a fit with an eval set.
    n_init: the trees of the model this fit continued; the history covers the
    new rounds only and best_iteration_ counts the model's trees (>= n_init)."""
    history = {}
    if metric != "Loss":
        history[metric] = np.asarray(result.eval_metric).tolist()
    history[est._metric_name(loss_name)] = np.asarray(result.eval_loss).tolist()
    est.evals_result_ = {"validation": history}
    est.best_iteration_ = n_init + int(result.best_iteration)
    n_done = len(est.tree_depth_)
    if use_best_model is None or use_best_model:
        truncate(est, est.best_iteration_ + 1)
    if progress is not None:
        best = next(iter(history.values()))[est.best_iteration_ - n_init]
        lines = []
        if result.stopped_early:
            lines.append(f"Stopped by overfitting detector  ({int(early_stopping_rounds)} iterations wait)")
        lines += ["", f"bestTest = {best:.16g}", f"bestIteration = {est.best_iteration_}", ""]
        if len(est.tree_depth_) < n_done:
            lines.append(f"Shrink model to first {len(est.tree_depth_)} iterations.")
        progress.summary(lines)
