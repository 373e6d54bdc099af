"""Counter-based random draws through the bindings: known answers, exact bit
construction, statistics, thread-count invariance and CPU-versus-CUDA bit
identity (the ``device`` fixture runs each test on 'cpu' and 'cuda:0')."""

import math

import numpy as np
import pytest

from twinlearn import _backend


def _ctx(device, n_threads=0):
    mod = _backend.module_for(device)
    return mod, mod.Context(device=device, n_threads=n_threads, mode="identical")


def test_philox_known_answer():
    mod = _backend.core()
    # Random123 philox4x32-10, counter 0, key 0.
    assert mod.rng_philox(0, 0, 0) == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)


def test_uniform_bit_construction():
    mod, ctx = _ctx("cpu")
    seed, stream = 123, 456
    u32 = mod.rng_uniform(ctx, seed, stream, 0, 8, np.float32)
    u64 = mod.rng_uniform(ctx, seed, stream, 0, 4, np.float64)
    words = [w for b in range(2) for w in mod.rng_philox(seed, stream, b)]
    np.testing.assert_array_equal(u32, np.array([w >> 8 for w in words], dtype=np.float64) / 2.0**24)
    w64 = [words[2 * i] | (words[2 * i + 1] << 32) for i in range(4)]
    np.testing.assert_array_equal(u64, np.array([w >> 11 for w in w64], dtype=np.float64) / 2.0**53)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_moments(device, dtype):
    mod, ctx = _ctx(device)
    n = 1 << 20
    u = mod.rng_uniform(ctx, 1, 0, 0, n, dtype).astype(np.float64)
    z = mod.rng_normal(ctx, 1, 1, 0, n, dtype).astype(np.float64)
    assert u.dtype == np.float64 and 0.0 <= u.min() and u.max() < 1.0
    assert abs(u.mean() - 0.5) < 5 * math.sqrt(1 / 12 / n)
    assert abs(u.var() - 1 / 12) < 5 * math.sqrt(1 / 180 / n)
    assert abs(z.mean()) < 5 / math.sqrt(n)
    assert abs(z.var() - 1) < 5 * math.sqrt(2 / n)


def test_integers_chi_square(device):
    mod, ctx = _ctx(device)
    n, high = 1 << 20, 37
    v = mod.rng_integers(ctx, 2, 3, 0, n, high)
    assert v.dtype == np.int64 and v.min() >= 0 and v.max() < high
    counts = np.bincount(v, minlength=high)
    e = n / high
    chi2 = ((counts - e) ** 2 / e).sum()
    assert chi2 < (high - 1) + 6 * math.sqrt(2 * (high - 1))


def test_permutation_and_choice(device):
    mod, ctx = _ctx(device)
    p = mod.rng_permutation(ctx, 4, 5, 10000)
    assert np.array_equal(np.sort(p), np.arange(10000))
    c = mod.rng_choice(ctx, 4, 5, 10000, 100, False)
    assert np.array_equal(c, p[:100])
    r = mod.rng_choice(ctx, 4, 5, 10000, 100, True)
    assert np.array_equal(r, mod.rng_integers(ctx, 4, 5, 0, 100, 10000))
    with pytest.raises(ValueError):
        mod.rng_choice(ctx, 4, 5, 10, 11, False)


def test_weighted_choice(device):
    mod, ctx = _ctx(device)
    w = np.array([1.0, 0.0, 2.0, 3.0, 0.0, 4.0])
    k = 200000
    v = mod.rng_weighted_choice(ctx, 6, 7, w, k, True)
    counts = np.bincount(v, minlength=6)
    assert counts[1] == 0 and counts[4] == 0
    e = k * w / w.sum()
    pos = w > 0
    chi2 = ((counts[pos] - e[pos]) ** 2 / e[pos]).sum()
    assert chi2 < 3 + 6 * math.sqrt(6)
    s = mod.rng_weighted_choice(ctx, 6, 7, w.astype(np.float32), 4, False)
    assert sorted(s) == [0, 2, 3, 5]
    with pytest.raises(ValueError, match="positive"):
        mod.rng_weighted_choice(ctx, 6, 7, w, 5, False)
    with pytest.raises(ValueError, match="non-negative"):
        mod.rng_weighted_choice(ctx, 6, 7, np.array([1.0, -1.0]), 1, True)


def test_thread_count_invariant():
    mod = _backend.core()
    outs = []
    for threads in (1, 2, 7):
        ctx = mod.Context("cpu", n_threads=threads, mode="identical")
        outs.append(
            (
                mod.rng_normal(ctx, 9, 9, 3, 100003, np.float32),
                mod.rng_integers(ctx, 9, 9, 3, 100003, 1000),
                mod.rng_permutation(ctx, 9, 9, 100003),
            )
        )
    for o in outs[1:]:
        for a, b in zip(outs[0], o):
            assert np.array_equal(a.view(np.uint8), b.view(np.uint8))


@pytest.mark.gpu
def test_cpu_and_cuda_bits_identical():
    cmod, cpu = _ctx("cpu")
    gmod, gpu = _ctx("cuda:0")

    def same(a, b):
        return a.dtype == b.dtype and np.array_equal(a.view(np.uint8), b.view(np.uint8))

    for n, off in [(1, 0), (1000, 3), (1000003, 5)]:
        for dt in (np.float32, np.float64):
            assert same(cmod.rng_uniform(cpu, 11, 2, off, n, dt), gmod.rng_uniform(gpu, 11, 2, off, n, dt))
            assert same(cmod.rng_normal(cpu, 11, 2, off, n, dt), gmod.rng_normal(gpu, 11, 2, off, n, dt))
        for high in (1, 10, 2**62 + 3):
            assert same(cmod.rng_integers(cpu, 11, 2, off, n, high), gmod.rng_integers(gpu, 11, 2, off, n, high))
        assert same(cmod.rng_permutation(cpu, 11, 2, n), gmod.rng_permutation(gpu, 11, 2, n))
        k = (n + 1) // 2
        for rep in (False, True):
            assert same(cmod.rng_choice(cpu, 11, 2, n, k, rep), gmod.rng_choice(gpu, 11, 2, n, k, rep))
        w = np.random.default_rng(n).uniform(0, 1, n) * (np.arange(n) % 3 != 1)
        w[0] = 1.0
        kk = min(k, int((w > 0).sum()))
        for rep in (False, True):
            assert same(
                cmod.rng_weighted_choice(cpu, 11, 2, w, kk, rep), gmod.rng_weighted_choice(gpu, 11, 2, w, kk, rep)
            )


def test_ties_rules():
    mod = _backend.core()
    x = np.array([2.0, np.nan, 1.0, 2.0, -0.0, 0.0, 1.0])
    assert mod.ties_argmin(x) == 4
    assert mod.ties_argmax(x) == 1
    assert list(mod.ties_argsort(x)) == [4, 5, 2, 6, 0, 3, 1]
    assert list(mod.ties_argsort(x, descending=True)) == [1, 0, 3, 2, 6, 4, 5]
    assert list(mod.ties_top_k(x, 3)) == [1, 0, 3]
    # NumPy's stable argsort puts NaN last too but keeps -0 and 0 in index order: same here.
    assert list(mod.ties_argsort(x)) == list(np.argsort(x, kind="stable"))
