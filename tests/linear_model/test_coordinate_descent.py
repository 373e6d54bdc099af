"""ElasticNet and Lasso against scikit-learn, on every backend."""

import warnings

import numpy as np
import pytest
from sklearn import linear_model as sk
from sklearn.exceptions import ConvergenceWarning
from sklearn.utils.estimator_checks import check_estimator

import twinlearn
from twinlearn.linear_model import ElasticNet, Lasso
from twinlearn.testing import bits


def data(n=2000, d=20, t=None, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 3.0, d) + rng.uniform(-2, 2, d)
    B = rng.standard_normal((5,) if t is None else (5, t))
    y = X[:, :5] @ B + 0.5 * rng.standard_normal((n,) if t is None else (n, t)) + 3.0
    return X.astype(dtype), y.astype(dtype)


@pytest.mark.parametrize("Est", [ElasticNet, Lasso])
def test_check_estimator(Est):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(Est(device="cpu"), on_fail=None)
    assert not [(r["check_name"], r["exception"]) for r in results if r["status"] == "failed"]


CASES = [
    (ElasticNet, sk.ElasticNet, dict(alpha=0.1, l1_ratio=0.7)),
    (ElasticNet, sk.ElasticNet, dict(alpha=0.5, l1_ratio=0.2, fit_intercept=False)),
    (Lasso, sk.Lasso, dict(alpha=0.05)),
    (Lasso, sk.Lasso, dict(alpha=0.05, positive=True)),
]


@pytest.mark.parametrize("Est,Ref,kw", CASES)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_matches_scikit_learn(device, Est, Ref, kw, weighted, dtype):
    X, y = data(dtype=dtype)
    w = np.random.default_rng(1).uniform(0.2, 2.0, len(y)) if weighted else None
    ours = Est(device=device, tol=1e-8, **kw).fit(X, y, sample_weight=w)
    ref = Ref(tol=1e-8, **kw).fit(X, y, sample_weight=w)
    tol = 1e-6 if dtype == np.float64 else 1e-3
    scale = np.max(np.abs(ref.coef_))
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=tol, atol=tol * scale)
    np.testing.assert_allclose(ours.intercept_, ref.intercept_, rtol=tol, atol=tol * scale)
    np.testing.assert_array_equal(ours.coef_ == 0, ref.coef_ == 0)
    assert ours.coef_.dtype == ref.coef_.dtype
    if dtype == np.float64:
        assert ours.n_iter_ == ref.n_iter_  # cyclic descent follows the same path
    assert ours.dual_gap_ <= 1e-8 * np.var(y) * 10 + 1e-12
    np.testing.assert_allclose(ours.predict(X), ref.predict(X), rtol=tol, atol=tol * np.max(np.abs(y)))
    assert ours.sparse_coef_.nnz == np.count_nonzero(ours.coef_)


def test_multi_target_and_shapes(device):
    X, Y = data(t=3)
    ours = ElasticNet(alpha=0.1, device=device).fit(X, Y)
    ref = sk.ElasticNet(alpha=0.1).fit(X, Y)
    assert ours.coef_.shape == ref.coef_.shape == (3, 20)
    assert np.shape(ours.intercept_) == (3,) and len(ours.n_iter_) == 3 and ours.dual_gap_.shape == (3,)
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-4, atol=1e-4)
    X1, y1 = data()
    a = Lasso(alpha=0.1, device=device).fit(X1, y1[:, None])
    b = sk.Lasso(alpha=0.1).fit(X1, y1[:, None])
    assert a.coef_.shape == b.coef_.shape and np.shape(a.intercept_) == np.shape(b.intercept_)
    assert a.predict(X1).shape == b.predict(X1).shape


def test_random_selection_is_reproducible_and_converges(device):
    X, y = data(seed=3)
    a = ElasticNet(alpha=0.1, selection="random", random_state=7, tol=1e-10, device=device).fit(X, y)
    b = ElasticNet(alpha=0.1, selection="random", random_state=7, tol=1e-10, device=device).fit(X, y)
    c = ElasticNet(alpha=0.1, selection="random", random_state=8, tol=1e-10, device=device).fit(X, y)
    ref = sk.ElasticNet(alpha=0.1, tol=1e-10).fit(X, y)
    assert bits(a.coef_) == bits(b.coef_)
    assert bits(a.coef_) != bits(c.coef_)  # another seed, another path
    np.testing.assert_allclose(a.coef_, ref.coef_, rtol=1e-6, atol=1e-8)


def test_warm_start_and_convergence_warning(device):
    X, y = data(seed=4)
    with pytest.warns(ConvergenceWarning, match="Objective did not converge"):
        est = Lasso(alpha=1e-4, max_iter=2, tol=1e-12, warm_start=True, device=device).fit(X, y)
    assert est.n_iter_ == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        est.set_params(max_iter=1000).fit(X, y)
    cold = Lasso(alpha=1e-4, max_iter=1000, tol=1e-12, device=device).fit(X, y)
    np.testing.assert_allclose(est.coef_, cold.coef_, rtol=1e-7, atol=1e-10)
    with pytest.warns(UserWarning, match="alpha=0"):
        Lasso(alpha=0.0, device=device).fit(X, y)
    with pytest.raises(ValueError, match="precompute"):
        Lasso(precompute=np.eye(20), device=device).fit(X, y)


@pytest.mark.parametrize("threads", [1, 3])
def test_bits_do_not_depend_on_thread_count(threads):
    X, y = data(n=3 * 4096 + 5, seed=5)
    with twinlearn.config_context(n_threads=1):
        ref = ElasticNet(alpha=0.05, device="cpu").fit(X, y)
    with twinlearn.config_context(n_threads=threads):
        ours = ElasticNet(alpha=0.05, device="cpu").fit(X, y)
    assert bits(ours.coef_) == bits(ref.coef_) and bits(ours.intercept_) == bits(ref.intercept_)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("selection", ["cyclic", "random"])
def test_cpu_and_cuda_are_bit_identical(dtype, selection):
    X, y = data(n=3 * 4096 + 5, t=2, dtype=dtype, seed=6)
    w = np.random.default_rng(2).uniform(0.2, 2.0, len(y))
    kw = dict(alpha=0.05, selection=selection, random_state=0, numeric_mode="identical")
    a = ElasticNet(device="cpu", **kw).fit(X, y, sample_weight=w)
    b = ElasticNet(device="cuda:0", **kw).fit(X, y, sample_weight=w)
    assert bits(a.coef_) == bits(b.coef_) and bits(a.intercept_) == bits(b.intercept_)
    assert a.n_iter_ == b.n_iter_


@pytest.mark.parametrize("cls", [ElasticNet, Lasso])
def test_overflowing_cross_products_raise(device, cls):
    # Finite X near the float64 maximum: X^T X overflows. scikit-learn raises
    # (its coefficients become non-finite); so does twinlearn, instead of
    # returning zero coefficients with a NaN duality gap.
    rng = np.random.RandomState(0)
    X = np.finfo(np.float64).max * rng.uniform(size=(10, 2))
    y = rng.randint(0, 2, size=10).astype(np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match="non-finite parameter values.*overflow"):
            cls(alpha=0.1, device=device).fit(X, y)
