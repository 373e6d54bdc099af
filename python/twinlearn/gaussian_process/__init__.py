"""Gaussian-process regression (scikit-learn's sklearn.gaussian_process)."""

from . import kernels
from ._gpr import GaussianProcessRegressor

__all__ = ["GaussianProcessRegressor"]
