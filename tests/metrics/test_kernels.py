"""Pairwise kernels on the GEMM and distance kernels."""

import numpy as np
import pytest
import sklearn.metrics.pairwise as skp
from scipy import sparse as sp
from sklearn.utils._param_validation import InvalidParameterError

import twinlearn.metrics as tm
from twinlearn.testing import assert_separates, bits, to_device

KERNELS = [("linear_kernel", {}), ("polynomial_kernel", {}), ("polynomial_kernel", {"degree": 2.5, "gamma": 0.3,
                                                                                     "coef0": 2.0}),
           ("sigmoid_kernel", {"gamma": 0.05, "coef0": -0.5}), ("rbf_kernel", {}), ("rbf_kernel", {"gamma": 0.01}),
           ("laplacian_kernel", {}), ("cosine_similarity", {})]
#: Relative to the largest |K|: scikit-learn's float32 kernels come from
#: float64 products or distances rounded to float32, twinlearn's are
#: computed in float32.
TOL = {np.float64: 1e-12, np.float32: 1e-5}


def data(n, d=9, seed=0, dtype=np.float64, offset=0.0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, d)) + offset).astype(dtype)


@pytest.mark.parametrize("name,kw", KERNELS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("with_y", [False, True])
def test_kernels_match_scikit_learn(device, name, kw, dtype, with_y):
    X = np.abs(data(230, dtype=dtype)) if name == "polynomial_kernel" and "degree" in kw else data(230, dtype=dtype)
    Y = (np.abs(data(170, seed=1, dtype=dtype)) if X.min() >= 0 else data(170, seed=1, dtype=dtype)) if with_y else None
    ours = getattr(tm, name)(X, Y, device=device, **kw)
    ref = getattr(skp, name)(X, Y, **kw)
    assert ours.dtype == dtype and ours.shape == ref.shape
    np.testing.assert_allclose(ours, ref, rtol=0, atol=TOL[dtype] * np.abs(ref).max())


@pytest.mark.parametrize("metric", ["linear", "poly", "polynomial", "rbf", "laplacian", "sigmoid", "cosine"])
def test_pairwise_kernels_dispatch(metric):
    X, Y = data(40), data(30, seed=1)
    np.testing.assert_allclose(tm.pairwise_kernels(X, Y, metric=metric), skp.pairwise_kernels(X, Y, metric=metric),
                               rtol=1e-12, atol=1e-12)
    K = tm.pairwise_kernels(X, metric=metric, filter_params=True, gamma=0.1, blabla=1)
    np.testing.assert_allclose(K, skp.pairwise_kernels(X, metric=metric, filter_params=True, gamma=0.1, blabla=1),
                               rtol=1e-12, atol=1e-12)


def test_pairwise_kernels_fallbacks_and_precomputed():
    X, Y = np.abs(data(20)), np.abs(data(10, seed=1))
    for metric in ("chi2", "additive_chi2"):
        np.testing.assert_array_equal(tm.pairwise_kernels(X, Y, metric=metric),
                                      skp.pairwise_kernels(X, Y, metric=metric))
    def f(x, y):
        return float(np.dot(x, y))

    np.testing.assert_allclose(tm.pairwise_kernels(X, Y, metric=f), X @ Y.T)
    K = X @ Y.T
    np.testing.assert_array_equal(tm.pairwise_kernels(K, Y, metric="precomputed"), K)
    with pytest.raises(ValueError, match="Precomputed metric requires shape"):
        tm.pairwise_kernels(K, metric="precomputed")
    Xs = sp.csr_matrix(X)
    np.testing.assert_allclose(tm.pairwise_kernels(Xs, metric="rbf"), skp.rbf_kernel(X), rtol=1e-12)
    assert sp.issparse(tm.linear_kernel(Xs, Xs, dense_output=False))
    assert sp.issparse(tm.cosine_similarity(Xs, dense_output=False))


def test_rbf_and_laplacian_diagonal_is_exactly_one():
    """Separating: the direct squared distances make K(x, x) == 1 exactly,
    also far from the origin in float32; the dot-product form does not."""
    X = data(50, dtype=np.float32, offset=300.0)

    def check(sqdist):
        K = np.exp(-0.1 * sqdist(X))
        assert np.all(np.diag(K) == 1)

    def dot_form(A):
        n = (A * A).sum(1)
        return np.maximum(n[:, None] + n[None] - 2 * (A @ A.T), 0)

    assert_separates(check, right=lambda A: tm.pairwise_distances(A, metric="sqeuclidean"), wrong=dot_form,
                     what="rbf diagonal")
    assert np.all(np.diag(tm.rbf_kernel(X, gamma=0.1)) == 1)
    assert np.all(np.diag(tm.laplacian_kernel(X)) == 1)


def test_kernels_are_symmetric():
    X = data(31)
    for name, kw in KERNELS:
        K = getattr(tm, name)(X, **kw)
        assert bits(K) == bits(np.ascontiguousarray(K.T)), name


def test_cosine_similarity_of_zero_rows():
    X = np.array([[0.0, 0.0], [3.0, 4.0]])
    np.testing.assert_array_equal(tm.cosine_similarity(X), skp.cosine_similarity(X))


def test_bad_input():
    X = data(5)
    with pytest.raises(TypeError):
        tm.pairwise_kernels(X, metric="rbf", blabla=1)
    with pytest.raises(InvalidParameterError, match="metric"):
        tm.pairwise_kernels(X, metric="nope")
    with pytest.raises(InvalidParameterError, match="gamma"):
        tm.rbf_kernel(X, gamma=-1.0)
    with pytest.raises(InvalidParameterError, match="gamma"):
        tm.laplacian_kernel(X, gamma=0.0)
    with pytest.raises(InvalidParameterError, match="degree"):
        tm.polynomial_kernel(X, degree=0.5)
    with pytest.raises(ValueError, match="Incompatible dimension"):
        tm.linear_kernel(X, data(3, d=4))
    with pytest.raises(ValueError, match="NaN"):
        tm.rbf_kernel(np.array([[np.nan, 1.0]]))
    with pytest.raises(ValueError, match="too large"):
        tm.linear_kernel(np.full((2, 3), 1e200))


@pytest.mark.gpu
@pytest.mark.parametrize("name,kw", KERNELS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cpu_and_gpu_give_identical_bits(name, kw, dtype):
    X, Y = np.abs(data(517, d=37, dtype=dtype, offset=1.0)), np.abs(data(263, d=37, seed=1, dtype=dtype))
    c = getattr(tm, name)(X, Y, device="cpu", numeric_mode="identical", **kw)
    g = getattr(tm, name)(X, Y, device="cuda", numeric_mode="identical", **kw)
    assert bits(c) == bits(g)


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
@pytest.mark.parametrize("name,kw", KERNELS)
def test_device_arrays_in_and_out(lib, name, kw):
    X = np.abs(data(300, dtype=np.float32))
    dX = to_device(lib, X)
    g = getattr(tm, name)(dX, device="cuda", numeric_mode="identical", **kw)
    assert type(g) is type(dX)
    assert bits(g) == bits(getattr(tm, name)(X, device="cpu", numeric_mode="identical", **kw))
