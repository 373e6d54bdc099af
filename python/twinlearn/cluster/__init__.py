"""Clustering on the CPU and CUDA backends."""

from ._kmeans import KMeans, MiniBatchKMeans, kmeans_plusplus
from ._dbscan import DBSCAN

__all__ = ["KMeans", "MiniBatchKMeans", "kmeans_plusplus", "DBSCAN"]

from ._agglomerative import AgglomerativeClustering  # noqa: E402

__all__ += ["AgglomerativeClustering"]
