"""Contenders from other libraries.

The PyTorch classes are the short versions a user would write on the same
device (TF32 off); the FAISS classes wrap its index in the estimator calls the
workloads time. Library peers (cuML, XGBoost, LightGBM, CatBoost, umap-learn)
are built from their own scikit-learn style classes. Each library is imported
only when its contender runs; a missing one is reported "absent".
"""

from __future__ import annotations

import os

import numpy as np

from .registry import Peer, PeerArgs

# -- plain PyTorch -----------------------------------------------------------


def _torch():
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return torch


class TorchStandardScaler:
    def fit_transform(self, x):
        return (x - x.mean(0)) / x.std(0, unbiased=False)


class TorchMinMaxScaler:
    def fit_transform(self, x):
        lo, hi = x.min(0).values, x.max(0).values
        return (x - lo) / (hi - lo)


class TorchKMeans:
    """Lloyd's algorithm for a fixed number of iterations from given centres."""

    def __init__(self, init, max_iter):
        self.init, self.max_iter = init, max_iter

    def fit(self, x):
        torch = _torch()
        c = torch.as_tensor(self.init, device=x.device, dtype=x.dtype)
        k = c.shape[0]
        for _ in range(self.max_iter):
            labels = torch.cdist(x, c).argmin(1)
            sums = torch.zeros_like(c).index_add_(0, labels, x)
            counts = torch.bincount(labels, minlength=k).to(x.dtype)[:, None]
            c = torch.where(counts > 0, sums / counts.clamp(min=1), c)
        self.cluster_centers_ = c
        return self


class TorchNearestNeighbors:
    """Brute force: distance blocks of at most 2^28 entries, then top-k."""

    def __init__(self, n_neighbors):
        self.n_neighbors = n_neighbors

    def fit(self, x):
        self._x = x
        return self

    def kneighbors(self, q):
        torch = _torch()
        rows = max(1, (1 << 28) // self._x.shape[0])
        dist, ind = [], []
        for s in range(0, q.shape[0], rows):
            d, i = torch.cdist(q[s : s + rows], self._x).topk(self.n_neighbors, dim=1, largest=False)
            dist.append(d)
            ind.append(i)
        return torch.cat(dist), torch.cat(ind)


class TorchLinearRegression:
    """Least squares with intercept by the normal equations (ridge when alpha > 0)."""

    def __init__(self, alpha=0.0):
        self.alpha = alpha

    def fit(self, x, y):
        torch = _torch()
        y = y.to(x.dtype)
        x_mean, y_mean = x.mean(0), y.mean()
        xc = x - x_mean
        gram = xc.T @ xc
        if self.alpha:
            gram += self.alpha * torch.eye(x.shape[1], device=x.device, dtype=x.dtype)
        self.coef_ = torch.linalg.solve(gram, xc.T @ (y - y_mean))
        self.intercept_ = y_mean - x_mean @ self.coef_
        return self

    def predict(self, x):
        return x @ self.coef_ + self.intercept_


class TorchPCA:
    """Eigenvectors of the covariance matrix."""

    def __init__(self, n_components):
        self.n_components = n_components

    def fit(self, x):
        torch = _torch()
        self.mean_ = x.mean(0)
        xc = x - self.mean_
        _, vecs = torch.linalg.eigh(xc.T @ xc / (x.shape[0] - 1))
        self.components_ = vecs[:, -self.n_components :].flip(1).T
        return self


def torch_peer(build) -> Peer:
    """Plain PyTorch on the benchmark's device; `build(PeerArgs)` makes the estimator."""
    return Peer("torch", "torch", build, input="torch")


# -- FAISS -------------------------------------------------------------------


def _faiss_gpu(args: PeerArgs) -> bool:
    import faiss

    return args.gpu and hasattr(faiss, "StandardGpuResources") and faiss.get_num_gpus() > 0


class FaissNearestNeighbors:
    """Exact L2 search (IndexFlatL2), on the GPU when this FAISS has GPU support."""

    def __init__(self, n_neighbors, gpu):
        self.n_neighbors, self.gpu = n_neighbors, gpu

    def fit(self, x):
        import faiss

        index = faiss.IndexFlatL2(x.shape[1])
        if self.gpu:
            self._res = faiss.StandardGpuResources()
            index = faiss.index_cpu_to_gpu(self._res, 0, index)
        index.add(np.ascontiguousarray(x, dtype=np.float32))
        self._index = index
        return self

    def kneighbors(self, q):
        d2, ind = self._index.search(np.ascontiguousarray(q, dtype=np.float32), self.n_neighbors)
        return np.sqrt(np.maximum(d2, 0)), ind


class FaissKMeans:
    """faiss.Kmeans from the given centres, on all rows (no subsampling)."""

    def __init__(self, init, max_iter, gpu):
        self.init, self.max_iter, self.gpu = init, max_iter, gpu

    def fit(self, x):
        import faiss

        x = np.ascontiguousarray(x, dtype=np.float32)
        km = faiss.Kmeans(
            x.shape[1], self.init.shape[0], niter=self.max_iter, gpu=self.gpu,
            max_points_per_centroid=x.shape[0], verbose=False,
        )
        km.train(x, init_centroids=np.ascontiguousarray(self.init, dtype=np.float32))
        self.cluster_centers_ = km.centroids
        return self


# -- library peers -----------------------------------------------------------


def cuml_peer(path: str, params=lambda a: dict(a.params)) -> Peer:
    """A cuML estimator (data as CuPy/PyTorch on the GPU); `params` maps the
    workload's PeerArgs to the estimator's arguments."""

    def build(a: PeerArgs):
        import importlib

        module, _, name = path.rpartition(".")
        return getattr(importlib.import_module(module), name)(**params(a))

    return Peer("cuML", "cuml", build, input="device", gpu_only=True)


def _cpu_threads() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _xgboost_gpu(a: PeerArgs) -> bool:
    """A GPU run, when one is asked for and this XGBoost build has CUDA (the
    'xgboost-cpu' package has not: it then runs on the CPU, noted so)."""
    import xgboost

    return a.gpu and bool(xgboost.build_info().get("USE_CUDA"))


def xgboost_classifier(a: PeerArgs):
    import xgboost

    e = a.scale.extra
    return xgboost.XGBClassifier(
        n_estimators=e["rounds"], max_depth=e["depth"], learning_rate=0.1, tree_method="hist",
        max_bin=256, device="cuda" if _xgboost_gpu(a) else "cpu", n_jobs=_cpu_threads(),
    )


def lightgbm_classifier(a: PeerArgs):
    import lightgbm

    e = a.scale.extra
    return lightgbm.LGBMClassifier(
        n_estimators=e["rounds"], max_depth=e["depth"], num_leaves=2 ** e["depth"], learning_rate=0.1,
        max_bin=255, n_jobs=_cpu_threads(), verbose=-1,
    )


def catboost_classifier(a: PeerArgs):
    import catboost

    e = a.scale.extra
    return catboost.CatBoostClassifier(
        iterations=e["rounds"], depth=e["depth"], learning_rate=0.1, task_type="GPU" if a.gpu else "CPU",
        thread_count=_cpu_threads(), verbose=0, allow_writing_files=False,
    )


def _where(a: PeerArgs) -> str:
    return "GPU" if a.gpu else "CPU"


XGBOOST = Peer("XGBoost", "xgboost", xgboost_classifier, note=lambda a: "GPU" if _xgboost_gpu(a) else "CPU")
LIGHTGBM = Peer("LightGBM", "lightgbm", lightgbm_classifier, note=lambda a: "CPU")
CATBOOST = Peer("CatBoost", "catboost", catboost_classifier, note=_where)


def umap_learn(a: PeerArgs):
    import umap

    return umap.UMAP(n_components=2, n_neighbors=15)


UMAP_LEARN = Peer("umap-learn", "umap", umap_learn)


def faiss_knn_peer() -> Peer:
    return Peer(
        "FAISS", "faiss",
        lambda a: FaissNearestNeighbors(a.params["n_neighbors"], _faiss_gpu(a)),
        note=lambda a: "GPU index" if _faiss_gpu(a) else "CPU index",
    )


def faiss_kmeans_peer() -> Peer:
    return Peer(
        "FAISS", "faiss",
        lambda a: FaissKMeans(a.params["init"], a.params["max_iter"], _faiss_gpu(a)),
        note=lambda a: "GPU" if _faiss_gpu(a) else "CPU",
    )


class StatsmodelsArimaLoop:
    """statsmodels' ARIMA fitted series by series over the first `subset`
    columns of X (a loop is how statsmodels fits a batch): its time covers
    those series only, shown beside the result."""

    def __init__(self, order, subset):
        self.order, self.subset = tuple(order), int(subset)

    def fit(self, X):
        import warnings

        from statsmodels.tsa.arima.model import ARIMA

        X = np.asarray(X, dtype=np.float64)
        self.llf_ = []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for j in range(min(self.subset, X.shape[1])):
                self.llf_.append(ARIMA(X[:, j], order=self.order).fit().llf)
        self.llf_ = np.asarray(self.llf_)
        return self


def statsmodels_arima_peer(subset: int = 20) -> Peer:
    return Peer(
        "statsmodels (loop)", "statsmodels",
        lambda a: StatsmodelsArimaLoop(a.params["order"], subset),
        note=lambda a: f"first {subset} series only: scale its time by n_series / {subset}",
    )
