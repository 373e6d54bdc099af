"""GradientBoosting(nan_mode='Learned'): every Depthwise or Lossguide split
learns where NaN goes. Checked on data whose NaN rows behave like high or like
low values (a stump must send them right, then left); against a plain walk of
the layout with split_nan_right_; training predictions of the fit against the
model's; save/load, pickle, truncation, parameters, and the CPU against a GPU."""


import numpy as np
import pytest

from twinlearn import GradientBoosting, _backend, _native
from gb_helpers import (assert_round_trips, assert_same_bits_across_thread_counts, assert_same_model, bits,
                        check_booster_estimator, higgs_like, numpy_raw)


def learned(**kw):
    kw.setdefault("grow_policy", "Depthwise")
    kw.setdefault("n_estimators", 10)
    kw.setdefault("learning_rate", 0.3)
    kw.setdefault("device", "cpu")
    return GradientBoosting(nan_mode="Learned", **kw)


def holed(loss, n, d, seed, nan_seed, frac, rmse_nan):
    """HIGGS-shaped X with a fraction of NaN entries, and targets for `loss`
    read off the NaN-filled columns (MultiClass: 3 classes; RMSE: x0, NaN as
    rmse_nan, doubled, plus a step in x2)."""
    X, y = higgs_like(n=n, d=d, seed=seed)
    X[np.random.default_rng(nan_seed).random(X.shape) < frac] = np.nan
    if loss == "MultiClass":
        y = (np.nan_to_num(X[:, 0]) > 0).astype(int) + (np.nan_to_num(X[:, 1]) > 0.5)
    if loss == "RMSE":
        y = np.nan_to_num(X[:, 0], nan=rmse_nan) * 2.0 + (np.nan_to_num(X[:, 2]) > 0)
    return X, y


def nan_like(nan_label, n=20000, seed=0):
    """y = x0 > 0; x0 is NaN on 30% of the rows, whose label is nan_label (5% flipped)."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, 3)).astype(np.float32)
    y = (X[:, 0] > 0).astype(int)
    nan = rng.random(n) < 0.3
    X[nan, 0] = np.nan
    y[nan] = np.where(rng.random(nan.sum()) < 0.05, 1 - nan_label, nan_label)
    return X, y


@pytest.mark.parametrize("grow_policy", ["Depthwise", "Lossguide"])
@pytest.mark.parametrize("nan_label", [1, 0])
def test_a_stump_sends_nan_where_its_rows_belong(grow_policy, nan_label):
    X, y = nan_like(nan_label)
    kw = dict(loss="Logloss", grow_policy=grow_policy, n_estimators=1, max_depth=1, learning_rate=0.5, device="cpu")
    if grow_policy == "Lossguide":
        kw["max_leaves"] = 2
    fits = {mode: GradientBoosting(nan_mode=mode, **kw).fit(X, y) for mode in ("Min", "Max", "Learned")}
    m = fits["Learned"]
    assert m.split_nan_right_.dtype == np.uint8 and m.split_nan_right_.shape == m.split_feature_.shape
    assert m.split_feature_[0] == 0 and m.split_nan_right_[0] == nan_label
    assert fits["Min"].split_nan_right_.size == 0 and fits["Max"].split_nan_right_.size == 0
    acc = {mode: (f.predict(X) == y).mean() for mode, f in fits.items()}
    fixed_right, fixed_wrong = ("Max", "Min") if nan_label else ("Min", "Max")
    assert acc["Learned"] >= acc[fixed_right] - 1e-12
    assert acc["Learned"] > acc[fixed_wrong] + 0.2
    nan_rows = np.isnan(X[:, 0])
    assert (m.predict(X[nan_rows]) == nan_label).mean() > 0.9


@pytest.mark.parametrize("grow_policy,loss", [("Depthwise", "Logloss"), ("Lossguide", "MultiClass"),
                                              ("Depthwise", "RMSE")])
def test_prediction_is_a_walk_of_the_layout(grow_policy, loss):
    X, y = holed(loss, n=4000, d=6, seed=11, nan_seed=1, frac=0.15, rmse_nan=3.0)
    kw = dict(max_leaves=9) if grow_policy == "Lossguide" else {}
    m = learned(loss=loss, grow_policy=grow_policy, max_depth=5, **kw).fit(X, y)
    assert m.split_nan_right_.any() and not m.split_nan_right_.all()
    # Only splits of a feature with a NaN bin, above its border 0, send NaN right.
    right = m.split_nan_right_.astype(bool)
    assert (m.split_feature_[right] >= 0).all() and (m.split_bin_[right] >= 1).all()
    assert np.isneginf(m.borders_[m.border_offsets_[m.split_feature_[right]]]).all()
    assert bits(m.predict_raw(X).reshape(len(X), -1)) == bits(numpy_raw(m, X))


def test_training_predictions_of_the_fit_are_the_models():
    # The fit sends rows by bins and split codes; the eval set (the training
    # rows again) by the same; predict by values and split_nan_right_.
    X, y = higgs_like(n=3000, d=6, seed=12)
    X[np.random.default_rng(2).random(X.shape) < 0.2] = np.nan
    yd = np.where(np.isnan(X[:, 1]), 2.0, np.nan_to_num(X[:, 0])).astype(np.float64)
    est = learned(loss="RMSE", n_estimators=8, max_depth=5)
    params = est._core_params()
    params.update(loss="RMSE", loss_param=0.0, n_classes=2, early_stopping_rounds=0, eval_metric="Loss",
                  boost_from_average=True)
    core = _backend.core()
    ctx = core.Context("cpu", 1, "identical")
    fit = core.gbdt_fit(ctx, X, yd, None, _native.params(core.GbdtParams, **params), X, yd, None, True)
    assert np.asarray(fit.split_nan_right).any()
    assert bits(np.asarray(fit.train_loss)) == bits(np.asarray(fit.eval_loss))


def test_nan_in_a_feature_without_nan_at_fit_goes_left():
    X, y = nan_like(1, n=5000)
    Xc = np.nan_to_num(X, nan=5.0)
    m = learned(loss="Logloss", max_depth=3).fit(Xc, y)
    assert not m.split_nan_right_.any()
    Xn = Xc.copy()
    Xn[:, 0] = np.nan
    np.testing.assert_array_equal(m.predict_raw(Xn), m.predict_raw(np.where(np.isnan(Xn), -1e30, Xn)))
    assert bits(m.predict_raw(Xn)) == bits(numpy_raw(m, Xn).ravel())


def test_save_load_pickle_and_truncation(tmp_path):
    X, y = nan_like(1, n=6000, seed=3)
    Xe, ye = nan_like(1, n=2000, seed=4)
    m = learned(grow_policy="Lossguide", max_depth=4, max_leaves=6, n_estimators=40, learning_rate=0.5).fit(
        X, y, eval_set=(Xe, ye), early_stopping_rounds=3)
    assert m.n_estimators_ < 40, "the fixture must truncate the model"
    assert m.split_nan_right_.shape == m.split_feature_.shape and m.split_nan_right_.any()
    assert bits(m.predict_raw(X).reshape(len(X), -1)) == bits(numpy_raw(m, X))
    path = tmp_path / "learned.json"
    assert assert_round_trips(m, X, path).nan_mode == "Learned"
    # A file whose trees lack split_nan_right is refused, not read as NaN-left.
    import json

    doc = json.loads(path.read_text())
    del doc["trees"][0]["split_nan_right"]
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="split_nan_right"):
        GradientBoosting(device="cpu").load_model(path)


def test_parameters():
    X, y = nan_like(1, n=500)
    with pytest.raises(ValueError, match="nan_mode='Learned' needs grow_policy 'Depthwise' or 'Lossguide'"):
        GradientBoosting(nan_mode="Learned", n_estimators=2, device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="nan_mode"):
        GradientBoosting(nan_mode="learned", grow_policy="Depthwise", n_estimators=2, device="cpu").fit(X, y)


def test_fits_are_the_same_bits_across_thread_counts():
    X, y = higgs_like(n=6000, d=8, seed=13)
    X[np.random.default_rng(3).random(X.shape) < 0.1] = np.nan
    assert_same_bits_across_thread_counts(lambda: learned(max_depth=6), X, y)


def test_check_estimator():
    est = learned(n_estimators=10, max_depth=3)
    check_booster_estimator(est)


@pytest.mark.gpu
@pytest.mark.parametrize("mode", ["identical", "fast"])
@pytest.mark.parametrize("grow_policy,loss", [("Depthwise", "Logloss"), ("Lossguide", "MultiClass"),
                                              ("Depthwise", "RMSE")])
def test_cpu_and_gpu_give_identical_bits(mode, grow_policy, loss):
    X, y = holed(loss, n=20000, d=8, seed=14, nan_seed=4, frac=0.1, rmse_nan=2.0)
    kw = dict(loss=loss, grow_policy=grow_policy, n_estimators=12, max_depth=6, numeric_mode=mode)
    if grow_policy == "Lossguide":
        kw["max_leaves"] = 13
    Xe, ye = X[:3000], y[:3000]
    cpu = learned(**kw).fit(X, y, eval_set=(Xe, ye))
    gpu = learned(device="cuda:0", **kw).fit(X, y, eval_set=(Xe, ye))
    assert gpu.numeric_mode_used() == "identical" and cpu.split_nan_right_.any()
    assert_same_model(cpu, gpu)
    assert bits(np.asarray(cpu.evals_result_["validation"][loss])) == bits(
        np.asarray(gpu.evals_result_["validation"][loss]))
    assert bits(gpu.predict_raw(X)) == bits(cpu.predict_raw(X))
