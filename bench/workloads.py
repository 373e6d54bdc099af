"""The registered workloads.

Sizes: 'cuda' follows the performance targets (one H200, float32, data on the
GPU); 'cpu' is small enough for the quick suite to finish in a few minutes on
two cores; 'smoke' is for the harness's tests.

To add a workload: ``register(Workload(...))`` below, naming its twinlearn class
(reported "not implemented" until it exists), data generator, sizes, timed
steps, metric and peers.
"""

from __future__ import annotations

from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from . import datasets, metrics, peers
from .registry import FIT, FIT_TRANSFORM, FIT_XY, Scale, Step, Workload, accelerated, register

NONLINEAR = {"nonlinear": True}

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

register(Workload(
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
    suites=frozenset({"full"}),
    mem_factor=3,
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
    suites=frozenset({"full"}),
    mem_factor=4,
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
    sklearn_params={"svd_solver": "full"},
    sklearn_variants={
        "randomized": {"svd_solver": "randomized", "random_state": 0},
        "covariance_eigh": {"svd_solver": "covariance_eigh"},
    },
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
    suites=frozenset({"smoke", "full"}),
    mem_factor=3,
))

# -- ensembles -------------------------------------------------------------------

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
    twinlearn_params=lambda scale, data: {
        "n_estimators": scale.extra["rounds"], "max_depth": scale.extra["depth"], "learning_rate": 0.1,
    },
    sklearn_params=lambda scale, data: {
        "max_iter": scale.extra["rounds"], "max_depth": scale.extra["depth"],
        "max_leaf_nodes": 2 ** scale.extra["depth"], "learning_rate": 0.1, "early_stopping": False,
    },
    steps=(FIT_XY,),
    quality=metrics.ACCURACY,
    peers=(peers.XGBOOST, peers.LIGHTGBM, peers.CATBOOST),
    mem_factor=3,
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
    mem_factor=3,
))

# -- embeddings ---------------------------------------------------------------

register(Workload(
    name="umap",
    title="UMAP {rows} x {cols} -> 2",
    data=datasets.blobs,
    scales={
        "smoke": Scale(500, 8, {"centers": 5}),
        "cpu": Scale(10_000, 16, {"centers": 10}),
        "cuda": Scale(100_000, 32, {"centers": 20}),
    },
    estimator="manifold.UMAP",
    sklearn=None,
    params={"n_components": 2, "n_neighbors": 15},
    steps=(FIT_TRANSFORM,),
    quality=metrics.TRUSTWORTHINESS,
    peers=(peers.UMAP_LEARN, peers.cuml_peer("cuml.manifold.UMAP")),
    suites=frozenset({"full"}),
    sweep=False,
))

# -- scikit-learn code under twinlearn.accelerate -----------------------------

register(accelerated(STANDARD_SCALER))
register(accelerated(KMEANS))
register(accelerated(RIDGE))
register(accelerated(PCA, sklearn_params={}))  # scikit-learn's default solver
register(accelerated(TRUNCATED_SVD, sklearn_params={"algorithm": "arpack"}))
register(accelerated(MINIBATCH_KMEANS))
register(accelerated(KNN, sklearn_params={}))  # scikit-learn's default algorithm
register(accelerated(LINEAR_REGRESSION))
register(accelerated(LOGISTIC_REGRESSION))
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
