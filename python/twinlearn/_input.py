"""Input checks shared by estimators that take a dense feature matrix.

NumPy and other array-likes go through scikit-learn's ``validate_data`` (so
messages, ``n_features_in_`` and ``feature_names_in_`` are scikit-learn's);
device arrays (CuPy, PyTorch CUDA tensors, DLPack) stay on their device when
the estimator runs there, and are checked with the same messages.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from . import _array

FLOAT_DTYPES = (np.float64, np.float32)
INF_MESSAGE = "Input X contains infinity or a value too large for dtype('float64')."


def np_float_dtype(X):
    """The NumPy float dtype (float32 or float64) of a NumPy, CuPy or PyTorch array."""
    return np.dtype(np.float32) if str(X.dtype).endswith("float32") else np.dtype(np.float64)


def check_device_shape(X, owner=None):
    """scikit-learn's error for a device matrix with no samples or no
    features (naming `owner`, the estimator, when given)."""
    for count, what in ((X.shape[0], "sample"), (X.shape[1], "feature")):
        if count < 1:
            raise ValueError(
                f"Found array with 0 {what}(s) (shape={tuple(X.shape)}) while a minimum of 1 is "
                f"required{' by ' + owner if owner else ''}."
            )


def check_n_features(est, d, *, reset):
    """scikit-learn's n_features_in_ bookkeeping for a device array of `d`
    features (validate_data does it for NumPy input): set on reset, else checked."""
    if reset:
        est.n_features_in_ = d
        if hasattr(est, "feature_names_in_"):
            del est.feature_names_in_
    elif hasattr(est, "n_features_in_") and d != est.n_features_in_:
        raise ValueError(
            f"X has {d} features, but {type(est).__name__} is expecting {est.n_features_in_} features as input."
        )


def nan_message(name):
    """scikit-learn's error for NaN in the X of estimator `name` (which rejects it)."""
    return f"Input X contains NaN.\n{name} does not accept missing values encoded as NaN natively."


def _check_device_X(est, X, *, reset, copy, for_fit, allow_nan, find_inf=True, find_nan=True):
    X = _array.as_device_matrix(X, "X")
    name = type(est).__name__
    check_device_shape(X, name)
    check_n_features(est, X.shape[1], reset=reset)
    # With NaN allowed, a fit finds infinities in its own column reduction.
    want_inf = find_inf and (not allow_nan or not for_fit)
    want_nan = find_nan and not allow_nan
    if want_nan or want_inf:
        has_nan, has_inf = _array.device_nonfinite(X)
        if want_nan and has_nan:
            raise ValueError(nan_message(name))
        if want_inf and has_inf:
            raise ValueError(INF_MESSAGE)
    if copy:
        X = X.copy() if _array.kind(X) != "torch" else X.clone()
    return X


def check_X(est, X, device, *, reset, copy=False, for_fit=False, allow_nan=True, find_inf=True,
            find_nonfinite=True):
    """X as a C-contiguous float32/float64 array the backend for `device` accepts.

    Device arrays are kept on their device when `device` is a GPU and copied
    to NumPy when it is the CPU. With ``for_fit=True`` and ``allow_nan=True``
    the caller must detect infinities in device arrays itself (its column
    reduction sees them anyway, which saves a pass over the data).
    With ``find_inf=False`` infinities are never looked for here: the caller's
    kernel counts them in the pass that does the work, and the caller raises.
    With ``find_nonfinite=False`` X (NumPy, or a device array kept on its
    device) is not searched for NaN or infinities here at all: the caller's
    first pass over it (column statistics) counts both, and the caller raises
    scikit-learn's error (``raise_nonfinite``).
    """
    if _array.is_device_array(X):
        if device == "cpu":
            return check_X(
                est, _array.to_numpy(X), device, reset=reset, copy=copy, for_fit=for_fit, allow_nan=allow_nan,
                find_inf=find_inf,
            )
        return _check_device_X(
            est, X, reset=reset, copy=copy, for_fit=for_fit, allow_nan=allow_nan,
            find_inf=find_inf and find_nonfinite, find_nan=find_nonfinite,
        )
    if not find_nonfinite:
        finite = False
    elif not find_inf:
        finite = False if allow_nan else True
    else:
        finite = "allow-nan" if allow_nan else True
    return validate_data(
        est,
        X,
        accept_sparse=False,
        dtype=FLOAT_DTYPES,
        ensure_all_finite=finite,
        reset=reset,
        order="C",
        copy=copy,
        force_writeable=not for_fit,
    )


def sklearn_nonfinite_message(name, value, dtype):
    """scikit-learn's own text for `value` (NaN or an infinity) in the X, of
    `dtype`, of estimator `name`: its check run on a 1 x 1 array of the value,
    so the words follow the installed scikit-learn."""
    try:
        from sklearn.utils.validation import _assert_all_finite

        _assert_all_finite(np.full((1, 1), value, dtype=dtype), allow_nan=False, input_name="X", estimator_name=name)
    except ValueError as e:
        return str(e)
    except ImportError:
        pass
    return nan_message(name) if np.isnan(value) else INF_MESSAGE


def raise_nonfinite(name, n_rows, count, n_inf, dtype=np.float64):
    """scikit-learn's error (for estimator `name`, X of `dtype`) for the NaN or
    infinities that column statistics of X found: per column, `count` values
    neither NaN nor infinite and `n_inf` infinite ones, of `n_rows` (NaN is
    reported first, as scikit-learn does)."""
    count, n_inf = np.asarray(count), np.asarray(n_inf)
    if (count + n_inf < n_rows).any():
        raise ValueError(sklearn_nonfinite_message(name, np.nan, dtype))
    if (n_inf > 0).any():
        raise ValueError(sklearn_nonfinite_message(name, np.inf, dtype))


def check_sample_weight(sample_weight, X):
    """sample_weight as a 1-D array beside the checked X, in X's float dtype:
    None stays None; with a device X, a device array on X's device (NumPy
    weights are checked by scikit-learn and copied there)."""
    if sample_weight is None:
        return None
    dt = np_float_dtype(X)
    if not _array.is_device_array(X):
        return np.ascontiguousarray(_check_sample_weight(sample_weight, X, dtype=dt))
    if _array.is_device_array(sample_weight):
        sw = _array.as_device_matrix(sample_weight, "sample_weight", ensure_2d=False)
    else:
        sw = _array.from_numpy_like(
            X, _check_sample_weight(_array.to_numpy(sample_weight), np.empty((X.shape[0], 0)), dtype=dt)
        )
    if sw.ndim != 1 or sw.shape[0] != X.shape[0]:
        raise ValueError(f"sample_weight.shape == {tuple(sw.shape)}, expected ({X.shape[0]},)!")
    if np_float_dtype(sw) != dt:
        sw = sw.astype(dt) if _array.kind(sw) != "torch" else sw.to(X.dtype)
    return sw


def transform_elementwise(est, X, copy, run, *, allow_nan=True, fitted=True, counts_inf=False):
    """The shape of every elementwise transform: check X, pick the output (X
    itself when ``copy`` is False and X can be written, else a new array of
    the same kind), call ``run(module, ctx, X, out)``, and return out in the
    caller's array type.

    With ``counts_inf=True``, ``run`` returns the number of infinite entries
    its kernel saw (no separate pass looks for them) and a non-zero count
    raises scikit-learn's error."""
    if fitted:
        check_is_fitted(est)
    copy = copy if copy is not None else est.copy
    device = est._tl_device(X)
    orig = X
    if _array.is_device_array(X) and device == "cpu":
        X = _array.to_numpy(X)
    Xc = check_X(est, X, device, reset=False, for_fit=True, allow_nan=allow_nan, find_inf=not counts_inf)
    writable = not isinstance(Xc, np.ndarray) or Xc.flags.writeable
    out = Xc if (not copy and Xc is X and writable) else _array.empty_like_kind(Xc, Xc.shape, Xc.dtype)
    mod, ctx = est._tl_context(device, Xc)
    n_inf = run(mod, ctx, Xc, out)
    if counts_inf and n_inf:
        raise ValueError(INF_MESSAGE)
    if _array.is_device_array(orig) and not _array.is_device_array(out):
        return _array.from_numpy_like(orig, out)
    return out


def zeros_to_one(scale):
    """scikit-learn's rule for scales of (near-)constant features: below
    10 * eps of their dtype they become 1 (NaN stays NaN)."""
    scale = np.array(scale, copy=True)
    scale[scale < 10 * np.finfo(scale.dtype).eps] = 1.0
    return scale
