"""LogisticRegression against scikit-learn, on every backend."""

import pickle
import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from sklearn import linear_model as sk
from sklearn.datasets import load_breast_cancer, load_digits, load_iris, make_classification
from sklearn.exceptions import ConvergenceWarning
from sklearn.preprocessing import StandardScaler
from sklearn.utils.estimator_checks import check_estimator

import twinlearn
from twinlearn.linear_model import LogisticRegression
from twinlearn.testing import bits


def objective(est, X, y, C, sw=None, l1_ratio=0.0):
    """scikit-learn's objective: (sum_i s_i loss_i + penalty / C) / sum_i s_i."""
    n = X.shape[0]
    sw = np.ones(n) if sw is None else np.asarray(sw, dtype=np.float64)
    Z = X.astype(np.float64) @ est.coef_.astype(np.float64).T + est.intercept_.astype(np.float64)
    if len(est.classes_) == 2:
        z, t = Z[:, 0], (y == est.classes_[1]).astype(float)
        loss = np.logaddexp(0, z) - t * z
    else:
        idx = np.searchsorted(est.classes_, y)
        loss = logsumexp(Z, axis=1) - Z[np.arange(n), idx]
    w = est.coef_.astype(np.float64)
    pen = 0.0 if C == np.inf else ((1 - l1_ratio) * 0.5 * np.sum(w * w) + l1_ratio * np.sum(np.abs(w))) / C
    return (np.sum(sw * loss) + pen) / np.sum(sw)


def datasets():
    Xs, ys = make_classification(n_samples=4000, n_features=25, n_informative=10, n_classes=3, random_state=0)
    Xb, yb = make_classification(n_samples=4000, n_features=25, n_informative=6, random_state=1)
    out = {"iris": load_iris(return_X_y=True), "breast_cancer": load_breast_cancer(return_X_y=True),
           "digits": load_digits(return_X_y=True), "synthetic3": (Xs, ys), "synthetic2": (Xb, yb)}
    return {k: (StandardScaler().fit_transform(X), y) for k, (X, y) in out.items()}


DATA = datasets()


def test_check_estimator():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(LogisticRegression(device="cpu"), on_fail=None)
    assert not [(r["check_name"], r["exception"]) for r in results if r["status"] == "failed"]


TIGHT = dict(tol=1e-10, max_iter=20000)


@pytest.mark.parametrize("name", sorted(DATA))
@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_scikit_learn_lbfgs(device, name, C, fit_intercept, weighted):
    X, y = DATA[name]
    w = np.random.default_rng(0).uniform(0.2, 2.0, len(y)) if weighted else None
    # At the default tol: the objective is not worse than scikit-learn's.
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        ours = LogisticRegression(C=C, fit_intercept=fit_intercept, device=device).fit(X, y, sample_weight=w)
    ref = sk.LogisticRegression(C=C, fit_intercept=fit_intercept).fit(X, y, sample_weight=w)
    assert ours.coef_.shape == ref.coef_.shape and ours.intercept_.shape == ref.intercept_.shape
    assert ours.coef_.dtype == ref.coef_.dtype and ours.n_iter_.shape == (1,)
    assert objective(ours, X, y, C, w) <= objective(ref, X, y, C, w) * (1 + 1e-6)
    assert np.mean(ours.predict(X) == ref.predict(X)) > 0.995
    assert ours.numeric_mode_used() == "identical"
    # Both converged tightly: the same optimum, the same predictions.
    ours = LogisticRegression(C=C, fit_intercept=fit_intercept, device=device, **TIGHT).fit(X, y, sample_weight=w)
    ref = sk.LogisticRegression(C=C, fit_intercept=fit_intercept, **TIGHT).fit(X, y, sample_weight=w)
    np.testing.assert_array_equal(ours.predict(X), ref.predict(X))
    np.testing.assert_allclose(ours.predict_proba(X), ref.predict_proba(X), atol=1e-5)
    scale = np.max(np.abs(ref.coef_))
    np.testing.assert_allclose(ours.coef_, ref.coef_, rtol=1e-4, atol=1e-4 * scale)


@pytest.mark.parametrize("name", sorted(DATA))
def test_predictions_equal_scikit_learn_at_defaults(device, name):
    X, y = DATA[name]
    ours = LogisticRegression(device=device).fit(X, y)
    ref = sk.LogisticRegression().fit(X, y)
    np.testing.assert_array_equal(ours.classes_, ref.classes_)
    agree = np.mean(ours.predict(X) == ref.predict(X))
    # The synthetic sets hold points within scikit-learn's own tolerance of a
    # tie; the real ones do not.
    assert agree == 1.0 if not name.startswith("synthetic") else agree >= 0.999


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float32_and_probabilities(device, dtype):
    X, y = DATA["digits"]
    X = X.astype(dtype)
    ours = LogisticRegression(device=device, **TIGHT).fit(X, y)
    ref = sk.LogisticRegression(**TIGHT).fit(X, y)
    assert ours.coef_.dtype == dtype
    P = ours.predict_proba(X)
    assert P.dtype == dtype and P.shape == (len(y), 10)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=1e-5)
    np.testing.assert_allclose(ours.predict_log_proba(X), np.log(P), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(P, ref.predict_proba(X), atol=5e-3)
    Xb, yb = DATA["breast_cancer"]
    b = LogisticRegression(device=device).fit(Xb.astype(dtype), yb)
    Pb = b.predict_proba(Xb.astype(dtype))
    d = b.decision_function(Xb.astype(dtype))
    assert d.shape == (len(yb),)
    np.testing.assert_allclose(Pb[:, 1], 1 / (1 + np.exp(-d.astype(np.float64))), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("l1_ratio", [1.0, 0.5])
@pytest.mark.parametrize("C", [0.1, 1.0])
def test_l1_and_elasticnet_by_owlqn(device, l1_ratio, C):
    X, y = DATA["breast_cancer"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        ours = LogisticRegression(C=C, l1_ratio=l1_ratio, solver="saga", tol=1e-6, max_iter=2000,
                                  device=device).fit(X, y)
        ref = sk.LogisticRegression(C=C, l1_ratio=l1_ratio, solver="saga", tol=1e-6, max_iter=5000).fit(X, y)
    f_ours, f_ref = objective(ours, X, y, C, l1_ratio=l1_ratio), objective(ref, X, y, C, l1_ratio=l1_ratio)
    assert f_ours <= f_ref * (1 + 1e-5)
    # Optimality (the subgradient conditions) of our solution, with exact zeros.
    n = len(y)
    p = ours.predict_proba(X)[:, 1]
    grad = X.T @ (p - y) / n + (1 - l1_ratio) / (C * n) * ours.coef_[0]
    lam = l1_ratio / (C * n)
    zero = ours.coef_[0] == 0
    assert zero.any() and (~zero).any()
    assert np.all(np.abs(grad[zero]) <= lam + 1e-6)
    np.testing.assert_allclose(grad[~zero], -lam * np.sign(ours.coef_[0][~zero]), atol=1e-6)


def test_solver_and_penalty_rules():
    X, y = DATA["iris"]
    with pytest.raises(ValueError, match="supports only 'l2' or None"):
        LogisticRegression(l1_ratio=1.0, device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="Only 'saga' solver supports elasticnet"):
        LogisticRegression(l1_ratio=0.5, solver="liblinear", device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="liblinear"):
        LogisticRegression(solver="liblinear", device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="dual=False"):
        LogisticRegression(dual=True, device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="at least 2 classes"):
        LogisticRegression(device="cpu").fit(X, np.zeros(len(y)))
    for solver in ("newton-cg", "newton-cholesky", "sag", "saga"):
        a = LogisticRegression(solver=solver, device="cpu").fit(X, y)
        b = LogisticRegression(device="cpu").fit(X, y)
        assert bits(a.coef_) == bits(b.coef_)
    none = LogisticRegression(C=np.inf, device="cpu").fit(*DATA["synthetic3"])
    assert objective(none, *DATA["synthetic3"], np.inf) <= objective(
        sk.LogisticRegression(C=np.inf).fit(*DATA["synthetic3"]), *DATA["synthetic3"], np.inf) * (1 + 1e-6)


def test_convergence_warning_and_warm_start():
    X, y = load_breast_cancer(return_X_y=True)  # unscaled: slow to converge
    with pytest.warns(ConvergenceWarning, match="failed to converge after 5 iteration"):
        est = LogisticRegression(max_iter=5, device="cpu").fit(X, y)
    assert est.n_iter_[0] == 5
    Xs, ys = DATA["digits"]
    est = LogisticRegression(device="cpu", warm_start=True).fit(Xs, ys)
    first = est.n_iter_[0]
    est.fit(Xs, ys)  # starts at the optimum
    assert first > 10 and est.n_iter_[0] <= 2


def test_class_weight_and_string_labels(device):
    X, y = DATA["synthetic3"]
    labels = np.array(["a", "b", "c"])[y]
    ours = LogisticRegression(class_weight="balanced", device=device).fit(X, labels)
    ref = sk.LogisticRegression(class_weight="balanced").fit(X, labels)
    assert np.mean(ours.predict(X) == ref.predict(X)) >= 0.999
    assert ours.predict(X).dtype == ref.predict(X).dtype
    ours = LogisticRegression(class_weight={0: 1.0, 1: 3.0, 2: 0.5}, device=device).fit(X, y)
    ref = sk.LogisticRegression(class_weight={0: 1.0, 1: 3.0, 2: 0.5}).fit(X, y)
    w = np.array([1.0, 3.0, 0.5])[y]
    assert objective(ours, X, y, 1.0, w) <= objective(ref, X, y, 1.0, w) * (1 + 1e-6)


def test_pickle_and_non_finite(device):
    X, y = DATA["iris"]
    est = LogisticRegression(device=device).fit(X, y)
    clone = pickle.loads(pickle.dumps(est))
    assert bits(clone.predict_proba(X)) == bits(est.predict_proba(X))
    Xb = X.copy()
    Xb[2, 1] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        LogisticRegression(device=device).fit(Xb, y)
    with pytest.raises(ValueError, match="NaN"):
        est.predict(Xb)


@pytest.mark.parametrize("threads", [1, 3])
def test_bits_do_not_depend_on_thread_count(threads):
    X, y = DATA["synthetic3"]
    with twinlearn.config_context(n_threads=1):
        ref = LogisticRegression(device="cpu").fit(X, y)
    with twinlearn.config_context(n_threads=threads):
        ours = LogisticRegression(device="cpu").fit(X, y)
    assert bits(ours.coef_) == bits(ref.coef_) and ours.n_iter_[0] == ref.n_iter_[0]
    assert bits(ours.predict_proba(X)) == bits(ref.predict_proba(X))


@pytest.mark.gpu
@pytest.mark.parametrize("name", ["digits", "breast_cancer", "synthetic2"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("l1_ratio", [0.0, 0.5])
def test_cpu_and_cuda_are_bit_identical(name, dtype, l1_ratio):
    X, y = DATA[name]
    X = X.astype(dtype)
    w = np.random.default_rng(2).uniform(0.2, 2.0, len(y))
    kw = dict(l1_ratio=l1_ratio, solver="saga" if l1_ratio else "lbfgs", numeric_mode="identical")
    a = LogisticRegression(device="cpu", **kw).fit(X, y, sample_weight=w)
    b = LogisticRegression(device="cuda:0", **kw).fit(X, y, sample_weight=w)
    assert a.n_iter_[0] == b.n_iter_[0]
    assert bits(a.coef_) == bits(b.coef_) and bits(a.intercept_) == bits(b.intercept_)
    assert bits(a.predict_proba(X)) == bits(b.predict_proba(X))
    assert bits(a.predict_log_proba(X)) == bits(b.predict_log_proba(X))


@pytest.mark.gpu
def test_device_arrays_in_and_out():
    torch = pytest.importorskip("torch")
    X, y = DATA["digits"]
    X = X.astype(np.float32)
    Xt, yt = torch.from_numpy(X).cuda(), torch.from_numpy(y).cuda()
    ours = LogisticRegression(numeric_mode="identical").fit(Xt, yt)
    ref = LogisticRegression(device="cpu", numeric_mode="identical").fit(X, y)
    assert ours.device_used() == "cuda:0"
    assert bits(ours.coef_) == bits(ref.coef_)
    np.testing.assert_array_equal(ours.classes_, ref.classes_)
    P = ours.predict_proba(Xt)
    assert isinstance(P, torch.Tensor) and P.is_cuda
    assert bits(P.cpu().numpy()) == bits(ref.predict_proba(X))
    assert bits(ours.predict(Xt).cpu().numpy()) == bits(ref.predict(X))


def test_fixed_optimizer_rules_are_the_cores_defaults():
    """The options that no parameter sets are passed by name all the same:
    they are the core's own defaults (the fit is the one it always was)."""
    from twinlearn import _backend
    from twinlearn.linear_model import _logistic

    core = _backend.core().LogisticOptions()
    assert (_logistic._FTOL, _logistic._MEMORY, _logistic._MAX_LINESEARCH) == (
        core.ftol, core.memory, core.max_linesearch)
