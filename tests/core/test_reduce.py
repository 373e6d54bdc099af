"""Canonical reductions and fixed-point histograms through the bindings.

Every result is compared with NumPy (within tolerance, or exactly for the
selections) and, bit for bit, with the CPU backend on one thread: on 'cpu'
that checks thread-count invariance, on 'cuda:0' CPU-versus-GPU identity.
"""

import numpy as np
import pytest

from twinlearn import _backend
from twinlearn.testing import same_bits

SIZES = [1, 7, 255, 2048, 2049, 100_003]


def backend(device, n_threads=0, mode="identical"):
    mod = _backend.module_for(device)
    return mod, mod.Context(device, n_threads, mode)


def reference():
    mod = _backend.core()
    return mod, mod.Context("cpu", 1, "identical")


def hostile(n, dtype, seed):
    rng = np.random.default_rng(seed)
    scale = np.where(rng.random(n) < 0.25, 1e6, 1.0)
    return (rng.standard_normal(n) * scale).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
def test_sum_and_dot(device, dtype, n):
    mod, ctx = backend(device, n_threads=3)
    ref, rctx = reference()
    x, y = hostile(n, dtype, n), hostile(n, dtype, n + 1)
    for double_acc in (False, True):
        s = mod.reduce_sum(ctx, x, double_acc)
        assert same_bits(np.float64(s), np.float64(ref.reduce_sum(rctx, x, double_acc)))
        d = mod.reduce_dot(ctx, x, y, double_acc)
        assert same_bits(np.float64(d), np.float64(ref.reduce_dot(rctx, x, y, double_acc)))
    mag = np.abs(x.astype(np.float64)).sum()
    tol = (1e-5 if dtype == np.float32 else 1e-13) * mag
    assert abs(mod.reduce_sum(ctx, x) - x.astype(np.float64).sum()) <= tol
    assert abs(mod.reduce_sum(ctx, x, True) - x.astype(np.float64).sum()) <= 1e-13 * mag
    dmag = np.abs(x.astype(np.float64) * y).sum()
    dtol = (1e-5 if dtype == np.float32 else 1e-13) * dmag
    assert abs(mod.reduce_dot(ctx, x, y) - np.dot(x.astype(np.float64), y.astype(np.float64))) <= dtol


def test_float32_sum_returns_float32_bits(device):
    mod, ctx = backend(device)
    x = hostile(10_000, np.float32, 3)
    s = mod.reduce_sum(ctx, x)
    assert np.float64(np.float32(s)) == s  # accumulated in float32


def documented_sum(x, chunk=2048, lanes=256):
    """The order of docs/NUMERICS.md in NumPy, in x's dtype: strided lanes
    summed sequentially from -0.0, pairwise tree over lanes, then over chunks."""
    n = x.size
    nchunks = -(-n // chunk)
    padded = np.full(nchunks * chunk, -0.0, dtype=x.dtype)  # -0.0 + v == v exactly
    padded[:n] = x
    blocks = padded.reshape(nchunks, chunk // lanes, lanes)
    acc = np.full((nchunks, lanes), -0.0, dtype=x.dtype)
    for s in range(chunk // lanes):
        acc = acc + blocks[:, s, :]
    while acc.shape[1] > 1:
        acc = acc[:, 0::2] + acc[:, 1::2]
    p = list(acc[:, 0])
    while len(p) > 1:
        q = [p[i] + p[i + 1] for i in range(0, len(p) - 1, 2)]
        if len(p) % 2:
            q.append(p[-1])
        p = q
    return p[0]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_follows_documented_order(device, dtype):
    mod, ctx = backend(device)
    for n in (5, 2049, 100_003):
        x = hostile(n, dtype, n)
        assert same_bits(np.asarray(mod.reduce_sum(ctx, x)).astype(dtype), documented_sum(x))


def test_canonical_order_differs_from_other_orders_on_fixture(device):
    # Separating arm: the fixture tells the canonical order from a sequential
    # sum, from another chunk size and from another lane count.
    mod, ctx = backend(device)
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(100_003) * np.where(rng.random(100_003) < 0.25, 1e4, 1)).astype(np.float32)
    canon = np.float32(mod.reduce_sum(ctx, x))
    assert same_bits(canon, documented_sum(x))
    assert not same_bits(canon, np.cumsum(x, dtype=np.float32)[-1])
    assert not same_bits(canon, documented_sum(x, chunk=1024))
    assert not same_bits(canon, documented_sum(x, lanes=128))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", SIZES)
def test_selections_match_numpy(device, dtype, n):
    mod, ctx = backend(device, n_threads=2)
    x = hostile(n, dtype, 7 * n)
    if n > 300:
        x[[5, 260, n - 1]] = x.min()  # ties across lanes and chunks
        x[[9, 300]] = x.max()
    assert mod.reduce_argmin(ctx, x) == np.argmin(x)
    assert mod.reduce_argmax(ctx, x) == np.argmax(x)
    assert mod.reduce_min(ctx, x) == x.min()
    assert mod.reduce_max(ctx, x) == x.max()


def test_nan_and_signed_zero_rules(device):
    mod, ctx = backend(device)
    x = np.cos(np.arange(7000) * 0.37)
    x[4100] = np.nan
    x[2300] = np.nan
    assert mod.reduce_argmin(ctx, x) == np.argmin(x) == 2300
    assert mod.reduce_argmax(ctx, x) == np.argmax(x) == 2300
    assert np.isnan(mod.reduce_min(ctx, x)) and np.isnan(mod.reduce_max(ctx, x))
    assert np.isnan(mod.reduce_sum(ctx, x))
    z = np.ones(5000)
    z[3000] = -0.0
    z[257] = 0.0
    assert mod.reduce_argmin(ctx, z) == 257
    assert not np.signbit(mod.reduce_min(ctx, z))
    z[100] = -0.0
    assert np.signbit(mod.reduce_min(ctx, z))


def test_empty_and_errors(device):
    mod, ctx = backend(device)
    empty = np.zeros(0)
    assert mod.reduce_sum(ctx, empty) == 0.0
    with pytest.raises(ValueError):
        mod.reduce_min(ctx, empty)
    with pytest.raises(ValueError):
        mod.reduce_dot(ctx, np.ones(3), np.ones(4))
    with pytest.raises(TypeError):
        mod.reduce_sum(ctx, np.ones(3, dtype=np.int64))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(1, 1), (7, 3), (2049, 17), (5003, 70)])
def test_columns(device, dtype, shape):
    mod, ctx = backend(device, n_threads=3)
    ref, rctx = reference()
    X = hostile(shape[0] * shape[1], dtype, shape[0]).reshape(shape)
    for name in ("column_sums", "column_min", "column_max", "column_argmin", "column_argmax"):
        assert same_bits(getattr(mod, name)(ctx, X), getattr(ref, name)(rctx, X)), name
    assert same_bits(mod.column_sums(ctx, X, True), ref.column_sums(rctx, X, True))
    # Column j has the bits of the vector sum of X[:, j].
    for j in range(shape[1]):
        col = np.ascontiguousarray(X[:, j])
        assert same_bits(np.float64(mod.column_sums(ctx, X)[j]), np.float64(mod.reduce_sum(ctx, col)))
    np.testing.assert_array_equal(mod.column_argmin(ctx, X), X.argmin(0))
    np.testing.assert_array_equal(mod.column_max(ctx, X), X.max(0))
    np.testing.assert_allclose(mod.column_sums(ctx, X, True), X.astype(np.float64).sum(0), rtol=1e-12, atol=1e-6)


# ---------------------------------------------------------------------------
# Fixed point


def fixed_reference(values, bins, n_bins, k):
    q = np.rint(np.ldexp(values.astype(np.float64), k)).astype(np.int64)
    out = np.zeros((n_bins,) + values.shape[1:], dtype=np.int64)
    np.add.at(out, bins, q)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("rows,nv,n_bins", [(1, 1, 1), (1000, 2, 7), (100_003, 2, 255), (20_000, 1, 5000)])
def test_fixed_histogram(device, dtype, rows, nv, n_bins):
    mod, ctx = backend(device, n_threads=3)
    rng = np.random.default_rng(rows + n_bins)
    values = (rng.standard_normal((rows, nv)) * np.where(rng.random((rows, nv)) < 0.2, 1e3, 1e-2)).astype(dtype)
    bins = rng.integers(0, n_bins, rows).astype(np.int32)
    k = mod.fixed_point_scale_for(ctx, values)
    assert k == mod.fixed_point_scale(float(np.abs(values).max()), rows)
    h = mod.fixed_histogram(ctx, values, bins, n_bins, k)
    np.testing.assert_array_equal(h, fixed_reference(values, bins, n_bins, k))
    perm = rng.permutation(rows)
    np.testing.assert_array_equal(mod.fixed_histogram(ctx, values[perm], bins[perm], n_bins, k), h)
    exact = np.zeros((n_bins, nv))
    np.add.at(exact, bins, values.astype(np.float64))
    np.testing.assert_allclose(np.ldexp(h.astype(np.float64), -k), exact, atol=rows * 2.0 ** -k)


def test_fixed_point_is_order_free_where_float_is_not(device):
    # Separating arm for rule 2: two orders of a float32 sum differ in bits,
    # the fixed-point sums of the same two orders do not.
    mod, ctx = backend(device)
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(20_000) * np.where(rng.random(20_000) < 0.15, 100, 0.01)).astype(np.float32)
    assert not same_bits(np.cumsum(x)[-1], np.cumsum(x[::-1])[-1])
    one = np.zeros(x.size, dtype=np.int32)
    k = mod.fixed_point_scale_for(ctx, x)
    a = mod.fixed_histogram(ctx, x, one, 1, k)
    b = mod.fixed_histogram(ctx, np.ascontiguousarray(x[::-1]), one, 1, k)
    assert same_bits(a, b)


def test_fixed_histogram_bound_is_enforced(device):
    mod, ctx = backend(device)
    n = 1000
    values = np.ones(n)
    bins = np.zeros(n, dtype=np.int32)
    k = mod.fixed_point_scale(1.0, n)
    assert mod.fixed_histogram(ctx, values, bins, 1, k)[0] == n * 2**k
    with pytest.raises(ValueError, match="too large"):
        mod.fixed_histogram(ctx, values, bins, 1, k + 1)
    values[5] = np.inf
    with pytest.raises(ValueError):
        mod.fixed_histogram(ctx, values, bins, 1, 0)
    values[5] = 1.0
    bins[3] = 1
    with pytest.raises(ValueError, match="bin"):
        mod.fixed_histogram(ctx, values, bins, 1, 0)
