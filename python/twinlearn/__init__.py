"""twinlearn: GPU machine learning with scikit-learn shapes and a numeric
contract chosen per estimator (fast, deterministic, identical).

The CPU backend is always available; the CUDA backend is loaded on first use.
``twinlearn.accelerate`` (and the rest of :mod:`twinlearn.accel`) runs
unchanged scikit-learn code on twinlearn.
"""

from __future__ import annotations

import os as _os

from ._config import (
    config_context,
    get_config,
    get_device,
    get_n_threads,
    get_numeric_mode,
    set_device,
    set_n_threads,
    set_numeric_mode,
)
from ._info import device_info, vendor
from .cluster import KMeans, MiniBatchKMeans
from . import linalg  # noqa: F401  (twinlearn.linalg.matmul, twinlearn.linalg.gram)
from .decomposition import PCA, IncrementalPCA, TruncatedSVD
from .ensemble import GradientBoosting, GradientBoostingClassifier, GradientBoostingRegressor
from .linear_model import ElasticNet, Lasso, LinearRegression, LogisticRegression, Ridge, RidgeClassifier
from .naive_bayes import GaussianNB
from .neighbors import KNeighborsClassifier, KNeighborsRegressor, NearestNeighbors
from .preprocessing import MaxAbsScaler, MinMaxScaler, Normalizer, RobustScaler, StandardScaler
from .accel import accelerate  # noqa: E402  (after the estimators it wraps)

__version__ = "0.1.0"

__all__ = [
    "ElasticNet",
    "GaussianNB",
    "GradientBoosting",
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
    "KMeans",
    "KNeighborsClassifier",
    "KNeighborsRegressor",
    "IncrementalPCA",
    "Lasso",
    "LinearRegression",
    "LogisticRegression",
    "MaxAbsScaler",
    "MinMaxScaler",
    "MiniBatchKMeans",
    "NearestNeighbors",
    "Normalizer",
    "PCA",
    "RidgeClassifier",
    "Ridge",
    "RobustScaler",
    "StandardScaler",
    "TruncatedSVD",
    "accelerate",
    "config_context",
    "device_info",
    "get_config",
    "get_device",
    "get_n_threads",
    "get_numeric_mode",
    "set_device",
    "set_n_threads",
    "set_numeric_mode",
    "vendor",
    "__version__",
]

# TWINLEARN_ACCEL=1: install the scikit-learn accelerator (the .pth file a
# wheel installs does it at interpreter start; this covers importing twinlearn
# from a source tree).
from .accel import _boot

if _boot.wanted(_os.environ):
    from .accel import install as _install_accel

    _install_accel()
del _boot
