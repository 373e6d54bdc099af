"""The tests every public estimator passes, over twinlearn.testing.estimators.

scikit-learn's check_estimator (waivers beside each registration), pickling
and clone keep the bits, the three numeric modes fit and predict, thread
count and device (CPU against CUDA) leave identical-mode bits alone, outputs
come back in the input's array type, and bad input gets a clear exception.
A known bug is a strict xfail whose reason names it (``known_bugs`` in the
registry).
"""

import inspect
import pickle
import warnings

import numpy as np
import pytest
from sklearn.base import BaseEstimator, TransformerMixin, clone, is_classifier
from sklearn.exceptions import NotFittedError
from sklearn.utils.estimator_checks import parametrize_with_checks

from twinlearn import _config
from twinlearn.base import TwinlearnEstimatorMixin
from twinlearn.testing import (
    assert_deterministic,
    assert_same_bits,
    assert_separates,
    bits,
    same_bits,
    ulp_distance,
    assert_identical_across_devices,
    assert_identical_across_threads,
    assert_same_fitted,
    assert_same_snapshot,
    fitted_attributes,
    host,
    outputs,
    snapshot,
    to_device,
)
from twinlearn.testing.estimators import ESTIMATORS, public_estimators
from twinlearn.testing import fixtures

MODES = _config.NUMERIC_MODES


def _spec_params(test_name, extra=()):
    """pytest params over the registry (and `extra` axes), with each spec's
    known bug for `test_name` as a strict xfail."""
    out = []
    for spec in ESTIMATORS:
        marks = []
        if test_name in spec.known_bugs:
            marks.append(pytest.mark.xfail(strict=True, reason=spec.known_bugs[test_name]))
        out.append(pytest.param(spec, id=spec.name, marks=marks))
    return out


def specs(test_name):
    return pytest.mark.parametrize("spec", _spec_params(test_name))


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def test_registry_lists_every_public_estimator():
    registered = {spec.cls for spec in ESTIMATORS}
    missing = sorted(name for name, cls in public_estimators().items() if cls not in registered)
    assert not missing, f"not in twinlearn.testing.estimators: {missing}"
    names = [spec.name for spec in ESTIMATORS]
    assert len(names) == len(set(names))
    for spec in ESTIMATORS:
        for reason in [*spec.waivers.values(), *spec.known_bugs.values()]:
            assert isinstance(reason, str) and reason.strip(), f"{spec.name}: a waiver needs its reason"


# -- the kit's own checks, each shown to separate ----------------------------------
class _ThreadTied(BaseEstimator, TransformerMixin):
    """A stand-in whose fitted sum is taken in an order set by the thread count
    (the broken arm of the thread-count and run-to-run checks)."""

    def __init__(self, device="cpu", numeric_mode=None, tied="threads"):
        self.device, self.numeric_mode, self.tied = device, numeric_mode, tied

    def fit(self, X, y=None):
        X = np.asarray(X, dtype=np.float32)
        if self.tied == "threads":
            chunks = max(1, _config.get_n_threads())
        elif self.tied == "runs":
            chunks = next(_RUNS)
        else:
            chunks = 1
        parts = [np.float32(c.sum(dtype=np.float32)) for c in np.array_split(X.ravel(), chunks)]
        self.total_ = np.float32(sum(parts, np.float32(0)))
        return self

    def transform(self, X):
        return np.asarray(X, dtype=np.float32) * self.total_


_RUNS = iter(range(1, 10**6))
_SUM_DATA = np.float32([[1e8, 1.0], [-1e8, 1.0], [3.0, 1e-3], [7.0, -2.5]] * 3)


def test_bits_and_messages():
    a = np.float32([1.0, 2.0, -0.0])
    b = a.copy()
    b[1] = np.nextafter(b[1], np.float32(3))
    assert bits(a) == bits(a.copy()) and hash(bits(a)) == hash(bits(a.copy()))
    assert bits(a) != bits(a.astype(np.float64)) and bits(a) != bits(a.reshape(3, 1))
    assert bits(np.float32([0.0])) != bits(np.float32([-0.0]))
    assert bits(np.float64(np.nan)) == bits(np.float64(np.nan))
    with pytest.raises(AssertionError, match=r"1 of 3 float32 elements differ; first at index \(1,\).*\(1 ulp\)"):
        assert_same_bits(a, b)
    with pytest.raises(AssertionError, match="dtypes differ"):
        assert_same_bits(a, a.astype(np.float64))
    assert same_bits(np.float64(2.5), 2.5)
    assert int(ulp_distance(np.float64(0.0), np.float64(-0.0))) == 1


def test_separates_needs_both_arms():
    def same_as_sorted_sum(total):
        assert_same_bits(total(_SUM_DATA.ravel()), np.float32(np.sort(_SUM_DATA.ravel()).sum(dtype=np.float32)))

    in_order = lambda v: np.float32(np.sort(v).sum(dtype=np.float32))  # noqa: E731
    assert_separates(same_as_sorted_sum, right=in_order, wrong=lambda v: np.float32(v.sum(dtype=np.float32)))
    with pytest.raises(AssertionError, match="also passes on the broken arm"):
        assert_separates(same_as_sorted_sum, right=in_order, wrong=in_order)
    with pytest.raises(AssertionError, match="fails on the right arm"):
        assert_separates(same_as_sorted_sum, right=lambda v: np.float32(123.0), wrong=in_order)


def test_thread_and_run_checks_separate():
    assert_separates(lambda tied: assert_identical_across_threads(lambda: _ThreadTied(tied=tied), _SUM_DATA),
                     right="none", wrong="threads")
    assert_separates(lambda tied: assert_deterministic(lambda: _ThreadTied(tied=tied), _SUM_DATA),
                     right="none", wrong="runs")


def test_snapshot_sees_outputs():
    est = _ThreadTied(tied="none").fit(_SUM_DATA)
    other = _ThreadTied(tied="none").fit(_SUM_DATA * 2)
    assert_same_fitted(est, pickle.loads(pickle.dumps(est)), _SUM_DATA)
    with pytest.raises(AssertionError, match="total_"):
        assert_same_fitted(est, other)
    with pytest.raises(AssertionError, match="outputs.transform"):
        assert_same_snapshot(snapshot(est, _SUM_DATA), snapshot(est, _SUM_DATA[::-1].copy()))


# -- scikit-learn's checks --------------------------------------------------------
_CHECKED = [spec.make(device="cpu") for spec in ESTIMATORS]
_WAIVERS = {id(est): spec.waivers for est, spec in zip(_CHECKED, ESTIMATORS)}


@parametrize_with_checks(_CHECKED, expected_failed_checks=lambda est: _WAIVERS[id(est)], xfail_strict=True)
def test_sklearn_check(estimator, check):
    check(estimator)


# -- persistence ------------------------------------------------------------------
def _fit(spec, dtype=np.float64, **kw):
    X, y = spec.data(dtype=dtype)
    return spec.fit(X, y, device="cpu", **kw), X


@specs("test_pickle_round_trip")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_pickle_round_trip(spec, dtype):
    est, X = _fit(spec, dtype)
    again = pickle.loads(pickle.dumps(est))
    assert type(again) is type(est)
    assert again.get_params() == est.get_params()
    assert_same_fitted(est, again, X)


@specs("test_clone")
def test_clone(spec):
    est, X = _fit(spec)
    fresh = clone(est)
    assert fresh.get_params() == est.get_params()
    assert not fitted_attributes(fresh)
    if fresh.__sklearn_tags__().requires_fit and not _fit_only(fresh):
        with pytest.raises(NotFittedError):
            _predictor(fresh)(X)
    y = spec.data()[1]
    refit = fresh.fit(X) if y is None else fresh.fit(X, y)
    assert_same_fitted(est, refit, X)


# -- numeric modes ----------------------------------------------------------------
@specs("test_modes_fit_and_predict")
@pytest.mark.parametrize("mode", MODES)
def test_modes_fit_and_predict(spec, mode):
    est, X = _fit(spec, numeric_mode=mode)
    assert _config._MODE_RANK[est.numeric_mode_used()] >= _config._MODE_RANK[mode]
    assert est.device_used() == "cpu"
    outs = outputs(est, X)
    assert outs or _fit_only(est), f"{spec.name} has none of the output methods"
    for name, value in outs.items():
        assert not isinstance(value, str), f"{name}: {value}"
    if mode != "fast":
        assert_deterministic(spec.factory(), X, spec.data()[1], numeric_mode=mode)


def _identity_data(spec, case, dtype):
    """(X, y) of 97 rows: the spec's own data, the hostile fixture, or the
    hostile fixture with NaNs (estimators that take missing values only)."""
    X, y = spec.data(n=97, d=5, dtype=dtype)
    if case != "dense":
        X = fixtures.hostile(97, 5, dtype=dtype)
    if case == "nan":
        if not _allows_nan(spec.make()):
            pytest.skip("takes no NaN")
        X = fixtures.with_nonfinite(X, nan=0.05)
    return X, y


IDENTITY_CASES = ["dense", "hostile", "nan"]


@specs("test_thread_count_identity")
@pytest.mark.parametrize("mode", ["deterministic", "identical"])
@pytest.mark.parametrize("case", IDENTITY_CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_thread_count_identity(spec, mode, case, dtype):
    X, y = _identity_data(spec, case, dtype)
    assert_identical_across_threads(spec.factory(), X, y, threads=(1, 2, 3), numeric_mode=mode)


@pytest.mark.gpu
@specs("test_identical_across_devices")
@pytest.mark.parametrize("case", IDENTITY_CASES)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_identical_across_devices(spec, case, dtype):
    X, y = _identity_data(spec, case, dtype)
    assert_identical_across_devices(spec.factory(), X, y)


# -- array types in and out -------------------------------------------------------
def _call_outputs(est, X):
    """{method: raw return value} of the output methods of est on X."""
    out = {}
    for name in ("predict", "predict_proba", "decision_function", "transform", "score_samples",
                 "kneighbors", "inverse_transform"):
        if hasattr(est, name):
            arg = est.transform(X) if name == "inverse_transform" else X
            out[name] = getattr(est, name)(arg)
    return out


def _leaves(value):
    return list(value) if isinstance(value, tuple) else [value]


@specs("test_numpy_in_numpy_out")
def test_numpy_in_numpy_out(spec):
    est, X = _fit(spec)
    for given in (X, X.tolist()):
        for name, value in _call_outputs(est, given).items():
            for leaf in _leaves(value):
                assert isinstance(leaf, np.ndarray), f"{name} returned {type(leaf).__name__}"


@specs("test_layout_and_kind_keep_the_bits")
@pytest.mark.parametrize("layout", ["fortran", "strided", "list", "int"])
def test_layout_and_kind_keep_the_bits(spec, layout):
    """Fortran order, a strided view, a nested list, or integers (which compute
    in float64) fit and predict the bits of the C-ordered float64 array."""
    X, y = spec.data()
    if layout == "int":
        X = np.round(X * 4) + 0.0  # no -0.0: integers have none
    ref = snapshot(spec.fit(X, y, device="cpu", numeric_mode="identical"), X)
    given = {
        "fortran": lambda: np.asfortranarray(X),
        "strided": lambda: np.repeat(X, 2, axis=1)[:, ::2],
        "list": lambda: X.tolist(),
        "int": lambda: X.astype(np.int64),
    }[layout]()
    est = spec.fit(given, y, device="cpu", numeric_mode="identical")
    assert_same_snapshot(ref, snapshot(est, given), f"{layout} input vs C-ordered float64")


@specs("test_output_methods_mirror_the_input")
def test_output_methods_mirror_the_input(spec):
    """Every output method an estimator has is wrapped by _io.mirrors_input
    (through TwinlearnEstimatorMixin), so device-array input gives device
    output on both backends (test_device_array_in_same_type_out runs it)."""
    from twinlearn import _io

    est, _ = _fit(spec)
    assert isinstance(est, TwinlearnEstimatorMixin), spec.name
    methods = [name for name in _io.MIRRORED_METHODS if hasattr(est, name)]
    assert methods, spec.name
    for name in methods:
        assert getattr(getattr(est, name), "_tl_mirrors", False), f"{spec.name}.{name} is not mirrored"


def test_mirror_result_leaves_text_and_host_input_alone():
    from twinlearn import _io

    labels = np.array(["a", "b"])
    out = (np.zeros(2), labels)
    assert _io.mirror_result(np.zeros((2, 2)), out) is out
    assert _io.mirror_result(None, out) is out


@pytest.mark.gpu
@specs("test_device_array_in_same_type_out")
@pytest.mark.parametrize("lib", ["cupy", "torch"])
@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_device_array_in_same_type_out(spec, lib, device):
    """A CuPy array or CUDA tensor in gives the same type out, with the values
    of NumPy input; a model fitted on device arrays equals one fitted on NumPy."""
    X, y = spec.data(dtype=np.float32)
    est = spec.fit(X, y, device=device, numeric_mode="identical")
    Xd = to_device(lib, X)
    ref = _call_outputs(est, X)
    for name, value in _call_outputs(est, Xd).items():
        for leaf, want in zip(_leaves(value), _leaves(ref[name])):
            if want.dtype.kind in "biuf":
                assert type(leaf) is type(Xd), f"{name} returned {type(leaf).__name__}"
            np.testing.assert_array_equal(host(leaf), want, err_msg=name)
    yd = None if y is None else to_device(lib, y)
    on_device = spec.fit(Xd, yd, device=device, numeric_mode="identical")
    assert_same_snapshot(snapshot(est, X), snapshot(on_device, X), f"{lib} input vs NumPy input")


@pytest.mark.gpu
def test_string_classes_come_back_as_numpy():
    """Device arrays hold numbers only: string labels predicted for CuPy rows are NumPy."""
    for spec in ESTIMATORS:
        if spec.task != "classification":
            continue
        X, y = spec.data(dtype=np.float32)
        names = np.array(["a", "b", "c"])[y]
        est = spec.fit(X, names, device="cuda")
        got = est.predict(to_device("cupy", X))
        assert isinstance(got, np.ndarray), spec.name
        np.testing.assert_array_equal(got, est.predict(X), err_msg=spec.name)


@pytest.mark.gpu
@specs("test_score_takes_device_arrays")
@pytest.mark.parametrize("lib", ["cupy", "torch"])
def test_score_takes_device_arrays(spec, lib):
    if spec.task == "unsupervised" or not hasattr(spec.cls, "score"):
        pytest.skip("no supervised score")
    X, y = spec.data(dtype=np.float32)
    w = np.random.default_rng(0).uniform(0.5, 2.0, X.shape[0]).astype(np.float32)
    est = spec.fit(X, y, device="cuda")
    ref = est.score(X, y, sample_weight=w)
    Xd, yd, wd = to_device(lib, X), to_device(lib, y), to_device(lib, w)
    # Any host operand: the score is scikit-learn's computation, bit for bit.
    assert est.score(Xd, y, sample_weight=w) == ref
    # All on the device: twinlearn.metrics' own path there (exact counts; R²
    # in float64 with canonical sums, where scikit-learn computes float32
    # input in float32: docs/NUMERICS.md "Metrics"), the bits of that path on
    # the host, and scikit-learn's value to float32's precision.
    got = est.score(Xd, yd, sample_weight=wd)
    if is_classifier(est):
        assert got == ref
    else:
        from twinlearn.metrics import r2_score

        own = r2_score(y, est.predict(X), sample_weight=w, device="cpu", numeric_mode="identical")
        assert got == own
        assert got == pytest.approx(ref, rel=1e-6)


# -- bad input --------------------------------------------------------------------
def _allows_nan(est):
    return est.__sklearn_tags__().input_tags.allow_nan


def _fit_raw(spec, X, y):
    est = spec.make(device="cpu")
    return est.fit(X) if y is None else est.fit(X, y)


def _fit_only(est):
    """An estimator whose only output method is fit_predict (DBSCAN, as scikit-learn's)."""
    return not any(hasattr(est, name) for name in ("predict", "transform", "kneighbors", "score_samples")) and hasattr(
        est, "fit_predict")


def _predictor(est):
    for name in ("predict", "transform", "kneighbors", "score_samples"):
        if hasattr(est, name):
            return getattr(est, name)
    if _fit_only(est):  # its output on new data is a new fit's
        return est.fit_predict
    raise AssertionError(f"{type(est).__name__} has no predict, transform, kneighbors or score_samples")


@specs("test_nonfinite_input_is_refused")
@pytest.mark.parametrize("value", [np.nan, np.inf, -np.inf])
def test_nonfinite_input_is_refused(spec, value):
    X, y = spec.data()
    bad = X.copy()
    bad[3, 1] = value
    est = spec.make(device="cpu")
    if np.isnan(value) and _allows_nan(est):
        _predictor(_fit_raw(spec, bad, y))(bad)  # takes NaN: fits and predicts
        return
    if getattr(est, "_tl_nonfinite_outlier_labels", None):  # labels the row instead (scikit-learn's HDBSCAN)
        labels = _fit_raw(spec, bad, y).labels_
        assert labels[3] == est._tl_nonfinite_outlier_labels["nan" if np.isnan(value) else "inf"]
        return
    with pytest.raises(ValueError, match="NaN|infinity"):
        _fit_raw(spec, bad, y)
    if not (np.isnan(value) and _allows_nan(est)):
        with pytest.raises(ValueError, match="NaN|infinity"):
            _predictor(_fit_raw(spec, X, y))(bad)


@specs("test_wrong_n_features_at_predict")
def test_wrong_n_features_at_predict(spec):
    X, y = spec.data(d=4)
    est = _fit_raw(spec, X, y)
    if _fit_only(est):
        pytest.skip("fit_predict only: no method takes the fitted features")
    with pytest.raises(ValueError, match="features"):
        _predictor(est)(X[:, :3])


@specs("test_empty_data")
def test_empty_data(spec):
    X, y = spec.data()
    with pytest.raises(ValueError, match="0 sample|0 feature|empty|minimum of 1"):
        _fit_raw(spec, X[:0], None if y is None else y[:0])
    with pytest.raises(ValueError, match="0 sample|0 feature|empty|minimum of 1"):
        _fit_raw(spec, X[:, :0], y)


@specs("test_one_dimensional_X")
def test_one_dimensional_X(spec):
    X, y = spec.data()
    with pytest.raises(ValueError, match="2D array"):
        _fit_raw(spec, X[:, 0], y)
    est = _fit_raw(spec, X, y)
    with pytest.raises(ValueError, match="2D array"):
        _predictor(est)(X[0])


@specs("test_string_X")
def test_string_X(spec):
    X, y = spec.data()
    with pytest.raises(ValueError, match="could not convert|dtype|string"):
        _fit_raw(spec, np.full(X.shape, "a"), y)


_SCALAR_X = "Expected 2D array, got scalar array instead"
#: Queries of the neighbours estimators where X=None means the fitted points (as in scikit-learn).
_NONE_IS_THE_FITTED_POINTS = {"kneighbors", "kneighbors_graph", "predict", "predict_proba", "score"}


def _methods_taking_X(est):
    for name in dir(est):
        method = getattr(est, name, None)
        if name.startswith("_") or not inspect.ismethod(method):
            continue
        params = list(inspect.signature(method).parameters)
        if params and params[0] == "X":
            yield name, method, params


@specs("test_X_none")
def test_X_none(spec):
    """X=None at fit and at every method taking X: scikit-learn's ValueError
    ('Expected 2D array, got scalar array instead', what scikit-learn's
    estimators say), never an internal error. The neighbours estimators'
    queries take None for the fitted points, as scikit-learn's do; the
    k-neighbours estimators' radius queries (which scikit-learn lacks) then
    need a radius."""
    X, y = spec.data()
    with pytest.raises(ValueError, match=_SCALAR_X):
        _fit_raw(spec, None, y)
    for name, _, params in _methods_taking_X(_fit_raw(spec, X, y)):
        est = _fit_raw(spec, X, y)  # a failed fit or partial_fit leaves an estimator unfit for the next call
        method = getattr(est, name)
        args = (None, y) if len(params) > 1 and params[1] == "y" else (None,)
        if hasattr(est, "kneighbors") and name in _NONE_IS_THE_FITTED_POINTS:
            method(*args)
        elif name.startswith("radius_neighbors") and getattr(est, "radius", None) is None:
            with pytest.raises(TypeError, match="has no radius parameter: pass radius="):
                method(*args)
            method(None, radius=1.0)
        elif hasattr(est, "kneighbors") and name.startswith("radius_neighbors"):
            method(*args)
        else:
            with pytest.raises(ValueError, match=_SCALAR_X):
                out = method(*args)
                if inspect.isgenerator(out):
                    next(out)


@specs("test_y_none")
def test_y_none(spec):
    """y=None at a supervised fit: scikit-learn's message."""
    X, y = spec.data()
    if y is None:
        pytest.skip("unsupervised")
    with pytest.raises(ValueError, match=f"This {spec.cls.__name__} estimator requires y to be passed, "
                                         "but the target y is None"):
        spec.make(device="cpu").fit(X, None)


@specs("test_numbers_as_text_X")
@pytest.mark.parametrize("dtype", [str, object])
def test_numbers_as_text_X(spec, dtype):
    """Numbers written as text (a string array, or str objects) are refused
    at fit and at predict with scikit-learn's message, never parsed.
    scikit-learn's check_array refuses a string array so (its default
    dtype='numeric'); those of its estimators that ask for float dtypes
    parse numeric strings, and all of them parse str objects."""
    X, y = spec.data()
    text = X.astype(str).astype(dtype)
    with pytest.raises(ValueError, match="not compatible with arrays of bytes/strings"):
        _fit_raw(spec, text, y)
    est = _fit_raw(spec, X, y)
    with pytest.raises(ValueError, match="not compatible with arrays of bytes/strings"):
        _predictor(est)(text)


@specs("test_odd_sizes")
@pytest.mark.parametrize("n,d", [(n, 3) for n in fixtures.ODD_SIZES] + [(7, 40)], ids=lambda v: str(v))
def test_odd_sizes(spec, n, d):
    """1, 7, 33 and 1025 rows, and more features than rows: a fit or a clear
    ValueError, never a crash; a fit predicts on every row."""
    X, y = spec.data(n=max(n, 8), d=d)
    if n < len(X):
        X, y = X[:n], (None if y is None else y[:n])
    try:
        out = _predictor(_fit_raw(spec, X, y))(X)
    except ValueError:
        assert n < 8, f"refused {n} rows"
        return
    assert len(_leaves(out)[0]) == n
