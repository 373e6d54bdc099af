"""GaussianProcessRegressor against scikit-learn's, and its numeric contract."""

import numpy as np
import pytest
import scipy.linalg
from sklearn.gaussian_process import GaussianProcessRegressor as SkGPR
from sklearn.gaussian_process import kernels as sk_kernels

from twinlearn import _backend, _hostmath
from twinlearn.gaussian_process._evaluate import Ops, evaluate
from twinlearn.gaussian_process import GaussianProcessRegressor
from twinlearn.gaussian_process.kernels import (
    RBF,
    ConstantKernel as C,
    DotProduct,
    ExpSineSquared,
    Matern,
    RationalQuadratic,
    WhiteKernel,
)
from twinlearn.testing import assert_same_bits, assert_separates, skip_without_gpu

KERNELS = {
    "rbf": RBF(1.3),
    "rbf-aniso": RBF([1.0, 2.0, 0.5]),
    "matern-0.5": Matern(1.1, nu=0.5),
    "matern-1.5-aniso": Matern([1.0, 2.0, 0.7], nu=1.5),
    "matern-2.5": Matern(0.9, nu=2.5),
    "matern-inf": Matern(1.2, nu=np.inf),
    "matern-general": Matern(1.0, nu=1.7),
    "rational-quadratic": RationalQuadratic(1.1, 0.7),
    "exp-sine-squared": ExpSineSquared(1.2, 3.1),
    "dot-product+white": DotProduct(0.8) + WhiteKernel(0.3),
    "constant*rbf+white": C(2.0) * RBF(0.9) + WhiteKernel(0.1),
    "exponentiation": RBF(1.0) ** 2,
    "product-of-three": C(1.5) * Matern(1.0, nu=1.5) * DotProduct(1.0),
    "default": None,
}
FOREIGN = ("matern-general",)


def _data(name, dtype=np.float64, n=60):
    rng = np.random.default_rng(0)
    d = 1 if name == "exp-sine-squared" else 3  # ExpSineSquared is positive definite in 1-D
    X = rng.normal(size=(n, d))
    y = np.sin(X[:, 0]) + 0.1 * rng.normal(size=n)
    Y2 = np.c_[y, np.cos(X[:, -1])]
    return X.astype(dtype), y, Y2, rng.normal(size=(15, d)).astype(dtype)


def _rel(a, b):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


@pytest.mark.parametrize("name", list(KERNELS))
@pytest.mark.parametrize("mode", ["identical", "deterministic", "fast"])
@pytest.mark.parametrize("targets", ["one", "two-normalized"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_agrees_with_scikit_learn(name, mode, targets, dtype):
    """Predictions (mean, std, cov) within 1e-5 relative of scikit-learn's at
    the same hyperparameters, the log-marginal likelihood and its gradient
    within 1e-6."""
    if mode == "identical" and name in FOREIGN:
        pytest.skip("refused in identical mode (test_identical_refuses_foreign_kernels)")
    X, y, Y2, Xq = _data(name, dtype)
    yy, norm = (y, False) if targets == "one" else (Y2, True)
    kernel = KERNELS[name]
    sk = SkGPR(kernel, alpha=1e-2, optimizer=None, normalize_y=norm).fit(X, yy)
    tl = GaussianProcessRegressor(kernel, alpha=1e-2, optimizer=None, normalize_y=norm, device="cpu",
                                  numeric_mode=mode).fit(X, yy)
    for ret in ({}, {"return_std": True}, {"return_cov": True}):
        a, b = tl.predict(Xq, **ret), sk.predict(Xq, **ret)
        for u, v in zip(a if ret else (a,), b if ret else (b,)):
            assert np.shape(u) == np.shape(v)
            assert _rel(u, v) < 1e-5, ret
    # scikit-learn computes DotProduct's X Xᵀ of float32 X in float32;
    # twinlearn in float64, as scikit-learn does for float64 X (the values
    # are the same): the likelihood is compared with that reference.
    if dtype == np.float32:
        sk = SkGPR(kernel, alpha=1e-2, optimizer=None, normalize_y=norm).fit(X.astype(np.float64), yy)
    assert _rel(tl.L_, sk.L_) < 1e-6 and _rel(tl.alpha_, sk.alpha_) < 1e-6
    theta = sk.kernel_.theta
    l1, g1 = tl.log_marginal_likelihood(theta, eval_gradient=True)
    l2, g2 = sk.log_marginal_likelihood(theta, eval_gradient=True)
    assert abs(l1 - l2) <= 1e-6 * abs(l2)
    assert g1.shape == g2.shape
    if g2.size:
        assert _rel(g1, g2) < 1e-6
    assert abs(tl.log_marginal_likelihood() - sk.log_marginal_likelihood()) <= 1e-6 * abs(l2)
    assert tl.X_train_.dtype == X.dtype
    assert tl.n_features_in_ == sk.n_features_in_


@pytest.mark.parametrize("kernel", [C(1.0) * RBF(1.0) + WhiteKernel(0.1), None, Matern(1.0, nu=2.5)])
def test_optimizer_and_restarts_follow_scikit_learn(kernel):
    X, y, _, Xq = _data("rbf")
    sk = SkGPR(kernel, n_restarts_optimizer=2, random_state=3).fit(X, y)
    tl = GaussianProcessRegressor(kernel, n_restarts_optimizer=2, random_state=3, device="cpu").fit(X, y)
    np.testing.assert_allclose(tl.kernel_.theta, sk.kernel_.theta, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(tl.log_marginal_likelihood_value_, sk.log_marginal_likelihood_value_, rtol=1e-6)
    np.testing.assert_allclose(tl.predict(Xq), sk.predict(Xq), rtol=1e-4, atol=1e-6)


def test_callable_optimizer_and_no_optimizer():
    X, y, _, _ = _data("rbf")
    calls = []

    def optimizer(obj_func, initial_theta, bounds):
        calls.append(obj_func(initial_theta))
        return initial_theta, obj_func(initial_theta, eval_gradient=False)

    tl = GaussianProcessRegressor(RBF(0.7), optimizer=optimizer, device="cpu").fit(X, y)
    assert len(calls) == 1 and len(calls[0]) == 2
    np.testing.assert_allclose(np.exp(tl.kernel_.theta), [0.7])


def test_sample_y_matches_scikit_learn():
    X, y, Y2, Xq = _data("rbf")
    for yy in (y, Y2):
        sk = SkGPR(RBF(1.0), alpha=1e-2, optimizer=None).fit(X, yy)
        tl = GaussianProcessRegressor(RBF(1.0), alpha=1e-2, optimizer=None, device="cpu").fit(X, yy)
        a, b = tl.sample_y(Xq, 4, random_state=5), sk.sample_y(Xq, 4, random_state=5)
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-6)


def test_prior_before_fit_matches_scikit_learn():
    _, _, _, Xq = _data("rbf")
    for kw in ({}, {"kernel": Matern(0.8, nu=1.5), "n_targets": 2}):
        tl, sk = GaussianProcessRegressor(device="cpu", **kw), SkGPR(**kw)
        for ret in ({"return_std": True}, {"return_cov": True}):
            for u, v in zip(tl.predict(Xq, **ret), sk.predict(Xq, **ret)):
                np.testing.assert_allclose(u, v, rtol=1e-12)


def test_alpha_per_sample():
    X, y, _, Xq = _data("rbf")
    alpha = np.linspace(1e-3, 1e-1, X.shape[0])
    sk = SkGPR(RBF(1.0), alpha=alpha, optimizer=None).fit(X, y)
    tl = GaussianProcessRegressor(RBF(1.0), alpha=alpha, optimizer=None, device="cpu").fit(X, y)
    assert _rel(tl.predict(Xq), sk.predict(Xq)) < 1e-5
    with pytest.raises(ValueError, match="alpha must be a scalar or an array"):
        GaussianProcessRegressor(alpha=alpha[:5], device="cpu").fit(X, y)


def test_inverted_bounds_are_refused():
    X, y, _, _ = _data("rbf")
    kernel = RBF(1.0, length_scale_bounds=(10.0, 0.1))
    with pytest.raises(ValueError, match="bounds of hyperparameter 'length_scale'.*inverted"):
        GaussianProcessRegressor(kernel, device="cpu").fit(X, y)


def test_not_positive_definite_gets_scikit_learns_message():
    X = np.zeros((5, 2))
    X[1:] = 1.0
    y = np.arange(5.0)
    with pytest.raises(np.linalg.LinAlgError, match="not returning a positive definite matrix.*'alpha'"):
        GaussianProcessRegressor(RBF(1.0), alpha=0.0, optimizer=None, device="cpu").fit(X, y)


def test_identical_refuses_foreign_kernels():
    """Kernels twinlearn does not compute run their own NumPy code: not the
    same bits on every machine, so identical mode refuses them with a
    reason, and deterministic mode reports what it delivered."""
    X, y, _, _ = _data("rbf")

    class MyRBF(sk_kernels.RBF):
        pass

    for kernel in (Matern(1.0, nu=1.7), MyRBF(1.0) + WhiteKernel(0.1)):
        with pytest.raises(ValueError, match="numeric_mode='identical' needs a kernel twinlearn computes"):
            GaussianProcessRegressor(kernel, numeric_mode="identical", device="cpu").fit(X, y)
        est = GaussianProcessRegressor(kernel, numeric_mode="deterministic", device="cpu").fit(X, y)
        assert est.numeric_mode_used() == "deterministic"
    est = GaussianProcessRegressor(RBF(1.0), numeric_mode="deterministic", device="cpu").fit(X, y)
    assert est.numeric_mode_used() == "deterministic"


def test_factor_is_the_fixed_order_cholesky():
    """Identical mode's factor is the fixed-order Cholesky (entry (i, j) takes
    its updates in increasing k, one rounding each), not LAPACK's blocked
    one: the bits of the column-at-a-time reference, which LAPACK's are not."""
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 4)) * np.array([1.0, 10.0, 0.1, 3.0])
    y = rng.normal(size=200)
    est = GaussianProcessRegressor(RBF(2.0) + WhiteKernel(0.05), optimizer=None, device="cpu",
                                   numeric_mode="identical").fit(X, y)
    core = _backend.core()
    ops = Ops(core, core.Context("cpu", 1, "identical", 0, 0))
    K = evaluate(est.kernel_, X, None, False, ops)  # the fit's kernel matrix (own exp)
    K[np.diag_indices_from(K)] += est.alpha

    def check(factor):
        assert_same_bits(np.ascontiguousarray(factor(K)), est.L_, "L_")

    assert_separates(check, right=_hostmath.cholesky,
                     wrong=lambda A: scipy.linalg.cholesky(A, lower=True), what="the Cholesky's order")


def test_thread_count_keeps_the_bits():
    from twinlearn import config_context

    X, y, Y2, Xq = _data("rbf", n=150)
    outs = []
    for threads in (1, 3):
        with config_context(n_threads=threads):
            est = GaussianProcessRegressor(C(1.0) * RBF([1.0, 1.0, 1.0]), n_restarts_optimizer=1, random_state=0,
                                           device="cpu", numeric_mode="identical").fit(X, Y2)
            outs.append((est.L_, est.alpha_, est.kernel_.theta, *est.predict(Xq, return_std=True)))
    for a, b in zip(*outs):
        assert_same_bits(a, b)


@pytest.mark.gpu
@pytest.mark.parametrize("name", [n for n in KERNELS if n not in FOREIGN])
def test_identical_across_devices_every_kernel(name):
    skip_without_gpu()
    X, y, Y2, Xq = _data(name)
    res = []
    for device in ("cpu", "cuda"):
        est = GaussianProcessRegressor(KERNELS[name], alpha=1e-2, device=device, numeric_mode="identical")
        est.fit(X, Y2)
        m, s = est.predict(Xq, return_std=True)
        res.append((est.L_, est.alpha_, est.kernel_.theta, np.array(est.log_marginal_likelihood_value_), m, s,
                    est.predict(Xq, return_cov=True)[1]))
    for a, b in zip(*res):
        assert_same_bits(a, b, name)


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["rbf-aniso", "constant*rbf+white", "matern-general"])
def test_fast_mode_on_gpu_agrees_with_scikit_learn(name):
    """Fast mode on a GPU: cuSOLVER's factorization and solves."""
    skip_without_gpu()
    X, y, Y2, Xq = _data(name)
    sk = SkGPR(KERNELS[name], alpha=1e-2, optimizer=None).fit(X, Y2)
    tl = GaussianProcessRegressor(KERNELS[name], alpha=1e-2, optimizer=None, device="cuda",
                                  numeric_mode="fast").fit(X, Y2)
    assert tl.numeric_mode_used() == "fast" and tl.device_used().startswith("cuda")
    for u, v in zip(tl.predict(Xq, return_std=True), sk.predict(Xq, return_std=True)):
        assert _rel(u, v) < 1e-5
    theta = sk.kernel_.theta
    l1, g1 = tl.log_marginal_likelihood(theta, eval_gradient=True)
    l2, g2 = sk.log_marginal_likelihood(theta, eval_gradient=True)
    assert abs(l1 - l2) <= 1e-6 * abs(l2) and _rel(g1, g2) < 1e-6
    X0 = np.zeros((4, 2))
    with pytest.raises(np.linalg.LinAlgError, match="positive definite"):
        GaussianProcessRegressor(RBF(1.0), alpha=0.0, optimizer=None, device="cuda", numeric_mode="fast").fit(
            X0, np.arange(4.0))


def test_device_and_mode_parameters_are_checked():
    X, y, _, _ = _data("rbf")
    with pytest.raises(ValueError, match="device"):
        GaussianProcessRegressor(device="tpu").fit(X, y)
    with pytest.raises(ValueError, match="numeric_mode"):
        GaussianProcessRegressor(numeric_mode="exact").fit(X, y)
