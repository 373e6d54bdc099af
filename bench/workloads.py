"""The registered workloads.

Sizes: 'cuda' follows the performance targets (one H200, float32, data on the
GPU); 'cpu' is small enough for the quick suite to finish in a few minutes on
two cores; 'smoke' is for the harness's tests.

To add a workload: ``register(Workload(...))`` below, naming its twinlearn class
(reported "not implemented" until it exists), data generator, sizes, timed
steps, metric and peers.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from . import datasets, metrics, peers
from .registry import FIT, FIT_TRANSFORM, FIT_XY, Quality, Scale, Step, Workload, accelerated, register

NONLINEAR = {"nonlinear": True}
#: Workloads beyond the issue's speed targets: in the full suite (and the
#: harness's smoke tests), so that the quick suite stays within 5 minutes on
#: the H200; their accelerated twins follow them.
NOT_QUICK = frozenset({"smoke", "full"})

# -- preprocessing -------------------------------------------------------------

STANDARD_SCALER = register(Workload(
    name="standard_scaler",
    title="StandardScaler fit_transform {rows} x {cols} {dtype}",
    data=datasets.gaussian,
    scales={"smoke": Scale(2_000, 8), "cpu": Scale(200_000, 64), "cuda": Scale(2_000_000, 256)},
    estimator="preprocessing.StandardScaler",
    sklearn="sklearn.preprocessing.StandardScaler",
    steps=(FIT_TRANSFORM,),
    quality=metrics.STANDARDIZED,
    peers=(
        peers.torch_peer(lambda a: peers.TorchStandardScaler()),
        peers.cuml_peer("cuml.preprocessing.StandardScaler"),
    ),
    mem_factor=3,
))

MIN_MAX_SCALER = register(Workload(
    name="min_max_scaler",
    title="MinMaxScaler fit_transform {rows} x {cols} {dtype}",
    data=datasets.gaussian,
    scales=STANDARD_SCALER.scales,
    estimator="preprocessing.MinMaxScaler",
    sklearn="sklearn.preprocessing.MinMaxScaler",
    steps=(FIT_TRANSFORM,),
    quality=metrics.MINMAX,
    peers=(
        peers.torch_peer(lambda a: peers.TorchMinMaxScaler()),
        peers.cuml_peer("cuml.preprocessing.MinMaxScaler"),
    ),
    mem_factor=3,
))

MAX_ABS_SCALER = register(Workload(
    name="max_abs_scaler",
    title="MaxAbsScaler fit_transform {rows} x {cols} {dtype}",
    data=datasets.gaussian,
    scales=STANDARD_SCALER.scales,
    estimator="preprocessing.MaxAbsScaler",
    sklearn="sklearn.preprocessing.MaxAbsScaler",
    steps=(FIT_TRANSFORM,),
    quality=metrics.MAXABS,
    peers=(peers.cuml_peer("cuml.preprocessing.MaxAbsScaler"),),
    mem_factor=3,
    suites=NOT_QUICK,
))

ROBUST_SCALER = register(Workload(
    name="robust_scaler",
    title="RobustScaler fit_transform {rows} x {cols} {dtype}",
    data=datasets.gaussian,
    # smaller than the other scalers: scikit-learn takes exact percentiles column by column
    scales={"smoke": Scale(2_000, 8), "cpu": Scale(100_000, 32), "cuda": Scale(1_000_000, 64)},
    estimator="preprocessing.RobustScaler",
    sklearn="sklearn.preprocessing.RobustScaler",
    steps=(FIT_TRANSFORM,),
    quality=metrics.ROBUST,
    peers=(peers.cuml_peer("cuml.preprocessing.RobustScaler"),),
    mem_factor=3,
    suites=NOT_QUICK,
))

NORMALIZER = register(Workload(
    name="normalizer",
    title="Normalizer (l2) fit_transform {rows} x {cols} {dtype}",
    data=datasets.gaussian,
    scales=STANDARD_SCALER.scales,
    estimator="preprocessing.Normalizer",
    sklearn="sklearn.preprocessing.Normalizer",
    steps=(FIT_TRANSFORM,),
    quality=metrics.ROW_NORMALIZED,
    peers=(peers.cuml_peer("cuml.preprocessing.Normalizer"),),
    mem_factor=3,
    suites=NOT_QUICK,
))

# -- clustering and neighbours -----------------------------------------------


def _kmeans_params(scale, data):
    e = scale.extra
    return {"n_clusters": e["k"], "init": data["init"], "n_init": 1, "max_iter": e["iters"], "tol": 0.0}


KMEANS = register(Workload(
    name="kmeans",
    title="KMeans {rows} x {cols}, k={k}, {iters} Lloyd iterations",
    data=datasets.blobs,
    scales={
        "smoke": Scale(2_000, 8, {"k": 8, "centers": 8, "iters": 20}),
        "cpu": Scale(100_000, 32, {"k": 64, "centers": 64, "iters": 20}),
        "cuda": Scale(1_000_000, 64, {"k": 256, "centers": 256, "iters": 20}),
    },
    estimator="cluster.KMeans",
    sklearn="sklearn.cluster.KMeans",
    params=_kmeans_params,
    steps=(FIT,),
    quality=metrics.INERTIA,
    peers=(
        peers.torch_peer(lambda a: peers.TorchKMeans(a.params["init"], a.params["max_iter"])),
        peers.faiss_kmeans_peer(),
        peers.cuml_peer("cuml.cluster.KMeans"),
    ),
    mem_factor=8,
))


MINIBATCH_KMEANS = register(Workload(
    name="minibatch_kmeans",
    title="MiniBatchKMeans {rows} x {cols}, k={k}, batches of 4096, 5 passes",
    data=datasets.blobs,
    scales=KMEANS.scales,
    estimator="cluster.MiniBatchKMeans",
    sklearn="sklearn.cluster.MiniBatchKMeans",
    params=lambda scale, data: {
        "n_clusters": scale.extra["k"], "init": data["init"], "n_init": 1, "batch_size": 4096, "max_iter": 5,
        "max_no_improvement": None, "random_state": 0,
    },
    steps=(FIT,),
    quality=metrics.INERTIA,
    mem_factor=4,
    suites=NOT_QUICK,
))


def _knn_params(scale, data):
    return {"n_neighbors": scale.extra["neighbors"]}


KNN = register(Workload(
    name="knn",
    title="NearestNeighbors (brute) {rows} x {cols} index, {n_queries} queries, k={neighbors}",
    data=datasets.blobs,
    scales={
        "smoke": Scale(2_000, 8, {"centers": 16, "n_queries": 200, "neighbors": 10}),
        "cpu": Scale(100_000, 32, {"centers": 64, "n_queries": 1_000, "neighbors": 10}),
        "cuda": Scale(1_000_000, 64, {"centers": 256, "n_queries": 10_000, "neighbors": 10}),
    },
    estimator="neighbors.NearestNeighbors",
    sklearn="sklearn.neighbors.NearestNeighbors",
    params=_knn_params,
    sklearn_params={"algorithm": "brute", "n_jobs": -1},
    steps=(FIT, Step("kneighbors", ("Q",))),
    quality=metrics.RECALL,
    peers=(
        peers.torch_peer(lambda a: peers.TorchNearestNeighbors(a.params["n_neighbors"])),
        peers.faiss_knn_peer(),
        peers.cuml_peer("cuml.neighbors.NearestNeighbors", lambda a: {**a.params, "algorithm": "brute"}),
    ),
))

# The same searches in float64 (the full suite): twinlearn's float64 path is
# the canonical kernel in every mode.
for _base in (KMEANS, KNN):
    register(replace(_base, name=f"{_base.name}_float64", title=_base.title + " {dtype}", dtype="float64",
                     suites=NOT_QUICK, sweep=False))

# A KMeans fit larger than one pass of the device's fast paths allows: 100M x 64
# float32 (25.6 GB) in batches; PyTorch's plain version would materialise the
# 100M x 256 distance matrix, so it is not a contender here.
register(replace(
    KMEANS,
    name="kmeans_large",
    title="KMeans {rows} x {cols}, k={k}, {iters} Lloyd iterations (large)",
    scales={
        "smoke": Scale(4_000, 8, {"k": 8, "centers": 8, "iters": 3}),
        "cpu": Scale(2_000_000, 64, {"k": 64, "centers": 64, "iters": 3}),
        "cuda": Scale(100_000_000, 64, {"k": 256, "centers": 256, "iters": 5}),
    },
    peers=(),
    suites=NOT_QUICK,
    sweep=False,
))

KNN_PREDICT_SCALES = {
    "smoke": Scale(2_000, 8, NONLINEAR),
    "cpu": Scale(50_000, 16, NONLINEAR),
    "cuda": Scale(200_000, 28, NONLINEAR),
}
PREDICT_TEST = Step("predict", ("X_test",))

KNN_CLASSIFIER = register(Workload(
    name="knn_classifier",
    title="KNeighborsClassifier (k=10) fit + predict, {rows} x {cols} index, a tenth as many queries",
    data=datasets.classification,
    scales=KNN_PREDICT_SCALES,
    estimator="neighbors.KNeighborsClassifier",
    sklearn="sklearn.neighbors.KNeighborsClassifier",
    params={"n_neighbors": 10},
    sklearn_params={"algorithm": "brute", "n_jobs": -1},
    steps=(FIT_XY, PREDICT_TEST),
    quality=metrics.ACCURACY,
    peers=(peers.cuml_peer("cuml.neighbors.KNeighborsClassifier"),),
    sweep=False,
    suites=NOT_QUICK,
))

KNN_REGRESSOR = register(Workload(
    name="knn_regressor",
    title="KNeighborsRegressor (k=10, distance weights) fit + predict, {rows} x {cols} index, a tenth as many queries",
    data=datasets.regression,
    scales={k: Scale(v.rows, v.cols) for k, v in KNN_PREDICT_SCALES.items()},
    estimator="neighbors.KNeighborsRegressor",
    sklearn="sklearn.neighbors.KNeighborsRegressor",
    params={"n_neighbors": 10, "weights": "distance"},
    sklearn_params={"algorithm": "brute", "n_jobs": -1},
    steps=(FIT_XY, PREDICT_TEST),
    quality=metrics.R2,
    peers=(peers.cuml_peer("cuml.neighbors.KNeighborsRegressor"),),
    sweep=False,
    suites=NOT_QUICK,
))

# -- kernel density --------------------------------------------------------------
def _kde_mean_log_density(ev) -> dict:
    """Mean of score_samples over the queries (float64): twinlearn's exact sums
    and scikit-learn's tree agree to about 1e-12 relative."""
    import numpy as np

    out = np.asarray(ev.outputs["score_samples"], dtype=np.float64)
    return {"mean_log_density": float(np.mean(out[np.isfinite(out)])) if np.isfinite(out).any() else float("-inf")}


KDE_QUALITY = Quality(_kde_mean_log_density, "mean_log_density", True,
                      "mean log density of the query rows (score_samples)")

KDE = register(Workload(
    name="kde",
    title="KernelDensity (gaussian) score_samples, {n_queries} queries against {rows} x {cols}",
    data=datasets.blobs,
    scales={
        "smoke": Scale(1_000, 8, {"centers": 8, "n_queries": 200}),
        "cpu": Scale(8_000, 32, {"centers": 16, "n_queries": 2_000}),
        "cuda": Scale(32_000, 128, {"centers": 64, "n_queries": 32_000}),
    },
    estimator="neighbors.KernelDensity",
    sklearn="sklearn.neighbors.KernelDensity",
    params=lambda scale, data: {"bandwidth": 4.0},
    steps=(FIT, Step("score_samples", ("Q",))),
    quality=KDE_QUALITY,
    sweep=False,
))

# A smaller one: latency of a few thousand queries on a small model.
register(replace(
    KDE,
    name="kde_small",
    scales={
        "smoke": Scale(500, 4, {"centers": 4, "n_queries": 100}),
        "cpu": Scale(2_000, 8, {"centers": 8, "n_queries": 1_000}),
        "cuda": Scale(4_000, 16, {"centers": 16, "n_queries": 4_000}),
    },
))

# -- linear models -------------------------------------------------------------

LINEAR_SCALES = {"smoke": Scale(2_000, 8), "cpu": Scale(200_000, 64), "cuda": Scale(2_000_000, 256)}

LINEAR_REGRESSION = register(Workload(
    name="linear_regression",
    title="LinearRegression fit {rows} x {cols}",
    data=datasets.regression,
    scales=LINEAR_SCALES,
    estimator="linear_model.LinearRegression",
    sklearn="sklearn.linear_model.LinearRegression",
    steps=(FIT_XY,),
    quality=metrics.R2,
    peers=(
        peers.torch_peer(lambda a: peers.TorchLinearRegression()),
        peers.cuml_peer("cuml.linear_model.LinearRegression"),
    ),
    mem_factor=3,
))

RIDGE = register(Workload(
    name="ridge",
    title="Ridge (alpha=1) fit {rows} x {cols}",
    data=datasets.regression,
    scales=LINEAR_SCALES,
    estimator="linear_model.Ridge",
    sklearn="sklearn.linear_model.Ridge",
    params={"alpha": 1.0},
    steps=(FIT_XY,),
    quality=metrics.R2,
    peers=(
        peers.torch_peer(lambda a: peers.TorchLinearRegression(alpha=a.params["alpha"])),
        peers.cuml_peer("cuml.linear_model.Ridge"),
    ),
    mem_factor=3,
))

LOGISTIC_SCALES = {"smoke": Scale(2_000, 10), "cpu": Scale(100_000, 50), "cuda": Scale(1_000_000, 100)}

LOGISTIC_REGRESSION = register(Workload(
    name="logistic_regression",
    title="LogisticRegression (lbfgs) fit {rows} x {cols}",
    data=datasets.classification,
    scales=LOGISTIC_SCALES,
    estimator="linear_model.LogisticRegression",
    sklearn="sklearn.linear_model.LogisticRegression",
    params={"C": 1.0, "max_iter": 100},
    sklearn_params={"solver": "lbfgs"},
    steps=(FIT_XY,),
    quality=metrics.ACCURACY,
    peers=(peers.cuml_peer("cuml.linear_model.LogisticRegression"),),
))

RIDGE_CLASSIFIER = register(Workload(
    name="ridge_classifier",
    title="RidgeClassifier (alpha=1) fit {rows} x {cols}",
    data=datasets.classification,
    scales=LOGISTIC_SCALES,
    estimator="linear_model.RidgeClassifier",
    sklearn="sklearn.linear_model.RidgeClassifier",
    params={"alpha": 1.0},
    steps=(FIT_XY,),
    quality=metrics.LABEL_ACCURACY,
    suites=NOT_QUICK,
))

LASSO = register(Workload(
    name="lasso",
    title="Lasso (alpha=0.1, coordinate descent) fit {rows} x {cols}",
    data=datasets.regression,
    scales=LOGISTIC_SCALES,
    estimator="linear_model.Lasso",
    sklearn="sklearn.linear_model.Lasso",
    params={"alpha": 0.1},
    steps=(FIT_XY,),
    quality=metrics.R2,
    peers=(peers.cuml_peer("cuml.linear_model.Lasso"),),
    suites=NOT_QUICK,
))

ELASTIC_NET = register(Workload(
    name="elastic_net",
    title="ElasticNet (alpha=0.1, l1_ratio=0.5) fit {rows} x {cols}",
    data=datasets.regression,
    scales=LOGISTIC_SCALES,
    estimator="linear_model.ElasticNet",
    sklearn="sklearn.linear_model.ElasticNet",
    params={"alpha": 0.1, "l1_ratio": 0.5},
    steps=(FIT_XY,),
    quality=metrics.R2,
    peers=(peers.cuml_peer("cuml.linear_model.ElasticNet"),),
    suites=NOT_QUICK,
))

# -- naive Bayes -----------------------------------------------------------------

GAUSSIAN_NB = register(Workload(
    name="gaussian_nb",
    title="GaussianNB fit {rows} x {cols}",
    data=datasets.classification,
    scales=LOGISTIC_SCALES,
    estimator="naive_bayes.GaussianNB",
    sklearn="sklearn.naive_bayes.GaussianNB",
    steps=(FIT_XY,),
    quality=metrics.ACCURACY,
    peers=(peers.cuml_peer("cuml.naive_bayes.GaussianNB"),),
    suites=NOT_QUICK,
))

# -- Gaussian processes ----------------------------------------------------------


def _gpr_params(scale, data):
    from sklearn.gaussian_process.kernels import RBF, ConstantKernel, WhiteKernel

    kernel = ConstantKernel(1.0) * RBF(1.0) + WhiteKernel(0.1)
    return {"kernel": kernel, "n_restarts_optimizer": 2, "random_state": 0}


GAUSSIAN_PROCESS_REGRESSOR = register(Workload(
    name="gaussian_process_regressor",
    title="GaussianProcessRegressor fit (2 restarts) {rows} x {cols}",
    data=datasets.regression,
    # O(n³) per likelihood evaluation: a smaller size for the CPU suite, 10k rows on a GPU.
    scales={"smoke": Scale(500, 8), "cpu": Scale(2_000, 8), "cuda": Scale(10_000, 8)},
    estimator="gaussian_process.GaussianProcessRegressor",
    sklearn="sklearn.gaussian_process.GaussianProcessRegressor",
    params=_gpr_params,
    steps=(FIT_XY,),
    quality=metrics.R2,
    sweep=False,
))

# -- decomposition -------------------------------------------------------------

PCA = register(Workload(
    name="pca",
    title="PCA fit {rows} x {cols} -> {components}",
    data=datasets.low_rank,
    scales={
        "smoke": Scale(2_000, 16, {"components": 4}),
        "cpu": Scale(200_000, 64, {"components": 16}),
        "cuda": Scale(2_000_000, 256, {"components": 32}),
    },
    estimator="decomposition.PCA",
    sklearn="sklearn.decomposition.PCA",
    params=lambda scale, data: {"n_components": scale.extra["components"]},
    # scikit-learn's default ("auto"): covariance_eigh for these tall shapes, its
    # fastest exact solver; the full suite adds the other solvers.
    sklearn_variants={
        "full": {"svd_solver": "full"},
        "randomized": {"svd_solver": "randomized", "random_state": 0},
    },
    variants_suites=frozenset({"full"}),
    steps=(FIT,),
    quality=metrics.EXPLAINED_VARIANCE,
    peers=(
        peers.torch_peer(lambda a: peers.TorchPCA(a.params["n_components"])),
        peers.cuml_peer("cuml.decomposition.PCA"),
    ),
    mem_factor=3,
))

TRUNCATED_SVD = register(Workload(
    name="truncated_svd",
    title="TruncatedSVD fit {rows} x {cols} -> {components}",
    data=datasets.low_rank,
    scales=PCA.scales,
    estimator="decomposition.TruncatedSVD",
    sklearn="sklearn.decomposition.TruncatedSVD",
    params=lambda scale, data: {"n_components": scale.extra["components"], "random_state": 0},
    steps=(FIT,),
    quality=metrics.EXPLAINED_VARIANCE,
    peers=(peers.cuml_peer("cuml.decomposition.TruncatedSVD"),),
    mem_factor=3,
))

INCREMENTAL_PCA = register(Workload(
    name="incremental_pca",
    title="IncrementalPCA fit {rows} x {cols} -> {components}, batches of {batch}",
    data=datasets.low_rank,
    scales={
        "smoke": Scale(2_000, 16, {"components": 4, "batch": 500}),
        "cpu": Scale(100_000, 32, {"components": 8, "batch": 10_000}),
        "cuda": Scale(500_000, 64, {"components": 16, "batch": 50_000}),
    },
    estimator="decomposition.IncrementalPCA",
    sklearn="sklearn.decomposition.IncrementalPCA",
    params=lambda scale, data: {"n_components": scale.extra["components"], "batch_size": scale.extra["batch"]},
    steps=(FIT,),
    quality=metrics.EXPLAINED_VARIANCE,
    peers=(peers.cuml_peer("cuml.decomposition.IncrementalPCA"),),
    mem_factor=3,
    suites=NOT_QUICK,
))

# -- ensembles -------------------------------------------------------------------

def _boosting_params(scale, **extra):
    """twinlearn's boosting parameters for a scale's rounds and depth."""
    return {"n_estimators": scale.extra["rounds"], "max_depth": scale.extra["depth"], "learning_rate": 0.1, **extra}


def _hgb_params(scale, **extra):
    """scikit-learn's HistGradientBoosting at the same rounds and depth (as many
    leaves as a full tree of that depth, no early stopping). random_state fixes
    the 200 000-row sample its bin edges come from on larger data (unset, the
    sample, and with it the accuracy on the 2M-row task, changes from run to
    run: 0.8232, 0.8254 and 0.8317 in three runs)."""
    return {"max_iter": scale.extra["rounds"], "max_depth": scale.extra["depth"],
            "max_leaf_nodes": 2 ** scale.extra["depth"], "learning_rate": 0.1, "early_stopping": False,
            "random_state": 0, **extra}


GBDT = register(Workload(
    name="gbdt",
    title="Gradient boosting {rows} x {cols}, {rounds} rounds, depth {depth}",
    data=datasets.classification,
    scales={
        "smoke": Scale(2_000, 28, {"rounds": 10, "depth": 4, **NONLINEAR}),
        "cpu": Scale(100_000, 28, {"rounds": 50, "depth": 6, **NONLINEAR}),
        "cuda": Scale(2_000_000, 28, {"rounds": 200, "depth": 6, **NONLINEAR}),
    },
    estimator="ensemble.GradientBoostingClassifier",
    sklearn="sklearn.ensemble.HistGradientBoostingClassifier",
    # early_stopping=False: every round, as scikit-learn's run (its default stops above 10 000 rows).
    twinlearn_params=lambda scale, data: _boosting_params(scale, early_stopping=False),
    sklearn_params=lambda scale, data: _hgb_params(scale),
    steps=(FIT_XY,),
    quality=metrics.ACCURACY,
    peers=(peers.XGBOOST, peers.LIGHTGBM, peers.CATBOOST),
    mem_factor=3,
))

# The same task with Depthwise trees (a node picks its own split, as in
# scikit-learn's trees): scikit-learn's run is the gbdt workload's, measured once.
register(replace(
    GBDT,
    name="gbdt_depthwise",
    title="Gradient boosting, Depthwise trees, {rows} x {cols}, {rounds} rounds, depth {depth}",
    estimator="ensemble.GradientBoosting",
    twinlearn_params=lambda scale, data: _boosting_params(scale, grow_policy="Depthwise", border_count=254),
    peers=(),
    sweep=False,
))

# Best-first (leaf-wise) trees of at most 31 leaves within depth 6, LightGBM's
# shape (the full suite: the quick one keeps to its time budget).
register(replace(
    GBDT,
    name="gbdt_lossguide",
    title="Gradient boosting, Lossguide trees (31 leaves), {rows} x {cols}, {rounds} rounds, depth {depth}",
    estimator="ensemble.GradientBoosting",
    twinlearn_params=lambda scale, data: _boosting_params(scale, grow_policy="Lossguide", max_leaves=31,
                                                          border_count=254),
    peers=(),
    suites=frozenset({"full"}),
    sweep=False,
))

# Prediction of the training rows after the fit (the full suite: the quick one
# keeps to its time budget); the workload's table shows each step's time.
register(replace(
    GBDT,
    name="gbdt_predict",
    title="Gradient boosting {rows} x {cols}, {rounds} rounds, depth {depth}: fit, then predict the {rows} rows",
    steps=(FIT_XY, Step("predict", ("X",))),
    peers=(),
    suites=NOT_QUICK,
    sweep=False,
))

# Fit time against tree depth (the full suite; depth 6 is the gbdt workload above).
for _depth in (4, 8, 10):
    register(replace(
        GBDT,
        name=f"gbdt_depth{_depth}",
        scales={k: Scale(v.rows, v.cols, {**v.extra, "depth": _depth}) for k, v in GBDT.scales.items()},
        suites=frozenset({"full"}),
        sweep=False,
    ))

# Random forest at its defaults (unlimited depth), scikit-learn's on every core (n_jobs=-1).
register(Workload(
    name="random_forest_100k",
    title="Random forest {rows} x {cols}, {trees} trees, unlimited depth",
    data=datasets.classification,
    scales={
        "smoke": Scale(2_000, 32, {"trees": 10, **NONLINEAR}),
        "cpu": Scale(100_000, 32, {"trees": 100, **NONLINEAR}),
        "cuda": Scale(100_000, 32, {"trees": 100, **NONLINEAR}),
    },
    estimator="ensemble.RandomForestClassifier",
    sklearn="sklearn.ensemble.RandomForestClassifier",
    twinlearn_params=lambda scale, data: {"n_estimators": scale.extra["trees"], "random_state": 0},
    sklearn_params=lambda scale, data: {"n_estimators": scale.extra["trees"], "random_state": 0, "n_jobs": -1},
    steps=(FIT_XY,),
    quality=metrics.ACCURACY,
    suites=NOT_QUICK,
    sweep=False,
))


def _cat_columns(scale):
    return list(range(scale.cols - len(datasets.CATEGORY_COUNTS), scale.cols))


register(Workload(
    name="gbdt_categorical",
    title="Gradient boosting {rows} x {cols} with 3 categorical columns (4, 32, 200 categories), "
          "{rounds} rounds, depth {depth}",
    data=datasets.categorical_classification,
    scales={
        "smoke": Scale(2_000, 10, {"rounds": 10, "depth": 4}),
        "cpu": Scale(100_000, 20, {"rounds": 50, "depth": 6}),
        "cuda": Scale(1_000_000, 20, {"rounds": 200, "depth": 6}),
    },
    estimator="ensemble.GradientBoosting",
    sklearn="sklearn.ensemble.HistGradientBoostingClassifier",
    twinlearn_params=lambda scale, data: _boosting_params(
        scale, cat_features=_cat_columns(scale), one_hot_max_size=4, random_state=0),
    sklearn_params=lambda scale, data: _hgb_params(scale, categorical_features=_cat_columns(scale)),
    steps=(FIT_XY,),
    quality=metrics.ACCURACY,
    suites=NOT_QUICK,
    sweep=False,
))

GBDT_REGRESSOR = register(Workload(
    name="gbdt_regressor",
    title="Gradient boosting regression {rows} x {cols}, {rounds} rounds, depth {depth}",
    data=datasets.regression,
    scales={
        "smoke": Scale(2_000, 28, {"rounds": 10, "depth": 4}),
        "cpu": Scale(100_000, 28, {"rounds": 50, "depth": 6}),
        "cuda": Scale(1_000_000, 28, {"rounds": 100, "depth": 6}),
    },
    estimator="ensemble.GradientBoostingRegressor",
    sklearn="sklearn.ensemble.HistGradientBoostingRegressor",
    twinlearn_params=lambda scale, data: _boosting_params(scale, early_stopping=False),
    sklearn_params=lambda scale, data: _hgb_params(scale),
    steps=(FIT_XY,),
    quality=metrics.R2,
    mem_factor=3,
    suites=NOT_QUICK,
))

register(Workload(
    name="random_forest",
    title="RandomForest {rows} x {cols}, {trees} trees, depth {depth}",
    data=datasets.classification,
    scales={
        "smoke": Scale(2_000, 28, {"trees": 5, "depth": 8, **NONLINEAR}),
        "cpu": Scale(20_000, 28, {"trees": 20, "depth": 12, **NONLINEAR}),
        "cuda": Scale(200_000, 28, {"trees": 100, "depth": 16, **NONLINEAR}),
    },
    estimator="ensemble.RandomForestClassifier",
    sklearn="sklearn.ensemble.RandomForestClassifier",
    params=lambda scale, data: {
        "n_estimators": scale.extra["trees"], "max_depth": scale.extra["depth"], "random_state": 0,
    },
    sklearn_params={"n_jobs": -1},
    steps=(FIT_XY,),
    quality=metrics.ACCURACY,
    peers=(peers.cuml_peer("cuml.ensemble.RandomForestClassifier"),),
    suites=frozenset({"full"}),  # twinlearn has no random forest yet: scikit-learn alone
    mem_factor=3,
))

def _poisson_counts(scale: Scale, seed: int, dtype) -> datasets.Dataset:
    """Counts y ~ Poisson(exp(X w / sqrt(cols))), with a held-out set."""
    rng = np.random.default_rng(seed)
    n_test = datasets.held_out_rows(scale.rows)
    X = rng.standard_normal((scale.rows + n_test, scale.cols)).astype(dtype)
    w = rng.standard_normal(scale.cols) / np.sqrt(scale.cols)
    y = rng.poisson(np.exp(X.astype(np.float64) @ w)).astype(dtype)
    return datasets._split(X, y, scale.rows)


# Best-first growth and the Poisson criterion: regression forests of
# max_leaf_nodes leaves on counts, scikit-learn's on every core.
register(Workload(
    name="random_forest_poisson_leaves",
    title="RandomForestRegressor {rows} x {cols}, {trees} trees, poisson, {leaves} leaves",
    data=_poisson_counts,
    scales={
        "smoke": Scale(2_000, 16, {"trees": 5, "leaves": 32}),
        "cpu": Scale(50_000, 16, {"trees": 20, "leaves": 256}),
        "cuda": Scale(50_000, 16, {"trees": 20, "leaves": 256}),
    },
    estimator="ensemble.RandomForestRegressor",
    sklearn="sklearn.ensemble.RandomForestRegressor",
    params=lambda scale, data: {
        "n_estimators": scale.extra["trees"], "max_leaf_nodes": scale.extra["leaves"], "criterion": "poisson",
        "random_state": 0,
    },
    sklearn_params={"n_jobs": -1},
    steps=(FIT_XY,),
    quality=metrics.R2,
    suites=NOT_QUICK,
    sweep=False,
))


# The absolute-error criterion (weighted-median leaves; O(n log n) per node
# and feature): regression forests of bounded depth, scikit-learn's on every core.
register(Workload(
    name="random_forest_absolute_error",
    title="RandomForestRegressor {rows} x {cols}, {trees} trees, absolute_error, depth {depth}",
    data=datasets.regression,
    scales={
        "smoke": Scale(2_000, 8, {"trees": 5, "depth": 8}),
        "cpu": Scale(20_000, 16, {"trees": 20, "depth": 12}),
        "cuda": Scale(20_000, 16, {"trees": 20, "depth": 12}),
    },
    estimator="ensemble.RandomForestRegressor",
    sklearn="sklearn.ensemble.RandomForestRegressor",
    params=lambda scale, data: {
        "n_estimators": scale.extra["trees"], "max_depth": scale.extra["depth"], "criterion": "absolute_error",
        "max_features": 0.5, "random_state": 0,
    },
    sklearn_params={"n_jobs": -1},
    steps=(FIT_XY,),
    quality=metrics.R2,
    suites=NOT_QUICK,
    sweep=False,
))


def _multi_output_regression(scale: Scale, seed: int, dtype) -> datasets.Dataset:
    """Three outputs, Y = X W (cols x 3) plus a nonlinear term and noise, with a held-out set."""
    rng = np.random.default_rng(seed)
    n_test = datasets.held_out_rows(scale.rows)
    X = rng.standard_normal((scale.rows + n_test, scale.cols)).astype(dtype)
    W = rng.standard_normal((scale.cols, 3)) / np.sqrt(scale.cols)
    Xd = X.astype(np.float64)
    Y = Xd @ W + np.sin(2 * Xd[:, :3]) + 0.1 * rng.standard_normal((X.shape[0], 3))
    return datasets._split(X, Y.astype(dtype), scale.rows)


# Multi-output y: one forest of three-output trees (scikit-learn's summed
# squared-error proxy), scikit-learn's on every core.
register(Workload(
    name="random_forest_multioutput",
    title="RandomForestRegressor {rows} x {cols}, {trees} trees, 3 outputs",
    data=_multi_output_regression,
    scales={
        "smoke": Scale(2_000, 8, {"trees": 5}),
        "cpu": Scale(50_000, 16, {"trees": 20}),
        "cuda": Scale(50_000, 16, {"trees": 20}),
    },
    estimator="ensemble.RandomForestRegressor",
    sklearn="sklearn.ensemble.RandomForestRegressor",
    params=lambda scale, data: {"n_estimators": scale.extra["trees"], "max_features": 0.5, "random_state": 0},
    sklearn_params={"n_jobs": -1},
    steps=(FIT_XY,),
    quality=metrics.R2,
    suites=NOT_QUICK,
    sweep=False,
))


# -- isolation forest ------------------------------------------------------------
def _iforest_mean_score(ev) -> dict:
    """Mean of score_samples over the rows (float64): the two libraries' trees
    differ (their generators do), their score distributions agree."""
    import numpy as np

    return {"mean_score": float(np.mean(np.asarray(ev.outputs["score_samples"], dtype=np.float64)))}


register(Workload(
    name="isolation_forest",
    title="IsolationForest {rows} x {cols}, {trees} trees, fit + score_samples",
    data=datasets.blobs,
    scales={
        "smoke": Scale(10_000, 16, {"centers": 8, "trees": 20}),
        "cpu": Scale(100_000, 16, {"centers": 8, "trees": 100}),
        "cuda": Scale(1_000_000, 16, {"centers": 8, "trees": 100}),
    },
    estimator="ensemble.IsolationForest",
    sklearn="sklearn.ensemble.IsolationForest",
    params=lambda scale, data: {"n_estimators": scale.extra["trees"], "random_state": 0},
    sklearn_params={"n_jobs": -1},
    steps=(FIT, Step("score_samples", ("X",))),
    quality=Quality(_iforest_mean_score, "mean_score", True, "mean score_samples of the training rows"),
    sweep=False,
))

# -- time series ----------------------------------------------------------------
_ARIMA_SUBSET = 20  # series the statsmodels loop fits


def _arima_mean_llf(ev) -> dict:
    """Mean log-likelihood of the first series (those every contender fits:
    the statsmodels loop fits a subset)."""
    import numpy as np

    return {"mean_llf": float(np.nanmean(ev.attr("llf_")[:_ARIMA_SUBSET]))}


register(Workload(
    name="arima",
    title="ARIMA(1,1,1), {cols} series x {rows} values, fit",
    data=datasets.arima_series,
    scales={
        "smoke": Scale(200, 50, {}),
        "cpu": Scale(1_000, 10_000, {}),
        "cuda": Scale(1_000, 100_000, {}),
    },
    estimator="tsa.ARIMA",
    sklearn=None,
    params={"order": (1, 1, 1)},
    steps=(FIT,),
    quality=Quality(_arima_mean_llf, "mean_llf", True, "mean log-likelihood per fitted series"),
    peers=(peers.statsmodels_arima_peer(_ARIMA_SUBSET),),
    dtype="float64",
    sweep=False,
))

# -- embeddings ---------------------------------------------------------------

def _digits(scale, seed: int, dtype):
    """scikit-learn's 8 x 8 digits (1797 x 64), as the given dtype."""
    import numpy as np
    from sklearn.datasets import load_digits

    return datasets.Dataset({"X": np.ascontiguousarray(load_digits().data, dtype=dtype)})


register(Workload(
    name="umap",
    title="UMAP {rows} x {cols} mixture -> 2",
    data=datasets.blobs,
    scales={
        "smoke": Scale(500, 8, {"centers": 5}),
        "cpu": Scale(50_000, 64, {"centers": 10, "spread": 3.0}),
        "cuda": Scale(100_000, 64, {"centers": 20, "spread": 3.0}),
    },
    estimator="manifold.UMAP",
    sklearn=None,
    params={"n_components": 2, "n_neighbors": 15, "random_state": 0},
    steps=(FIT_TRANSFORM,),
    quality=metrics.TRUSTWORTHINESS,
    peers=(peers.UMAP_LEARN, peers.cuml_peer("cuml.manifold.UMAP")),
    suites=frozenset({"full"}),
    sweep=False,
))

register(Workload(
    name="umap_digits",
    title="UMAP digits {rows} x {cols} -> 2",
    data=_digits,
    scales={s: Scale(1797, 64, {}) for s in ("smoke", "cpu", "cuda")},
    estimator="manifold.UMAP",
    sklearn=None,
    params={"n_components": 2, "n_neighbors": 15, "random_state": 0},
    steps=(FIT_TRANSFORM,),
    quality=metrics.TRUSTWORTHINESS,
    peers=(peers.UMAP_LEARN, peers.cuml_peer("cuml.manifold.UMAP")),
    sweep=False,
))

# -- scikit-learn code under twinlearn.accelerate -----------------------------

register(accelerated(STANDARD_SCALER))
register(accelerated(KMEANS))
register(accelerated(RIDGE))
register(accelerated(PCA))
register(accelerated(TRUNCATED_SVD))
register(accelerated(MINIBATCH_KMEANS))
register(accelerated(KNN))
register(accelerated(LINEAR_REGRESSION))
register(accelerated(LOGISTIC_REGRESSION))
register(accelerated(MIN_MAX_SCALER))
register(accelerated(MAX_ABS_SCALER))
register(accelerated(ROBUST_SCALER))
register(accelerated(NORMALIZER))
register(accelerated(KNN_CLASSIFIER))
register(accelerated(KNN_REGRESSOR))
register(accelerated(RIDGE_CLASSIFIER))
register(accelerated(LASSO))
register(accelerated(ELASTIC_NET))
register(accelerated(GAUSSIAN_NB))
register(accelerated(INCREMENTAL_PCA))
register(accelerated(
    GBDT,
    # Served when the leaf limit does not bind and leaves have no minimum size
    # (docs/SUPPORT_MATRIX.md): the same oblivious trees as the gbdt workload.
    sklearn_params=lambda scale, data: {
        "max_iter": scale.extra["rounds"], "max_depth": scale.extra["depth"], "max_leaf_nodes": None,
        "min_samples_leaf": 1, "learning_rate": 0.1, "early_stopping": False,
    },
))
register(accelerated(
    RIDGE,
    name="accel_pipeline",
    title="Pipeline(StandardScaler, LogisticRegression) fit {rows} x {cols} (scikit-learn code, accelerated)",
    data=datasets.classification,
    scales=LOGISTIC_SCALES,
    sklearn=lambda **p: make_pipeline(StandardScaler(), LogisticRegression(**p)),
    params={"max_iter": 100},
    quality=metrics.ACCURACY,
))

# -- metrics: classification, regression and ranking (bench/metric_workloads.py) --
from . import metric_workloads  # noqa: E402,F401  (registers roc_auc_score, confusion_matrix, r2_score, ...)
# -- clustering metrics (functions, timed through metric_workloads.MetricCall) ------


def labelled_blobs(scale, seed, dtype):
    """Gaussian blobs (``centers`` of them, spread 3) and each row's blob as
    its label: X and labels."""
    import numpy as np

    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(scale.extra["centers"], scale.cols)) * 3.0
    labels = rng.integers(0, scale.extra["centers"], size=scale.rows)
    X = (centers[labels] + rng.normal(size=(scale.rows, scale.cols))).astype(dtype)
    return datasets.Dataset({"X": X, "labels": labels.astype(np.int32)})


def silhouette_value(ev) -> dict:
    return {"silhouette": float(ev.outputs["score"])}


register(Workload(
    name="silhouette_score",
    title="silhouette_score {rows} x {cols}, {centers} clusters",
    data=labelled_blobs,
    scales={
        "smoke": Scale(2_000, 8, {"centers": 8}),
        "cpu": Scale(20_000, 32, {"centers": 16}),
        "cuda": Scale(100_000, 64, {"centers": 16}),
    },
    estimator=metric_workloads.metric_factory("twinlearn.metrics", "silhouette_score"),
    sklearn=metric_workloads.metric_factory("sklearn.metrics", "silhouette_score"),
    steps=(Step("score", ("X", "labels")),),
    quality=Quality(silhouette_value, "silhouette", True, "the mean silhouette coefficient (the score itself)"),
    mem_factor=2,
    sweep=False,
    suites=NOT_QUICK,
))


# -- DBSCAN ------------------------------------------------------------------------
def dbscan_value(ev) -> dict:
    """Agreement of the labels with the generating blobs (adjusted Rand index),
    the number of clusters and the share of noise."""
    import numpy as np
    from sklearn.metrics import adjusted_rand_score

    labels = ev.attr("labels_").astype(np.int64)
    return {"ari": float(adjusted_rand_score(ev.data["labels"], labels)),
            "n_clusters": int(labels.max() + 1), "noise": float(np.mean(labels == -1))}


DBSCAN_WORKLOAD = register(Workload(
    name="dbscan",
    title="DBSCAN {rows} x {cols}, {centers} blobs, eps={eps}",
    data=labelled_blobs,
    scales={
        "smoke": Scale(2_000, 8, {"centers": 8, "eps": 3.0}),
        "cpu": Scale(32_000, 32, {"centers": 16, "eps": 7.0}),
        "cuda": Scale(32_000, 32, {"centers": 16, "eps": 7.0}),
    },
    estimator="cluster.DBSCAN",
    sklearn="sklearn.cluster.DBSCAN",
    params=lambda scale, data: {"eps": scale.extra["eps"], "min_samples": 10},
    sklearn_params={"n_jobs": -1},
    steps=(FIT,),
    quality=Quality(dbscan_value, "ari", True, "adjusted Rand index of the labels against the generating blobs"),
    peers=(peers.cuml_peer("cuml.cluster.DBSCAN"),),
    mem_factor=4,
    suites=NOT_QUICK,
))

# Scaling: twice and four times the rows at the same density of blobs.
for _rows in (64_000, 128_000):
    register(replace(DBSCAN_WORKLOAD, name=f"dbscan_{_rows // 1000}k",
                     scales={**DBSCAN_WORKLOAD.scales, "cpu": Scale(_rows, 32, {"centers": 16, "eps": 7.0}),
                             "cuda": Scale(_rows, 32, {"centers": 16, "eps": 7.0})},
                     sweep=False))

# -- support vector machines ----------------------------------------------------------

SVM_SCALES = {"smoke": Scale(2_000, 16), "cpu": Scale(32_000, 64), "cuda": Scale(32_000, 64)}

SVC_RBF = register(Workload(
    name="svc_rbf",
    title="SVC (rbf) fit + predict {rows} x {cols}",
    data=datasets.classification,
    scales=SVM_SCALES,
    estimator="svm.SVC",
    sklearn="sklearn.svm.SVC",
    steps=(FIT_XY, PREDICT_TEST),
    quality=metrics.ACCURACY,
    peers=(peers.cuml_peer("cuml.svm.SVC"),),
    sweep=False,
    suites=NOT_QUICK,
))

SVR_RBF = register(Workload(
    name="svr_rbf",
    title="SVR (rbf) fit + predict {rows} x {cols}",
    data=datasets.regression,
    scales=SVM_SCALES,
    estimator="svm.SVR",
    sklearn="sklearn.svm.SVR",
    steps=(FIT_XY, PREDICT_TEST),
    quality=metrics.R2,
    peers=(peers.cuml_peer("cuml.svm.SVR"),),
    sweep=False,
    suites=NOT_QUICK,
))


# -- AgglomerativeClustering ---------------------------------------------------------
def agglomerative_value(ev) -> dict:
    """Agreement of the labels with the generating blobs (adjusted Rand index)."""
    import numpy as np
    from sklearn.metrics import adjusted_rand_score

    labels = ev.attr("labels_").astype(np.int64)
    return {"ari": float(adjusted_rand_score(ev.data["labels"], labels)), "n_clusters": int(labels.max() + 1)}


# One workload per linkage, 20k x 16 (the condensed linkages hold 20k^2 / 2
# float64 distances, 1.6 GB, on both sides: scikit-learn's SciPy pdist too).
for _linkage in ("ward", "complete", "average", "single"):
    register(Workload(
        name=f"agglomerative_{_linkage}",
        title=f"AgglomerativeClustering(linkage='{_linkage}') {{rows}} x {{cols}}, {{centers}} blobs",
        data=labelled_blobs,
        scales={
            "smoke": Scale(2_000, 16, {"centers": 8}),
            "cpu": Scale(20_000, 16, {"centers": 8}),
            "cuda": Scale(20_000, 16, {"centers": 8}),
        },
        estimator="cluster.AgglomerativeClustering",
        sklearn="sklearn.cluster.AgglomerativeClustering",
        params=lambda scale, data, _l=_linkage: {"n_clusters": scale.extra["centers"], "linkage": _l},
        steps=(FIT,),
        quality=Quality(agglomerative_value, "ari", True,
                        "adjusted Rand index of the labels against the generating blobs"),
        mem_factor=8 if _linkage == "single" else 800,
        sweep=False,
        suites=NOT_QUICK,
    ))


# -- HDBSCAN -----------------------------------------------------------------------
def hdbscan_value(ev) -> dict:
    """Agreement of the labels with the generating blobs (adjusted Rand index),
    the number of clusters and the share of noise."""
    import numpy as np
    from sklearn.metrics import adjusted_rand_score

    labels = ev.attr("labels_").astype(np.int64)
    return {"ari": float(adjusted_rand_score(ev.data["labels"], labels)),
            "n_clusters": int(labels.max() + 1), "noise": float(np.mean(labels == -1))}


register(Workload(
    name="hdbscan",
    title="HDBSCAN {rows} x {cols}, {centers} blobs",
    data=labelled_blobs,
    scales={
        "smoke": Scale(2_000, 16, {"centers": 8}),
        "cpu": Scale(20_000, 16, {"centers": 16}),
        "cuda": Scale(100_000, 16, {"centers": 16}),
    },
    estimator="cluster.HDBSCAN",
    sklearn="sklearn.cluster.HDBSCAN",
    params=lambda scale, data: {"min_cluster_size": 25, "min_samples": 10},
    sklearn_params={"n_jobs": -1, "copy": True},
    steps=(FIT,),
    quality=Quality(hdbscan_value, "ari", True, "adjusted Rand index of the labels against the generating blobs"),
    mem_factor=4,
    suites=NOT_QUICK,
))


# -- SpectralClustering ---------------------------------------------------------------
register(Workload(
    name="spectral",
    title="SpectralClustering {rows} x {cols} (rbf), {centers} blobs",
    data=labelled_blobs,
    scales={
        "smoke": Scale(2_000, 16, {"centers": 8}),
        "cpu": Scale(20_000, 16, {"centers": 8}),
        "cuda": Scale(20_000, 16, {"centers": 8}),
    },
    estimator="cluster.SpectralClustering",
    sklearn="sklearn.cluster.SpectralClustering",
    params=lambda scale, data: {"n_clusters": scale.extra["centers"], "affinity": "rbf", "gamma": 0.02,
                                "random_state": 0},
    sklearn_params={"n_jobs": -1},
    steps=(FIT,),
    quality=Quality(hdbscan_value, "ari", True, "adjusted Rand index of the labels against the generating blobs"),
    # the n x n affinity and normalized matrices, in float64
    mem_factor=4_000,
    sweep=False,
    suites=NOT_QUICK,
))


# -- time series: Holt-Winters exponential smoothing of a batch ----------------------
def seasonal_series(scale: Scale, seed: int, dtype) -> "datasets.Dataset":
    """scale.cols positive monthly-seasonal series of scale.rows points, one per
    column (level, trend, a sine season, Gaussian noise)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    t = np.arange(scale.rows, dtype=np.float64)[:, None]
    n = scale.cols
    y = (rng.uniform(50, 150, n) + rng.uniform(-0.02, 0.1, n) * t
         + rng.uniform(5, 20, n) * np.sin(2 * np.pi * t / 12 + rng.uniform(0, 2 * np.pi, n))
         + rng.normal(0, 1, (scale.rows, n)) * rng.uniform(1, 4, n))
    return datasets.Dataset({"X": np.abs(y) + 1.0})


class HoltWintersBatchFit:
    """``fit(X)`` fits twinlearn.tsa.ExponentialSmoothing to every column of X
    and records the series fitted per second."""

    def __init__(self, device=None, numeric_mode=None, **model):
        self.model, self.device, self.numeric_mode = model, device, numeric_mode

    def fit(self, X):
        import time

        from twinlearn.tsa import ExponentialSmoothing

        t0 = time.perf_counter()
        self.result_ = ExponentialSmoothing(X, device=self.device, numeric_mode=self.numeric_mode,
                                            errors="nan", **self.model).fit()
        self.seconds_ = time.perf_counter() - t0
        self.n_series_ = X.shape[1]
        self.sse_ = self.result_.sse
        return self

    def numeric_mode_used(self):
        return self.result_.numeric_mode_used

    def device_used(self):
        return self.result_.device_used


class StatsmodelsHoltWintersLoop:
    """statsmodels' ExponentialSmoothing in a Python loop over the first
    ``subset`` columns only (a fit of every column would take hours): compare
    the series per second in the quality column, not the wall time."""

    def __init__(self, subset=20, **model):
        self.model, self.subset = model, subset

    def fit(self, X):
        import time
        import warnings

        import numpy as np
        from statsmodels.tsa.holtwinters import ExponentialSmoothing

        X = np.asarray(X, dtype=np.float64)
        k = min(self.subset, X.shape[1])
        t0 = time.perf_counter()
        sse = np.full(X.shape[1], np.nan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for j in range(k):
                sse[j] = ExponentialSmoothing(X[:, j], **self.model).fit().sse
        self.seconds_ = time.perf_counter() - t0
        self.n_series_ = k
        self.sse_ = sse
        return self


def holt_winters_value(ev) -> dict:
    """Series fitted per second, and the mean SSE over the first 20 series
    relative to their mean absolute value (the two libraries side by side)."""
    import numpy as np

    m = ev.model
    X = np.asarray(ev.data["X"], dtype=np.float64)
    k = min(20, X.shape[1])
    sse = np.asarray(m.sse_)[:k]
    return {"series_per_second": float(m.n_series_ / m.seconds_),
            "rmse_20": float(np.sqrt(np.nanmean(sse / X.shape[0])) / np.mean(np.abs(X[:, :k])))}


_HW_MODEL = {"trend": "add", "seasonal": "add", "seasonal_periods": 12}

register(Workload(
    name="holt_winters_batch",
    title="ExponentialSmoothing (add, add, m=12) {cols} series x {rows} points",
    data=seasonal_series,
    # cpu: 1,000 series (about 0.1 s per series and core with the grid start); cuda: the 100,000 of the target
    scales={"smoke": Scale(120, 20), "cpu": Scale(1_000, 1_000), "cuda": Scale(1_000, 100_000)},
    estimator=lambda device=None, numeric_mode=None, **p: HoltWintersBatchFit(device, numeric_mode, **p),
    sklearn=lambda **p: StatsmodelsHoltWintersLoop(**p),
    baseline="statsmodels",
    params=_HW_MODEL,
    steps=(FIT,),
    quality=Quality(holt_winters_value, "series_per_second", True,
                    "series fitted per second (statsmodels: a loop over 20 series)"),
    dtype="float64",
    sweep=False,
    suites=NOT_QUICK,
))


# -- nn.optim: one fused AdamW step over N float32 parameters ---------------------
def flat_parameters(scale: Scale, seed: int, dtype) -> "datasets.Dataset":
    """scale.rows float32 parameters (a flat vector, one column) and as many
    gradients."""
    rng = np.random.default_rng(seed)
    return datasets.Dataset({"X": rng.standard_normal((scale.rows, 1), dtype=np.float32),
                             "G": rng.standard_normal((scale.rows, 1), dtype=np.float32)})


# AdamW's step reads the parameter, gradient and both moments and writes the
# parameter and both moments: 7 float32 per parameter.
_ADAMW_BYTES = 7 * 4


class _AdamWSteps:
    """``fit(X, G)`` runs `steps` AdamW steps over the parameters X (copied)
    and gradients G, recording the memory traffic per second (GB/s)."""

    def __init__(self, steps=5, lr=1e-3, weight_decay=1e-2):
        self.steps, self.lr, self.weight_decay = steps, lr, weight_decay

    def _record(self, seconds, n, params):
        self.seconds_ = seconds
        self.gb_per_s_ = _ADAMW_BYTES * n * self.steps / seconds / 1e9
        self.params_ = params
        return self


class AdamWStepBench(_AdamWSteps):
    """twinlearn.nn.optim.AdamW (one fused multi-tensor call per step)."""

    def __init__(self, device=None, numeric_mode=None, **p):
        super().__init__(**p)
        self.device, self.numeric_mode = device, numeric_mode

    def fit(self, X, G):
        import time

        from twinlearn.nn.optim import AdamW

        dev = self.device if self.device not in (None, "auto") else "cpu"
        if dev != "cpu":  # parameters on the GPU (through torch), as in training
            import torch

            p = torch.as_tensor(np.ascontiguousarray(X).ravel(), device=dev)
            g = torch.as_tensor(np.ascontiguousarray(G).ravel(), device=dev)
            sync = torch.cuda.synchronize
        else:
            p, g, sync = np.array(X, dtype=np.float32).ravel(), np.ascontiguousarray(G, dtype=np.float32).ravel(), None
        opt = AdamW([p], lr=self.lr, weight_decay=self.weight_decay, numeric_mode=self.numeric_mode)
        opt.step(grads=[g])  # creates the state outside the timing
        if sync:
            sync()
        t0 = time.perf_counter()
        for _ in range(self.steps):
            opt.step(grads=[g])
        if sync:
            sync()
        self.device_used_ = dev
        return self._record(time.perf_counter() - t0, p.shape[0], p)

    def numeric_mode_used(self):
        return self.numeric_mode or "deterministic"

    def device_used(self):
        return self.device_used_


class TorchAdamWFusedStep(_AdamWSteps):
    """torch.optim.AdamW(fused=True) (foreach on the CPU, where fused is not
    available in every torch)."""

    def fit(self, X, G):
        import time

        import torch

        p = torch.nn.Parameter(X.reshape(-1).clone())
        p.grad = G.reshape(-1).clone()
        fused = p.is_cuda
        opt = torch.optim.AdamW([p], lr=self.lr, weight_decay=self.weight_decay, fused=fused or None,
                                foreach=None if fused else True)
        opt.step()
        sync = torch.cuda.synchronize if p.is_cuda else (lambda: None)
        sync()
        t0 = time.perf_counter()
        for _ in range(self.steps):
            opt.step()
        sync()
        return self._record(time.perf_counter() - t0, p.shape[0], p)


def adamw_bandwidth(ev) -> dict:
    """Memory traffic of the AdamW steps, GB/s (7 float32 moved per parameter)."""
    return {"gb_per_s": float(ev.model.gb_per_s_)}


register(Workload(
    name="adamw_step",
    title="AdamW step over {rows} float32 parameters",
    data=flat_parameters,
    # cuda: the 1e9 parameters of the target (16 GB of parameters, gradients and moments)
    scales={"smoke": Scale(100_000, 1), "cpu": Scale(20_000_000, 1), "cuda": Scale(1_000_000_000, 1)},
    estimator=lambda device=None, numeric_mode=None, **p: AdamWStepBench(device, numeric_mode, **p),
    sklearn=None,
    params={"steps": 5},
    steps=(Step("fit", ("X", "G")),),
    quality=Quality(adamw_bandwidth, "gb_per_s", True, "memory traffic, GB/s (7 float32 per parameter)"),
    peers=(peers.torch_peer(lambda a: TorchAdamWFusedStep(**a.params)),),
    dtype="float32",
    sweep=False,
    suites=NOT_QUICK,
))
