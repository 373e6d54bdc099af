"""Categorical features of GradientBoosting: one-hot and ordered target
statistics, their determinism, save/load, bad input, and CPU/GPU identity."""

import json

import numpy as np
import pytest

from twinlearn import GradientBoosting, GradientBoostingRegressor
from twinlearn.ensemble._categorical import TS_STREAM, CategoricalEncoder
from gb_helpers import assert_same_model, bits


def categorical_data(n=3000, seed=0, n_cats=20):
    rng = np.random.default_rng(seed)
    c1 = rng.integers(0, n_cats, n).astype(np.float64)  # many categories: target statistics
    c2 = rng.integers(0, 2, n).astype(np.float64)  # two: one-hot
    x = rng.standard_normal(n)
    y = ((2 * np.sin(c1) + x + 0.5 * c2 + 0.5 * rng.standard_normal(n)) > 0).astype(int)
    X = np.c_[x, c1, c2]
    X[::50, 1] = np.nan  # a category of its own
    return X, y


def uniforms():
    from twinlearn import _backend

    mod = _backend.core()
    ctx = mod.Context("cpu", 1, "identical", 0, 0)
    return lambda seed, stream, n: mod.rng_uniform(ctx, seed, stream, 0, n, "float64")


def reference_statistics(values, t, order, prior):
    """The ordered statistic of each row, by a plain walk over the rows in `order`."""
    sums, counts = {}, {}
    out = np.empty(len(values))
    for r in order:
        key = "nan" if np.isnan(values[r]) else values[r]
        out[r] = (sums.get(key, 0.0) + prior) / (counts.get(key, 0) + 1.0)
        sums[key] = sums.get(key, 0.0) + t[r]
        counts[key] = counts.get(key, 0) + 1
    return out


def test_ordered_statistics_follow_the_shared_generator_and_exclude_the_row_itself():
    X, y = categorical_data(n=500)
    enc = CategoricalEncoder(3, [1], one_hot_max_size=2)
    draw = uniforms()
    t = y.astype(np.float64)[:, None]
    out = enc.fit_transform(X, t, 1234, draw)
    order = np.argsort(np.asarray(draw(1234, TS_STREAM, len(y))), kind="stable")
    ref = reference_statistics(X[:, 1], y.astype(np.float64), order, y.mean())
    np.testing.assert_allclose(out[:, 2], ref, rtol=1e-12, atol=1e-12)
    # Separating: a statistic that includes the row's own target differs.
    with_own = np.empty(len(y))
    sums, counts = {}, {}
    for r in order:
        key = "nan" if np.isnan(X[r, 1]) else X[r, 1]
        sums[key] = sums.get(key, 0.0) + y[r]
        counts[key] = counts.get(key, 0) + 1
        with_own[r] = (sums[key] + y.mean()) / (counts[key] + 1.0)
    assert not np.allclose(out[:, 2], with_own)
    # Another seed visits the rows in another order.
    assert not np.array_equal(enc.fit_transform(X, t, 99, draw)[:, 2], out[:, 2])
    # New rows get the statistic of all training rows; an unseen category the prior.
    new = np.array([[0.0, X[1, 1], 0.0], [0.0, 1e6, 0.0], [0.0, np.nan, 0.0]])
    got = enc.transform(new)[:, 2]
    same = X[:, 1] == X[1, 1]
    assert got[0] == pytest.approx((y[same].sum() + y.mean()) / (same.sum() + 1))
    assert got[1] == pytest.approx(y.mean())
    nan = np.isnan(X[:, 1])  # NaN: a category of its own
    assert got[2] == pytest.approx((y[nan].sum() + y.mean()) / (nan.sum() + 1))


def test_one_hot_up_to_one_hot_max_size():
    X, y = categorical_data(n=400, n_cats=3)
    X[::50, 1] = 1.0  # no NaN: three categories
    enc = CategoricalEncoder(3, [1, 2], one_hot_max_size=3)
    out = enc.fit_transform(X, y.astype(np.float64)[:, None], 0, uniforms())
    assert out.shape == (400, 1 + 3 + 2)  # x, three indicators, two indicators
    np.testing.assert_array_equal(out[:, 1:4].sum(axis=1), 1.0)
    for k, v in enumerate((0.0, 1.0, 2.0)):
        np.testing.assert_array_equal(out[:, 1 + k], (X[:, 1] == v).astype(float))
    assert enc.transform(np.array([[0.0, 7.0, 1.0]]))[0, 1:4].tolist() == [0.0, 0.0, 0.0]  # unseen
    narrow = CategoricalEncoder(3, [1], one_hot_max_size=2)
    assert narrow.fit_transform(X, y.astype(np.float64)[:, None], 0, uniforms()).shape == (400, 3)  # x, x2, ts


def test_categorical_model_learns_and_is_reproducible():
    X, y = categorical_data()
    kw = dict(n_estimators=60, learning_rate=0.2, random_state=0, device="cpu")
    m = GradientBoosting(cat_features=[1, 2], **kw).fit(X[:2000], y[:2000])
    plain = GradientBoosting(**kw).fit(X[:2000], y[:2000])
    acc = (m.predict(X[2000:]).ravel() == y[2000:]).mean()
    assert acc > 0.85 and acc >= (plain.predict(X[2000:]).ravel() == y[2000:]).mean() - 0.01
    assert list(m.encoded_feature_names_) == ["x0", "x1:ts", "x2=0", "x2=1"]
    imp = m.feature_importances_
    assert imp.shape == (3,) and imp.sum() == pytest.approx(1.0) and imp[1] > imp[2]
    again = GradientBoosting(cat_features=[1, 2], **kw).fit(X[:2000], y[:2000])
    assert bits(again.leaf_values_) == bits(m.leaf_values_) and bits(again.borders_) == bits(m.borders_)
    mask = GradientBoosting(cat_features=np.array([False, True, True]), **kw).fit(X[:2000], y[:2000])
    assert bits(mask.leaf_values_) == bits(m.leaf_values_)
    staged = list(m.staged_predict_proba(X[2000:2010]))
    assert bits(staged[-1]) == bits(m.predict_proba(X[2000:2010]))


def test_multiclass_and_regression_statistics():
    X, y = categorical_data(n=1500)
    y3 = np.digitize(np.sin(np.nan_to_num(X[:, 1])) + 0.3 * X[:, 0], [-0.5, 0.5])
    m = GradientBoosting(loss="MultiClass", n_estimators=30, cat_features=[1], device="cpu").fit(X, y3)
    assert list(m.encoded_feature_names_) == ["x0", "x2", "x1:ts[0]", "x1:ts[1]", "x1:ts[2]"]
    assert (m.predict(X).ravel() == y3).mean() > 0.8
    r = GradientBoosting(loss="RMSE", n_estimators=30, cat_features=[1], device="cpu").fit(X, X[:, 0] + y)
    assert list(r.encoded_feature_names_) == ["x0", "x2", "x1:ts"]


def test_save_and_load_keep_the_encoding(tmp_path):
    X, y = categorical_data()
    m = GradientBoosting(n_estimators=40, cat_features=[1, 2], random_state=0, device="cpu").fit(X, y)
    path = tmp_path / "model.json"
    m.save_model(path)
    doc = json.loads(path.read_text())
    assert doc["format_version"] == 2 and doc["n_features"] == 4
    assert [c["feature"] for c in doc["categorical"]["columns"]] == [1, 2]
    loaded = GradientBoosting(device="cpu").load_model(path)
    assert loaded.n_features_in_ == 3 and loaded.cat_features == [1, 2]
    assert bits(loaded.predict_proba(X)) == bits(m.predict_proba(X))
    # A damaged encoding is refused.
    doc["categorical"]["columns"][0]["counts"] = doc["categorical"]["columns"][0]["counts"][:-1]
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match="statistics of categorical feature 1"):
        GradientBoosting(device="cpu").load_model(path)
    plain = GradientBoosting(n_estimators=5, device="cpu").fit(X, y)
    plain.save_model(path)
    assert json.loads(path.read_text())["format_version"] == 1


def test_dataframe_column_names_as_cat_features():
    pd = pytest.importorskip("pandas")
    X, y = categorical_data(n=800)
    df = pd.DataFrame(X, columns=["num", "city", "flag"])
    by_name = GradientBoosting(n_estimators=10, cat_features=["city", "flag"], random_state=0, device="cpu")
    by_index = GradientBoosting(n_estimators=10, cat_features=[1, 2], random_state=0, device="cpu")
    a, b = by_name.fit(df, y), by_index.fit(X, y)
    assert bits(a.leaf_values_) == bits(b.leaf_values_)
    assert list(a.encoded_feature_names_) == ["num", "city:ts", "flag=0", "flag=1"]


@pytest.mark.parametrize(
    "cat_features, message",
    [([3], r"column indices in \[0, 3\)"), ([1, 1], "names a column twice"), (["city"], "not a column name"),
     ([1.5], "column indices"), (np.array([True, False]), "boolean mask needs 3 entries")],
)
def test_bad_cat_features_raise(cat_features, message):
    X, y = categorical_data(n=200)
    with pytest.raises(ValueError, match=message):
        GradientBoosting(n_estimators=2, cat_features=cat_features, device="cpu").fit(X, y)


@pytest.mark.parametrize("cls, param", [(GradientBoosting, "cat_features"),
                                         (GradientBoostingRegressor, "categorical_features")])
def test_pandas_category_of_strings_is_named(cls, param):
    """A pandas category column whose categories are strings: encoded by its
    labels where it is a categorical feature; elsewhere (a numeric feature,
    or a model fitted on numeric codes) the error names the column and its
    numeric codes, at fit and at predict."""
    pd = pytest.importorskip("pandas")
    X, y = categorical_data(n=200)
    df = pd.DataFrame(X, columns=["num", "city", "flag"])
    est = cls(n_estimators=2, device="cpu", **{param: ["flag"]})
    est.fit(df, y)
    named = df.assign(flag=pd.Categorical(np.where(df["flag"] > 0, "yes", "no")))
    message = r"Column 'flag' of X: its categories are strings .*X\['flag'\]\.cat\.codes"
    with pytest.raises(ValueError, match=message):
        cls(n_estimators=2, device="cpu", **{param: ["city"]}).fit(named, y)
    with pytest.raises(ValueError, match=message):
        est.predict(named)
    by_label = cls(n_estimators=2, device="cpu", **{param: ["flag"]}).fit(named, y)
    assert by_label.predict(named).shape == (200,)


def test_infinite_category_raises():
    X, y = categorical_data(n=200)
    X[3, 1] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        GradientBoosting(n_estimators=2, cat_features=[1], device="cpu").fit(X, y)
    with pytest.raises(ValueError, match="categorical feature 1 holds an infinite value"):
        CategoricalEncoder(3, [1], 2).fit_transform(X, y[:, None].astype(float), 0, uniforms())


@pytest.mark.gpu
@pytest.mark.parametrize("loss", ["Logloss", "MultiClass", "RMSE"])
def test_categorical_cpu_and_gpu_give_identical_bits(loss):
    X, y = categorical_data(n=20000)
    if loss == "MultiClass":
        y = y + (X[:, 0] > 0.5)
    elif loss == "RMSE":
        y = y + X[:, 0]
    kw = dict(loss=loss, n_estimators=30, cat_features=[1, 2], random_state=3, numeric_mode="identical")
    cpu = GradientBoosting(device="cpu", **kw).fit(X, y)
    gpu = GradientBoosting(device="cuda:0", **kw).fit(X, y)
    for attr in ("borders_", "split_feature_", "split_bin_", "leaf_values_", "base_score_"):
        assert bits(getattr(cpu, attr)) == bits(getattr(gpu, attr)), attr
    assert bits(cpu.predict(X)) == bits(gpu.predict(X))


def test_feature_importance_by_gain_and_by_split_count():
    X, y = categorical_data(n=1500)
    m = GradientBoosting(n_estimators=20, max_depth=3, cat_features=[1, 2], device="cpu").fit(X, y)
    counts = m.get_feature_importance("split")
    assert counts.dtype == np.int64 and counts.shape == (3,)
    assert counts.sum() == m.tree_depth_.sum()  # every level of every tree splits on one feature
    src = np.array([0, 1, 2, 2])  # x0, x1:ts, x2=0, x2=1
    assert counts.tolist() == np.bincount(src[m.split_feature_], minlength=3).tolist()
    np.testing.assert_array_equal(m.get_feature_importance("gain"), m.feature_importances_)
    with pytest.raises(ValueError, match="importance_type"):
        m.get_feature_importance("shap")


def test_sklearn_shaped_estimators_take_categorical_features():
    """categorical_features of the scikit-learn-shaped estimators is
    GradientBoosting's cat_features (one_hot_max_size=2): the same trees."""
    from twinlearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

    X, y = categorical_data()
    kw = dict(n_estimators=20, random_state=0, device="cpu")
    clf = GradientBoostingClassifier(categorical_features=[1, 2], **kw).fit(X, y)
    same = GradientBoosting(n_estimators=20, learning_rate=0.1, l2_leaf_reg=1.0, border_count=254, cat_features=[1, 2],
                            random_state=0, device="cpu").fit(X, y)
    assert list(clf.encoded_feature_names_) == list(same.encoded_feature_names_) == ["x0", "x1:ts", "x2=0", "x2=1"]
    assert bits(clf.leaf_values_) == bits(same.leaf_values_) and bits(clf.borders_) == bits(same.borders_)
    plain = GradientBoostingClassifier(**kw).fit(X, y)
    assert bits(plain.leaf_values_) != bits(clf.leaf_values_)
    assert clf.score(X, y) > 0.85 and clf.get_params()["categorical_features"] == [1, 2]
    reg = GradientBoostingRegressor(categorical_features=np.array([False, True, False]), **kw).fit(X, X[:, 0] + y)
    assert list(reg.encoded_feature_names_) == ["x0", "x2", "x1:ts"]
    with pytest.raises(ValueError, match=r"categorical_features must hold column indices in \[0, 3\)"):
        GradientBoostingClassifier(categorical_features=[5], **kw).fit(X, y)


# -- labels: pandas category and string columns ---------------------------------------
def _label_frame(n=2000, seed=0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    colors = np.array(["red", "green", "blue", "cyan", "magenta"])
    c = rng.integers(0, 5, n)
    x = rng.standard_normal(n)
    y = ((c >= 2) ^ (x > 0.5)).astype(int)
    df = pd.DataFrame({"x": x, "color": colors[c], "flag": np.where(c % 2 == 0, "yes", "no")})
    return df, y


def test_string_categories_equal_their_sorted_integer_codes():
    """A column of strings is the column of its labels' sorted positions, bit for bit."""
    import pandas as pd

    from twinlearn.ensemble import GradientBoostingClassifier

    df, y = _label_frame()
    codes = df.copy()
    for c in ("color", "flag"):
        codes[c] = pd.factorize(df[c], sort=True)[0].astype(float)
    kw = dict(n_estimators=10, categorical_features=["color", "flag"], random_state=0, device="cpu")
    a = GradientBoostingClassifier(**kw).fit(df, y)
    b = GradientBoostingClassifier(**kw).fit(codes, y)
    assert_same_model(a, b)
    assert bits(a.predict_proba(df)) == bits(b.predict_proba(codes))
    # (Without the label encoding the string columns are refused: scikit-learn's text error.)
    # 'from_dtype': category columns are the categorical ones; their categories' order gives the codes.
    cat = df.astype({"color": "category", "flag": "category"})
    d = GradientBoostingClassifier(**{**kw, "categorical_features": "from_dtype"}).fit(cat, y)
    assert_same_model(a, d)
    assert bits(d.predict_proba(cat)) == bits(a.predict_proba(df))


def test_string_categories_at_prediction_and_in_model_files(tmp_path):
    from twinlearn.ensemble import GradientBoosting, GradientBoostingClassifier

    df, y = _label_frame()
    clf = GradientBoostingClassifier(n_estimators=10, categorical_features=["color"], random_state=0,
                                     device="cpu").fit(df.drop(columns="flag"), y)
    X = df.drop(columns="flag")
    t = X.copy()
    t.loc[0, "color"] = "unseen"
    t.loc[1, "color"] = None
    p = clf.predict_proba(t)
    assert np.isfinite(p).all()
    # An unseen label is a code no training row has; a missing label is NaN
    # (here unseen too: training had none): the numeric model's predictions.
    vocab = {"blue": 0, "cyan": 1, "green": 2, "magenta": 3, "red": 4}
    num = X.assign(color=X["color"].map(vocab).astype(float))
    ref = GradientBoostingClassifier(n_estimators=10, categorical_features=["color"], random_state=0,
                                     device="cpu").fit(num, y)
    num.loc[0, "color"] = 5.0
    num.loc[1, "color"] = np.nan
    assert bits(ref.predict_proba(num)) == bits(p)
    clf.save_model(tmp_path / "m.json")
    loaded = GradientBoostingClassifier(device="cpu").load_model(tmp_path / "m.json")
    assert bits(loaded.predict_proba(t)) == bits(p)
    # GradientBoosting's cat_features takes string columns through the same code.
    g = GradientBoosting(n_estimators=10, cat_features=["color"], random_state=0, device="cpu").fit(X, y)
    assert g.score(X, y) > 0.9


def test_from_dtype_without_label_columns_and_mixed_labels():
    import pandas as pd

    from twinlearn.ensemble import GradientBoostingRegressor

    df, y = _label_frame(n=300)
    num = df[["x"]]
    a = GradientBoostingRegressor(n_estimators=3, categorical_features="from_dtype", device="cpu").fit(num, y)
    b = GradientBoostingRegressor(n_estimators=3, device="cpu").fit(num, y)
    assert_same_model(a, b)
    mixed = df.assign(color=df["color"].astype(object))
    mixed.loc[0, "color"] = 3
    with pytest.raises(ValueError, match="'color' mixes label types"):
        GradientBoostingRegressor(n_estimators=3, categorical_features=["color"], device="cpu").fit(mixed, y)
    # A string column that is not categorical is refused, naming it.
    with pytest.raises(ValueError, match="Column 'flag'"):
        GradientBoostingRegressor(n_estimators=3, categorical_features=["color"], device="cpu").fit(df, y)
    assert pd is not None
