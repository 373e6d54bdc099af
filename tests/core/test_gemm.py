"""The canonical GEMM through the bindings: NumPy within tolerance, and the
CPU backend on one thread bit for bit (on 'cuda:0': CPU-versus-GPU identity)."""

import numpy as np
import pytest

from twinlearn import _backend

DIMS = [1, 7, 33, 129]


def backend(device, n_threads=0, mode="identical"):
    mod = _backend.module_for(device)
    return mod, mod.Context(device, n_threads, mode)


def reference():
    mod = _backend.core()
    return mod, mod.Context("cpu", 1, "identical")


def operands(m, n, k, transpose_b, dtype, seed=0):
    rng = np.random.default_rng(seed + 7 * m + 11 * n + 13 * k)
    scale = lambda shape: np.where(rng.random(shape) < 0.15, 64.0, 1.0)  # noqa: E731
    A = (rng.standard_normal((m, k)) * scale((m, k))).astype(dtype)
    bshape = (n, k) if transpose_b else (k, n)
    B = (rng.standard_normal(bshape) * scale(bshape)).astype(dtype)
    return A, B


def gemm(mod, ctx, A, B, transpose_b):
    n = B.shape[0] if transpose_b else B.shape[1]
    out = np.empty((A.shape[0], n), dtype=A.dtype)
    mod.gemm(ctx, A, B, transpose_b, out)
    return out


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("transpose_b", [False, True])
def test_gemm_odd_shapes(device, dtype, transpose_b):
    mod, ctx = backend(device, n_threads=3)
    ref, rctx = reference()
    for m in DIMS:
        for n in DIMS:
            for k in DIMS + [1000]:
                A, B = operands(m, n, k, transpose_b, dtype)
                C = gemm(mod, ctx, A, B, transpose_b)
                assert C.tobytes() == gemm(ref, rctx, A, B, transpose_b).tobytes(), (m, n, k)
                exact = A.astype(np.float64) @ (B.T if transpose_b else B).astype(np.float64)
                mag = np.abs(A.astype(np.float64)) @ np.abs((B.T if transpose_b else B).astype(np.float64))
                eps = np.finfo(dtype).eps
                assert np.all(np.abs(C - exact) <= 2 * k * eps * mag + 1e-300), (m, n, k)


def test_gemm_large(device):
    mod, ctx = backend(device, n_threads=2)
    ref, rctx = reference()
    A, B = operands(1000, 257, 300, False, np.float32)
    assert gemm(mod, ctx, A, B, False).tobytes() == gemm(ref, rctx, A, B, False).tobytes()


def test_split_k_order_gives_different_bits(device):
    # Separating arm: summing two halves of k separately, then adding, is
    # another order; on this fixture most entries differ from the canonical chain.
    mod, ctx = backend(device)
    A, B = operands(33, 33, 1000, False, np.float32, seed=21)
    C = gemm(mod, ctx, A, B, False)
    h = 500
    split = gemm(mod, ctx, np.ascontiguousarray(A[:, :h]), B[:h], False) + gemm(
        mod, ctx, np.ascontiguousarray(A[:, h:]), B[h:], False
    )
    differs = np.count_nonzero(C.view(np.uint32) != split.view(np.uint32))
    assert differs > C.size // 4


def test_gemm_errors(device):
    mod, ctx = backend(device)
    A, B = operands(5, 4, 3, False, np.float64)
    with pytest.raises(ValueError):
        mod.gemm(ctx, A, B, True, np.empty((5, 4)))
    with pytest.raises(ValueError):
        mod.gemm(ctx, A, B, False, np.empty((4, 5)))
    with pytest.raises(TypeError):
        mod.gemm(ctx, A, B.astype(np.float32), False, np.empty((5, 4)))


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fast_mode_uses_vendor_gemm(dtype):
    mod, ctx = backend("cuda:0", mode="fast")
    A, B = operands(300, 200, 500, False, dtype)
    C = gemm(mod, ctx, A, B, False)
    exact = A.astype(np.float64) @ B.astype(np.float64)
    mag = np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64))
    # No TF32: errors stay at the dtype's precision.
    assert np.all(np.abs(C - exact) <= 1e-5 * mag if dtype == np.float32 else np.abs(C - exact) <= 1e-13 * mag)
