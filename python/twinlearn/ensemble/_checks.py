"""The inputs of gradient boosting: X, y, sample weights and the eval set as
the core takes them, through twinlearn._io.

X is a C-contiguous float32/float64 matrix: a device array stays on its
device for a GPU fit (NaN allowed whatever nan_mode, infinity refused), host
data goes through scikit-learn's checks (NaN allowed unless
nan_mode='Forbidden'). Targets, weights and the eval set's labels are host
float64: the core reads them on the host whatever the device.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import validate_data

from .. import _io, _labels

#: y of a prediction: X alone is checked.
NO_Y = "no_y"


def check_input(est, X, device, *, reset, y=NO_Y):
    """(X, y) as arrays the backend for `device` takes (X not copied when usable).
    y=NO_Y: X alone (prediction), y returned as None; y=None at fit raises
    scikit-learn's message."""
    from ._categorical import frame_codes

    X = _io.place(frame_codes(est, X, reset), device)
    predicting = isinstance(y, str) and y == NO_Y
    if _io.is_device_array(X):
        X = _io.as_device_matrix(X, "X")
        n = X.shape[0]
        _io.check_device_shape(X, type(est).__name__)
        _io.check_n_features(est, X.shape[1], reset=reset)
        if predicting:
            y = None
        else:
            y = validate_data(est, X="no_validation", y=None if y is None else _io.to_numpy(y), reset=False)
            if y.shape[0] != n:
                raise ValueError(f"Found input variables with inconsistent numbers of samples: [{n}, {y.shape[0]}]")
        # Every nan_mode takes NaN on the device; its message names float64 whatever X's dtype.
        if _io.device_any(X, "inf"):
            raise ValueError(_io.INF_MESSAGE)
        return X, y
    if predicting:
        return _io.check_X(est, X, "cpu", reset=reset, for_fit=True, allow_nan=est._allow_nan()), None
    # A device y with host X (the CPU backend given device arrays) comes to the host too.
    return _io.validate_host(est, X, _io.to_host(y), accept_sparse=False, dtype=_io.FLOAT_DTYPES,
                         ensure_all_finite="allow-nan" if est._allow_nan() else True, reset=reset, order="C",
                         y_numeric=not est._is_classifier())


def probabilistic(y):
    """True for CrossEntropy targets given as probabilities (floats in [0, 1], not all 0 or 1)."""
    y = np.asarray(y)
    return y.dtype.kind == "f" and bool(np.all((y >= 0) & (y <= 1))) and not bool(np.all((y == 0) | (y == 1)))


#: The largest target magnitude of a regression (the fit's supported range).
FLOAT32_MAX = float(np.finfo(np.float32).max)


def check_target_magnitude(est, y):
    """A clear error for regression targets beyond float32's range. The
    predictions are float64, but the fit supports targets within float32's
    range only (scikit-learn's HistGradientBoostingRegressor fits such
    targets with 'invalid value' warnings and predicts a constant)."""
    largest = float(np.max(np.abs(y), initial=0.0))
    if largest > FLOAT32_MAX:
        raise ValueError(
            f"Input y holds values too large for {type(est).__name__}: its largest magnitude {largest:.4g} is "
            f"above {FLOAT32_MAX:.8g}, the largest float32, the limit of the boosters' targets. Scale y down."
        )


def encode_target(est, y, loss_name, classes_codes=None):
    """(labels as float64 codes for the core, number of classes); sets
    classes_ and n_classes_ for classification. classes_codes: y's (classes,
    codes) from _labels.integral_classes; None when the labels are not
    integral (then checked and sorted)."""
    if loss_name == "CrossEntropy" and probabilistic(y):
        # probabilistic targets: the classes are 0 and 1
        est.classes_ = np.array([0, 1])
        est.n_classes_ = 2
        return np.ascontiguousarray(y, dtype=np.float64), 2
    if not est._is_classifier():
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise ValueError("Input y contains NaN or infinity.")
        check_target_magnitude(est, y)
        return y, 1
    classes, codes = classes_codes if classes_codes is not None else _labels.checked_unique(y)
    if len(classes) < 2:
        raise ValueError(
            f"{type(est).__name__} needs samples of at least 2 classes in the data, but the data "
            f"contains only one class: {classes[0]!r}"
        )
    if loss_name in ("Logloss", "CrossEntropy") and len(classes) != 2:
        raise ValueError(
            f"Only binary classification is supported by loss={loss_name!r}: y has {len(classes)} classes; "
            "use loss='MultiClass' for more than two classes"
        )
    est.classes_ = classes
    est.n_classes_ = len(classes)
    return codes.astype(np.float64), len(classes)


def fit_weights(est, y, sample_weight, n):
    """The row weights of the fit (host float64, or None): sample_weight
    times the class weights (``class_weight``, where the estimator has it),
    as scikit-learn's HistGradientBoostingClassifier."""
    sw = _io.host_weights(sample_weight, n, np.float64)
    cw = getattr(est, "class_weight", None)
    if cw is None:
        return sw
    from sklearn.utils.class_weight import compute_sample_weight

    expanded = compute_sample_weight(cw, y)
    return np.ascontiguousarray(expanded if sw is None else sw * expanded, dtype=np.float64)


def check_eval_set(est, eval_set, device, loss_name):
    """(X, y codes, weights) of the eval set, as check_input and
    encode_target make the training data (the classes are the fit's)."""
    if isinstance(eval_set, list):
        if len(eval_set) != 1:
            raise ValueError("eval_set must be one (X, y) pair (or a list holding one)")
        eval_set = eval_set[0]
    if not isinstance(eval_set, tuple) or len(eval_set) not in (2, 3):
        raise ValueError("eval_set must be a tuple (X, y) or (X, y, sample_weight)")
    eX, ey = eval_set[0], eval_set[1]
    ew = eval_set[2] if len(eval_set) == 3 else None
    eX, _ = check_input(est, eX, device, reset=False)
    ey = np.asarray(_io.to_numpy(ey))
    if ey.ndim != 1 or ey.shape[0] != eX.shape[0]:
        raise ValueError(f"eval_set y has shape {ey.shape}, expected ({eX.shape[0]},)")
    if loss_name == "CrossEntropy" and probabilistic(ey):
        ey = ey.astype(np.float64)
    elif est._is_classifier():
        unknown = np.setdiff1d(np.unique(ey), est.classes_)
        if unknown.size:
            raise ValueError(f"eval_set y contains labels not seen in y: {unknown[:5].tolist()}")
        ey = np.searchsorted(est.classes_, ey).astype(np.float64)
    else:
        ey = ey.astype(np.float64)
    return eX, np.ascontiguousarray(ey), _io.host_weights(ew, eX.shape[0], np.float64)
