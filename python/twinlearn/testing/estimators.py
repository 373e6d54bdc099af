"""Every public estimator of twinlearn, with how to build it small and fast.

:data:`ESTIMATORS` holds one :class:`EstimatorSpec` per configuration the
common tests (tests/test_common.py) run: the class, parameters that keep a
fit on a few dozen rows quick, the kind of data it fits (``'regression'``,
``'classification'`` or ``'unsupervised'``), the scikit-learn checks it is
excused from and the common tests it is known to fail, each with its reason
beside it. :func:`public_estimators` lists what twinlearn exports, so a test
can insist that every one of them is registered.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from dataclasses import dataclass, field

import numpy as np

from . import fixtures

TASKS = ("regression", "classification", "unsupervised")


def packages() -> list[str]:
    """twinlearn and every public subpackage: those whose ``__all__`` may
    name public estimators. Found on disk, so a new family is covered without
    being listed anywhere (and one missing from twinlearn's top level is
    still checked)."""
    import twinlearn

    subs = sorted(m.name for m in pkgutil.iter_modules(twinlearn.__path__) if m.ispkg and not m.name.startswith("_"))
    return ["twinlearn"] + [f"twinlearn.{name}" for name in subs]


@dataclass(frozen=True)
class EstimatorSpec:
    """How the common tests build and feed one estimator configuration."""

    name: str
    cls: type
    params: dict
    task: str
    #: scikit-learn check name → why the estimator is excused from it.
    waivers: dict = field(default_factory=dict)
    #: common test name → the known bug it shows (the test runs as a strict xfail).
    known_bugs: dict = field(default_factory=dict)
    #: classes in the classification data (a binary loss takes 2).
    n_classes: int = 3

    def __post_init__(self):
        if self.task not in TASKS:
            raise ValueError(f"task must be one of {TASKS}, got {self.task!r}")

    def make(self, **kw):
        """A new estimator of this configuration (`kw` overrides its parameters)."""
        return self.cls(**{**self.params, **kw})

    def factory(self, **kw):
        """A callable returning :meth:`make`'s estimator, for the checks of twinlearn.testing."""
        return lambda: self.make(**kw)

    def data(self, n=48, d=4, *, dtype=np.float64, seed=0):
        """(X, y) of this estimator's task; y is None for unsupervised estimators."""
        if self.task == "regression":
            return fixtures.regression(n, d, dtype=dtype, seed=seed)
        if self.task == "classification":
            return fixtures.classification(n, d, n_classes=self.n_classes, dtype=dtype, seed=seed)
        return fixtures.dense(n, d, dtype=dtype, seed=seed), None

    def fit(self, X, y=None, **kw):
        """:meth:`make`'s estimator fitted on X (and y)."""
        est = self.make(**kw)
        return est.fit(X) if y is None else est.fit(X, y)

    def __repr__(self):
        return f"EstimatorSpec({self.name})"


_SAMPLE_WEIGHT_IS_NOT_REPETITION = {
    # Waived for scikit-learn's own MiniBatchKMeans too: batches are drawn by
    # weight, which is not the same as repeating samples.
    "check_sample_weight_equivalence_on_dense_data": "sample_weight is not equivalent to removing/repeating samples.",
}
_NO_N_ITER = {
    # As scikit-learn's own Ridge and RidgeClassifier: a direct solve has no iterations.
    "check_non_transformer_estimators_n_iter": "a closed-form solve has no n_iter_",
}


def _registry():
    import twinlearn as tl

    gb = dict(n_estimators=10, learning_rate=0.3, max_depth=3, random_state=0)
    forest = dict(n_estimators=5, random_state=0)
    specs = [
        EstimatorSpec("StandardScaler", tl.StandardScaler, {}, "unsupervised"),
        EstimatorSpec("MinMaxScaler", tl.MinMaxScaler, {}, "unsupervised"),
        EstimatorSpec("MaxAbsScaler", tl.MaxAbsScaler, {}, "unsupervised"),
        EstimatorSpec("RobustScaler", tl.RobustScaler, {}, "unsupervised"),
        EstimatorSpec("Normalizer", tl.Normalizer, {}, "unsupervised"),
        EstimatorSpec("PCA", tl.PCA, {}, "unsupervised"),
        EstimatorSpec("IncrementalPCA", tl.IncrementalPCA, {}, "unsupervised"),
        EstimatorSpec("TruncatedSVD", tl.TruncatedSVD, {"random_state": 0}, "unsupervised"),
        EstimatorSpec("KMeans", tl.KMeans, dict(n_clusters=2, n_init=2, max_iter=5, random_state=0),
                      "unsupervised"),
        EstimatorSpec("MiniBatchKMeans", tl.MiniBatchKMeans,
                      dict(n_clusters=2, n_init=2, max_iter=5, batch_size=10, random_state=0),
                      "unsupervised", waivers=_SAMPLE_WEIGHT_IS_NOT_REPETITION),
        EstimatorSpec("DBSCAN", tl.DBSCAN, dict(eps=2.0, min_samples=4), "unsupervised"),
        EstimatorSpec("AgglomerativeClustering", tl.AgglomerativeClustering, dict(n_clusters=3), "unsupervised"),
        EstimatorSpec("AgglomerativeClustering-single", tl.AgglomerativeClustering,
                      dict(n_clusters=3, linkage="single"), "unsupervised"),
        EstimatorSpec("HDBSCAN", tl.HDBSCAN, dict(min_cluster_size=3), "unsupervised"),
        EstimatorSpec("SpectralClustering", tl.SpectralClustering, dict(n_clusters=2, n_init=2, random_state=0),
                      "unsupervised"),
        EstimatorSpec("NearestNeighbors", tl.NearestNeighbors, {}, "unsupervised"),
        EstimatorSpec("KNeighborsClassifier", tl.KNeighborsClassifier, {"n_neighbors": 2}, "classification"),
        EstimatorSpec("KNeighborsRegressor", tl.KNeighborsRegressor, {"n_neighbors": 2}, "regression"),
        EstimatorSpec("KernelDensity", tl.KernelDensity, {}, "unsupervised"),
        EstimatorSpec("LinearRegression", tl.LinearRegression, {}, "regression"),
        EstimatorSpec("Ridge", tl.Ridge, {}, "regression", waivers=_NO_N_ITER),
        EstimatorSpec("RidgeClassifier", tl.RidgeClassifier, {}, "classification", waivers=_NO_N_ITER),
        EstimatorSpec("Lasso", tl.Lasso, {}, "regression"),
        EstimatorSpec("ElasticNet", tl.ElasticNet, {}, "regression"),
        EstimatorSpec("LogisticRegression", tl.LogisticRegression, {}, "classification"),
        EstimatorSpec("GaussianNB", tl.GaussianNB, {}, "classification"),
        # The SVM solver has a CPU backend only: device="cuda" is refused.
        # scikit-learn waives the sample-weight check for its own SVC and SVR: a
        # weight rescales C, which is not the same as repeating the sample.
        EstimatorSpec("SVC", tl.SVC, {}, "classification", waivers=_SAMPLE_WEIGHT_IS_NOT_REPETITION, known_bugs={
            "test_identical_across_devices": "no CUDA backend yet (device='cuda' is refused)",
            "test_device_array_in_same_type_out": "no CUDA backend yet (device='cuda' is refused)",
            "test_score_takes_device_arrays": "no CUDA backend yet (device='cuda' is refused)"}),
        EstimatorSpec("SVR", tl.SVR, {}, "regression", waivers=_SAMPLE_WEIGHT_IS_NOT_REPETITION, known_bugs={
            "test_identical_across_devices": "no CUDA backend yet (device='cuda' is refused)",
            "test_device_array_in_same_type_out": "no CUDA backend yet (device='cuda' is refused)",
            "test_score_takes_device_arrays": "no CUDA backend yet (device='cuda' is refused)"}),
        EstimatorSpec("GradientBoosting", tl.GradientBoosting, dict(loss="RMSE", **gb), "regression"),
        EstimatorSpec("GradientBoosting-Logloss", tl.GradientBoosting, dict(loss="Logloss", **gb),
                      "classification", n_classes=2),
        EstimatorSpec("GradientBoostingClassifier", tl.GradientBoostingClassifier, gb, "classification"),
        EstimatorSpec("GradientBoostingRegressor", tl.GradientBoostingRegressor, gb, "regression"),
        # alpha=1e-2: the hostile fixture repeats rows, which makes K singular at scikit-learn's 1e-10.
        EstimatorSpec("GaussianProcessRegressor", tl.GaussianProcessRegressor, {"alpha": 1e-2}, "regression"),
        # Random forests and extra trees (as scikit-learn's own forests: with
        # bootstrap, a weight of 2 is not the same draw as a repeated row;
        # extra trees, without bootstrap, pass that check).
        EstimatorSpec("RandomForestClassifier", tl.RandomForestClassifier, forest, "classification",
                      waivers=_SAMPLE_WEIGHT_IS_NOT_REPETITION),
        EstimatorSpec("RandomForestRegressor", tl.RandomForestRegressor, forest, "regression",
                      waivers=_SAMPLE_WEIGHT_IS_NOT_REPETITION),
        EstimatorSpec("ExtraTreesClassifier", tl.ExtraTreesClassifier, forest, "classification"),
        EstimatorSpec("ExtraTreesRegressor", tl.ExtraTreesRegressor, forest, "regression"),
        # Isolation forest (as scikit-learn's own: a weight of 2 draws a row
        # with twice the probability, which is not the same subsample as a
        # repeated row).
        EstimatorSpec("IsolationForest", tl.IsolationForest, dict(n_estimators=10, random_state=0), "unsupervised",
                      waivers=_SAMPLE_WEIGHT_IS_NOT_REPETITION),
        # UMAP.transform draws a batch's negative samples by the edge's position
        # in that batch's graph (umap-learn draws them from one stream per
        # call): a row's embedding depends on the rows transformed with it.
        EstimatorSpec("UMAP", tl.UMAP, dict(n_neighbors=5, n_epochs=30, random_state=0), "unsupervised",
                      waivers={c: "transform keys a batch's negative samples by edge position in the batch"
                               for c in ("check_methods_sample_order_invariance",
                                         "check_methods_subset_invariance")}),
        EstimatorSpec("ARIMA", tl.ARIMA, dict(order=(1, 0, 0), errors="nan"), "unsupervised"),
    ]
    return specs


ESTIMATORS: list = _registry()
"""One :class:`EstimatorSpec` per configuration the common tests run."""


def by_name(name: str) -> EstimatorSpec:
    """The registered configuration called `name`."""
    for spec in ESTIMATORS:
        if spec.name == name:
            return spec
    raise KeyError(name)


def public_estimators() -> dict:
    """``{name: class}`` of every estimator class that a twinlearn package
    exports in its ``__all__``."""
    from sklearn.base import BaseEstimator

    out = {}
    for pkg in packages():
        mod = importlib.import_module(pkg)
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name, None)
            if inspect.isclass(obj) and issubclass(obj, BaseEstimator):
                out[name] = obj
    return out
