"""The project's own transcendentals through the bindings: accuracy against a
float64/longdouble NumPy reference, special values, and CPU-versus-CUDA bit
identity (the ``device`` fixture runs each test on 'cpu' and 'cuda:0')."""

import numpy as np
import pytest

from twinlearn import _backend

FUNCS = ["exp", "expm1", "log", "log1p", "tanh", "sigmoid", "sin", "cos", "erf"]


def _ctx(device, n_threads=0):
    mod = _backend.module_for(device)
    return mod, mod.Context(device=device, n_threads=n_threads, mode="identical")


def _erf(x):
    from scipy.special import erf

    return erf(x)


def _reference(name, x):
    """float64 reference (NumPy / SciPy) for float32 inputs."""
    with np.errstate(all="ignore"):  # signalling NaNs in the sample
        x = x.astype(np.float64)
        if name == "sigmoid":
            return np.where(x >= 0, 1.0 / (1.0 + np.exp(-x)), np.exp(x) / (1.0 + np.exp(x)))
        if name == "erf":
            return _erf(x)
        return getattr(np, name)(x)


def _float_ulp_error(y, ref):
    """|y - ref| in float32 ulps of ref; inf where NaN-ness or infinities disagree."""
    with np.errstate(all="ignore"):
        y64 = y.astype(np.float64)
        cr = ref.astype(np.float32)
    ulp = np.spacing(np.abs(cr)).astype(np.float64)
    ulp = np.where(np.isfinite(cr), ulp, 2.0**104)
    with np.errstate(all="ignore"):
        err = np.abs(y64 - ref) / ulp
    both_nan = np.isnan(y) & np.isnan(ref)
    same_inf = np.isinf(y) & (y == cr)
    err = np.where(both_nan | same_inf | (y64 == ref), 0.0, err)
    return np.where(np.isnan(err), np.inf, err)


def _sample_float32(step=4099):
    bits = np.arange(0, 2**32, step, dtype=np.uint64).astype(np.uint32)
    return bits.view(np.float32)


@pytest.mark.parametrize("name", FUNCS)
def test_float32_accuracy(device, name):
    mod, ctx = _ctx(device)
    x = _sample_float32()
    out = np.empty_like(x)
    mod.math_apply(ctx, name, x, out)
    err = _float_ulp_error(out, _reference(name, x))
    assert err.max() <= 2.0, (name, x[np.argmax(err)], err.max())


@pytest.mark.parametrize("name", FUNCS)
def test_float64_accuracy(device, name):
    mod, ctx = _ctx(device)
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-30, 30, 20000), rng.uniform(-2, 2, 20000), rng.uniform(0, 700, 5000)])
    out = np.empty_like(x)
    mod.math_apply(ctx, name, x, out)
    ref = _reference(name, x)
    # A float64 reference measures double results to within about 1 ulp of its own.
    with np.errstate(all="ignore"):
        rel = np.abs(out - ref) / np.maximum(np.abs(ref), np.finfo(np.float64).tiny)
    assert np.nanmax(rel) <= 4 * np.finfo(np.float64).eps, (name, x[np.nanargmax(rel)])
    assert np.array_equal(np.isnan(out), np.isnan(ref))


def test_special_values(device):
    mod, ctx = _ctx(device)
    nan_in = np.array([0x7FC01234], dtype=np.uint32).view(np.float32)
    for name in FUNCS:
        out = np.empty_like(nan_in)
        mod.math_apply(ctx, name, nan_in, out)
        assert out.view(np.uint32)[0] == 0x7FC01234, name  # NaN keeps its bits
    x = np.array([0.0, -0.0, np.inf, -np.inf, -1.0], dtype=np.float32)
    expect = {
        "exp": [1, 1, np.inf, 0, np.exp(-1.0)],  # float64 value, rounded below
        "log": [-np.inf, -np.inf, np.inf, np.nan, np.nan],
        "tanh": [0.0, -0.0, 1, -1, np.tanh(-1.0)],
        "sigmoid": [0.5, 0.5, 1, 0, None],
        "sin": [0.0, -0.0, np.nan, np.nan, None],
    }
    for name, want in expect.items():
        out = np.empty_like(x)
        mod.math_apply(ctx, name, x, out)
        for got, w in zip(out, want):
            if w is None:
                continue
            if np.isnan(w):
                assert np.isnan(got), name
            else:
                assert got == np.float32(w) and np.signbit(got) == np.signbit(np.float32(w)), (name, got, w)
    out = np.empty(1, np.float32)
    mod.math_apply(ctx, "log", np.array([-1.0], np.float32), out)
    assert out.view(np.uint32)[0] == 0x7FC00000  # the canonical NaN


def test_pow_and_rows(device):
    mod, ctx = _ctx(device)
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 10, 10000)
    y = rng.uniform(-20, 20, 10000)
    out = np.empty_like(x)
    mod.math_pow(ctx, x, y, out)
    np.testing.assert_allclose(out, np.power(x, y), rtol=4e-16)
    X = rng.normal(size=(50, 13)) * 30
    lse = np.empty((50, 1))
    mod.math_rows(ctx, "logsumexp", X, lse)
    m = X.max(axis=1, keepdims=True)
    np.testing.assert_allclose(lse, m + np.log(np.exp(X - m).sum(axis=1, keepdims=True)), rtol=1e-14)
    sm = np.empty_like(X)
    mod.math_rows(ctx, "softmax", X, sm)
    np.testing.assert_allclose(sm.sum(axis=1), 1.0, rtol=1e-14)
    with pytest.raises(ValueError, match="unknown function"):
        mod.math_apply(ctx, "exp2", x, out)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cpu_and_cuda_bits_identical(dtype):
    cpu_mod, cpu = _ctx("cpu")
    gpu_mod, gpu = _ctx("cuda:0")
    rng = np.random.default_rng(3)
    nbytes = np.dtype(dtype).itemsize
    raw = rng.integers(0, 2**63, size=400000, dtype=np.int64).view(np.uint8)[: 400000 * nbytes]
    x = np.concatenate([raw.view(dtype), rng.uniform(-50, 50, 400000).astype(dtype)])
    for name in FUNCS:
        a, b = np.empty_like(x), np.empty_like(x)
        cpu_mod.math_apply(cpu, name, x, a)
        gpu_mod.math_apply(gpu, name, x, b)
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8)), name
    y = x[::-1].copy()
    a, b = np.empty_like(x), np.empty_like(x)
    cpu_mod.math_pow(cpu, x, y, a)
    gpu_mod.math_pow(gpu, x, y, b)
    assert np.array_equal(a.view(np.uint8), b.view(np.uint8))
    X = x[: 1000 * 17].reshape(1000, 17).copy()
    for name in ["logsumexp", "softmax", "log_softmax"]:
        cols = 1 if name == "logsumexp" else 17
        a, b = np.empty((1000, cols), dtype), np.empty((1000, cols), dtype)
        cpu_mod.math_rows(cpu, name, X, a)
        gpu_mod.math_rows(gpu, name, X, b)
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8)), name


def test_thread_count_invariant():
    mod = _backend.core()
    x = np.linspace(-40, 40, 100001)
    outs = []
    for threads in (1, 2, 5):
        ctx = mod.Context("cpu", n_threads=threads, mode="identical")
        out = np.empty_like(x)
        mod.math_apply(ctx, "tanh", x, out)
        outs.append(out)
    assert all(np.array_equal(outs[0], o) for o in outs[1:])


def test_separates_from_numpy():
    """Bits differ from NumPy's own exp on some inputs, so bit comparisons can
    tell our spelling from the library's."""
    mod, ctx = _ctx("cpu")
    x = (np.arange(1 << 20, dtype=np.uint32) + np.uint32(0x3F800000)).view(np.float32)
    out = np.empty_like(x)
    mod.math_apply(ctx, "exp", x, out)
    assert np.count_nonzero(out != np.exp(x)) > 0
