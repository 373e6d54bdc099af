"""The compiled backends: exception mapping, contexts, parallel regions, allocator."""

import numpy as np
import pytest

from twinlearn import _backend

core = _backend.core()


@pytest.mark.parametrize(
    "kind,exc",
    [("value", ValueError), ("type", TypeError), ("memory", MemoryError), ("cuda", RuntimeError),
     ("unavailable", RuntimeError), ("other", RuntimeError)],
)
def test_cpp_exceptions_map_to_python(kind, exc):
    with pytest.raises(exc, match="test"):
        core._raise(kind)


@pytest.mark.parametrize("threads", [1, 2, 5])
def test_exception_in_parallel_region_is_rethrown(threads):
    ctx = core.Context("cpu", threads, "identical", 0, 0)
    with pytest.raises(ValueError, match="raised in iteration 57"):
        core._parallel_throw(ctx, 200, 57)
    assert core._parallel_throw(ctx, 200, -1) == 200


def test_context_properties():
    ctx = core.Context("cpu", 3, "fast", 42, 0)
    assert (ctx.device, ctx.n_threads, ctx.mode, ctx.seed) == ("cpu", 3, "fast", 42)
    assert "fast" in repr(ctx)
    with pytest.raises(ValueError, match="numeric_mode"):
        core.Context("cpu", 0, "exact", 0, 0)
    with pytest.raises(ValueError, match="device"):
        core.Context("gpu", 0, "fast", 0, 0)


def test_cpu_module_refuses_cuda_contexts():
    ctx = core.Context("cuda:0", 0, "fast", 0, 0)
    with pytest.raises(RuntimeError, match="built without CUDA"):
        core.column_stats(ctx, np.ones((3, 2)), None)


def test_views_accept_any_layout_and_reject_bad_dtypes():
    ctx = core.Context("cpu", 0, "identical", 0, 0)
    X = np.arange(12.0).reshape(3, 4)
    a = np.asarray(core.column_stats(ctx, X, None))
    b = np.asarray(core.column_stats(ctx, np.asfortranarray(X), None))
    c = np.asarray(core.column_stats(ctx, np.ascontiguousarray(X[:, ::-1])[:, ::-1], None))
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    with pytest.raises(TypeError, match="float32 or float64"):
        core.column_stats(ctx, X.astype(np.int64), None)
    with pytest.raises(ValueError, match="sample_weight has 2 entries"):
        core.column_stats(ctx, X, np.ones(2))


def test_host_module_cpu_device_has_no_allocator_activity():
    assert core.allocator_stats(0)["n_device_allocs"] == 0


@pytest.mark.gpu
def test_caching_allocator_reuses_blocks():
    mod = _backend.cuda()
    ctx = mod.Context("cuda:0", 0, "identical", 0, 0)
    X = np.random.default_rng(0).random((100_000, 8))
    mod.column_stats(ctx, X, None)
    before = mod.allocator_stats(0)
    for _ in range(5):
        mod.column_stats(ctx, X, None)
    after = mod.allocator_stats(0)
    assert after["n_requests"] > before["n_requests"]
    assert after["n_device_allocs"] == before["n_device_allocs"], "cached blocks were not reused"
    mod.allocator_release_cached(0)
    assert mod.allocator_stats(0)["cached_bytes"] == 0


@pytest.mark.gpu
def test_device_out_of_memory_is_memory_error():
    mod = _backend.cuda()
    total = mod.cuda_devices()[0]["total_memory"]
    with pytest.raises(MemoryError, match=r"out of memory on cuda:0: tried to allocate \d+ bytes"):
        mod._device_alloc_probe(0, 2 * total)
    mod._device_alloc_probe(0, 1 << 20)  # still usable afterwards


def test_device_alloc_probe_without_cuda():
    with pytest.raises(RuntimeError, match="built without CUDA"):
        core._device_alloc_probe(0, 16)


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["torch", "cupy"])
def test_device_nonfinite_shortcut_and_overflowing_sums(lib):
    """A finite sum proves there is no NaN or infinity; a sum that overflows
    on finite values must not be taken for an infinity (the exact look)."""
    from twinlearn import _io

    mod = pytest.importorskip(lib)
    to_dev = (lambda a: mod.as_tensor(a, device="cuda:0")) if lib == "torch" else mod.asarray
    X = np.random.default_rng(0).random((1000, 7)).astype(np.float32)
    assert _io.device_nonfinite(to_dev(X)) == (False, False)
    assert not _io.device_any(to_dev(X), "nan")
    big = np.full((64, 3), 3e38, dtype=np.float32)  # finite, sum overflows float32
    assert _io.device_nonfinite(to_dev(big)) == (False, False)
    assert not _io.device_any(to_dev(big), "inf")
    for value, expect in ((np.nan, (True, False)), (np.inf, (False, True)), (-np.inf, (False, True))):
        Y = X.copy()
        Y[500, 3] = value
        assert _io.device_nonfinite(to_dev(Y)) == expect
        assert _io.device_any(to_dev(Y), "nan") == expect[0]
        assert _io.device_any(to_dev(Y), "inf") == expect[1]
    Y = X.copy()
    Y[1, 1], Y[2, 2] = np.inf, -np.inf  # the sum is NaN, the data holds no NaN
    assert _io.device_nonfinite(to_dev(Y)) == (False, True)
