"""Exact nearest neighbours on the CPU and CUDA backends."""

from ._base import KNeighborsClassifier, KNeighborsRegressor, NearestNeighbors
from ._kde import KernelDensity

__all__ = ["KNeighborsClassifier", "KNeighborsRegressor", "NearestNeighbors", "KernelDensity"]
