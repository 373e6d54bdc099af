"""MinMaxScaler, MaxAbsScaler, RobustScaler and Normalizer: scikit-learn parity,
partial_fit, NaN and constant features, bad input, estimator checks, and the
identical contract (CPU versus CUDA bits, thread counts)."""

import pickle
import warnings

import numpy as np
import pytest
from numpy.testing import assert_allclose, assert_array_equal
from sklearn import preprocessing as skp
from sklearn.utils.estimator_checks import parametrize_with_checks

import twinlearn
from twinlearn import MaxAbsScaler, MinMaxScaler, Normalizer, RobustScaler
from twinlearn.testing import same_bits

DTYPES = [np.float32, np.float64]


def hostile(n, d, dtype=np.float64, seed=0, nan=0.05):
    """Features of very different scales, with ties, signed zeros and NaN."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * (10.0 ** rng.integers(-4, 6, size=d))
    X[:, ::3] = np.round(X[:, ::3])  # ties (and signed zeros from rounding)
    X[rng.random((n, d)) < 0.02] = -0.0
    X[rng.random((n, d)) < 0.02] = 0.0
    X[rng.random((n, d)) < nan] = np.nan
    return X.astype(dtype)


def fitted_attrs(est):
    names = {
        "MinMaxScaler": ["data_min_", "data_max_", "data_range_", "scale_", "min_"],
        "MaxAbsScaler": ["max_abs_", "scale_"],
        "RobustScaler": ["center_", "scale_"],
        "Normalizer": [],
    }[type(est).__name__]
    return {k: getattr(est, k) for k in names}


# -- scikit-learn parity --------------------------------------------------------------


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("feature_range", [(0, 1), (-3, 0.5)])
@pytest.mark.parametrize("clip", [False, True])
def test_minmax_matches_sklearn(device, dtype, feature_range, clip):
    X = hostile(1500, 6, dtype, seed=1)
    X_new = hostile(300, 6, dtype, seed=2) * 3
    ref = skp.MinMaxScaler(feature_range=feature_range, clip=clip).fit(X)
    est = MinMaxScaler(feature_range=feature_range, clip=clip, device=device).fit(X)
    for name in ["data_min_", "data_max_", "data_range_", "scale_", "min_"]:
        assert_array_equal(getattr(est, name), getattr(ref, name), err_msg=name)
        assert getattr(est, name).dtype == getattr(ref, name).dtype
    assert est.n_samples_seen_ == ref.n_samples_seen_
    for data in (X, X_new):
        assert_array_equal(est.transform(data), ref.transform(data))
        assert_array_equal(est.inverse_transform(data), ref.inverse_transform(data))
    assert est.transform(X).dtype == dtype


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("clip", [False, True])
def test_maxabs_matches_sklearn(device, dtype, clip):
    X = hostile(1500, 6, dtype, seed=3)
    X_new = hostile(300, 6, dtype, seed=4) * 3
    ref = skp.MaxAbsScaler(clip=clip).fit(X)
    est = MaxAbsScaler(clip=clip, device=device).fit(X)
    assert_array_equal(est.max_abs_, ref.max_abs_)
    assert_array_equal(est.scale_, ref.scale_)
    assert est.scale_.dtype == ref.scale_.dtype
    assert est.n_samples_seen_ == ref.n_samples_seen_
    for data in (X, X_new):
        assert_array_equal(est.transform(data), ref.transform(data))
        assert_array_equal(est.inverse_transform(data), ref.inverse_transform(data))


# Rows below and above 600 take different NumPy median paths; odd and even
# counts of non-NaN values take different median formulas.
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("n", [1, 2, 7, 598, 1501])
@pytest.mark.parametrize("quantile_range", [(25.0, 75.0), (0.0, 100.0), (3.3, 61.7), (50, 50)])
def test_robust_matches_sklearn_bits(device, dtype, n, quantile_range):
    X = hostile(n, 5, dtype, seed=n, nan=0.1 if n > 2 else 0.0)
    ref = skp.RobustScaler(quantile_range=quantile_range).fit(X)
    est = RobustScaler(quantile_range=quantile_range, device=device).fit(X)
    # Exact order statistics and NumPy's interpolation: scikit-learn's bits.
    assert_array_equal(est.center_, ref.center_)
    assert_array_equal(est.scale_, ref.scale_)
    assert est.center_.dtype == ref.center_.dtype and est.scale_.dtype == ref.scale_.dtype
    assert_array_equal(est.transform(X), ref.transform(X))
    assert_array_equal(est.inverse_transform(X), ref.inverse_transform(X))


@pytest.mark.parametrize("with_centering", [True, False])
@pytest.mark.parametrize("with_scaling", [True, False])
@pytest.mark.parametrize("unit_variance", [True, False])
def test_robust_options_match_sklearn(device, with_centering, with_scaling, unit_variance):
    X = hostile(800, 4, np.float64, seed=5)
    kw = dict(with_centering=with_centering, with_scaling=with_scaling, unit_variance=unit_variance)
    ref = skp.RobustScaler(**kw).fit(X)
    est = RobustScaler(device=device, **kw).fit(X)
    for name in ["center_", "scale_"]:
        if getattr(ref, name) is None:
            assert getattr(est, name) is None
        else:
            assert_array_equal(getattr(est, name), getattr(ref, name))
    assert_array_equal(est.transform(X), ref.transform(X))
    assert_array_equal(est.inverse_transform(X), ref.inverse_transform(X))


def test_robust_interpolation_fixture_separates_spellings():
    """Separating arm for the exact-quantile test above: on this fixture the
    one-sided interpolation a + (b - a) * g (a plausible wrong spelling of
    NumPy's 'linear' method) gives different bits from NumPy's, so matching
    scikit-learn bit for bit does pin the interpolation down."""
    X = hostile(1501, 5, np.float64, seed=1501)
    q = np.array([0.033, 0.617])
    naive = []
    for j in range(X.shape[1]):
        col = np.sort(X[:, j][~np.isnan(X[:, j])])
        v = (col.size - 1) * q
        lo = np.floor(v).astype(int)
        g = v - lo
        a, b = col[lo], col[np.minimum(lo + 1, col.size - 1)]
        naive.append(a + (b - a) * g)
    naive = np.array(naive).T
    naive_scale = naive[1] - naive[0]
    est = RobustScaler(quantile_range=(3.3, 61.7), device="cpu").fit(X)
    ref = skp.RobustScaler(quantile_range=(3.3, 61.7)).fit(X)
    assert_array_equal(est.scale_, ref.scale_)
    assert not same_bits(naive_scale, ref.scale_), "fixture cannot separate the interpolation spellings"


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("norm", ["l1", "l2", "max"])
def test_normalizer_matches_sklearn(device, dtype, norm):
    X = hostile(700, 45, dtype, seed=6, nan=0.0)
    X[3] = 0.0  # a zero row stays zero
    ref = skp.Normalizer(norm=norm).fit_transform(X)
    est = Normalizer(norm=norm, device=device)
    out = est.fit_transform(X)
    assert out.dtype == dtype
    if norm == "max":
        assert_array_equal(out, ref)  # the max norm is exact
    else:
        rtol = 1e-6 if dtype == np.float32 else 1e-14
        assert_allclose(out, ref, rtol=rtol, atol=rtol * 1e-3)
    assert_array_equal(out[3], 0.0)
    assert est.numeric_mode_used() == "identical"


def _lane_sum(v):
    """The canonical row order written out: 32 interleaved sequential sums,
    then lanes l and l + off added for off = 16, 8, 4, 2, 1."""
    lanes = [0.0] * 32
    for j, t in enumerate(v.tolist()):
        lanes[j % 32] += t
    off = 16
    while off:
        for lane in range(off):
            lanes[lane] += lanes[lane + off]
        off //= 2
    return lanes[0]


def test_normalizer_uses_lane_order_and_fixture_separates():
    x = hostile(1, 2000, np.float64, seed=7, nan=0.0)[0] * np.where(np.arange(2000) % 5 == 0, 1e9, 1.0)
    lane = _lane_sum(np.abs(x))
    sequential = 0.0
    for t in np.abs(x).tolist():
        sequential += t
    assert lane != sequential, "fixture cannot separate the lane order from the sequential one"
    out = Normalizer(norm="l1", device="cpu").transform(x[None, :])
    assert same_bits(out[0], x / lane)


# -- partial_fit ------------------------------------------------------------------------


@pytest.mark.parametrize("cls", [MinMaxScaler, MaxAbsScaler])
@pytest.mark.parametrize("dtype", DTYPES)
def test_partial_fit_equals_fit(device, cls, dtype):
    X = hostile(3000, 5, dtype, seed=8)
    full = cls(device=device).fit(X)
    inc = cls(device=device)
    for batch in np.array_split(X, [100, 1700, 1701]):
        inc.partial_fit(batch)
    # Extrema are exact: the batches give the same bits as one fit.
    for name, value in fitted_attrs(full).items():
        assert same_bits(getattr(inc, name), value), name
    assert inc.n_samples_seen_ == full.n_samples_seen_ == 3000
    assert_array_equal(inc.transform(X), full.transform(X))


@pytest.mark.parametrize("cls,skcls", [(MinMaxScaler, skp.MinMaxScaler), (MaxAbsScaler, skp.MaxAbsScaler)])
def test_partial_fit_nan_batches_like_sklearn(device, cls, skcls):
    X = hostile(200, 3, np.float64, seed=9)
    X[:50, 1] = np.nan  # the first batch has an all-NaN column
    ours, ref = cls(device=device), skcls()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for batch in (X[:50], X[50:120], X[120:]):
            ours.partial_fit(batch)
            ref.partial_fit(batch)
            for name in fitted_attrs(ours):
                assert_array_equal(getattr(ours, name), getattr(ref, name), err_msg=name)
    assert ours.n_samples_seen_ == ref.n_samples_seen_


@pytest.mark.parametrize("cls,skcls", [(MinMaxScaler, skp.MinMaxScaler), (MaxAbsScaler, skp.MaxAbsScaler)])
def test_partial_fit_mixed_dtypes_like_sklearn(cls, skcls):
    X = hostile(100, 3, np.float64, seed=17)
    ours, ref = cls(device="cpu"), skcls()
    for batch in (X[:50].astype(np.float32), X[50:]):
        ours.partial_fit(batch)
        ref.partial_fit(batch)
    for name in fitted_attrs(ours):
        assert_array_equal(getattr(ours, name), getattr(ref, name), err_msg=name)
        assert getattr(ours, name).dtype == getattr(ref, name).dtype, name


def test_partial_fit_rejects_feature_count_change():
    est = MinMaxScaler(device="cpu").partial_fit(np.ones((3, 2)))
    with pytest.raises(ValueError, match="features"):
        est.partial_fit(np.ones((3, 3)))


# -- NaN and constant features --------------------------------------------------------------


@pytest.mark.parametrize("cls,skcls", [
    (MinMaxScaler, skp.MinMaxScaler), (MaxAbsScaler, skp.MaxAbsScaler), (RobustScaler, skp.RobustScaler)])
def test_nan_ignored_in_fit_and_kept_in_transform(device, cls, skcls):
    X = hostile(500, 4, np.float64, seed=10, nan=0.2)
    est = cls(device=device).fit(X)
    ref = skcls().fit(X)
    for name, value in fitted_attrs(est).items():
        assert not np.isnan(value).any(), name
        assert_array_equal(value, getattr(ref, name))
    out = est.transform(X)
    assert_array_equal(np.isnan(out), np.isnan(X))


@pytest.mark.parametrize("cls,skcls", [
    (MinMaxScaler, skp.MinMaxScaler), (MaxAbsScaler, skp.MaxAbsScaler), (RobustScaler, skp.RobustScaler)])
def test_all_nan_column_like_sklearn(device, cls, skcls):
    X = hostile(100, 3, np.float64, seed=11, nan=0.0)
    X[:, 1] = np.nan
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        est = cls(device=device).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        ref = skcls().fit(X)
    for name, value in fitted_attrs(est).items():
        assert_array_equal(value, getattr(ref, name), err_msg=name)
    assert np.isnan(est.transform(X)[:, 1]).all()


@pytest.mark.parametrize("cls,skcls", [
    (MinMaxScaler, skp.MinMaxScaler), (MaxAbsScaler, skp.MaxAbsScaler), (RobustScaler, skp.RobustScaler)])
def test_constant_features_do_not_divide_by_zero(device, cls, skcls):
    X = hostile(300, 3, np.float64, seed=12, nan=0.0)
    X[:, 0] = 0.0
    X[:, 2] = 7.25
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no divide-by-zero or invalid-value warnings
        with np.errstate(all="raise"):
            est = cls(device=device).fit(X)
            out = est.transform(X)
    ref = skcls().fit(X)
    assert_array_equal(est.scale_, ref.scale_)
    assert_array_equal(out, ref.transform(X))
    assert np.isfinite(out).all()


def test_normalizer_zero_rows_stay_zero(device):
    X = np.zeros((4, 3))
    X[1] = [1e-30, 0, 0]  # below 10 * eps: treated as a zero norm, as in scikit-learn
    for norm in ["l1", "l2", "max"]:
        out = Normalizer(norm=norm, device=device).transform(X)
        assert_array_equal(out, skp.Normalizer(norm=norm).transform(X))


# -- bad input -----------------------------------------------------------------------------------

ALL = [MinMaxScaler, MaxAbsScaler, RobustScaler, Normalizer]


@pytest.mark.parametrize("cls", ALL)
def test_rejects_infinity(device, cls):
    X = np.ones((5, 2))
    X[2, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        cls(device=device).fit(X)
    est = cls(device=device).fit(np.ones((5, 2)))
    with pytest.raises(ValueError, match="infinity"):
        est.transform(X)


@pytest.mark.parametrize("cls", ALL)
def test_rejects_empty_1d_and_wrong_feature_count(device, cls):
    est = cls(device=device)
    with pytest.raises(ValueError, match="0 sample"):
        est.fit(np.empty((0, 3)))
    with pytest.raises(ValueError, match="0 feature"):
        est.fit(np.empty((3, 0)))
    with pytest.raises(ValueError, match="2D"):
        est.fit(np.ones(5))
    est.fit(np.arange(12.0).reshape(4, 3))
    with pytest.raises(ValueError, match="features"):
        est.transform(np.ones((2, 4)))


def test_normalizer_rejects_nan(device):
    X = np.ones((3, 2))
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        Normalizer(device=device).transform(X)


@pytest.mark.parametrize("est,match", [
    (MinMaxScaler(feature_range=(2, 1)), "feature range"),
    (MinMaxScaler(feature_range=[0, 1]), "feature_range"),
    (RobustScaler(quantile_range=(80.0, 20.0)), "quantile range"),
    (RobustScaler(quantile_range=(-1.0, 20.0)), "quantile range"),
    (Normalizer(norm="l3"), "norm"),
    (MaxAbsScaler(device="tpu"), "device"),
    (MinMaxScaler(numeric_mode="exact"), "numeric_mode"),
])
def test_rejects_bad_parameters(est, match):
    with pytest.raises(ValueError, match=match):
        est.fit(np.ones((4, 2)))


def test_unfitted_raises():
    from sklearn.exceptions import NotFittedError

    for cls in [MinMaxScaler, MaxAbsScaler, RobustScaler]:
        with pytest.raises(NotFittedError):
            cls(device="cpu").transform(np.ones((2, 2)))
    with pytest.raises(NotFittedError):
        Normalizer().numeric_mode_used()
    # Normalizer is stateless: transform works without fit.
    assert_allclose(Normalizer(device="cpu").transform([[3.0, 4.0]]), [[0.6, 0.8]])


# -- scikit-learn's estimator checks ---------------------------------------------------------------
# No check is waived.


@parametrize_with_checks([
    MinMaxScaler(device="cpu"),
    MinMaxScaler(device="cpu", clip=True, feature_range=(-1, 2)),
    MaxAbsScaler(device="cpu"),
    RobustScaler(device="cpu"),
    RobustScaler(device="cpu", with_centering=False, unit_variance=True),
    Normalizer(device="cpu"),
    Normalizer(device="cpu", norm="max"),
])
def test_sklearn_estimator_checks(estimator, check):
    check(estimator)


# -- the identical contract --------------------------------------------------------------------------

ESTIMATORS = [
    lambda d: MinMaxScaler(device=d, numeric_mode="identical", clip=True),
    lambda d: MaxAbsScaler(device=d, numeric_mode="identical"),
    lambda d: RobustScaler(device=d, numeric_mode="identical", quantile_range=(10.0, 85.0)),
    lambda d: Normalizer(device=d, numeric_mode="identical", norm="l2"),
    lambda d: Normalizer(device=d, numeric_mode="identical", norm="l1"),
]
# Shapes for both GPU sort paths of RobustScaler (long columns one by one,
# many short columns together) and for chunk boundaries of the extrema.
SHAPES = [(1, 1), (1025, 3), (40000, 2), (300, 70)]


def _run(make, device, X):
    est = make(device).fit(X)
    nan_free = np.nan_to_num(X) if isinstance(est, Normalizer) else X
    out = est.transform(nan_free)
    inv = est.inverse_transform(out) if hasattr(est, "inverse_transform") else None
    return est, fitted_attrs(est), out, inv


@pytest.mark.parametrize("make", ESTIMATORS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", DTYPES)
def test_identical_to_cpu_backend(device, make, shape, dtype):
    X = hostile(*shape, dtype=dtype, seed=shape[0])
    if isinstance(make("cpu"), Normalizer):
        X = np.nan_to_num(X)
    _, attrs_cpu, out_cpu, inv_cpu = _run(make, "cpu", X)
    est, attrs, out, inv = _run(make, device, X)
    assert est.numeric_mode_used() == "identical"
    for name, value in attrs.items():
        assert same_bits(value, attrs_cpu[name]), name
    assert same_bits(out, out_cpu)
    if inv is not None:
        assert same_bits(inv, inv_cpu)


@pytest.mark.parametrize("make", ESTIMATORS)
def test_bits_do_not_depend_on_thread_count(make):
    X = hostile(5000, 7, np.float64, seed=13)
    if isinstance(make("cpu"), Normalizer):
        X = np.nan_to_num(X)
    results = []
    for n_threads in [1, 2, 3, 8]:
        with twinlearn.config_context(n_threads=n_threads):
            _, attrs, out, _ = _run(make, "cpu", X)
        results.append((attrs, out))
    for attrs, out in results[1:]:
        for name, value in attrs.items():
            assert same_bits(value, results[0][0][name]), name
        assert same_bits(out, results[0][1])


@pytest.mark.parametrize("mode", ["fast", "deterministic", "identical"])
@pytest.mark.parametrize("cls", ALL)
def test_numeric_mode_used_reports_identical(cls, mode):
    est = cls(device="cpu", numeric_mode=mode).fit(np.arange(12.0).reshape(4, 3))
    assert est.numeric_mode_used() == "identical"
    assert est.device_used() == "cpu"


def test_copy_false_transforms_in_place():
    X = np.arange(12.0).reshape(4, 3)
    est = MinMaxScaler(copy=False, device="cpu").fit(X)
    out = est.transform(X)
    assert out is X
    X2 = np.arange(12.0).reshape(4, 3)
    out2 = MinMaxScaler(device="cpu").fit(X2).transform(X2)
    assert out2 is not X2 and X2[0, 0] == 0.0 and X2[3, 2] == 11.0


@pytest.mark.parametrize("cls", [MinMaxScaler, MaxAbsScaler, RobustScaler])
def test_pickle_round_trip(cls):
    X = hostile(200, 3, np.float32, seed=14)
    est = cls(device="cpu").fit(X)
    est2 = pickle.loads(pickle.dumps(est))
    assert same_bits(est2.transform(X), est.transform(X))


# -- device arrays ----------------------------------------------------------------------------------


@pytest.mark.gpu
@pytest.mark.parametrize("make", ESTIMATORS)
def test_cupy_input_stays_on_device(make):
    cp = pytest.importorskip("cupy")
    X = hostile(3000, 5, np.float32, seed=15)
    if isinstance(make("cpu"), Normalizer):
        X = np.nan_to_num(X)
    _, attrs_cpu, out_cpu, _ = _run(make, "cpu", X)
    est = make("auto").fit(cp.asarray(X))
    assert est.device_used() == "cuda:0"
    out = est.transform(cp.asarray(X))
    assert isinstance(out, cp.ndarray)
    for name, value in fitted_attrs(est).items():
        assert same_bits(value, attrs_cpu[name]), name
    assert same_bits(cp.asnumpy(out), out_cpu)


@pytest.mark.gpu
@pytest.mark.parametrize("make", ESTIMATORS)
def test_torch_input_stays_on_device(make):
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("PyTorch has no CUDA device")
    X = hostile(3000, 5, np.float64, seed=16)
    if isinstance(make("cpu"), Normalizer):
        X = np.nan_to_num(X)
    _, attrs_cpu, out_cpu, _ = _run(make, "cpu", X)
    Xt = torch.from_numpy(X).cuda()
    est = make("auto").fit(Xt)
    out = est.transform(Xt)
    assert isinstance(out, torch.Tensor) and out.is_cuda
    for name, value in fitted_attrs(est).items():
        assert same_bits(value, attrs_cpu[name]), name
    assert same_bits(out.cpu().numpy(), out_cpu)


@pytest.mark.gpu
def test_cupy_infinity_rejected_on_device():
    cp = pytest.importorskip("cupy")
    X = cp.ones((10, 2))
    X[3, 1] = cp.inf
    for cls in ALL:
        with pytest.raises(ValueError, match="infinity"):
            cls(device="cuda").fit(X)
