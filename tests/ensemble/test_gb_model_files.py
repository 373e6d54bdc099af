"""The JSON model file (docs/GBDT_MODEL_FORMAT.md), files of earlier versions,
and pickles that name the estimators' former module."""

import pickle
import sys

import numpy as np
import pytest

from twinlearn import GradientBoosting, GradientBoostingClassifier, GradientBoostingRegressor
from gb_helpers import assert_same_model, bits, higgs_like


# ---------------------------------------------------------------------------
# The JSON model file (docs/GBDT_MODEL_FORMAT.md)
# ---------------------------------------------------------------------------
REGRESSION_KINDS = ("RMSE", "regressor", "Tweedie", "MAE", "Quantile", "regressor-quantile")


@pytest.mark.parametrize("kind", ["Logloss", "MultiClass", "RMSE", "classifier", "regressor", "Tweedie", "MAE",
                                  "Quantile", "regressor-quantile"])
def test_save_and_load_round_trip(tmp_path, device, kind):
    import json

    X, y = higgs_like(n=2000, d=6, seed=12)
    if kind == "MultiClass":
        y = y + (np.nan_to_num(X[:, 0]) > 1)
    if kind in REGRESSION_KINDS:
        y = np.abs(np.nan_to_num(X[:, 1])) + y
    est = {
        "Logloss": GradientBoosting(n_estimators=8, nan_mode="Max"),
        "MultiClass": GradientBoosting(loss="MultiClass", n_estimators=8),
        "RMSE": GradientBoosting(loss="RMSE", n_estimators=8),
        "classifier": GradientBoostingClassifier(n_estimators=8),
        "regressor": GradientBoostingRegressor(n_estimators=8),
        "Tweedie": GradientBoosting(loss="Tweedie:variance_power=1.2", n_estimators=8),
        "MAE": GradientBoosting(loss="MAE", n_estimators=8, learning_rate=0.5),
        "Quantile": GradientBoosting(loss="Quantile:alpha=0.75", n_estimators=8, learning_rate=0.5,
                                     eval_metric="MAE", min_child_weight=5.0, min_split_gain=1.0),
        "regressor-quantile": GradientBoostingRegressor(loss="quantile", alpha=0.25, n_estimators=8),
    }[kind].set_params(device=device)
    if kind == "classifier":
        y = np.array(["no", "yes"])[y]
    est.fit(X, y)
    path = tmp_path / "model.json"
    est.save_model(path)
    doc = json.loads(path.read_text())
    assert doc["format"] == "twinlearn-gbdt" and len(doc["trees"]) == est.n_estimators_
    loaded = type(est)(device="cpu").load_model(path)
    assert_same_model(est, loaded)
    assert loaded.get_params()["n_estimators"] == 8
    assert bits(loaded.predict(X)) == bits(est.predict(X))
    drop = ("device", "numeric_mode")
    assert ({k: v for k, v in loaded.get_params().items() if k not in drop}
            == {k: v for k, v in est.get_params().items() if k not in drop})
    if kind in ("MAE", "Quantile", "regressor-quantile"):
        assert doc["loss"] == ("MAE" if kind == "MAE" else "Quantile")
    if kind not in REGRESSION_KINDS:
        assert np.array_equal(loaded.classes_, est.classes_) and loaded.classes_.dtype == est.classes_.dtype
        assert bits(loaded.predict_proba(X)) == bits(est.predict_proba(X))


def test_loaded_model_predicts_in_a_cpu_only_process(tmp_path):
    import subprocess
    import sys

    X, y = higgs_like(n=1500, d=5, seed=13)
    est = GradientBoosting(n_estimators=6, device="cpu").fit(X, y)
    np.save(tmp_path / "X.npy", X)
    est.save_model(tmp_path / "m.json")
    code = (
        "import numpy as np, twinlearn; from twinlearn import _backend; "
        "_backend._cuda_probed = True; _backend._cuda_module = None; _backend._cuda_reason = 'hidden'; "
        f"m = twinlearn.GradientBoosting().load_model(r'{tmp_path / 'm.json'}'); "
        f"np.save(r'{tmp_path / 'p.npy'}', m.predict_proba(np.load(r'{tmp_path / 'X.npy'}')))"
    )
    import os

    env = dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(os.path.dirname(__file__), "..", "..", "python")]
                                                        + sys.path))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode == 0, r.stderr
    assert bits(np.load(tmp_path / "p.npy")) == bits(est.predict_proba(X))


def test_bad_model_files_are_refused(tmp_path):
    import json

    X, y = higgs_like(n=500, d=4)
    est = GradientBoosting(n_estimators=3, device="cpu").fit(X, y)
    path = tmp_path / "m.json"
    est.save_model(path)
    doc = json.loads(path.read_text())
    for mutate, match in [
        (lambda d: d.update(format="xgboost"), "format"),
        (lambda d: d.update(format_version=99), "format_version"),
        (lambda d: d["trees"][0]["split_features"].__setitem__(0, 7), "feature"),
        (lambda d: d["trees"][1]["leaf_values"].pop(), "leaf"),
        (lambda d: d["features"][0]["borders"].reverse(), "increasing"),
    ]:
        bad = json.loads(json.dumps(doc))
        mutate(bad)
        path.write_text(json.dumps(bad))
        with pytest.raises(ValueError, match=match):
            GradientBoosting(device="cpu").load_model(path)
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="GradientBoostingClassifier"):
        GradientBoostingClassifier(device="cpu").load_model(path)


def test_files_without_the_new_parameters_still_load(tmp_path):
    import json

    X, y = higgs_like(n=1000, d=4, seed=61)
    est = GradientBoosting(n_estimators=5, device="cpu").fit(X, y)
    est.save_model(tmp_path / "m.json")
    doc = json.loads((tmp_path / "m.json").read_text())
    for key in ("eval_metric", "verbose", "min_child_weight", "min_split_gain"):
        del doc["params"][key]  # as written before these parameters existed
    (tmp_path / "old.json").write_text(json.dumps(doc))
    loaded = GradientBoosting(verbose=3, device="cpu").load_model(tmp_path / "old.json")
    assert bits(loaded.predict_proba(X)) == bits(est.predict_proba(X))
    assert loaded.verbose == 3 and loaded.min_split_gain is None
    reg = GradientBoostingRegressor(n_estimators=5, device="cpu").fit(X, y.astype(float))
    reg.save_model(tmp_path / "r.json")
    doc = json.loads((tmp_path / "r.json").read_text())
    del doc["params"]["alpha"]
    (tmp_path / "r_old.json").write_text(json.dumps(doc))
    loaded = GradientBoostingRegressor(device="cpu").load_model(tmp_path / "r_old.json")
    assert loaded.alpha == 0.9 and bits(loaded.predict(X)) == bits(reg.predict(X))


@pytest.mark.parametrize("cls,module", [(GradientBoosting, "_catboost"), (GradientBoostingClassifier, "_sklearn"),
                                        (GradientBoostingRegressor, "_sklearn")])
def test_pickles_naming_the_former_module_load(cls, module):
    """Pickles of earlier versions name twinlearn.ensemble._gb: the same
    pickle with the module rewritten to that name loads as the same class
    and predicts the same bits."""
    X, y = higgs_like(n=1000, d=4, seed=3)
    est = cls(n_estimators=5, device="cpu").fit(X, y.astype(float) if cls is GradientBoostingRegressor else y)
    data = pickle.dumps(est, protocol=0)  # text protocol: the class's module is a line of its own
    new = f"twinlearn.ensemble.{module}\n".encode()
    assert data.count(new) == 1
    old = data.replace(new, b"twinlearn.ensemble._gb\n")
    assert b"twinlearn.ensemble._gb\n" in old and new not in old
    loaded = pickle.loads(old)
    assert type(loaded) is cls
    assert_same_model(loaded, est)
    assert bits(loaded.predict(X)) == bits(est.predict(X))


def test_file_objects_and_bytes_round_trip(tmp_path):
    import io

    X, y = higgs_like(n=600, d=4, seed=62)
    est = GradientBoosting(n_estimators=4, device="cpu").fit(X, y)
    text, binary = io.StringIO(), io.BytesIO()
    est.save_model(text)
    est.save_model(binary)
    est.save_model(tmp_path / "m.json")
    on_disk = (tmp_path / "m.json").read_bytes()
    assert text.getvalue().encode() == binary.getvalue() == on_disk
    est.save_model(tmp_path / "no_extension")
    assert (tmp_path / "no_extension").read_bytes() == on_disk
    with open(tmp_path / "m.json", "rb") as fb, open(tmp_path / "m.json", encoding="utf-8") as ft:
        sources = [on_disk, bytearray(on_disk), memoryview(on_disk), io.BytesIO(on_disk),
                   io.StringIO(on_disk.decode()), fb, ft, str(tmp_path / "m.json"), tmp_path / "no_extension"]
        for src in sources:
            back = GradientBoosting(device="cpu").load_model(src)
            assert bits(back.predict_proba(X)) == bits(est.predict_proba(X)), type(src)


def test_other_extensions_and_formats_are_refused(tmp_path):
    X, y = higgs_like(n=600, d=4, seed=63)
    est = GradientBoosting(n_estimators=2, device="cpu").fit(X, y)
    for name in ("m.cbm", "m.ubj", "m.txt", "m.JSONL"):
        with pytest.raises(ValueError, match="extension"):
            est.save_model(tmp_path / name)
        assert not (tmp_path / name).exists()
    est.save_model(tmp_path / "m.JSON")  # the extension's case does not matter
    (tmp_path / "m.cbm").write_bytes((tmp_path / "m.JSON").read_bytes())
    with pytest.raises(ValueError, match="extension '.cbm'"):
        GradientBoosting(device="cpu").load_model(tmp_path / "m.cbm")
    for data, match in [(b"CBM1\x00\xff\xfe binary", "not UTF-8"), (b"{not json", "not JSON"),
                        (b"[1, 2]", "format")]:
        with pytest.raises(ValueError, match=match):
            GradientBoosting(device="cpu").load_model(data)
    with pytest.raises(TypeError, match="fname"):
        GradientBoosting(device="cpu").load_model(3)
    with pytest.raises(TypeError, match="fname"):
        est.save_model(None)
