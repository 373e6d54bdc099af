"""bench.gbdt_quality: every contender scored on every fold, and the page lists them."""

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
