"""Shared machinery of the classification, regression and ranking metrics.

Every metric takes keyword-only ``device=None, numeric_mode=None``. It runs
where its inputs live (docs/NUMERICS.md, "Metrics"):

- NumPy (host) input outside ``numeric_mode='identical'``: scikit-learn's own
  function computes it, so values, errors and warnings are scikit-learn's by
  construction (the same NumPy operations in the same order).
- Device input (CuPy, PyTorch CUDA tensors), and any input in identical
  mode: twinlearn's own path (:class:`Run`). Label counts are exact integer
  counts; sums of floats are the core's canonical reductions
  (``reduce_sum`` / ``column_sums``), so a CPU and a GPU give the same bits;
  sorts are stable sorts of the array library. Only small results (a few
  scalars, a k x k count matrix, the unique labels) come to the host. Cases
  the own path does not cover (documented per function) take scikit-learn's
  function on a host copy: the same bits everywhere, but a copy.

``device='cpu'`` brings device input to the host first; a GPU ``device``
with host input computes on the host (the inputs are not uploaded), which in
identical mode gives the bits the GPU would.
"""

from __future__ import annotations

import numpy as np

from .. import _io
from .._config import check_device, check_numeric_mode, get_numeric_mode


# -- array kinds -------------------------------------------------------------------
class _NumpyLike:
    """Operations of the own path on NumPy (``xp=numpy``) or CuPy arrays."""

    def __init__(self, xp, kind):
        self.xp = xp
        self.kind = kind

    def asnumpy(self, x):
        return _io.to_numpy(x)

    def asarray(self, a, like, dtype=None):
        """Host array/scalar list `a` as an array of like's kind and device."""
        a = np.asarray(a, dtype=dtype)
        return a if self.kind == "numpy" else _io.from_numpy_like(like, a)

    def f64(self, x):
        return self.xp.ascontiguousarray(x, dtype=self.xp.float64)

    def ravel(self, x):
        return x.reshape(-1)

    def unique(self, x):
        """Sorted unique values, on the host."""
        return np.asarray(self.asnumpy(self.xp.unique(x)))

    def searchsorted(self, sorted_values, x, side="left"):
        return self.xp.searchsorted(sorted_values, x, side=side)

    def bincount(self, codes, minlength):
        """Integer counts of codes (int64, on the host)."""
        return np.asarray(self.asnumpy(self.xp.bincount(codes, minlength=minlength)), dtype=np.int64)

    def argsort(self, x):
        """Stable ascending argsort."""
        if self.kind == "numpy":
            return np.argsort(x, kind="stable")
        return self.xp.argsort(x)  # CuPy's sort is a stable radix sort

    def argsort_desc(self, x):
        """Stable descending argsort (ties keep their order), as the array API's
        ``argsort(descending=True, stable=True)``: reverse, sort ascending,
        reverse and map back."""
        n = x.shape[0]
        return (n - 1) - self.argsort(x[::-1])[::-1]

    def cumsum(self, x):
        return self.xp.cumsum(x)

    def nonzero(self, mask):
        return self.xp.nonzero(mask)[0]

    def concat(self, parts):
        return self.xp.concatenate(parts)

    def diff(self, x, n=1):
        return self.xp.diff(x, n=n)

    def flip(self, x):
        return self.xp.flip(x)

    def where(self, cond, a, b):
        return self.xp.where(cond, a, b)

    def astype_f64(self, x):
        return x.astype(self.xp.float64)

    def abs(self, x):
        return self.xp.abs(x)

    def maximum_scalar(self, x, s):
        return self.xp.maximum(x, s)

    def log(self, x):
        return self.xp.log(x)

    def pow(self, x, p):
        return self.xp.power(x, p)

    def xlogy(self, x, y):
        if self.kind == "numpy":
            from scipy.special import xlogy
        else:
            from cupyx.scipy.special import xlogy
        return xlogy(x, y)

    def any(self, mask) -> bool:
        return bool(self.xp.any(mask))

    def all(self, mask) -> bool:
        return bool(self.xp.all(mask))

    def max(self, x) -> float:
        return float(self.xp.max(x))

    def full(self, n, value, like):
        """A float64 vector of n copies of value, where `like` lives."""
        if self.kind == "numpy":
            return np.full(n, value, dtype=np.float64)
        with self.xp.cuda.Device(like.device.id):
            return self.xp.full(n, value, dtype=self.xp.float64)

    def take_rows(self, X, idx):
        return X[idx]

    def take_along_rows(self, S, col):
        """S[i, col[i]] for each row i."""
        return S[self.xp.arange(S.shape[0]), col]

    def arange(self, n, like):
        return self.xp.arange(n) if self.kind == "numpy" else self.asarray(np.arange(n), like)

    def count_true_rows(self, M):
        """Number of True per row of a boolean matrix (exact integers)."""
        return M.sum(axis=1)

    def repeat(self, x, r):
        """Each element r times in a row (np.repeat)."""
        return self.xp.repeat(x, r)

    def row_sums(self, M):
        return M.sum(axis=1)

    def isfinite_all(self, x) -> bool:
        return bool(self.xp.all(self.xp.isfinite(x)))


class _TorchLike(_NumpyLike):
    """The same operations on PyTorch tensors."""

    def __init__(self):
        import torch

        super().__init__(torch, "torch")

    def f64(self, x):
        return x.to(self.xp.float64).contiguous()

    def unique(self, x):
        return np.asarray(self.asnumpy(self.xp.unique(x, sorted=True)))

    def searchsorted(self, sorted_values, x, side="left"):
        return self.xp.searchsorted(sorted_values, x.to(sorted_values.dtype).contiguous(), right=(side == "right"))

    def bincount(self, codes, minlength):
        return np.asarray(self.asnumpy(self.xp.bincount(codes, minlength=minlength)), dtype=np.int64)

    def argsort(self, x):
        return self.xp.sort(x, stable=True).indices

    def argsort_desc(self, x):
        n = x.shape[0]
        return (n - 1) - self.xp.flip(self.argsort(self.xp.flip(x, (0,))), (0,))

    def cumsum(self, x):
        return self.xp.cumsum(x, dim=0)

    def nonzero(self, mask):
        return self.xp.nonzero(mask).reshape(-1)

    def concat(self, parts):
        return self.xp.cat(parts)

    def diff(self, x, n=1):
        return self.xp.diff(x, n=n)

    def flip(self, x):
        return self.xp.flip(x, (0,))

    def where(self, cond, a, b):
        torch = self.xp
        a = a if torch.is_tensor(a) else torch.tensor(a, dtype=torch.float64, device=cond.device)
        b = b if torch.is_tensor(b) else torch.tensor(b, dtype=torch.float64, device=cond.device)
        return torch.where(cond, a, b)

    def astype_f64(self, x):
        return x.to(self.xp.float64)

    def maximum_scalar(self, x, s):
        return self.xp.clamp(x, min=s)

    def pow(self, x, p):
        return self.xp.pow(x, p)

    def xlogy(self, x, y):
        return self.xp.xlogy(x, y)

    def any(self, mask) -> bool:
        return bool(mask.any().item())

    def all(self, mask) -> bool:
        return bool(mask.all().item())

    def max(self, x) -> float:
        return float(x.max().item())

    def take_along_rows(self, S, col):
        return S[self.xp.arange(S.shape[0], device=S.device), col]

    def count_true_rows(self, M):
        return M.sum(dim=1)

    def repeat(self, x, r):
        return self.xp.repeat_interleave(x, r)

    def row_sums(self, M):
        return M.sum(dim=1)

    def full(self, n, value, like):
        return self.xp.full((n,), value, dtype=self.xp.float64, device=like.device)

    def isfinite_all(self, x) -> bool:
        return bool(self.xp.isfinite(x).all().item())


def ops_for(x):
    """The operations for array x's kind."""
    k = _io.kind(x)
    if k == "numpy":
        return _NumpyLike(np, "numpy")
    if k == "torch":
        return _TorchLike()
    import cupy

    return _NumpyLike(cupy, "cupy")


# -- where and how a metric runs -----------------------------------------------------
class Run:
    """Device, numeric mode and path of one metric call.

    ``own`` is False for host input outside identical mode: the caller then
    returns scikit-learn's function's result. Otherwise the arrays are of
    one kind (``ops``), device arrays on one GPU, and :meth:`sum` /
    :meth:`column_sums` are the backend's canonical reductions.
    """

    def __init__(self, device, numeric_mode, arrays):
        self.mode = check_numeric_mode(numeric_mode if numeric_mode is not None else get_numeric_mode())
        if device is not None:
            check_device(device)
        dev = _io.resolve_device(device, arrays) if any(
            a is not None and _io.is_device_array(a) for a in arrays) else "cpu"
        self.device = dev
        self.on_device = dev != "cpu"
        self.own = self.on_device or self.mode == "identical"
        self._ctx = None
        self.like = _io.first_device_array(*arrays) if self.on_device else None
        if self.like is not None and _io.kind(self.like) == "cai":
            import cupy  # another library's CUDA array: read through a CuPy view

            self.like = cupy.asarray(self.like)
        self.ops = ops_for(self.like) if self.like is not None else _NumpyLike(np, "numpy")

    def place(self, x):
        """x where the computation reads it: a host copy of device input for
        the CPU; on a GPU, numeric host input (y_true beside device
        predictions, say) goes to the device of the other inputs."""
        if x is None:
            return None
        if _io.is_device_array(x):
            x = _io.place(x, self.device)
            if self.on_device and _io.kind(x) == "cai":
                import cupy

                x = cupy.asarray(x)
            return x
        if self.on_device:
            a = np.asarray(x)
            return _io.from_numpy_like(self.like, a) if a.dtype.kind in "biuf" else a
        return x

    def of_kind(self, x) -> bool:
        """Whether x is an array the run's operations take (its kind and device)."""
        return _io.kind(x) == self.ops.kind and (not self.on_device or _io.device_of(x) == self.device)

    def _context(self):
        if self._ctx is None:
            self._ctx = _io.backend_context(self.device, self.mode, self.like)
        return self._ctx

    def sum(self, x) -> float:
        """Canonical float64 sum of a 1-D array (docs/NUMERICS.md, canonical reductions)."""
        mod, ctx = self._context()
        return float(mod.reduce_sum(ctx, self.ops.f64(self.ops.ravel(x))))

    def column_sums(self, X) -> np.ndarray:
        """Canonical float64 sums of the columns of a 2-D array (host, shape (cols,))."""
        mod, ctx = self._context()
        X = self.ops.f64(X)
        if X.shape[0] == 0:
            return np.zeros(X.shape[1])
        return np.asarray(mod.column_sums(ctx, X), dtype=np.float64)

    def average(self, x, weights=None) -> float:
        """np.average of a 1-D array with canonical sums: sum(x)/n, or
        sum(x*w)/sum(w) (ZeroDivisionError when the weights sum to 0, as
        scikit-learn's _average)."""
        if weights is None:
            return self.sum(x) / x.shape[0]
        scale = self.sum(weights)
        if scale == 0.0:
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        return self.sum(self.ops.f64(x) * self.ops.f64(weights)) / scale

    def column_average(self, X, weights=None) -> np.ndarray:
        """np.average(X, axis=0, weights=weights) with canonical sums (host)."""
        if weights is None:
            return self.column_sums(X) / X.shape[0]
        scale = self.sum(weights)
        if scale == 0.0:
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        return self.column_sums(self.ops.f64(X) * self.ops.f64(weights).reshape(-1, 1)) / scale

    def _elementwise(self, call, x):
        mod, ctx = self._context()
        flat = self.ops.f64(x).reshape(-1)
        out = _io.empty_like_kind(flat, flat.shape, flat.dtype)
        call(mod, ctx, flat, out)
        return out.reshape(x.shape)

    def math(self, fn, x):
        """fn(x) elementwise in float64 by the project's own function
        (twinlearn/core/math*.hpp: the same bits on the CPU and any GPU, where
        NumPy's, CuPy's and PyTorch's log and pow differ by an ulp here and there)."""
        return self._elementwise(lambda mod, ctx, a, out: mod.math_apply(ctx, fn, a, out), x)

    def pow(self, x, p):
        """x ** p elementwise (float64, p a number) by the project's own pow."""
        return self._elementwise(
            lambda mod, ctx, a, out: mod.math_pow(ctx, a, self.ops.full(a.shape[0], float(p), a), out), x)

    def xlogy(self, x, y):
        """scipy.special.xlogy(x, y): x * log(y), 0 where x == 0 (unless y is
        NaN), with the project's own log."""
        x, y = self.ops.f64(x), self.ops.f64(y)
        return self.ops.where((x == 0) & (y == y), 0.0, x * self.math("log", y))

    def result(self, a):
        """A host result array as the caller's kind (device arrays stay device arrays)."""
        return _io.from_numpy_like(self.like, a) if self.like is not None else a


def host(*arrays):
    """The arrays with device arrays copied to the host (scikit-learn's path)."""
    return tuple(_io.to_host(a) for a in arrays)


def num_samples(x):
    """len(x) as scikit-learn's _num_samples sees it (shape[0] for arrays)."""
    shape = getattr(x, "shape", None)
    if shape is not None:
        if len(shape) == 0:
            raise TypeError(f"Input should have at least 1 dimension i.e. satisfy `len(x.shape) > 0`, got scalar "
                            f"`{x!r}` instead.")
        return int(shape[0])
    return len(x)


def check_consistent_length(*arrays):
    """scikit-learn's check_consistent_length, reading only shapes (device arrays stay put)."""
    lengths = [num_samples(a) for a in arrays if a is not None]
    if len(set(lengths)) > 1:
        raise ValueError(
            "Found input variables with inconsistent numbers of samples: %r" % [int(n) for n in lengths]
        )


def assert_finite(run, x, input_name):
    """scikit-learn's error for NaN or infinity in a float array x (any kind)."""
    if x is None or not str(x.dtype).split(".")[-1].startswith(("float", "complex")):
        return
    if run.ops.isfinite_all(x):
        return
    from sklearn.utils import assert_all_finite

    ops = run.ops
    bad = np.array([np.nan]) if ops.any(x != x) else np.array([np.inf])
    assert_all_finite(bad, input_name=input_name)  # raises scikit-learn's message


def validate_params(sk_func, params):
    """scikit-learn's parameter validation of `sk_func` (its declared
    constraints) on `params`, raising its InvalidParameterError; the own path
    calls it first so a bad parameter fails as in scikit-learn."""
    from sklearn import get_config
    from sklearn.utils._param_validation import validate_parameter_constraints

    constraints = getattr(sk_func, "_skl_parameter_constraints", None)
    if constraints is None or get_config()["skip_parameter_validation"]:
        return
    validate_parameter_constraints(constraints, params, caller_name=sk_func.__qualname__)


COMMON_PARAMS = """device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
        Where device input is computed; None follows :func:`twinlearn.get_device`.
        Host input is computed on the host; ``'cpu'`` copies device input there.
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None
        None follows :func:`twinlearn.get_numeric_mode`. Host input outside
        'identical' is scikit-learn's computation; device input and
        'identical' use canonical sums (docs/NUMERICS.md, "Metrics")."""
