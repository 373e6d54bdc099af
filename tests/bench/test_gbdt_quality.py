"""bench.gbdt_quality: every contender scored on every fold, and the page lists them."""

import re

import numpy as np

from bench import gbdt_quality


def test_iris_report():
    result = gbdt_quality.run(higgs_rows=1000, only=["iris"], log=lambda *_: None)
    (entry,) = result["datasets"]
    assert entry["dataset"] == "iris" and entry["folds"] == 5
    labels = [c["label"] for c in entry["contenders"]]
    assert labels[-1] == "scikit-learn HistGradientBoosting" and len(labels) == 4
    for c in entry["contenders"]:
        assert len(c["folds"]) == 5
        assert 0.8 < c["mean"]["accuracy"] <= 1.0 and 0.8 < c["mean"]["auc"] <= 1.0
        assert np.isclose(c["mean"]["accuracy"], np.mean([f["accuracy"] for f in c["folds"]]))
    page = gbdt_quality.render(result)
    assert page.count("| iris |") == 2 and page.count("**") >= 2


def test_repeated_cross_validation():
    # Two shuffles: twice the folds, the mean over all of them, a standard
    # error beside it on the page; the first repetition's folds are the
    # single run's.
    one = gbdt_quality.run(higgs_rows=1000, only=["iris"], log=lambda *_: None)
    two = gbdt_quality.run(higgs_rows=1000, only=["iris"], log=lambda *_: None, repeats=2)
    (e1,), (e2,) = one["datasets"], two["datasets"]
    assert e2["repeats"] == 2
    for c1, c2 in zip(e1["contenders"], e2["contenders"]):
        assert len(c2["folds"]) == 10 and c2["folds"][:5] == c1["folds"]
        accs = [f["accuracy"] for f in c2["folds"]]
        assert np.isclose(c2["mean"]["accuracy"], np.mean(accs))
        assert np.isclose(c2["se"]["accuracy"], np.std(accs, ddof=1) / np.sqrt(10))
    page = gbdt_quality.render(two)
    assert "(5-fold x 2)" in page and len(re.findall(r"\d\.\d{4}\*{0,2} ± \d\.\d{4}", page)) == 8
