import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.preprocessing import StandardScaler as SkStandardScaler
from sklearn.utils.estimator_checks import check_estimator

import twinlearn
from twinlearn import StandardScaler
from twinlearn.testing import bits


def data(n=2000, d=6, dtype=np.float64, seed=0, nan=False):
    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((n, d)) * np.logspace(-3, 4, d) + np.arange(d) * 100).astype(dtype)
    if nan:
        X[rng.random((n, d)) < 0.05] = np.nan
    return X


def hostile(n=5003, dtype=np.float64, seed=1):
    """Huge dynamic range, denormals, signed zeros, NaN, a constant column."""
    rng = np.random.default_rng(seed)
    big, tiny, den = (1e150, 1e-300, 5e-324) if dtype == np.float64 else (1e30, 1e-36, 1e-45)
    X = rng.standard_normal((n, 6)) * np.array([tiny, 1.0, big, 1e4, 1.0, 1.0])
    X[rng.random(n) < 0.3, 1] *= 1e12
    X[::7, 0] = den
    X[min(3, n - 1), 3] = -0.0
    X[rng.random(n) < 0.01, 4] = np.nan
    X[:, 5] = 3.0
    return X.astype(dtype)


def test_check_estimator():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_estimator(StandardScaler(device="cpu"))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("with_mean,with_std", [(True, True), (False, True), (True, False), (False, False)])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("nan", [False, True])
def test_matches_scikit_learn(device, dtype, with_mean, with_std, weighted, nan):
    X = data(dtype=dtype, nan=nan)
    w = np.random.default_rng(3).uniform(0.1, 3.0, X.shape[0]) if weighted else None
    ours = StandardScaler(with_mean=with_mean, with_std=with_std, device=device).fit(X, sample_weight=w)
    ref = SkStandardScaler(with_mean=with_mean, with_std=with_std).fit(X, sample_weight=w)
    for attr in ("mean_", "var_", "scale_"):
        a, b = getattr(ours, attr), getattr(ref, attr)
        if b is None:
            assert a is None, attr
        else:
            # Different summation orders: agreement to ~1e-12 of the data's magnitude.
            mag = np.nanmax(np.abs(X).astype(np.float64), axis=0) ** (2 if attr == "var_" else 1)
            assert np.all(np.abs(a - b) <= 1e-9 * np.abs(b) + 1e-12 * mag), attr
    np.testing.assert_allclose(ours.n_samples_seen_, ref.n_samples_seen_, rtol=1e-12)
    Xt = ours.transform(X)
    assert Xt.dtype == dtype
    # Means agree to ~1e-14 relative; on the nearly constant columns of this
    # fixture that is amplified by the cancellation in x - mean.
    tol = 1e-4 if dtype == np.float32 else 1e-9
    np.testing.assert_allclose(Xt, ref.transform(X), rtol=tol, atol=tol)
    np.testing.assert_allclose(ours.inverse_transform(Xt), X, rtol=tol * 10, atol=tol * 10 * np.nanmax(np.abs(X)))
    assert ours.numeric_mode_used() == "identical"
    assert ours.device_used() == device


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_transform_is_bitwise_scikit_learn_given_same_parameters(device, dtype):
    """Transform works in X's dtype with the parameters rounded to it, as
    scikit-learn does.

    Separating arm: computing in float64 and rounding once gives different
    bits on this fixture, so the test would catch that spelling."""
    X = data(dtype=dtype)
    ref = SkStandardScaler().fit(X)
    ours = StandardScaler(device=device).fit(X)
    ours.mean_, ours.scale_ = ref.mean_.copy(), ref.scale_.copy()
    assert bits(ours.transform(X)) == bits(ref.transform(X))
    assert bits(ours.inverse_transform(X)) == bits(ref.inverse_transform(X))
    if dtype == np.float32:
        one_rounding = ((X.astype(np.float64) - ref.mean_) / ref.scale_).astype(np.float32)
        assert bits(one_rounding) != bits(ref.transform(X))


def test_partial_fit_matches_scikit_learn(device):
    X = data(n=3001, nan=True)
    ours, ref = StandardScaler(device=device), SkStandardScaler()
    for chunk in np.array_split(X, 7):
        ours.partial_fit(chunk)
        ref.partial_fit(chunk)
    np.testing.assert_allclose(ours.mean_, ref.mean_, rtol=1e-12)
    np.testing.assert_allclose(ours.var_, ref.var_, rtol=1e-10)
    np.testing.assert_array_equal(ours.n_samples_seen_, ref.n_samples_seen_)
    full = StandardScaler(device=device).fit(X)
    np.testing.assert_allclose(ours.var_, full.var_, rtol=1e-12)


def test_partial_fit_with_weights(device):
    X = data(n=1000)
    w = np.random.default_rng(5).uniform(0.5, 2, 1000)
    ours, ref = StandardScaler(device=device), SkStandardScaler()
    for idx in np.array_split(np.arange(1000), 3):
        ours.partial_fit(X[idx], sample_weight=w[idx])
        ref.partial_fit(X[idx], sample_weight=w[idx])
    np.testing.assert_allclose(ours.mean_, ref.mean_, rtol=1e-12)
    np.testing.assert_allclose(ours.var_, ref.var_, rtol=1e-9)
    np.testing.assert_allclose(ours.n_samples_seen_, ref.n_samples_seen_)


def test_constant_feature_scale_is_one(device):
    X = np.column_stack([np.full(100, 0.1), np.arange(100.0)])
    s = StandardScaler(device=device).fit(X)
    assert s.scale_[0] == 1.0
    assert np.all(np.isfinite(s.transform(X)))


def test_copy_false_transforms_in_place(device):
    X = data(n=50)
    Xc = X.copy()
    s = StandardScaler(copy=False, device=device).fit(Xc)
    out = s.transform(Xc)
    assert out is Xc or np.shares_memory(out, Xc)
    X2 = X.copy()
    out2 = StandardScaler(device=device).fit(X2).transform(X2)
    assert not np.shares_memory(out2, X2)
    np.testing.assert_array_equal(X2, X)


@pytest.mark.parametrize("threads", [1, 2, 7])
def test_bits_do_not_depend_on_thread_count(threads):
    X = hostile()
    ref = StandardScaler(device="cpu", numeric_mode="identical")
    with twinlearn.config_context(n_threads=1):
        ref.fit(X)
        ref_t = ref.transform(X)
    with twinlearn.config_context(n_threads=threads):
        s = StandardScaler(device="cpu", numeric_mode="identical").fit(X)
        t = s.transform(X)
    assert bits(s.mean_) == bits(ref.mean_) and bits(s.var_) == bits(ref.var_)
    assert bits(t) == bits(ref_t)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("n", [1, 1023, 1025, 5003, 200_001])
def test_cpu_and_gpu_give_identical_bits(dtype, weighted, n):
    X = hostile(n=n, dtype=dtype)
    w = np.random.default_rng(2).uniform(0.1, 4, n).astype(dtype) if weighted else None
    c = StandardScaler(device="cpu", numeric_mode="identical").fit(X, sample_weight=w)
    g = StandardScaler(device="cuda", numeric_mode="identical").fit(X, sample_weight=w)
    for attr in ("mean_", "var_", "scale_", "n_samples_seen_"):
        assert bits(getattr(c, attr)) == bits(getattr(g, attr)), attr
    assert bits(c.transform(X)) == bits(g.transform(X))
    assert bits(c.inverse_transform(X)) == bits(g.inverse_transform(X))


@pytest.mark.gpu
@pytest.mark.parametrize("lib", ["cupy", "torch"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_device_arrays_in_device_arrays_out(lib, dtype):
    mod = pytest.importorskip(lib)
    X = hostile(n=4001, dtype=np.dtype(dtype))
    Xd = mod.asarray(X) if lib == "cupy" else mod.as_tensor(X, device="cuda")
    s = StandardScaler().fit(Xd)
    assert s.device_used() == "cuda:0"
    assert isinstance(s.mean_, np.ndarray)
    out = s.transform(Xd)
    assert type(out) is type(Xd)
    assert str(out.dtype).endswith(dtype)
    host = out.get() if lib == "cupy" else out.cpu().numpy()
    ref = StandardScaler(device="cpu").fit(X)
    assert bits(ref.mean_) == bits(s.mean_)
    assert bits(host) == bits(ref.transform(X))
    back = s.inverse_transform(out)
    assert type(back) is type(Xd)
    # a device array handed to the CPU backend comes back as the same kind
    out_cpu = StandardScaler(device="cpu").fit(Xd).transform(Xd)
    assert type(out_cpu) is type(Xd)


@pytest.mark.gpu
def test_cuda_array_interface_input():
    cupy = pytest.importorskip("cupy")

    class OnlyCAI:
        def __init__(self, a):
            self.__cuda_array_interface__ = a.__cuda_array_interface__
            self._a = a

    X = data(n=500)
    s = StandardScaler().fit(OnlyCAI(cupy.asarray(X)))
    np.testing.assert_allclose(s.mean_, X.mean(0), rtol=1e-12)


@pytest.mark.gpu
def test_device_array_with_inf_or_bad_shape_is_rejected():
    cupy = pytest.importorskip("cupy")
    X = cupy.asarray(data(n=100))
    X[3, 2] = cupy.inf
    with pytest.raises(ValueError, match="infinity"):
        StandardScaler().fit(X)
    with pytest.raises(ValueError, match="2D array"):
        StandardScaler().fit(cupy.ones(5))
    with pytest.raises(ValueError, match="0 sample"):
        StandardScaler().fit(cupy.ones((0, 3)))
    s = StandardScaler().fit(cupy.ones((4, 3)))
    with pytest.raises(ValueError, match="X has 2 features"):
        s.transform(cupy.ones((4, 2)))


def test_model_fitted_anywhere_predicts_on_cpu(device):
    X = hostile()
    s = StandardScaler(device=device, numeric_mode="identical").fit(X)
    loaded = pickle.loads(pickle.dumps(s))
    loaded.set_params(device="cpu")
    assert bits(loaded.transform(X)) == bits(s.transform(X))


@pytest.mark.parametrize(
    "X,exc,match",
    [
        (np.array([[1.0, np.inf], [2.0, 3.0]]), ValueError, "infinity"),
        (np.empty((0, 3)), ValueError, "0 sample"),
        (np.array([1.0, 2.0, 3.0]), ValueError, "2D array"),
        (sp.csr_matrix(np.eye(3)), TypeError, "[Ss]parse"),
        (np.array([[1 + 1j, 2.0]]), ValueError, "[Cc]omplex"),
        (np.array([["a", "b"]], dtype=object), ValueError, "not compatible with arrays of bytes/strings"),
    ],
)
def test_bad_input(device, X, exc, match):
    with pytest.raises(exc, match=match):
        StandardScaler(device=device).fit(X)


def test_wrong_feature_count_at_transform(device):
    s = StandardScaler(device=device).fit(np.ones((5, 3)))
    with pytest.raises(ValueError, match="X has 2 features"):
        s.transform(np.ones((5, 2)))
    with pytest.raises(ValueError, match="infinity"):
        s.transform(np.array([[1.0, np.inf, 0.0]]))


@pytest.mark.parametrize("param,value", [("device", "tpu"), ("numeric_mode", "exact"), ("with_mean", "yes")])
def test_bad_parameters(param, value):
    with pytest.raises(ValueError, match=param):
        StandardScaler(**{param: value}).fit(np.ones((3, 2)))


def test_integer_and_fortran_input_converted():
    X = np.asfortranarray(np.arange(20).reshape(10, 2))
    s = StandardScaler(device="cpu").fit(X)
    np.testing.assert_allclose(s.mean_, X.mean(0))
    assert s.transform(X).dtype == np.float64


def test_numeric_mode_used_before_fit():
    from sklearn.exceptions import NotFittedError

    with pytest.raises(NotFittedError):
        StandardScaler().numeric_mode_used()
