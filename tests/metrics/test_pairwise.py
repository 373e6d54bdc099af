import numpy as np
import pytest
from sklearn import metrics as skm

from twinlearn.metrics import pairwise_distances, pairwise_distances_argmin, pairwise_distances_argmin_min
from twinlearn.testing import bits

CASES = [("euclidean", {}), ("l2", {}), ("sqeuclidean", {}), ("manhattan", {}), ("cityblock", {}), ("l1", {}),
         ("cosine", {}), ("chebyshev", {}), ("minkowski", {"p": 3}), ("minkowski", {"p": 1.5})]


def data(n, d=11, seed=0, dtype=np.float64, offset=0.0):
    rng = np.random.default_rng(seed)
    return (rng.normal(size=(n, d)) + offset).astype(dtype)


@pytest.mark.parametrize("metric,kw", CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pairwise_distances_match_scikit_learn(device, metric, kw, dtype):
    X, Y = data(300, dtype=dtype, offset=50.0), data(270, seed=1, dtype=dtype, offset=50.0)
    ours = pairwise_distances(X, Y, metric=metric, device=device, **kw)
    ref = skm.pairwise_distances(X, Y, metric=metric, **kw)
    assert ours.dtype == dtype and ours.shape == (300, 270)
    # scikit-learn's own euclidean values on data 50 away from the origin are
    # good to about 1e-11 (float64) and 1e-4 (float32: it upcasts).
    tol = 1e-4 if dtype == np.float32 else 1e-9
    np.testing.assert_allclose(ours, ref, rtol=tol, atol=tol)


@pytest.mark.parametrize("metric", ["euclidean", "sqeuclidean", "cosine", "manhattan"])
def test_within_x_has_zero_diagonal(device, metric):
    X = data(64)
    D = pairwise_distances(X, metric=metric, device=device)
    assert np.all(np.diag(D) == 0)
    np.testing.assert_allclose(D, skm.pairwise_distances(X, metric=metric), atol=1e-12)


@pytest.mark.parametrize("metric", ["euclidean", "manhattan", "cosine"])
@pytest.mark.parametrize("axis", [0, 1])
def test_argmin_min_match_scikit_learn(device, metric, axis):
    X, Y = data(500), data(120, seed=3)
    i, d = pairwise_distances_argmin_min(X, Y, axis=axis, metric=metric, device=device)
    ri, rd = skm.pairwise_distances_argmin_min(X, Y, axis=axis, metric=metric)
    np.testing.assert_array_equal(i, ri)
    np.testing.assert_allclose(d, rd, rtol=1e-10, atol=1e-12)
    np.testing.assert_array_equal(pairwise_distances_argmin(X, Y, axis=axis, metric=metric, device=device), ri)


def test_argmin_ties_go_to_the_lowest_index(device):
    X = np.zeros((1, 2))
    Y = np.array([[1.0, 0.0], [0.0, 1.0], [-1.0, 0.0]])
    assert pairwise_distances_argmin(X, Y, device=device)[0] == 0


def test_direct_form_separates_from_dot_form():
    """pairwise_distances uses the direct form for euclidean: on data far from
    the origin in float32 the dot form loses digits that the direct form keeps
    (separating arm: the dot form's error is far above the tolerance used above)."""
    X, Y = data(200, dtype=np.float32, offset=300.0), data(100, seed=1, dtype=np.float32, offset=300.0)
    ref = skm.pairwise_distances(X.astype(np.float64), Y.astype(np.float64))
    ours = pairwise_distances(X, Y, device="cpu")
    xn = (X.astype(np.float32) ** 2).sum(1)[:, None]
    yn = (Y.astype(np.float32) ** 2).sum(1)[None]
    dot_form = np.sqrt(np.maximum(xn + yn - 2 * (X @ Y.T), 0))
    assert np.abs(ours - ref).max() < 1e-3
    assert np.abs(dot_form - ref).max() > 1e-2


def test_unsupported_metric_and_shapes():
    X = data(5)
    with pytest.raises(ValueError, match="not supported"):
        pairwise_distances(X, metric="hamming", device="cpu")
    with pytest.raises(ValueError, match="callable"):
        pairwise_distances(X, metric=lambda a, b: 0, device="cpu")
    with pytest.raises(ValueError, match="Incompatible dimension"):
        pairwise_distances(X, data(3, d=4), device="cpu")
    with pytest.raises(ValueError, match="NaN"):
        pairwise_distances(np.array([[np.nan, 1.0]]), device="cpu")


@pytest.mark.gpu
@pytest.mark.parametrize("metric,kw", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cpu_and_gpu_give_identical_bits(metric, kw, dtype):
    X, Y = data(1031, d=37, dtype=dtype, offset=5.0), data(517, d=37, seed=1, dtype=dtype)
    c = pairwise_distances(X, Y, metric=metric, device="cpu", numeric_mode="identical", **kw)
    g = pairwise_distances(X, Y, metric=metric, device="cuda", numeric_mode="identical", **kw)
    assert bits(c) == bits(g)
    ic, dc = pairwise_distances_argmin_min(X, Y, metric=metric, device="cpu", metric_kwargs=kw)
    ig, dg = pairwise_distances_argmin_min(X, Y, metric=metric, device="cuda", metric_kwargs=kw)
    assert bits(ic) == bits(ig) and bits(dc) == bits(dg)


def test_sparse_input_is_computed_by_scikit_learn():
    from scipy import sparse as sp

    X = sp.csr_matrix(data(20))
    np.testing.assert_array_equal(pairwise_distances(X), skm.pairwise_distances(X))
    np.testing.assert_array_equal(pairwise_distances(X, X[:5], metric="manhattan"),
                                  skm.pairwise_distances(X, X[:5], metric="manhattan"))
