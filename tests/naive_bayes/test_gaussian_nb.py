"""GaussianNB: scikit-learn parity, labels of any dtype, sample weights,
priors, partial_fit, bad input, estimator checks, and the identical
contract (CPU versus CUDA bits, thread counts)."""

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.naive_bayes import GaussianNB as SkGaussianNB
from sklearn.utils.estimator_checks import parametrize_with_checks

import twinlearn
from twinlearn import GaussianNB
from twinlearn.testing import same_bits

DTYPES = [np.float32, np.float64]
ATTRS = ["theta_", "var_", "class_count_", "class_prior_", "epsilon_"]


def blobs(n=3000, d=6, n_classes=4, dtype=np.float64, seed=0, offset=10.0):
    """Gaussian classes with different means and very different feature scales,
    shifted by `offset` times their spread."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, n_classes, n)
    centers = rng.standard_normal((n_classes, d)) * 3
    scales = 10.0 ** rng.integers(-3, 5, size=d)
    X = (centers[y] + rng.standard_normal((n, d))) * scales + offset * scales
    return X.astype(dtype), y


def tol(dtype):
    return dict(rtol=2e-4, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-9, atol=1e-12)


def assert_matches(est, ref, X, dtype):
    for name in ATTRS:
        ours, theirs = np.asarray(getattr(est, name)), np.asarray(getattr(ref, name))
        assert ours.dtype == theirs.dtype, name
        # theta_ is compared relative to the feature scale (means near 0 have no relative precision).
        scale = np.abs(est.theta_).max(axis=0) if name == "theta_" else 1.0
        assert_allclose(ours / scale, theirs / scale, err_msg=name, **tol(dtype))
    assert_array_equal(est.classes_, ref.classes_)
    assert_array_equal(est.predict(X), ref.predict(X))
    jll, jll_ref = est.predict_joint_log_proba(X), ref.predict_joint_log_proba(X)
    assert jll.dtype == jll_ref.dtype
    assert_allclose(jll, jll_ref, rtol=1e-5 if dtype == np.float32 else 1e-10)
    assert_allclose(est.predict_proba(X), ref.predict_proba(X), atol=1e-4 if dtype == np.float32 else 1e-9)
    assert_allclose(np.exp(est.predict_log_proba(X)), ref.predict_proba(X), atol=1e-4 if dtype == np.float32 else 1e-9)
    assert est.score(X, ref.predict(X)) == 1.0


# -- scikit-learn parity --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
def test_matches_sklearn(device, dtype):
    X, y = blobs(dtype=dtype, seed=1)
    ref = SkGaussianNB().fit(X, y)
    est = GaussianNB(device=device).fit(X, y)
    assert_matches(est, ref, X, dtype)
    proba = est.predict_proba(X)
    assert_allclose(proba.sum(axis=1), 1.0, rtol=1e-5)


@pytest.mark.parametrize("dtype", DTYPES)
def test_sample_weight_matches_sklearn(device, dtype):
    X, y = blobs(n=2500, dtype=dtype, seed=2)
    w = np.random.default_rng(3).random(X.shape[0]) * 3
    ref = SkGaussianNB().fit(X, y, sample_weight=w)
    est = GaussianNB(device=device).fit(X, y, sample_weight=w)
    assert_matches(est, ref, X, dtype)


def test_integer_weights_act_like_repetition(device):
    X, y = blobs(n=400, seed=4)
    w = np.random.default_rng(5).integers(0, 4, X.shape[0])
    a = GaussianNB(device=device).fit(X, y, sample_weight=w)
    b = GaussianNB(device=device).fit(np.repeat(X, w, axis=0), np.repeat(y, w))
    for name in ["theta_", "class_count_", "class_prior_"]:
        assert_allclose(getattr(a, name), getattr(b, name), rtol=1e-10, err_msg=name)
    # epsilon_ comes from the unweighted variance of X (as in scikit-learn), so
    # it differs between the two fits; the class variances do not.
    assert_allclose(a.var_ - a.epsilon_, b.var_ - b.epsilon_, rtol=1e-9)


@pytest.mark.parametrize("labels", [
    np.array(["spam", "eggs", "ham"]),
    np.array(["b", "a", "c"], dtype=object),
    np.array([-5, 3, 100], dtype=np.int8),
    np.array([2, 7, 11], dtype=np.uint64),
    np.array([1.0, 2.0, 3.0]),
    np.array([True, False, True])[:2],
])
def test_labels_of_any_dtype(device, labels):
    X, yi = blobs(n=600, n_classes=len(labels), seed=6)
    y = labels[yi]
    ref = SkGaussianNB().fit(X, y)
    est = GaussianNB(device=device).fit(X, y)
    assert_array_equal(est.classes_, ref.classes_)
    assert est.classes_.dtype == ref.classes_.dtype
    pred = est.predict(X)
    assert pred.dtype == ref.predict(X).dtype
    assert_array_equal(pred, ref.predict(X))


def test_continuous_labels_rejected_like_sklearn():
    X, _ = blobs(n=50, seed=7)
    y = np.linspace(0, 1, 50)
    with pytest.raises(ValueError, match="Unknown label type"):
        SkGaussianNB().fit(X, y)
    with pytest.raises(ValueError, match="Unknown label type"):
        GaussianNB(device="cpu").fit(X, y)


def test_priors_and_var_smoothing(device):
    X, y = blobs(n=500, n_classes=3, seed=8)
    priors = np.array([0.5, 0.3, 0.2])
    est = GaussianNB(priors=priors, var_smoothing=1e-3, device=device).fit(X, y)
    ref = SkGaussianNB(priors=priors, var_smoothing=1e-3).fit(X, y)
    assert_array_equal(est.class_prior_, priors)
    assert_allclose(est.epsilon_, 1e-3 * np.var(X, axis=0).max(), rtol=1e-12)
    assert_matches(est, ref, X, np.float64)
    for bad, match in [([0.5, 0.5], "Number of priors"), ([0.5, 0.3, 0.3], "sum of the priors"),
                       ([1.2, -0.1, -0.1], "non-negative")]:
        with pytest.raises(ValueError, match=match):
            GaussianNB(priors=bad, device=device).fit(X, y)


def test_ties_go_to_the_first_class():
    X = np.array([[0.0], [1.0], [0.0], [1.0]])
    y = np.array(["b", "b", "a", "a"])  # identical classes
    est = GaussianNB(device="cpu").fit(X, y)
    assert_array_equal(est.predict([[0.3], [5.0]]), ["a", "a"])


# -- partial_fit -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("weighted", [False, True])
def test_partial_fit_matches_sklearn_and_fit(device, dtype, weighted):
    X, y = blobs(n=3000, dtype=dtype, seed=9)
    w = np.random.default_rng(10).random(3000) + 0.1 if weighted else None
    classes = np.unique(y)
    ours, ref = GaussianNB(device=device), SkGaussianNB()
    for sl in [slice(0, 700), slice(700, 701), slice(701, 3000)]:
        kw = {} if w is None else {"sample_weight": w[sl]}
        ours.partial_fit(X[sl], y[sl], classes=classes, **kw)
        ref.partial_fit(X[sl], y[sl], classes=classes, **kw)
    assert_matches(ours, ref, X, dtype)
    full = GaussianNB(device=device).fit(X, y, sample_weight=w)
    for name in ["theta_", "class_count_", "class_prior_"]:
        scale = np.abs(full.theta_).max(axis=0) if name == "theta_" else 1.0
        assert_allclose(getattr(ours, name) / scale, getattr(full, name) / scale, err_msg=name, **tol(dtype))


def test_partial_fit_class_absent_from_first_batch(device):
    X, y = blobs(n=600, n_classes=3, seed=11)
    first = y != 2
    est = GaussianNB(device=device).partial_fit(X[first], y[first], classes=[0, 1, 2])
    assert est.class_count_[2] == 0
    est.partial_fit(X[~first], y[~first])
    ref = SkGaussianNB().fit(X, y)
    assert_allclose(est.class_count_, ref.class_count_)
    assert_allclose(est.theta_, ref.theta_, rtol=1e-9)


def test_partial_fit_errors():
    X, y = blobs(n=100, n_classes=2, seed=12)
    with pytest.raises(ValueError, match="classes must be passed"):
        GaussianNB(device="cpu").partial_fit(X, y)
    est = GaussianNB(device="cpu").partial_fit(X, y, classes=[0, 1])
    with pytest.raises(ValueError, match="is not the same as on last call"):
        est.partial_fit(X, y, classes=[0, 1, 2])
    with pytest.raises(ValueError, match="do not exist in the initial classes"):
        est.partial_fit(X, np.full(100, 5))
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(X[:, :3], y)


# -- bad input -----------------------------------------------------------------------------------


def test_rejects_nan_inf_empty_and_bad_shapes(device):
    X, y = blobs(n=50, n_classes=2, seed=13)
    for bad, match in [(np.nan, "NaN"), (np.inf, "infinity")]:
        Xb = X.copy()
        Xb[4, 2] = bad
        with pytest.raises(ValueError, match=match):
            GaussianNB(device=device).fit(Xb, y)
    with pytest.raises(ValueError, match="0 sample"):
        GaussianNB(device=device).fit(np.empty((0, 3)), np.empty(0))
    with pytest.raises(ValueError, match="2D"):
        GaussianNB(device=device).fit(X[:, 0], y)
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        GaussianNB(device=device).fit(X, y[:-1])
    est = GaussianNB(device=device).fit(X, y)
    with pytest.raises(ValueError, match="features"):
        est.predict(X[:, :4])
    Xb = X.copy()
    Xb[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        est.predict_proba(Xb)
    with pytest.raises(ValueError, match="var_smoothing"):
        GaussianNB(var_smoothing=-1.0).fit(X, y)


# -- scikit-learn's estimator checks ---------------------------------------------------------------
# No check is waived.


@parametrize_with_checks([GaussianNB(device="cpu"), GaussianNB(device="cpu", var_smoothing=1e-3)])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# -- the identical contract --------------------------------------------------------------------------


def _fit_predict(device, X, y, w=None):
    est = GaussianNB(device=device, numeric_mode="identical").fit(X, y, sample_weight=w)
    return est, {n: np.asarray(getattr(est, n)) for n in ATTRS}, est.predict_joint_log_proba(X), est.predict_proba(X)


# Shapes with classes spanning several canonical chunks and many features
# (more than one lane per feature block).
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n,d,k", [(5, 1, 2), (9000, 7, 3), (1200, 70, 5)])
@pytest.mark.parametrize("weighted", [False, True])
def test_identical_to_cpu_backend(device, dtype, n, d, k, weighted):
    X, y = blobs(n=n, d=d, n_classes=k, dtype=dtype, seed=n, offset=1e3)
    y[:k] = np.arange(k)
    w = np.random.default_rng(14).random(n) + 0.5 if weighted else None
    _, attrs_cpu, jll_cpu, proba_cpu = _fit_predict("cpu", X, y, w)
    est, attrs, jll, proba = _fit_predict(device, X, y, w)
    assert est.numeric_mode_used() == "identical"
    for name in ATTRS:
        assert same_bits(attrs[name], attrs_cpu[name]), name
    assert same_bits(jll, jll_cpu)
    assert same_bits(proba, proba_cpu)


def test_bits_do_not_depend_on_thread_count():
    X, y = blobs(n=6000, d=9, n_classes=3, seed=15, offset=1e3)
    w = np.random.default_rng(16).random(6000)
    ref = None
    for n_threads in [1, 2, 3, 8]:
        with twinlearn.config_context(n_threads=n_threads):
            _, attrs, jll, _ = _fit_predict("cpu", X, y, w)
        if ref is None:
            ref = (attrs, jll)
            continue
        for name in ATTRS:
            assert same_bits(attrs[name], ref[0][name]), name
        assert same_bits(jll, ref[1])


@pytest.mark.parametrize("mode", ["fast", "deterministic", "identical"])
def test_numeric_mode_used_reports_identical(mode):
    X, y = blobs(n=60, n_classes=2, seed=17)
    est = GaussianNB(device="cpu", numeric_mode=mode).fit(X, y)
    assert est.numeric_mode_used() == "identical"
    assert est.device_used() == "cpu"


# -- device arrays ----------------------------------------------------------------------------------


@pytest.mark.gpu
def test_cupy_input():
    cp = pytest.importorskip("cupy")
    X, y = blobs(n=2000, dtype=np.float32, seed=18)
    w = np.random.default_rng(19).random(2000).astype(np.float32)
    _, attrs_cpu, jll_cpu, proba_cpu = _fit_predict("cpu", X, y, w)
    est = GaussianNB(device="auto").fit(cp.asarray(X), cp.asarray(y), sample_weight=cp.asarray(w))
    assert est.device_used() == "cuda:0"
    for name in ATTRS:
        assert same_bits(np.asarray(getattr(est, name)), attrs_cpu[name]), name
    proba = est.predict_proba(cp.asarray(X))
    assert isinstance(proba, cp.ndarray)
    assert same_bits(cp.asnumpy(proba), proba_cpu)
    assert same_bits(cp.asnumpy(est.predict_joint_log_proba(cp.asarray(X))), jll_cpu)
    pred = est.predict(cp.asarray(X))
    assert isinstance(pred, cp.ndarray)
    assert_array_equal(cp.asnumpy(pred), est.classes_[np.argmax(jll_cpu, axis=1)])


@pytest.mark.gpu
def test_torch_input():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    X, y = blobs(n=2000, seed=20)
    _, attrs_cpu, jll_cpu, _ = _fit_predict("cpu", X, y)
    Xt = torch.from_numpy(X).cuda()
    est = GaussianNB(device="auto").fit(Xt, y)
    for name in ATTRS:
        assert same_bits(np.asarray(getattr(est, name)), attrs_cpu[name]), name
    jll = est.predict_joint_log_proba(Xt)
    assert isinstance(jll, torch.Tensor) and jll.is_cuda
    assert same_bits(jll.cpu().numpy(), jll_cpu)
