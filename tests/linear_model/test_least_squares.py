"""LinearRegression and Ridge against scikit-learn, on every backend."""

import pickle
import warnings

import numpy as np
import pytest
from sklearn import linear_model as sk
from sklearn.utils.estimator_checks import check_estimator

import twinlearn
from twinlearn import _backend
from twinlearn.linear_model import LinearRegression, Ridge
from twinlearn.testing import bits


def regression(n=3000, d=8, t=None, dtype=np.float64, seed=0, noise=0.1):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * rng.uniform(0.5, 3.0, d) + rng.uniform(-5, 5, d)
    coef = rng.standard_normal((d,) if t is None else (d, t))
    y = X @ coef + 2.5 + noise * rng.standard_normal((n,) if t is None else (n, t))
    return X.astype(dtype), y.astype(dtype)


def rel_close(a, b, rtol):
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    scale = max(np.max(np.abs(b)), 1e-300)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=rtol * scale)


TOL = {np.float64: 1e-5, np.float32: 1e-3}

# scikit-learn waives this check for its own Ridge and RidgeClassifier: the
# direct solvers run no iterations and n_iter_ is None, as theirs.
WAIVED = {"check_non_transformer_estimators_n_iter"}


@pytest.mark.parametrize("Est", [LinearRegression, Ridge])
def test_check_estimator(Est):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(Est(device="cpu"), on_fail=None)
    failed = [(r["check_name"], r["exception"]) for r in results
              if r["status"] == "failed" and r["check_name"] not in WAIVED]
    assert not failed


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("targets", [None, 3])
def test_linear_regression_matches_scikit_learn(device, dtype, fit_intercept, weighted, targets):
    X, y = regression(t=targets, dtype=dtype)
    w = np.random.default_rng(1).uniform(0.1, 3.0, X.shape[0]) if weighted else None
    ours = LinearRegression(fit_intercept=fit_intercept, device=device).fit(X, y, sample_weight=w)
    ref = sk.LinearRegression(fit_intercept=fit_intercept).fit(X, y, sample_weight=w)
    assert ours.coef_.shape == ref.coef_.shape and ours.coef_.dtype == ref.coef_.dtype
    rel_close(ours.coef_, ref.coef_, TOL[dtype])
    rel_close(ours.intercept_, ref.intercept_, TOL[dtype])
    assert np.shape(ours.intercept_) == np.shape(ref.intercept_)
    assert ours.rank_ == ref.rank_
    rel_close(ours.singular_, ref.singular_, TOL[dtype])
    pred = ours.predict(X)
    assert pred.dtype == dtype and pred.shape == ref.predict(X).shape
    rel_close(pred, ref.predict(X), TOL[dtype])
    assert ours.device_used() == device


def test_rank_deficient_gives_minimum_norm_solution(device):
    rng = np.random.default_rng(3)
    B = rng.standard_normal((400, 5))
    X = np.column_stack([B, B[:, 0], 2 * B[:, 1] - B[:, 2], np.full(400, 4.0), 3 * B[:, 4]])
    y = X @ rng.standard_normal(X.shape[1]) + 1.0
    ours = LinearRegression(device=device).fit(X, y)
    ref = sk.LinearRegression().fit(X, y)
    assert ours.rank_ == ref.rank_ == 5
    rel_close(ours.coef_, ref.coef_, 1e-7)
    rel_close(ours.intercept_, ref.intercept_, 1e-7)
    # The exact zeros of scikit-learn's singular values are the noise level of the Gram here.
    np.testing.assert_allclose(ours.singular_, ref.singular_, atol=1e-6 * ref.singular_[0])
    # Minimum norm: the duplicated column splits the weight equally.
    assert abs(ours.coef_[0] - ours.coef_[5]) < 1e-9


@pytest.mark.parametrize("shape", [(5, 12), (1, 4), (30, 3)])
def test_singular_systems_are_solved(device, shape):
    rng = np.random.default_rng(4)
    X = rng.standard_normal(shape)
    if shape == (30, 3):
        X[:] = 7.0  # constant features: centred X is zero
    y = rng.standard_normal(shape[0])
    for Est, ref in ((LinearRegression(device=device), sk.LinearRegression()),
                     (Ridge(alpha=0.0, device=device), sk.Ridge(alpha=0.0, solver="svd"))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ours = Est.fit(X, y)
            ref.fit(X, y)
        assert np.all(np.isfinite(ours.coef_)) and np.isfinite(ours.intercept_)
        rel_close(ours.predict(X), ref.predict(X), 1e-7)
    assert LinearRegression(device=device).fit(X, y).rank_ == sk.LinearRegression().fit(X, y).rank_


def test_positive_matches_nnls(device):
    X, y = regression(n=500, d=10, seed=7)
    for targets in (None, 2):
        yy = y if targets is None else np.column_stack([y, -y + X[:, 0]])
        ours = LinearRegression(positive=True, device=device).fit(X, yy)
        ref = sk.LinearRegression(positive=True).fit(X, yy)
        assert np.all(ours.coef_ >= 0)
        rel_close(ours.coef_, ref.coef_, 1e-8)
        rel_close(ours.intercept_, ref.intercept_, 1e-8)
        assert not hasattr(ours, "rank_") and not hasattr(ours, "singular_")


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("Est", [LinearRegression, Ridge])
def test_non_finite_input_is_refused(device, bad, Est):
    X, y = regression(n=50, d=3)
    Xb = X.copy()
    Xb[3, 1] = bad
    word = "NaN" if np.isnan(bad) else "infinity"
    with pytest.raises(ValueError, match=word):
        Est(device=device).fit(Xb, y)
    yb = y.copy()
    yb[7] = bad
    with pytest.raises(ValueError, match=word):
        Est(device=device).fit(X, yb)
    est = Est(device=device).fit(X, y)
    with pytest.raises(ValueError, match=word):
        est.predict(Xb)


@pytest.mark.parametrize("classifier", [False, True])
def test_ridge_n_iter_is_none_as_scikit_learns_direct_solvers(classifier):
    """scikit-learn's Ridge and RidgeClassifier give n_iter_ None for the
    solvers that run no iterations ('auto', 'svd', 'cholesky', and
    'sparse_cg', 'lbfgs' on dense data too), an array of counts for 'lsqr',
    'sag' and 'saga'. Every solver name here is the direct solve (the module
    documentation), which runs no iterations: n_iter_ is None for all."""
    X, y = regression(n=200, d=4, seed=3)
    if classifier:
        y = (y > np.median(y)).astype(int)
    ours_cls = twinlearn.RidgeClassifier if classifier else Ridge
    ref_cls = sk.RidgeClassifier if classifier else sk.Ridge
    for solver, positive in [("auto", False), ("svd", False), ("cholesky", False), ("sparse_cg", False),
                             ("lbfgs", True)]:
        assert ref_cls(solver=solver, positive=positive).fit(X, y).n_iter_ is None
        assert ours_cls(solver=solver, positive=positive, device="cpu").fit(X, y).n_iter_ is None
    for solver in ("lsqr", "sag", "saga"):
        assert ours_cls(solver=solver, device="cpu").fit(X, y).n_iter_ is None


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("targets", [None, 2])
def test_ridge_matches_scikit_learn(device, dtype, targets):
    X, y = regression(t=targets, dtype=dtype, seed=5)
    w = np.random.default_rng(2).uniform(0.1, 3.0, X.shape[0])
    alphas = [0.5] if targets is None else [0.5, [0.1, 30.0]]
    for alpha in alphas:
        for solver in ("auto", "cholesky", "svd", "lsqr", "sparse_cg", "sag", "saga"):
            ours = Ridge(alpha=alpha, solver=solver, device=device).fit(X, y, sample_weight=w)
            ref = sk.Ridge(alpha=alpha, solver="cholesky").fit(X, y, sample_weight=w)
            rel_close(ours.coef_, ref.coef_, TOL[dtype])
            rel_close(ours.intercept_, ref.intercept_, TOL[dtype])
            assert ours.coef_.dtype == ref.coef_.dtype
            assert ours.solver_ == ("svd" if solver == "svd" else "cholesky")
            assert ours.n_iter_ is None
            rel_close(ours.predict(X), ref.predict(X), TOL[dtype])


def test_ridge_positive_and_solver_rules(device):
    X, y = regression(n=400, d=6, seed=9)
    ours = Ridge(alpha=2.0, positive=True, device=device).fit(X, y)
    ref = sk.Ridge(alpha=2.0, positive=True, tol=1e-10).fit(X, y)
    rel_close(ours.coef_, ref.coef_, 1e-5)
    assert ours.solver_ == "lbfgs" and np.all(ours.coef_ >= 0)
    with pytest.raises(ValueError, match="'lbfgs' solver can be used only when positive=True"):
        Ridge(solver="lbfgs", device=device).fit(X, y)
    with pytest.raises(ValueError, match="does not support positive fitting"):
        Ridge(solver="svd", positive=True, device=device).fit(X, y)
    with pytest.raises(ValueError, match="Number of targets and number of penalties"):
        Ridge(alpha=[1.0, 2.0, 3.0], device=device).fit(X, np.column_stack([y, y]))
    with pytest.raises(ValueError, match="solver"):
        Ridge(solver="newton", device=device).fit(X, y)


def test_ridge_wide_data_matches_kernel_solution(device):
    rng = np.random.default_rng(11)
    X = rng.standard_normal((20, 60))
    y = rng.standard_normal(20)
    ours = Ridge(alpha=0.3, device=device).fit(X, y)
    ref = sk.Ridge(alpha=0.3).fit(X, y)
    rel_close(ours.coef_, ref.coef_, 1e-8)


def test_pickle_round_trip(device):
    X, y = regression(n=200, d=4)
    for est in (LinearRegression(device=device), Ridge(device=device)):
        est.fit(X, y)
        clone = pickle.loads(pickle.dumps(est))
        assert bits(clone.predict(X)) == bits(est.predict(X))


@pytest.mark.parametrize("threads", [1, 2, 5])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_bits_do_not_depend_on_thread_count(threads, dtype):
    X, y = regression(n=3 * 4096 + 11, d=9, t=2, dtype=dtype, seed=13)
    w = np.random.default_rng(1).uniform(0.1, 3.0, X.shape[0])
    with twinlearn.config_context(n_threads=1):
        ref = LinearRegression(device="cpu", numeric_mode="identical").fit(X, y, sample_weight=w)
        ref_pred = ref.predict(X)
    with twinlearn.config_context(n_threads=threads):
        ours = LinearRegression(device="cpu", numeric_mode="identical").fit(X, y, sample_weight=w)
        pred = ours.predict(X)
    assert bits(ours.coef_) == bits(ref.coef_) and bits(ours.intercept_) == bits(ref.intercept_)
    assert bits(pred) == bits(ref_pred)
    assert ours.numeric_mode_used() == "identical"


def test_gram_order_is_separated_by_the_fixture():
    """A different chunking of the Gram pass gives different bits on this
    fixture (and so, in general, different coefficients), so the CPU-vs-GPU
    identity tests below would catch a backend that chunked differently."""
    mod = _backend.core()
    ctx = mod.Context("cpu", 2, "identical", 0, 0)
    X, y = regression(n=5 * 4096 + 3, d=6, dtype=np.float32, seed=17)
    Y = np.ascontiguousarray(y.reshape(-1, 1))
    off = np.ascontiguousarray(np.concatenate([X.mean(0), y.mean(keepdims=True)]).astype(np.float32))
    G = mod.gram(ctx, X, Y, None, off).gram
    G4096 = mod._gram_with_chunk(ctx, X, Y, None, off, 4096).gram
    G2048 = mod._gram_with_chunk(ctx, X, Y, None, off, 2048).gram
    assert bits(G) == bits(G4096)
    assert bits(G) != bits(G2048)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("Est", [LinearRegression, Ridge])
def test_cpu_and_cuda_are_bit_identical(dtype, Est):
    X, y = regression(n=3 * 4096 + 101, d=40, t=2, dtype=dtype, seed=19)
    w = np.random.default_rng(3).uniform(0.1, 3.0, X.shape[0])
    a = Est(device="cpu", numeric_mode="identical").fit(X, y, sample_weight=w)
    b = Est(device="cuda:0", numeric_mode="identical").fit(X, y, sample_weight=w)
    assert b.numeric_mode_used() == "identical"
    assert bits(a.coef_) == bits(b.coef_) and bits(a.intercept_) == bits(b.intercept_)
    assert bits(a.predict(X)) == bits(b.predict(X))


@pytest.mark.gpu
def test_cuda_fast_mode_is_close_and_reports_fast():
    X, y = regression(n=20000, d=30, dtype=np.float32, seed=23)
    ours = LinearRegression(device="cuda:0", numeric_mode="fast").fit(X, y)
    ref = sk.LinearRegression().fit(X, y)
    assert ours.numeric_mode_used() == "fast"
    rel_close(ours.coef_, ref.coef_, 1e-3)


@pytest.mark.gpu
@pytest.mark.parametrize("Est", [LinearRegression, Ridge])
@pytest.mark.parametrize("t", [None, 3])
def test_cuda_fast_mode_on_device_data_far_from_the_origin(Est, t):
    # Fast mode takes the statistics and the Gram matrix from one pass over
    # the device array (gram_moments); columns centred about 500 from the
    # origin show a centring at the wrong point, and the targets' products
    # one that is missed or misplaced.
    cupy = pytest.importorskip("cupy")
    X, y = regression(n=40000, d=24, t=t, dtype=np.float64, seed=31)
    X += 500.0
    X, y = X.astype(np.float32), y.astype(np.float32)
    ref = getattr(sk, Est.__name__)().fit(X.astype(np.float64), y.astype(np.float64))
    ours = Est(numeric_mode="fast").fit(cupy.asarray(X), cupy.asarray(y))
    assert ours.device_used() == "cuda:0" and ours.numeric_mode_used() == "fast"
    rel_close(ours.coef_, ref.coef_, 1e-3)
    rel_close(ours.intercept_, ref.intercept_, 1e-3)
    for bad, word in ((np.nan, "NaN"), (np.inf, "infinity")):
        Xb = X.copy()
        Xb[5, 2] = bad
        with pytest.raises(ValueError, match=word):
            Est(numeric_mode="fast").fit(cupy.asarray(Xb), cupy.asarray(y))
        yb = y.copy()
        yb[9] = bad
        with pytest.raises(ValueError, match=word):
            Est(numeric_mode="fast").fit(cupy.asarray(X), cupy.asarray(yb))


@pytest.mark.gpu
def test_device_arrays_in_and_out():
    torch = pytest.importorskip("torch")
    X, y = regression(n=5000, d=12, dtype=np.float32, seed=29)
    Xt, yt = torch.from_numpy(X).cuda(), torch.from_numpy(y).cuda()
    ours = LinearRegression(numeric_mode="identical").fit(Xt, yt)
    ref = LinearRegression(device="cpu", numeric_mode="identical").fit(X, y)
    assert ours.device_used() == "cuda:0"
    assert bits(ours.coef_) == bits(ref.coef_)
    pred = ours.predict(Xt)
    assert isinstance(pred, torch.Tensor) and pred.is_cuda
    assert bits(pred.cpu().numpy()) == bits(ref.predict(X))
    Xt[0, 0] = float("nan")
    with pytest.raises(ValueError, match="NaN"):
        LinearRegression().fit(Xt, yt)


def test_normal_equations_options_by_name():
    """solve_normal_equations takes its options as one struct filled by
    name, and gram_eps is the core's own default."""
    from twinlearn import _native
    from twinlearn.linear_model._base import gram_eps

    core = _backend.core()
    assert gram_eps(np.float32) == core.NormalEquationsOptions().gram_eps
    G = np.array([[2.0, 0.0, 2.0], [0.0, 4.0, 4.0], [2.0, 4.0, 9.0]])
    opts = _native.params(core.NormalEquationsOptions, tol=0.0, gram_eps=gram_eps(np.float64), method="auto",
                          max_iter=0)
    r = core.solve_normal_equations(G, 2, np.zeros(1), opts)
    assert r._fields == ("coef", "rank", "cholesky", "n_iter")
    np.testing.assert_allclose(np.asarray(r.coef), [[1.0, 1.0]])
    assert r.rank == 2 and r.cholesky
    with pytest.raises(ValueError, match="unknown method 'qr'"):
        opts.method = "qr"
