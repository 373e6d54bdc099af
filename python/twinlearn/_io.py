"""The input/output layer every estimator and function goes through.

(Over 700 lines: one layer, read as one: every rule below is a check each
estimator meets, and keeping them in one file keeps them from drifting apart.)

One place for what an array must be before it reaches a backend, and what a
result is when it comes back:

- **Kinds.** NumPy arrays and array-likes (lists, pandas) are host data.
  Device arrays are taken zero-copy: anything with ``__dlpack__`` (CuPy
  arrays, PyTorch CUDA tensors) or ``__cuda_array_interface__`` (through
  CuPy). :func:`kind`, :func:`is_device_array`, :func:`device_of`.
- **Placement.** A device array stays on its device when the work runs on a
  GPU and is copied to the host when it runs on the CPU (:func:`place`).
- **dtypes.** float32 stays float32; every other real dtype (integers,
  booleans, float16, float64) computes in float64, as in scikit-learn;
  complex data is refused (:data:`FLOAT_DTYPES`, :func:`np_float_dtype`).
- **Layout.** What reaches a backend is C-contiguous.
- **NaN and infinity.** Refused unless the estimator takes missing values;
  the error is scikit-learn's own text (:func:`sklearn_nonfinite_message`).
  A backend pass that counts them anyway (column statistics) may report them
  instead of a separate pass (:func:`raise_nonfinite`).
- **Text.** Strings (a string dtype, or str / bytes objects, in an array
  or a DataFrame column) are refused with scikit-learn's message, never
  parsed into numbers (:func:`refuse_text`).
- **Overflow.** Finite input whose results overflow (statistics,
  distances, Gram matrices) gets a ValueError saying the input is too large
  and what magnitude is supported, never a silent infinity
  (:func:`check_no_overflow`, :func:`overflow_error`).
- **Shapes.** Empty data, 1-D X, and a different number of features at
  predict time get scikit-learn's messages (``n_features_in_`` bookkeeping:
  scikit-learn's ``validate_data`` for host data, :func:`check_n_features`
  for device arrays).
- **sample_weight.** 1-D, one per row, X's dtype, on X's side
  (:func:`check_sample_weight`).
- **Output.** Results come back in the caller's array type: NumPy in, NumPy
  out; CuPy in, CuPy out; tensors in, tensors out. Every estimator's output
  methods (MIRRORED_METHODS) are wrapped by :func:`mirrors_input` once, in
  TwinlearnEstimatorMixin; functions call :func:`mirror`. String labels stay
  NumPy (device arrays hold numbers only); :func:`to_host` brings anything
  to NumPy.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.validation import _check_sample_weight, check_array as _sk_check_array, validate_data

#: The float dtypes the backends take; the first is what other dtypes become.
FLOAT_DTYPES = (np.float64, np.float32)
INF_MESSAGE = "Input X contains infinity or a value too large for dtype('float64')."


# -- kinds -----------------------------------------------------------------------
def _module_root(x) -> str:
    return type(x).__module__.split(".")[0]


def kind(x) -> str:
    """'numpy', 'cupy', 'torch', 'cai' (other __cuda_array_interface__), or 'other'."""
    if isinstance(x, np.ndarray):
        return "numpy"
    root = _module_root(x)
    if root == "cupy":
        return "cupy"
    if root == "torch":
        return "torch"
    if hasattr(x, "__cuda_array_interface__"):
        return "cai"
    return "other"


def is_device_array(x) -> bool:
    """True for an array in GPU memory (CuPy, a CUDA tensor, __cuda_array_interface__)."""
    k = kind(x)
    if k == "cupy" or k == "cai":
        return True
    if k == "torch":
        return x.device.type == "cuda"
    return False


def device_of(x) -> str:
    """'cpu' or 'cuda:N' for the memory an array lives in."""
    k = kind(x)
    if k == "cupy":
        return f"cuda:{x.device.id}"
    if k == "torch":
        return f"cuda:{x.device.index or 0}" if x.device.type == "cuda" else "cpu"
    if k == "cai":
        import cupy

        return f"cuda:{cupy.asarray(x).device.id}"
    return "cpu"


def current_stream(x) -> int:
    """The caller's current CUDA stream for the array's library, as an integer (0 = default)."""
    k = kind(x)
    if k in ("cupy", "cai"):
        import cupy

        return int(cupy.cuda.get_current_stream().ptr)
    if k == "torch" and x.device.type == "cuda":
        import torch

        return int(torch.cuda.current_stream(x.device).cuda_stream)
    return 0


# -- dtypes ----------------------------------------------------------------------
def _float_dtype_name(dt) -> str:
    """float32 stays float32; every other dtype computes in float64 (as scikit-learn)."""
    name = getattr(dt, "__name__", None) or str(dt)  # np.float32 (a type) as well as dtype('float32')
    return "float32" if name.endswith("float32") else "float64"


def np_float_dtype(X):
    """The NumPy float dtype (float32 or float64) of a NumPy, CuPy or PyTorch array."""
    return np.dtype(_float_dtype_name(X.dtype))


def as_dtype(X, dtype):
    """X in float32 or float64 (`dtype`: a NumPy, CuPy or PyTorch dtype), host
    or device, copied only when needed."""
    name = _float_dtype_name(dtype)
    if str(X.dtype).endswith(name):
        return X
    if isinstance(X, np.ndarray):
        return np.ascontiguousarray(X, dtype=name)
    if kind(X) == "torch":
        import torch

        return X.to(getattr(torch, name)).contiguous()
    return X.astype(name)


# -- moving and allocating -------------------------------------------------------
def to_numpy(x):
    """A NumPy copy (or view) of any supported array."""
    k = kind(x)
    if k == "numpy":
        return x
    if k in ("cupy", "cai"):
        import cupy

        return cupy.asnumpy(cupy.asarray(x))
    if k == "torch":
        return x.detach().cpu().numpy()
    return np.asarray(x)


def to_host(a):
    """a as NumPy when it is a device array; anything else (None, lists,
    NumPy, pandas) unchanged."""
    return to_numpy(a) if a is not None and is_device_array(a) else a


def place(X, device):
    """X where the work on `device` reads it: a device array stays on its
    device for a GPU and comes to the host for the CPU; host data is left
    as it is (the checks convert it)."""
    return to_numpy(X) if device == "cpu" and is_device_array(X) else X


def empty_like_kind(x, shape, dtype):
    """An uninitialised float array of the same kind and device as x."""
    k = kind(x)
    dt = _float_dtype_name(dtype)
    if k in ("cupy", "cai"):
        import cupy

        with cupy.cuda.Device(int(device_of(x).split(":")[1])):
            return cupy.empty(shape, dtype=dt)
    if k == "torch":
        import torch

        return torch.empty(shape, dtype=getattr(torch, dt), device=x.device)
    return np.empty(shape, dtype=dt)


def from_numpy_like(x, a):
    """The NumPy array a moved to the kind and device of x."""
    k = kind(x)
    if k in ("cupy", "cai"):
        import cupy

        with cupy.cuda.Device(int(device_of(x).split(":")[1])):
            return cupy.asarray(a)
    if k == "torch":
        import torch

        return torch.from_numpy(np.ascontiguousarray(a)).to(x.device)
    return a


def mirror(orig, out):
    """out in the array type of the caller's input `orig`: a host result goes
    to orig's device when orig is a device array; otherwise out unchanged."""
    if is_device_array(orig) and not is_device_array(out):
        return from_numpy_like(orig, out)
    return out


def mirror_result(orig, result):
    """A method's result in the array type of its input `orig`: each numeric
    NumPy array in it (the result itself, or the items of a tuple or list)
    goes to orig's device when orig is a device array. String and object
    arrays, sparse matrices, scalars and device arrays are left as they are."""
    if orig is None or not is_device_array(orig):
        return result
    if isinstance(result, np.ndarray):
        return from_numpy_like(orig, result) if result.dtype.kind in "biuf" else result
    if isinstance(result, (tuple, list)):
        return type(result)(mirror_result(orig, r) for r in result)
    return result


#: The public methods whose first argument is X and whose array result is in
#: X's array type (CuPy in, CuPy out; tensors in, tensors out).
MIRRORED_METHODS = ("predict", "predict_raw", "predict_proba", "predict_log_proba", "predict_joint_log_proba",
                    "decision_function", "transform", "inverse_transform", "fit_transform", "fit_predict",
                    "score_samples", "kneighbors", "apply")


def mirrors_input(method):
    """`method` (self, X, ...) with its result mirrored to X's array type
    (:func:`mirror_result`). Applied to every estimator's MIRRORED_METHODS by
    TwinlearnEstimatorMixin, so no method mirrors by hand."""
    if getattr(method, "_tl_mirrors", False):
        return method
    import functools

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        X = args[0] if args else kwargs.get("X")
        return mirror_result(X, method(self, *args, **kwargs))

    wrapper._tl_mirrors = True
    return wrapper


def take_rows(X, idx):
    """Rows `idx` (host integers) of a host or device matrix, on its side."""
    if is_device_array(X):
        return X[from_numpy_like(X, np.asarray(idx))]
    return X[idx]


# -- non-finite values -----------------------------------------------------------
def _sum_is_finite(x) -> bool:
    """True when the sum of device array x is finite: then x holds no NaN and
    no infinity (either makes the sum NaN or infinite). One reduction pass,
    where looking for NaN and for infinity separately takes several."""
    if kind(x) == "torch":
        import torch

        return bool(torch.isfinite(x.sum()).item())
    import cupy

    return bool(cupy.isfinite(cupy.asarray(x).sum()))


def _device_any_exact(x, pred: str) -> bool:
    k = kind(x)
    if k == "torch":
        import torch

        f = torch.isnan if pred == "nan" else torch.isinf
        return bool(f(x).any().item())
    import cupy

    f = cupy.isnan if pred == "nan" else cupy.isinf
    return bool(f(cupy.asarray(x)).any())


def device_nonfinite(x) -> tuple[bool, bool]:
    """(any NaN, any infinity) in device array x. A finite sum answers both
    at once; otherwise (a non-finite value, or finite values whose sum
    overflows) each is looked for."""
    if _sum_is_finite(x):
        return False, False
    return _device_any_exact(x, "nan"), _device_any_exact(x, "inf")


def device_any(x, pred: str) -> bool:
    """True when any element of device array x is NaN ('nan') or infinite ('inf')."""
    return not _sum_is_finite(x) and _device_any_exact(x, pred)


def nan_message(name):
    """scikit-learn's error for NaN in the X of estimator `name` (which rejects it)."""
    return f"Input X contains NaN.\n{name} does not accept missing values encoded as NaN natively."


def sklearn_nonfinite_message(name, value, dtype, input_name="X"):
    """scikit-learn's own text for `value` (NaN or an infinity) in the
    `input_name` (of `dtype`) of estimator `name` (None: a function): its
    check run on a 1 x 1 array of the value, so the words follow the
    installed scikit-learn."""
    try:
        from sklearn.utils.validation import _assert_all_finite

        _assert_all_finite(np.full((1, 1), value, dtype=dtype), allow_nan=False, input_name=input_name,
                           estimator_name=name)
    except ValueError as e:
        return str(e)
    except ImportError:
        pass
    if np.isnan(value):
        return nan_message(name) if name else f"Input {input_name} contains NaN."
    return INF_MESSAGE.replace("Input X", f"Input {input_name}")


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


# -- text where numbers are expected ---------------------------------------------
def text_message() -> str:
    """scikit-learn's error for text given where numbers are expected (what
    its check_array says of an array of strings), in the installed
    scikit-learn's words."""
    try:
        _sk_check_array(np.array([["a"]]))
    except ValueError as e:
        return str(e)
    return ("dtype='numeric' is not compatible with arrays of bytes/strings."
            "Convert your data to numeric values explicitly instead.")


def _holds_text(values) -> bool:
    """True when NumPy array `values` holds text: a string or bytes dtype, or
    objects among which a str or bytes."""
    k = values.dtype.kind
    if k in "US":
        return True
    return k == "O" and any(isinstance(v, (str, bytes)) for v in values.ravel())


def _column_text_message(X, j, input_name):
    name = X.columns[j]
    col = X.iloc[:, j]
    if getattr(col.dtype, "name", "") == "category":
        hint = (f"its categories are strings (e.g. {col.cat.categories[0]!r}); "
                f"{input_name}[{name!r}].cat.codes gives them as numeric codes")
    else:
        first = next(v for v in np.asarray(col).ravel() if isinstance(v, (str, bytes)))
        hint = f"it holds strings (e.g. {first!r})"
    return f"{text_message()} Column {name!r} of {input_name}: {hint}."


def refuse_text(X, input_name="X"):
    """scikit-learn's error when host data X holds text (strings or bytes,
    also as objects, numeric-looking or not) where numbers are expected,
    naming the column of a DataFrame. Text is never turned into numbers
    silently: scikit-learn's estimators that check for numbers refuse a
    string array outright, and a string that does not parse fails anyway."""
    if isinstance(X, np.ndarray):
        if _holds_text(X):
            raise ValueError(text_message())
        return
    if X is None or kind(X) != "other":
        return
    dtypes = getattr(X, "dtypes", None)
    if dtypes is not None and hasattr(X, "columns") and hasattr(X, "iloc"):
        for j, dt in enumerate(dtypes):
            if getattr(dt, "kind", "O") not in "OSU":
                continue
            col = X.iloc[:, j]
            values = col.cat.categories if getattr(dt, "name", "") == "category" else col
            if _holds_text(np.asarray(values)):
                raise ValueError(_column_text_message(X, j, input_name))
        return
    try:
        values = np.asarray(X)
    except (ValueError, TypeError):
        return  # scikit-learn's check reports what is wrong with it
    if _holds_text(values):
        raise ValueError(text_message())


def validate_host(est, X, *args, **kwargs):
    """scikit-learn's ``validate_data`` of host data X, text refused first
    (:func:`refuse_text`): every host path of an estimator validates here."""
    refuse_text(X)
    return validate_data(est, X, *args, **kwargs)


# -- overflow ----------------------------------------------------------------------
def largest_magnitude(dtype, power=1, terms=1) -> float:
    """About the largest magnitude of `dtype` values that a result growing
    as their `power`-th power, summed over `terms` of them (differences of
    two values included), keeps finite: (max / terms) ** (1 / power) / 2."""
    return (float(np.finfo(dtype).max) / max(int(terms), 1)) ** (1.0 / power) / 2.0


def overflow_error(owner, what, dtype, *, input_name="X", power=1, terms=1):
    """The ValueError for a result of finite input that overflowed: `what`
    (e.g. 'its squared distances overflow') names the result, `dtype` the
    one it is computed in, `power` and `terms` how it grows with the values
    (:func:`largest_magnitude`)."""
    limit = largest_magnitude(dtype, power, terms)
    return ValueError(
        f"Input {input_name} holds values too large for {owner} to compute with: {what} "
        f"{np.dtype(dtype).name}. Magnitudes up to about {limit:.2g} are supported; scale {input_name} down."
    )


def any_nonfinite(a, find_nan=True) -> bool:
    """True when host or device array `a` holds an infinity, or NaN with
    `find_nan` (a device array is searched on its own library)."""
    if is_device_array(a):
        has_nan, has_inf = device_nonfinite(a)
        return has_inf or (find_nan and has_nan)
    a = np.asarray(a)
    return not bool(np.isfinite(a).all()) if find_nan else bool(np.isinf(a).any())


def check_no_overflow(owner, what, *results, dtype, input_name="X", power=1, terms=1, find_nan=True):
    """:func:`overflow_error` when any of `results` (host or device arrays
    computed from finite input: fitted statistics, distances) is not finite;
    with ``find_nan=False`` only infinities count (for results where NaN has
    another cause, such as a variance of one sample). A result is read once,
    where it lives; None is skipped."""
    for r in results:
        if r is not None and any_nonfinite(r, find_nan):
            raise overflow_error(owner, what, dtype, input_name=input_name, power=power, terms=terms)


# -- device matrices -------------------------------------------------------------
def as_device_matrix(x, name="X", ensure_2d=True):
    """A C-contiguous float32/float64 device array from a device array, zero-copy when it already is one."""
    k = kind(x)
    if k == "cai":
        import cupy

        x = cupy.asarray(x)
        k = "cupy"
    if k == "cupy":
        import cupy

        if x.dtype.kind == "c":
            raise ValueError(f"Complex data not supported in {name}")
        dt = np.float32 if x.dtype == np.float32 else np.float64
        x = cupy.ascontiguousarray(x, dtype=dt)
    elif k == "torch":
        import torch

        if x.is_complex():
            raise ValueError(f"Complex data not supported in {name}")
        dt = torch.float32 if x.dtype == torch.float32 else torch.float64
        x = x.detach().to(dt).contiguous()
    else:
        raise TypeError(f"{name}: unsupported array type {type(x).__name__}")
    if ensure_2d and x.ndim != 2:
        raise ValueError(
            f"Expected a 2D array for {name}, got {x.ndim}D with shape {tuple(x.shape)}. "
            "Reshape your data with array.reshape(-1, 1) for a single feature "
            "or array.reshape(1, -1) for a single sample."
        )
    return x


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


def _check_device_nonfinite(X, name, input_name, want_nan, want_inf):
    if want_nan or want_inf:
        has_nan, has_inf = device_nonfinite(X)
        dt = np_float_dtype(X)
        if want_nan and has_nan:
            raise ValueError(sklearn_nonfinite_message(name, np.nan, dt, input_name))
        if want_inf and has_inf:
            raise ValueError(sklearn_nonfinite_message(name, np.inf, dt, input_name))


def _check_device_X(est, X, *, reset, copy, for_fit, allow_nan, find_inf=True, find_nan=True):
    X = as_device_matrix(X, "X")
    name = type(est).__name__
    check_device_shape(X, name)
    check_n_features(est, X.shape[1], reset=reset)
    # With NaN allowed, a fit finds infinities in its own column reduction.
    want_inf = find_inf and (not allow_nan or not for_fit)
    want_nan = find_nan and not allow_nan
    _check_device_nonfinite(X, name, "X", want_nan, want_inf)
    if copy:
        X = X.copy() if kind(X) != "torch" else X.clone()
    return X


# -- the checks ------------------------------------------------------------------
def check_X(est, X, device, *, reset, copy=False, for_fit=False, allow_nan=True, find_inf=True,
            find_nonfinite=True):
    """X as a C-contiguous float32/float64 array the backend for `device`
    accepts, with scikit-learn's checks and ``n_features_in_`` bookkeeping.

    Device arrays are kept on their device when `device` is a GPU and copied
    to NumPy when it is the CPU. With ``for_fit=True`` and ``allow_nan=True``
    the caller must detect infinities in device arrays itself (its column
    reduction sees them anyway, which saves a pass over the data).
    With ``find_inf=False`` infinities are never looked for here: the caller's
    kernel counts them in the pass that does the work, and the caller raises.
    With ``find_nonfinite=False`` X (NumPy, or a device array kept on its
    device) is not searched for NaN or infinities here at all: the caller's
    first pass over it (column statistics) counts both, and the caller raises
    scikit-learn's error (:func:`raise_nonfinite`).
    """
    X = place(X, device)
    if is_device_array(X):
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
    return validate_host(
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


def check_array(X, device, name="X", dtype=None):
    """For functions (no estimator): X as a checked, finite, C-contiguous
    host or device matrix of `dtype` (default: float32 stays, the rest
    becomes float64)."""
    X = place(X, device)
    if is_device_array(X):
        X = as_device_matrix(X, name)
        check_device_shape(X)
        _check_device_nonfinite(X, None, name, True, True)
        if dtype is not None and str(X.dtype) != np.dtype(dtype).name:
            X = X.astype(np.dtype(dtype).name)
        return X
    refuse_text(X, name)
    return _sk_check_array(X, accept_sparse=False, dtype=dtype if dtype is not None else list(FLOAT_DTYPES),
                           order="C", input_name=name)


def check_y(y, X, name="y"):
    """Targets y beside a checked device matrix X: a 1-D or 2-D device array
    on X's device, in X's dtype, one row per row of X."""
    if y is None:
        raise ValueError("requires y to be passed, but the target y is None.")
    if not is_device_array(y):
        y = from_numpy_like(X, np.asarray(y, dtype=np_float_dtype(X)))
    y = as_device_matrix(y, name, ensure_2d=False)
    y = as_dtype(y, X.dtype)
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: [{X.shape[0]}, {y.shape[0]}]")
    return y


def check_sample_weight(sample_weight, X, *, ensure_non_negative=False):
    """sample_weight as a 1-D array beside the checked X, in X's float dtype:
    None stays None; with a device X, a device array on X's device (host
    weights are checked by scikit-learn and copied there)."""
    if sample_weight is None:
        return None
    dt = np_float_dtype(X)
    if not is_device_array(X):
        return np.ascontiguousarray(
            _check_sample_weight(to_host(sample_weight), X, dtype=dt, ensure_non_negative=ensure_non_negative)
        )
    if is_device_array(sample_weight):
        sw = as_device_matrix(sample_weight, "sample_weight", ensure_2d=False)
        if sw.ndim != 1 or sw.shape[0] != X.shape[0]:
            raise ValueError(f"sample_weight.shape == {tuple(sw.shape)}, expected ({X.shape[0]},)!")
        sw = as_dtype(sw, X.dtype)
        if ensure_non_negative and bool((sw < 0).any()):
            raise ValueError("Negative values in data passed to `sample_weight`")
        return sw
    return from_numpy_like(X, np.ascontiguousarray(host_weights(sample_weight, X.shape[0], dt, ensure_non_negative)))


def host_weights(sample_weight, n, dtype, ensure_non_negative=False):
    """sample_weight as a C-contiguous host array of `dtype` for n rows, or None."""
    if sample_weight is None:
        return None
    return np.ascontiguousarray(_check_sample_weight(to_host(sample_weight), np.empty((n, 0)), dtype=dtype,
                                                     ensure_non_negative=ensure_non_negative))


def transform_elementwise(est, X, copy, run, *, allow_nan=True, fitted=True, counts_inf=False):
    """The shape of every elementwise transform: check X, pick the output (X
    itself when ``copy`` is False and X can be written, else a new array of
    the same kind), call ``run(module, ctx, X, out)``, and return out in the
    caller's array type.

    With ``counts_inf=True``, ``run`` returns the number of infinite entries
    its kernel saw (no separate pass looks for them) and a non-zero count
    raises scikit-learn's error."""
    from sklearn.utils.validation import check_is_fitted

    if fitted:
        check_is_fitted(est)
    copy = copy if copy is not None else est.copy
    device = est._tl_device(X)
    X = place(X, device)
    Xc = check_X(est, X, device, reset=False, for_fit=True, allow_nan=allow_nan, find_inf=not counts_inf)
    writable = not isinstance(Xc, np.ndarray) or Xc.flags.writeable
    out = Xc if (not copy and Xc is X and writable) else empty_like_kind(Xc, Xc.shape, Xc.dtype)
    mod, ctx = est._tl_context(device, Xc)
    n_inf = run(mod, ctx, Xc, out)
    if counts_inf and n_inf:
        raise ValueError(INF_MESSAGE)
    return out


# -- operands of functions (linalg, metrics, neighbors): device, backend, dtype ----
def first_device_array(*arrays):
    """The first of `arrays` that is a device array, or None."""
    for a in arrays:
        if a is not None and is_device_array(a):
            return a
    return None


def resolve_device(device, arrays=()):
    """The device ('cpu' or 'cuda:N') a function of arrays runs on: `device`,
    None following :func:`twinlearn.get_device`; 'auto' runs where the first
    device array of `arrays` lives, else on the first usable GPU, else on the
    CPU. A device array living on another GPU than the one chosen is refused."""
    from . import _backend
    from ._config import check_device, get_device

    dev = check_device(device if device is not None else get_device(), "device")
    on_device = [a for a in arrays if a is not None and is_device_array(a)]
    if dev == "auto":
        if on_device:
            dev = device_of(on_device[0])
        else:
            dev = "cuda:0" if _backend.cuda_available() else "cpu"
    for a in on_device:
        if dev != "cpu" and device_of(a) != dev:
            raise ValueError(f"an input lives on {device_of(a)} but the computation runs on {dev}")
    return dev


def backend_context(device, mode, like=None):
    """(backend module, Context) for running on `device` in numeric mode
    `mode`, on the caller's current stream when `like` is a device array on
    that device."""
    from . import _backend
    from ._config import get_n_threads

    mod = _backend.module_for(device)
    stream = 0
    if like is not None and is_device_array(like) and device_of(like) == device:
        stream = current_stream(like)
    return mod, mod.Context(device, get_n_threads(), mode, 0, stream)


def float_dtype_of(*arrays):
    """float32 when every array (NumPy, CuPy, PyTorch or array-like) is
    float32, else float64 (NumPy's promotion for floats), as a NumPy dtype."""
    names = {_float_dtype_name(a.dtype if hasattr(a, "dtype") else np.asarray(a).dtype) for a in arrays}
    return np.dtype("float32" if names == {"float32"} else "float64")


def matrix_operand(x, name, dtype, device, *, allow_transposed=True):
    """(x, transposed): x as a 2-D C-contiguous array of `dtype` the backend
    for `device` accepts. With `allow_transposed`, a Fortran-ordered x is
    given as its C-ordered transpose without a copy (transposed True);
    otherwise it is copied to C order."""
    if is_device_array(x) and device != "cpu":
        if x.ndim != 2:
            raise ValueError(f"{name} must be a 2-D array, got {x.ndim}-D")
        if kind(x) == "torch":
            import torch

            x = x.detach().to(torch.float32 if dtype == np.float32 else torch.float64)
            if allow_transposed and not x.is_contiguous() and x.t().is_contiguous():
                return x.t(), True
            return x.contiguous(), False
        import cupy

        x = cupy.asarray(x).astype(dtype, copy=False)
        if allow_transposed and not x.flags.c_contiguous and x.flags.f_contiguous:
            return x.T, True
        return cupy.ascontiguousarray(x), False
    x = np.asarray(to_numpy(x))
    refuse_text(x, name)
    if x.dtype.kind == "c":
        raise ValueError(f"Complex data not supported in {name}")
    if x.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array, got {x.ndim}-D")
    x = x.astype(dtype, copy=False)
    if allow_transposed and not x.flags.c_contiguous and x.flags.f_contiguous:
        return x.T, True
    return np.ascontiguousarray(x), False


def check_finite_X(est, X, device, *, reset):
    """:func:`check_X` for an estimator that takes no NaN or infinity and
    never writes X (read-only input is not copied)."""
    return check_X(est, X, device, reset=reset, for_fit=True, allow_nan=False)


def check_distances(D):
    """scikit-learn's error for negative entries in a precomputed distance
    matrix D (host or device)."""
    if np.any(to_numpy(D) < 0):
        raise ValueError("Negative values in data passed to precomputed distance matrix.")


# -- more checks: X with y, statistics, scales, weights --------------------------
def zeros_to_one(scale):
    """scikit-learn's rule for scales of (near-)constant features: below
    10 * eps of their dtype they become 1 (NaN stays NaN)."""
    scale = np.array(scale, copy=True)
    scale[scale < 10 * np.finfo(scale.dtype).eps] = 1.0
    return scale


def contains_nan(X) -> bool:
    """True when host or device array X holds a NaN."""
    return device_any(X, "nan") if is_device_array(X) else bool(np.isnan(X).any())


def raise_nonfinite_stats(stats, n_rows, input_name="X", name=None, dtype=np.float64):
    """scikit-learn's error for the NaN or infinities in `input_name` that
    its column statistics found (`stats`: column_stats' rows, weight sum,
    mean, m2, finite count, infinity count, of n_rows rows). `name`: the
    estimator named in the message (None: the message names none);
    `dtype`: the one the message names. NaN is reported first."""
    count, n_inf = np.asarray(stats[3]), np.asarray(stats[4])
    if (count + n_inf < n_rows).any():
        raise ValueError(sklearn_nonfinite_message(name, np.nan, dtype, input_name))
    if (n_inf > 0).any():
        raise ValueError(sklearn_nonfinite_message(name, np.inf, dtype, input_name))


def check_X_y(est, X, y, device, *, labels=False, multi_output=True, find_nonfinite=True):
    """(X, y) of a supervised fit, checked together; X as check_X gives it
    (``reset=True``: n_features_in_ is set).

    Host data: scikit-learn's check of both (finite values; X float32 or
    float64, C-contiguous; numeric targets unless `labels`), and numeric
    targets come back C-contiguous in X's dtype. A device X (kept on its
    device for a GPU) is checked for its shape, and searched for NaN and
    infinities only with `find_nonfinite` (False: the fit's column
    statistics find them); numeric targets become a device array beside it
    (:func:`check_y`). Labels (``labels=True``) come back as NumPy, as given,
    one per row of X."""
    X = place(X, device)
    if not is_device_array(X):
        X, y = validate_host(est, X, to_host(y), dtype=FLOAT_DTYPES, y_numeric=not labels,
                             multi_output=multi_output, order="C")
        return X, (y if labels else np.ascontiguousarray(y, dtype=X.dtype))
    X = _check_device_X(est, X, reset=True, copy=False, for_fit=True, allow_nan=not find_nonfinite,
                        find_inf=find_nonfinite, find_nan=find_nonfinite)
    if y is None:
        raise ValueError(f"{type(est).__name__} requires y to be passed, but the target y is None.")
    if not labels:
        return X, check_y(y, X)
    y = np.asarray(to_host(y))
    if y.shape[0] != X.shape[0]:
        raise ValueError(f"Found input variables with inconsistent numbers of samples: [{X.shape[0]}, {y.shape[0]}]")
    return X, y


def host_weights_or_ones(sample_weight, n, dtype, ensure_non_negative=False):
    """host_weights, or n ones of `dtype` when sample_weight is None (what
    scikit-learn's _check_sample_weight gives)."""
    sw = host_weights(sample_weight, n, dtype, ensure_non_negative)
    return np.ones(n, dtype=dtype) if sw is None else sw


def check_matrix(X, device, name="X", *, find_nonfinite=True):
    """check_array's matrix for `device`; with ``find_nonfinite=False`` a
    device matrix is not searched for NaN and infinities (one pass fewer;
    host data always is, by scikit-learn's check)."""
    X = place(X, device)
    if find_nonfinite or not is_device_array(X):
        return check_array(X, device, name)
    X = as_device_matrix(X, name)
    check_device_shape(X)
    return X
