"""Clustering on the CPU and CUDA backends."""

from ._kmeans import KMeans, MiniBatchKMeans, kmeans_plusplus
from ._dbscan import DBSCAN
from ._hdbscan import HDBSCAN

from ._agglomerative import AgglomerativeClustering

__all__ = ["KMeans", "MiniBatchKMeans", "kmeans_plusplus", "DBSCAN", "HDBSCAN", "AgglomerativeClustering"]
from ._spectral import SpectralClustering

__all__ += ["SpectralClustering"]
