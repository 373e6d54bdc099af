"""Exact nearest neighbours on the CPU and CUDA backends."""

from ._base import KNeighborsClassifier, KNeighborsRegressor, NearestNeighbors

__all__ = ["KNeighborsClassifier", "KNeighborsRegressor", "NearestNeighbors"]
