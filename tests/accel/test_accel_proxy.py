"""Accelerated estimators: scikit-learn's interface, twinlearn's results, fallbacks with reasons."""

from __future__ import annotations

import copy
import logging

import numpy as np
import pytest
import scipy.sparse as sp
from numpy.testing import assert_allclose, assert_array_equal
from sklearn.base import clone
from sklearn.exceptions import NotFittedError
from sklearn.preprocessing import StandardScaler
from sklearn.utils._param_validation import InvalidParameterError

import twinlearn
import twinlearn.accel as accel
from accel_helpers import accel_state, toy  # noqa: F401 (fixtures)
from twinlearn.accel import _config

LOGGER = "twinlearn.accel"


def data(n=200, d=5, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, d)) * np.arange(1, d + 1) + 3.0).astype(dtype)


def messages(caplog):
    return [r.getMessage() for r in caplog.records if r.name == LOGGER]


# -- scikit-learn's interface ---------------------------------------------------
def test_class_is_a_subclass_with_the_same_identity():
    Acc = accel.accelerate(StandardScaler)
    assert issubclass(Acc, StandardScaler) and Acc is not StandardScaler
    assert (Acc.__name__, Acc.__qualname__, Acc.__module__) == (
        StandardScaler.__name__, StandardScaler.__qualname__, StandardScaler.__module__)
    assert Acc.__doc__ == StandardScaler.__doc__
    assert accel.accelerate(StandardScaler) is Acc
    assert accel.plain_class(Acc) is StandardScaler
    est = Acc(with_std=False)
    assert isinstance(est, StandardScaler)
    assert accel.is_accelerated(est) and not accel.is_accelerated(StandardScaler())


def test_get_params_repr_and_clone_are_scikit_learns():
    plain = StandardScaler(with_mean=False, copy=False)
    acc = accel.accelerate(StandardScaler)(with_mean=False, copy=False)
    assert acc.get_params() == plain.get_params()
    assert set(acc.get_params()) == {"copy", "with_mean", "with_std"}  # no device / numeric_mode
    assert repr(acc) == repr(plain) == "StandardScaler(copy=False, with_mean=False)"
    c = clone(acc)
    assert type(c) is type(acc) and c is not acc and c.get_params() == acc.get_params()
    assert acc.set_params(with_std=False) is acc and acc.with_std is False


def test_invalid_parameters_raise_scikit_learns_error():
    acc = accel.accelerate(StandardScaler(with_mean="yes"))
    with pytest.raises(InvalidParameterError) as got:
        acc.fit(data())
    with pytest.raises(InvalidParameterError) as want:
        StandardScaler(with_mean="yes").fit(data())
    assert str(got.value) == str(want.value)


def test_validated_parameters_are_cached_by_value_tuples_included(monkeypatch):
    # feature_range is a tuple: valid values are validated once per class
    # (the per-call overhead), invalid ones raise every time.
    from sklearn.preprocessing import MinMaxScaler

    acc = accel.accelerate(MinMaxScaler(feature_range=(0.0, 3.25)))
    calls = []
    real = type(acc)._validate_params
    monkeypatch.setattr(type(acc), "_validate_params", lambda self: (calls.append(1), real(self))[1])
    X = data()
    acc.fit(X)
    acc.fit(X)
    acc.set_params(feature_range=(0, 3.25))  # ints: another key, validated again
    acc.fit(X)
    assert len(calls) == 2
    acc.set_params(feature_range=[0.0, 3.25])  # a list: scikit-learn refuses it, every time
    for _ in range(2):
        with pytest.raises(InvalidParameterError):
            acc.fit(X)
    assert len(calls) == 4


def test_signatures_and_metadata_routing_are_scikit_learns():
    import inspect

    Acc = accel.accelerate(StandardScaler)
    for m in ("fit", "partial_fit", "transform", "fit_transform", "inverse_transform"):
        assert inspect.signature(getattr(Acc, m)) == inspect.signature(getattr(StandardScaler, m))
    acc = Acc()
    assert str(acc.get_metadata_routing()) == str(StandardScaler().get_metadata_routing())
    import sklearn

    with sklearn.config_context(enable_metadata_routing=True):
        assert acc.set_fit_request(sample_weight=True) is acc


# -- twinlearn's results ----------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("with_mean,with_std", [(True, True), (False, True), (True, False)])
def test_results_are_twinlearns_and_match_scikit_learn(dtype, with_mean, with_std):
    X = data(dtype=dtype)
    w = np.random.default_rng(1).uniform(0.5, 2.0, X.shape[0])
    acc = accel.accelerate(StandardScaler(with_mean=with_mean, with_std=with_std))
    ref = StandardScaler(with_mean=with_mean, with_std=with_std)
    nat = twinlearn.StandardScaler(with_mean=with_mean, with_std=with_std, device="cpu")
    Z = acc.fit(X, sample_weight=w).transform(X)
    assert accel.fitted_on(acc) == "twinlearn:cpu"
    # The accelerated result is twinlearn's, bit for bit...
    assert_array_equal(Z, nat.fit(X, sample_weight=w).transform(X))
    assert Z.dtype == dtype
    # ...and scikit-learn's within tolerance.
    ref.fit(X, sample_weight=w)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    assert_allclose(Z, ref.transform(X), rtol=tol, atol=tol)
    for a in ("mean_", "var_", "scale_"):
        got, want = getattr(acc, a), getattr(ref, a)
        if want is None:
            assert got is None
        else:
            assert isinstance(got, np.ndarray)
            assert_allclose(got, want, rtol=1e-12)
    assert acc.n_features_in_ == X.shape[1]
    assert_allclose(acc.n_samples_seen_, ref.n_samples_seen_)
    assert_allclose(acc.inverse_transform(Z), X, rtol=tol, atol=10 * tol)
    # Separating arm: the tolerance tells a different scaling apart.
    if with_std:
        assert not np.allclose(Z, StandardScaler(with_std=False).fit_transform(X), rtol=tol, atol=tol)


def test_fit_transform_and_partial_fit_match_scikit_learn():
    X = data(300)
    acc = accel.accelerate(StandardScaler())
    Z = acc.fit_transform(X)
    assert accel.fitted_on(acc) == "twinlearn:cpu"
    assert_allclose(Z, StandardScaler().fit_transform(X), rtol=1e-12, atol=1e-12)
    acc = accel.accelerate(StandardScaler())
    ref = StandardScaler()
    for chunk in np.array_split(X, 4):
        acc.partial_fit(chunk)
        ref.partial_fit(chunk)
    assert accel.fitted_on(acc) == "twinlearn:cpu"
    assert_allclose(acc.mean_, ref.mean_, rtol=1e-12)
    assert_allclose(acc.var_, ref.var_, rtol=1e-12)


def test_mirrored_attributes_serve_scikit_learns_own_methods():
    X = data()
    acc = accel.accelerate(StandardScaler()).fit(X)
    assert accel.fitted_on(acc) == "twinlearn:cpu"
    # The plain scikit-learn methods, run on the accelerated object's state.
    assert_allclose(StandardScaler.transform(acc, X), acc.transform(X), rtol=1e-12, atol=1e-12)
    assert_allclose(StandardScaler.inverse_transform(acc, X), acc.inverse_transform(X), rtol=1e-12)
    assert list(acc.get_feature_names_out()) == [f"x{i}" for i in range(X.shape[1])]


def test_nan_is_served_where_twinlearn_allows_it(caplog):
    X = data()
    X[3, 1] = np.nan
    caplog.set_level(logging.INFO, LOGGER)
    acc = accel.accelerate(StandardScaler()).fit(X)
    assert accel.fitted_on(acc) == "twinlearn:cpu"
    ref = StandardScaler().fit(X)
    assert_allclose(acc.mean_, ref.mean_, rtol=1e-12)
    assert_allclose(acc.transform(X), ref.transform(X), rtol=1e-12, atol=1e-12)


def test_lists_are_served():
    X = data(20, 3)
    acc = accel.accelerate(StandardScaler()).fit(X.tolist())
    assert accel.fitted_on(acc) == "twinlearn:cpu"
    assert_allclose(acc.transform(X.tolist()), StandardScaler().fit(X).transform(X), rtol=1e-12)


# -- fallbacks, with reasons ------------------------------------------------------------
def test_sparse_input_runs_scikit_learn_and_says_so(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    X = sp.csr_matrix(data())
    acc = accel.accelerate(StandardScaler(with_mean=False)).fit(X)
    assert accel.fitted_on(acc) == "scikit-learn"
    assert "StandardScaler.fit: scikit-learn: X is sparse" in messages(caplog)
    assert_allclose(acc.scale_, StandardScaler(with_mean=False).fit(X).scale_)


def test_below_threshold_runs_scikit_learn_and_says_so(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    accel.set_threshold("StandardScaler", min_rows=100)
    acc = accel.accelerate(StandardScaler()).fit(data(50))
    assert accel.fitted_on(acc) == "scikit-learn"
    assert "StandardScaler.fit: scikit-learn: below threshold 100 rows (n_samples=50)" in messages(caplog)
    acc.fit(data(100))
    assert accel.fitted_on(acc) == "twinlearn:cpu"
    assert "StandardScaler.fit: twinlearn on cpu (n_samples=100, n_features=5)" in messages(caplog)
    accel.update_threshold("StandardScaler", min_cols=6)
    acc.fit(data(100))
    assert accel.fitted_on(acc) == "scikit-learn"
    assert messages(caplog)[-1] == "StandardScaler.fit: scikit-learn: below threshold 6 columns (n_features=5)"


def test_transform_below_threshold_uses_the_mirrored_state(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    accel.set_threshold("StandardScaler", min_rows=100)
    X = data(200)
    acc = accel.accelerate(StandardScaler()).fit(X)
    small = acc.transform(X[:10])
    assert messages(caplog)[-1].startswith("StandardScaler.transform: scikit-learn: below threshold 100 rows")
    assert accel.fitted_on(acc) == "twinlearn:cpu"  # a fallback transform does not change the fit
    assert_allclose(small, acc.transform(X)[:10], rtol=1e-12, atol=1e-12)


def test_unsupported_parameter_runs_scikit_learn_and_says_so(toy, caplog):
    caplog.set_level(logging.INFO, LOGGER)
    Restricted = accel.accelerate(toy.RestrictedScaler)
    X = data()
    est = Restricted().fit(X)
    assert accel.fitted_on(est) == "twinlearn:cpu"
    est = Restricted(with_mean=False).fit(X)
    assert accel.fitted_on(est) == "scikit-learn"
    assert messages(caplog)[-1] == (
        "RestrictedScaler.fit: scikit-learn: parameter with_mean=False unsupported (supported: `True`)"
    )
    assert_allclose(est.transform(X), StandardScaler(with_mean=False).fit(X).transform(X))


def test_nan_where_not_allowed_runs_scikit_learn_and_says_so(toy, caplog):
    caplog.set_level(logging.INFO, LOGGER)
    X = data()
    X[7, 2] = np.nan
    est = accel.accelerate(toy.RestrictedScaler()).fit(X)
    assert accel.fitted_on(est) == "scikit-learn"
    assert messages(caplog)[-1] == "RestrictedScaler.fit: scikit-learn: X contains NaN"
    X[7, 2] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        est.fit(X)  # scikit-learn's own error
    assert messages(caplog)[-1] == "RestrictedScaler.fit: scikit-learn: X contains infinity"


def test_default_threshold_of_the_entry_applies(toy, caplog):
    caplog.set_level(logging.INFO, LOGGER)
    est = accel.accelerate(toy.RestrictedScaler()).fit(data(4))
    assert messages(caplog)[-1] == "RestrictedScaler.fit: scikit-learn: below threshold 5 rows (n_samples=4)"
    assert accel.threshold("RestrictedScaler") == (5, 1)
    est.fit(data(5))
    assert accel.fitted_on(est) == "twinlearn:cpu"


def test_unsupported_keyword_argument_runs_scikit_learn(toy, caplog):
    caplog.set_level(logging.INFO, LOGGER)
    X = data()
    w = np.ones(X.shape[0])
    est = accel.accelerate(toy.RestrictedScaler()).fit(X, sample_weight=w)
    assert messages(caplog)[-1] == "RestrictedScaler.fit: scikit-learn: argument sample_weight unsupported"
    est.fit(X, sample_weight=None)  # None is no argument at all
    assert accel.fitted_on(est) == "twinlearn:cpu"


@pytest.mark.parametrize("X", [data(10).astype(np.float16), data(10).astype(np.complex128),
                               np.zeros((0, 3)), data(10)[:, 0]])
def test_unserved_arrays_run_scikit_learn(X, caplog):
    caplog.set_level(logging.INFO, LOGGER)
    acc = accel.accelerate(StandardScaler())
    try:
        acc.fit(X)
    except ValueError:
        pass  # scikit-learn's own error (complex, empty, 1-D)
    assert messages(caplog)[-1].startswith("StandardScaler.fit: scikit-learn: ")
    assert accel.fitted_on(acc) in (None, "scikit-learn")


def test_unusable_device_runs_scikit_learn(caplog):
    from twinlearn import _backend

    if _backend.cuda_available():
        pytest.skip("a GPU is usable here")
    caplog.set_level(logging.INFO, LOGGER)
    for dev in ("auto", "cuda:0"):
        accel.set_device(dev)
        acc = accel.accelerate(StandardScaler()).fit(data())
        assert accel.fitted_on(acc) == "scikit-learn"
        assert "no usable GPU" in messages(caplog)[-1]
        assert "set_device('cpu')" in messages(caplog)[-1]


class _RecordingCallback:
    """A FitCallback (scikit-learn >= 1.9) recording the tasks it sees."""

    def __init__(self):
        self.events = []

    def setup(self, estimator, context):
        pass

    def teardown(self, estimator, context):
        pass

    def on_fit_task_begin(self, estimator, context, **kwargs):
        self.events.append("begin")

    def on_fit_task_end(self, estimator, context, **kwargs):
        self.events.append("end")


def test_callbacks_run_scikit_learn(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    acc = accel.accelerate(StandardScaler())
    if not hasattr(acc, "set_callbacks"):
        pytest.skip("scikit-learn without callbacks")
    cb = _RecordingCallback()
    acc.set_callbacks(cb)
    acc.fit(data())
    assert messages(caplog)[-1] == "StandardScaler.fit: scikit-learn: callbacks are set"
    assert cb.events and cb.events[0] == "begin"  # scikit-learn called them


def test_twinlearn_error_falls_back_loudly(monkeypatch, caplog):
    def broken(self, *args, **kwargs):
        raise RuntimeError("device lost")

    monkeypatch.setattr(twinlearn.StandardScaler, "fit", broken)
    X = data()
    with caplog.at_level(logging.WARNING, LOGGER):
        acc = accel.accelerate(StandardScaler()).fit(X)
    assert accel.fitted_on(acc) == "scikit-learn"
    warned = [r for r in caplog.records if r.levelno == logging.WARNING and r.name == LOGGER]
    assert warned and "twinlearn raised RuntimeError: device lost" in warned[0].getMessage()
    assert_allclose(acc.mean_, X.mean(axis=0))


def test_input_rejected_by_twinlearn_gets_scikit_learns_error(caplog):
    acc = accel.accelerate(StandardScaler()).fit(data(d=5))
    with pytest.raises(ValueError) as got:
        acc.transform(data(d=4))
    with pytest.raises(ValueError) as want:
        StandardScaler().fit(data(d=5)).transform(data(d=4))
    assert str(got.value) == str(want.value)


def test_methods_after_a_scikit_learn_fit_run_scikit_learn(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    acc = accel.accelerate(StandardScaler())
    with pytest.raises(NotFittedError):
        acc.transform(data())
    assert messages(caplog)[-1] == "StandardScaler.transform: scikit-learn: not fitted"
    acc.set_params(with_mean=False).fit(sp.csr_matrix(data()))
    acc.transform(data())
    assert messages(caplog)[-1] == "StandardScaler.transform: scikit-learn: fitted by scikit-learn"


def test_changed_fitted_attributes_are_respected(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    X = data()
    acc = accel.accelerate(StandardScaler()).fit(X)
    acc.mean_ = acc.mean_ + 1.0
    Z = acc.transform(X)
    assert messages(caplog)[-1] == (
        "StandardScaler.transform: scikit-learn: fitted attributes changed since the twinlearn fit")
    assert_allclose(Z, (X - acc.mean_) / acc.scale_, rtol=1e-12)


def test_changed_parameters_after_fit_are_followed(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    X = data()
    acc = accel.accelerate(StandardScaler()).fit(X)
    acc.set_params(with_mean=False)
    Z = acc.transform(X)
    assert messages(caplog)[-1].startswith("StandardScaler.transform: twinlearn on cpu")
    assert_allclose(Z, StandardScaler.transform(acc, X), rtol=1e-12)
    assert not np.allclose(Z, StandardScaler().fit(X).transform(X))  # separating arm


def test_partial_fit_stays_where_it_started(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    X = data(400)
    accel.set_threshold("StandardScaler", min_rows=100)
    acc = accel.accelerate(StandardScaler()).partial_fit(X[:200])
    acc.partial_fit(X[200:210])  # a small later batch stays on twinlearn
    assert messages(caplog)[-1].startswith("StandardScaler.partial_fit: twinlearn on cpu (n_samples=10")
    ref = StandardScaler().partial_fit(X[:200]).partial_fit(X[200:210])
    assert_allclose(acc.var_, ref.var_, rtol=1e-12)
    # A fit that started on scikit-learn continues there.
    sk = accel.accelerate(StandardScaler()).partial_fit(X[:10])
    sk.partial_fit(X[10:300])
    assert messages(caplog)[-1] == (
        "StandardScaler.partial_fit: scikit-learn: partial_fit continues a scikit-learn fit")
    # A batch twinlearn does not serve: scikit-learn continues from the mirrored state.
    mix = accel.accelerate(StandardScaler(with_mean=False)).partial_fit(X[:200])
    mix.partial_fit(sp.csr_matrix(X[200:]))
    assert accel.fitted_on(mix) == "scikit-learn"
    full = StandardScaler(with_mean=False).fit(X)
    assert_allclose(mix.var_, full.var_, rtol=1e-10)


def test_scikit_learn_fallback_is_one_decision(caplog):
    # scikit-learn's fit calls partial_fit: that inner call is not routed again.
    caplog.set_level(logging.INFO, LOGGER)
    accel.accelerate(StandardScaler(with_mean=False)).fit(sp.csr_matrix(data()))
    assert messages(caplog) == ["StandardScaler.fit: scikit-learn: X is sparse"]


def test_subclasses_of_an_accelerated_class_run_scikit_learn():
    class Mine(accel.accelerate(StandardScaler)):
        pass

    est = Mine().fit(data())
    assert accel.fitted_on(est) == "scikit-learn"


def test_copies_keep_acceleration_and_are_independent():
    X = data(400)
    acc = accel.accelerate(StandardScaler()).partial_fit(X[:200])
    for cp in (copy.copy(acc), copy.deepcopy(acc)):
        assert type(cp) is type(acc) and accel.fitted_on(cp) == "twinlearn:cpu"
        mean0 = acc.mean_.copy()
        cp.partial_fit(X[200:])
        assert accel.fitted_on(cp) == "twinlearn:cpu"
        assert_array_equal(acc.mean_, mean0)
        assert not np.array_equal(cp.mean_, mean0)
        assert_allclose(acc.transform(X), StandardScaler().fit(X[:200]).transform(X), rtol=1e-12, atol=1e-12)


def test_check_estimator_passes_on_the_accelerated_class():
    from sklearn.utils.estimator_checks import check_estimator

    check_estimator(accel.accelerate(StandardScaler()))


def test_generic_routing_with_translation_and_available_if(toy):
    Acc = accel.accelerate(toy.ToyClassifier)
    X = data(60, 3)
    y = (X[:, 0] > 3).astype(int)
    est = Acc(alpha=2.0)
    assert not hasattr(est, "predict_proba")  # available_if kept
    est.fit(X, y)
    assert ("twinlearn", "fit", "cpu") in toy.CALLS
    assert accel.fitted_on(est) == "twinlearn:cpu"
    assert_array_equal(est.predict(X), toy.ToyClassifier(alpha=2.0).fit(X, y).predict(X))
    assert ("twinlearn", "predict", "cpu") in toy.CALLS
    assert est.score(X, y) == toy.ToyClassifier(alpha=2.0).fit(X, y).score(X, y)
    est.set_params(mode="proba")
    assert hasattr(est, "predict_proba")
    assert_allclose(est.predict_proba(X).sum(axis=1), 1.0)
    assert ("twinlearn", "predict_proba", "cpu") in toy.CALLS


def test_generic_joint_check_and_default_only_parameters(toy, caplog):
    caplog.set_level(logging.INFO, LOGGER)
    Acc = accel.accelerate(toy.ToyClassifier)
    X = data(60, 3)
    y = (X[:, 0] > 3).astype(int)
    Acc(alpha=20.0, mode="proba").fit(X, y)
    assert messages(caplog)[-1] == "ToyClassifier.fit: scikit-learn: mode='proba' with alpha > 10 unsupported"
    Acc(alpha=200.0).fit(X, y)
    assert messages(caplog)[-1] == (
        "ToyClassifier.fit: scikit-learn: parameter alpha=200.0 unsupported (supported: alpha < 100)")
    Acc(shift=1.0).fit(X, y)
    assert messages(caplog)[-1] == (
        "ToyClassifier.fit: scikit-learn: parameter shift=1.0 unsupported (supported: `0.0`)")
    with pytest.raises(InvalidParameterError):
        Acc(alpha=-1.0).fit(X, y)


def test_parameter_validation_is_cached_only_for_valid_values(toy):
    Acc = accel.accelerate(toy.ToyClassifier)
    X = data(60, 3)
    y = (X[:, 0] > 3).astype(int)
    est = Acc(alpha=1.0)
    for _ in range(2):
        with pytest.raises(InvalidParameterError):
            est.set_params(mode="nope").fit(X, y)
    est.set_params(mode="plain").fit(X, y)
    # True is not 1: a cached (int 1) decision must not serve a bool.
    Acc(alpha=1).fit(X, y)
    with pytest.raises(InvalidParameterError):
        Acc(alpha=1, mode=True).fit(X, y)


def test_device_setting_is_passed_to_twinlearn(toy):
    Acc = accel.accelerate(toy.ToyClassifier)
    X = data(60, 3)
    y = (X[:, 0] > 3).astype(int)
    Acc().fit(X, y)
    assert toy.CALLS[-1] == ("twinlearn", "fit", "cpu")
    assert _config.get_device() == "cpu"


@pytest.mark.gpu
def test_gpu_runs_twinlearn_on_the_gpu(caplog):
    caplog.set_level(logging.INFO, LOGGER)
    accel.set_device("auto")
    X = data(500)
    acc = accel.accelerate(StandardScaler()).fit(X)
    assert accel.fitted_on(acc) == "twinlearn:cuda:0"
    assert "StandardScaler.fit: twinlearn on cuda:0 (n_samples=500, n_features=5)" in messages(caplog)
    ref = StandardScaler().fit(X)
    assert_allclose(acc.transform(X), ref.transform(X), rtol=1e-12, atol=1e-12)
    # identical mode: the GPU fit equals the CPU fit bit for bit
    accel.set_device("cpu")
    cpu = accel.accelerate(StandardScaler()).fit(X)
    assert_array_equal(acc.mean_, cpu.mean_)
    assert_array_equal(acc.scale_, cpu.scale_)


@pytest.mark.gpu
def test_gpu_device_arrays_run_on_twinlearn_at_any_size(caplog):
    cupy = pytest.importorskip("cupy")
    caplog.set_level(logging.INFO, LOGGER)
    accel.set_device("auto")
    accel.set_threshold("StandardScaler", min_rows=10**9)
    X = data(50)
    acc = accel.accelerate(StandardScaler()).fit(cupy.asarray(X))
    assert accel.fitted_on(acc) == "twinlearn:cuda:0"
    assert isinstance(acc.mean_, np.ndarray)
    Z = acc.transform(cupy.asarray(X))
    assert isinstance(Z, cupy.ndarray)
    assert_allclose(cupy.asnumpy(Z), StandardScaler().fit(X).transform(X), rtol=1e-12, atol=1e-12)


def test_pandas_dataframes_keep_feature_names_and_output_config():
    pd = pytest.importorskip("pandas")
    X = data(50, 3)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    acc = accel.accelerate(StandardScaler()).set_output(transform="pandas")
    out = acc.fit_transform(df)
    assert accel.fitted_on(acc) == "twinlearn:cpu"
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["a", "b", "c"]
    assert list(acc.feature_names_in_) == ["a", "b", "c"]
    ref = StandardScaler().set_output(transform="pandas").fit_transform(df)
    assert_allclose(out.to_numpy(), ref.to_numpy(), rtol=1e-12, atol=1e-12)
    acc.set_output(transform="default")
    assert isinstance(acc.transform(df), np.ndarray)
    df["b"] = pd.array(np.arange(50), dtype="Int64")  # a pandas extension dtype: scikit-learn serves it
    acc.fit(df)
    assert accel.fitted_on(acc) == "scikit-learn"


def test_set_output_default_is_honoured():
    X = data(20, 2)
    acc = accel.accelerate(StandardScaler()).set_output(transform="default")
    assert isinstance(acc.fit_transform(X), np.ndarray)
    assert accel.fitted_on(acc) == "twinlearn:cpu"


# -- DataFrame column names -------------------------------------------------------


@pytest.mark.parametrize("cls", ["KNeighborsClassifier", "KNeighborsRegressor", "PCA"])
def test_dataframe_column_names_are_kept_and_checked(cls, caplog):
    pd = pytest.importorskip("pandas")
    import sklearn.decomposition
    import sklearn.neighbors

    module = sklearn.decomposition if cls == "PCA" else sklearn.neighbors
    est = twinlearn.accelerate(getattr(module, cls)(**({} if cls == "PCA" else {"n_neighbors": 2})))
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.standard_normal((60, 4)), columns=[f"c{i}" for i in range(4)])
    y = rng.integers(0, 2, 60)
    with caplog.at_level(logging.INFO, logger=LOGGER):
        est.fit(X, y)
    assert f"{cls}.fit: twinlearn on cpu" in " ".join(messages(caplog))
    assert_array_equal(est.feature_names_in_, X.columns)
    renamed = X.set_axis([f"z{i}" for i in range(4)], axis=1)
    for method in ("predict", "score_samples", "score") if cls == "PCA" else ("predict", "score"):
        if not hasattr(est, method):
            continue
        args = (renamed,) if cls == "PCA" or method == "predict" else (renamed, y)
        with pytest.raises(ValueError, match="feature names should match"):
            getattr(est, method)(*args)


# -- derived state computed on first read ---------------------------------------------


def test_lazy_derived_state_is_computed_on_read_and_before_pickling():
    import pickle

    from sklearn.ensemble import HistGradientBoostingClassifier

    rng = np.random.default_rng(0)
    X = rng.standard_normal((300, 5))
    y = (X[:, 0] > 0).astype(int)
    params = dict(max_depth=3, max_leaf_nodes=None, min_samples_leaf=1, early_stopping=False, max_iter=5)
    est = twinlearn.accelerate(HistGradientBoostingClassifier(**params)).fit(X, y)
    assert accel.fitted_on(est) == "twinlearn:cpu"
    assert "_predictors" not in est.__dict__ and "_bin_mapper" not in est.__dict__  # a fit does not build them
    plain = pickle.loads(pickle.dumps(est))  # pickling builds them
    assert type(plain) is HistGradientBoostingClassifier
    assert len(plain._predictors) == 5 and plain._bin_mapper.bin_thresholds_[0].size > 0
    first = est.__dict__["_predictors"]
    assert_allclose(HistGradientBoostingClassifier.predict_proba(est, X), est.predict_proba(X), atol=1e-6)
    # A refit forgets the state derived from the previous model.
    est.set_params(max_iter=3).fit(X, y)
    assert "_predictors" not in est.__dict__
    assert len(est._predictors) == 3 and est._predictors is not first
    # A fit that falls back to scikit-learn (feature subsampling) keeps its own state.
    est.set_params(max_features=0.5, max_leaf_nodes=4).fit(X, y)
    assert accel.fitted_on(est) == "scikit-learn" and len(est._predictors) == 3
    assert all(p[0].get_n_leaf_nodes() <= 4 for p in est._predictors)
