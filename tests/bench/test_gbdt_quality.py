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
    # 8 means with their standard errors, and 6 paired differences beside them
    assert "(5-fold x 2)" in page and len(re.findall(r"\| (?:\*\*)?\d\.\d{4}(?:\*\*)? ± \d\.\d{4}", page)) == 8
    assert len(re.findall(r"\([+-]\d\.\d{4} ± \d\.\d{4}\)", page)) == 6


def test_paired_differences_are_per_fold():
    # The difference from scikit-learn is taken fold by fold: its mean is the
    # difference of the means, its standard error that of the per-fold
    # differences (not of either score).
    result = gbdt_quality.run(higgs_rows=1000, only=["iris"], log=lambda *_: None, repeats=2)
    (entry,) = result["datasets"]
    ref = entry["contenders"][-1]
    assert "vs_sklearn" not in ref
    for c in entry["contenders"][:-1]:
        d = np.array([f["auc"] - r["auc"] for f, r in zip(c["folds"], ref["folds"])])
        got = c["vs_sklearn"]["auc"]
        assert np.isclose(got["mean"], c["mean"]["auc"] - ref["mean"]["auc"])
        assert np.isclose(got["se"], d.std(ddof=1) / np.sqrt(len(d)))


def test_large_task_over_draws():
    from bench import gbdt_quality_large

    result = gbdt_quality_large.run(rows=3000, draws=2, device="cpu", log=lambda *_: None)
    labels = [c["label"] for c in result["contenders"]]
    assert labels[:3] == ["twinlearn oblivious", "twinlearn Depthwise", gbdt_quality_large.HGB]
    hgb = result["contenders"][2]
    for c in result["contenders"]:
        assert len(c["draws"]) == 2
        acc = np.array([d["accuracy"] for d in c["draws"]])
        assert 0.6 < acc.min() and np.isclose(c["accuracy"]["mean"], acc.mean())
        diff = acc - np.array([d["accuracy"] for d in hgb["draws"]])
        assert np.isclose(c["accuracy"]["diff_vs_hgb"], diff.mean())
        assert np.isclose(c["accuracy"]["diff_se"], diff.std(ddof=1) / np.sqrt(2))
    # the two draws are different data
    assert result["contenders"][0]["draws"][0]["accuracy"] != result["contenders"][0]["draws"][1]["accuracy"]
    page = gbdt_quality_large.render(result)
    assert page.count("| twinlearn") == 2 and "3,000 x 28" in page
