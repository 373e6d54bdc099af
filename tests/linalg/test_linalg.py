"""twinlearn.linalg: matmul and gram against NumPy, bit identity of the CPU
and CUDA backends in identical mode, and cuBLAS in fast mode."""

import numpy as np
import pytest

from twinlearn import _backend
from twinlearn.linalg import gram, matmul
from twinlearn.linalg._linalg import _matmul
from twinlearn.testing import bits


def operands(m, n, k, dtype, seed=0):
    rng = np.random.default_rng(seed + 7 * m + 11 * n + 13 * k)
    scale = lambda shape: np.where(rng.random(shape) < 0.15, 64.0, 1.0)  # noqa: E731
    A = (rng.standard_normal((m, k)) * scale((m, k))).astype(dtype)
    B = (rng.standard_normal((k, n)) * scale((k, n))).astype(dtype)
    return A, B


def op(M, t):
    return np.ascontiguousarray(M.T) if t else M


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_close_to_numpy_and_identical_to_cpu(device, dtype, ta, tb):
    for m, n, k in [(1, 1, 1), (7, 33, 65), (129, 70, 300), (40, 3, 1000)]:
        A, B = operands(m, n, k, dtype)
        a, b = op(A, ta), op(B, tb)  # stored transposed when ta / tb
        C = matmul(a, b, transpose_a=ta, transpose_b=tb, device=device, numeric_mode="identical")
        assert C.dtype == dtype and C.shape == (m, n)
        exact = A.astype(np.float64) @ B.astype(np.float64)
        mag = np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64))
        assert np.all(np.abs(C - exact) <= 2 * k * np.finfo(dtype).eps * mag + 1e-300), (m, n, k)
        ref = matmul(a, b, transpose_a=ta, transpose_b=tb, device="cpu", numeric_mode="identical")
        assert bits(C) == bits(ref), (m, n, k)


def test_matmul_transposed_equals_product_of_copies(device):
    # Separating arm: the canonical chain depends only on the operands'
    # values, so a transposed operand and a transposed copy give one result;
    # the product summed in two halves of k (another order) does not.
    A, B = operands(60, 50, 2000, np.float32, seed=3)
    At = np.ascontiguousarray(A.T)
    C1 = matmul(At, B, transpose_a=True, device=device, numeric_mode="identical")
    C2 = matmul(A, B, device=device, numeric_mode="identical")
    assert bits(C1) == bits(C2)
    h = 1000
    split = matmul(A[:, :h], B[:h], device=device, numeric_mode="identical") + matmul(
        A[:, h:], B[h:], device=device, numeric_mode="identical"
    )
    assert np.count_nonzero(C2.view(np.uint32) != split.view(np.uint32)) > C2.size // 4


def test_matmul_layouts_and_dtypes():
    A, B = operands(20, 30, 40, np.float64)
    F = np.asfortranarray(A)  # passed as its transpose, no copy
    assert bits(matmul(F, B, device="cpu")) == bits(matmul(A, B, device="cpu"))
    assert bits(matmul(F.T, B, transpose_a=True, device="cpu")) == bits(matmul(A, B, device="cpu"))
    # float32 with float64 promotes; integers compute in float64.
    assert matmul(A.astype(np.float32), B, device="cpu").dtype == np.float64
    Ai = np.arange(6).reshape(2, 3)
    np.testing.assert_array_equal(matmul(Ai, Ai, transpose_b=True, device="cpu"), Ai @ Ai.T)


def test_matmul_errors():
    A, B = operands(5, 4, 3, np.float64)
    with pytest.raises(ValueError, match="inner dimensions"):
        matmul(A, B, transpose_a=True, device="cpu")
    with pytest.raises(ValueError, match="2-D"):
        matmul(A[0], B, device="cpu")
    with pytest.raises(ValueError, match="numeric_mode"):
        matmul(A, B, device="cpu", numeric_mode="exact")


def test_matmul_thread_count_does_not_change_bits():
    from twinlearn import config_context

    A, B = operands(300, 120, 500, np.float32, seed=5)
    with config_context(n_threads=1):
        one = matmul(A, B, transpose_b=False, device="cpu")
    with config_context(n_threads=3):
        three = matmul(A, B, device="cpu")
    assert bits(one) == bits(three)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_matmul_fast_mode_uses_cublas(dtype):
    A, B = operands(300, 200, 3000, dtype, seed=9)
    C, mode = _matmul(A, B, transpose_a=False, device="cuda:0", numeric_mode="fast")
    assert mode == "fast"
    Ct, mode_t = _matmul(np.ascontiguousarray(A.T), B, transpose_a=True, device="cuda:0", numeric_mode="fast")
    assert mode_t == "fast"
    exact = A.astype(np.float64) @ B.astype(np.float64)
    mag = np.abs(A.astype(np.float64)) @ np.abs(B.astype(np.float64))
    tol = 1e-5 if dtype == np.float32 else 1e-13  # no TF32
    assert np.all(np.abs(C - exact) <= tol * mag) and np.all(np.abs(Ct - exact) <= tol * mag)
    canonical, cmode = _matmul(A, B, device="cuda:0", numeric_mode="identical")
    assert cmode == "identical"
    # cuBLAS sums k in its own blocked order: other bits than the single chain.
    assert bits(C) != bits(canonical)


@pytest.mark.gpu
def test_matmul_device_arrays_stay_on_device():
    A, B = operands(50, 40, 30, np.float32)
    ref = matmul(A, B, device="cpu", numeric_mode="identical")
    found = False
    try:
        import cupy

        found = True
        out = matmul(cupy.asarray(A), cupy.asarray(B), numeric_mode="identical")
        assert isinstance(out, cupy.ndarray)
        assert bits(cupy.asnumpy(out)) == bits(ref)
    except ImportError:
        pass
    try:
        import torch

        found = True
        out = matmul(torch.from_numpy(A).cuda(), torch.from_numpy(B).cuda(), numeric_mode="identical")
        assert isinstance(out, torch.Tensor) and out.is_cuda
        assert bits(out.cpu().numpy()) == bits(ref)
    except ImportError:
        pass
    if not found:
        pytest.skip("neither CuPy nor PyTorch is installed")


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gram_matches_numpy_and_cpu(device, dtype):
    rng = np.random.default_rng(1)
    X = (rng.standard_normal((500, 13)) * 3 + 10).astype(dtype)
    w = rng.uniform(0.1, 2.0, 500)
    X64 = X.astype(np.float64)
    tol = 1e-4 if dtype == np.float32 else 1e-11
    G = gram(X, device=device, numeric_mode="identical")
    assert G.dtype == np.float64 and G.shape == (13, 13)
    np.testing.assert_allclose(G, X64.T @ X64, rtol=tol)
    Gc = gram(X, center=True, device=device, numeric_mode="identical")
    Xc = X64 - X64.mean(axis=0)
    np.testing.assert_allclose(Gc, Xc.T @ Xc, rtol=tol * 10, atol=tol * np.abs(Xc.T @ Xc).max())
    Gw = gram(X, sample_weight=w, device=device, numeric_mode="identical")
    np.testing.assert_allclose(Gw, (X64.T * w) @ X64, rtol=tol)
    for g, kw in [(G, {}), (Gc, {"center": True}), (Gw, {"sample_weight": w})]:
        assert bits(g) == bits(gram(X, device="cpu", numeric_mode="identical", **kw))
        assert bits(g) == bits(g.T)


def test_gram_of_non_c_contiguous_input(device):
    # A Fortran-ordered X (and a strided view) gives the Gram matrix of X
    # itself, with the bits of its C-ordered copy: the rows are not read as
    # the columns of X.T.
    rng = np.random.default_rng(2)
    X = rng.standard_normal((40, 6))
    w = rng.uniform(0.5, 2.0, 40)
    for kw in ({}, {"center": True}, {"sample_weight": w}):
        ref = gram(X, device=device, numeric_mode="identical", **kw)
        for Y in (np.asfortranarray(X), np.ascontiguousarray(X[:, ::-1])[:, ::-1]):
            G = gram(Y, device=device, numeric_mode="identical", **kw)
            assert G.shape == (6, 6) and bits(G) == bits(ref), kw


def test_gram_errors():
    X = np.ones((4, 3))
    with pytest.raises(ValueError, match="sample_weight"):
        gram(X, sample_weight=np.ones(3), device="cpu")
    with pytest.raises(ValueError, match="non-negative"):
        gram(X, sample_weight=-np.ones(4), device="cpu")


def test_backend_reports_modes():
    mod = _backend.core()
    ctx = mod.Context("cpu", 1, "fast")
    A, B = operands(4, 5, 6, np.float64)
    out = np.empty((4, 5))
    # The CPU backend runs the canonical product in every mode.
    assert mod.linalg_matmul(ctx, A, False, B, False, out) == "identical"


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_backend_held_device_arrays(dtype):
    # NumPy input of a GPU fit is copied to the device once and read through
    # DLPack by every later call (twinlearn.decomposition._solvers.Staged).
    from twinlearn.decomposition._solvers import Backend, Staged

    mod = _backend.cuda()
    backend = Backend(mod, mod.Context("cuda:0", 0, "identical"), "test")
    X = operands(300, 1, 40, dtype)[0]
    Xs = backend.stage(X)
    assert isinstance(Xs, Staged) and Xs.shape == X.shape and Xs.dtype == dtype
    assert bits(backend.host(Xs)) == bits(X)
    B = operands(1, 20, 40, dtype)[1]
    out = backend.matmul(Xs, False, B, False)
    assert isinstance(out, Staged)
    assert bits(backend.host(out)) == bits(matmul(X, B, device="cpu", numeric_mode="identical"))
    empty = backend.empty(Xs, (5, 7), dtype)
    assert empty.shape == (5, 7) and backend.host(empty).shape == (5, 7)
    with pytest.raises(ValueError):
        mod.linalg_to_device(mod.Context("cpu"), X)


def test_sym_eigh_needs_a_gpu_context():
    mod = _backend.core()
    C = np.eye(3)
    with pytest.raises(RuntimeError, match="CUDA context"):
        mod.linalg_sym_eigh(mod.Context("cpu", 1, "fast"), C, np.empty(3), np.empty((3, 3)))


@pytest.mark.gpu
@pytest.mark.parametrize("d", [2, 37, 256])
def test_sym_eigh_on_gpu_matches_lapack(d):
    # cuSOLVER's eigenpairs (fast mode's covariance solver) against LAPACK:
    # eigenvalues ascending, V[:, i] the eigenvector of w[i].
    from twinlearn.decomposition._solvers import Backend

    rng = np.random.default_rng(d)
    A = rng.standard_normal((3 * d, d)) * np.linspace(4.0, 0.5, d)
    C = A.T @ A
    mod = _backend.cuda()
    w, V = np.empty(d), np.empty((d, d))
    mod.linalg_sym_eigh(mod.Context("cuda:0", 0, "fast"), C, w, V)
    w_ref = np.linalg.eigvalsh(C)
    np.testing.assert_allclose(w, w_ref, rtol=1e-10, atol=1e-12 * w_ref[-1])
    np.testing.assert_allclose(C @ V, V * w, atol=1e-10 * w_ref[-1])
    np.testing.assert_allclose(V.T @ V, np.eye(d), atol=1e-10)
    # The solvers' entry: descending; the k largest when 4k <= d (as the
    # host path), all of them otherwise; cuSOLVER in fast mode only.
    from twinlearn.decomposition import _solvers

    k = max(1, d // 4)
    fast = Backend(mod, mod.Context("cuda:0", 0, "fast"), "test")
    lam, W = fast.eigh_desc(C, k)
    assert fast.delivered == "fast" and lam.shape == ((k,) if 4 * k <= d else (d,))
    np.testing.assert_allclose(lam, w_ref[::-1][: len(lam)], rtol=1e-10)
    exact = Backend(mod, mod.Context("cuda:0", 0, "identical"), "test")
    lam_i, W_i = exact.eigh_desc(C, k)
    lam_h, W_h = _solvers.eigh_desc(C, k, exact=True)
    assert exact.delivered == "identical" and bits(lam_i) == bits(lam_h) and bits(W_i) == bits(W_h)
