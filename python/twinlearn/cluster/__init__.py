"""Clustering on the CPU and CUDA backends."""

from ._kmeans import KMeans, kmeans_plusplus

__all__ = ["KMeans", "kmeans_plusplus"]
