"""twinlearn: GPU machine learning with scikit-learn shapes and a numeric
contract chosen per estimator (fast, deterministic, identical).

The CPU backend is always available; the CUDA backend is loaded on first use.
"""

from __future__ import annotations

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
from .linear_model import ElasticNet, Lasso, LinearRegression, LogisticRegression, Ridge, RidgeClassifier
from .naive_bayes import GaussianNB
from .preprocessing import MaxAbsScaler, MinMaxScaler, Normalizer, RobustScaler, StandardScaler

__version__ = "0.1.0"

__all__ = [
    "ElasticNet",
    "GaussianNB",
    "Lasso",
    "LinearRegression",
    "LogisticRegression",
    "MaxAbsScaler",
    "MinMaxScaler",
    "Normalizer",
    "RidgeClassifier",
    "Ridge",
    "RobustScaler",
    "StandardScaler",
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
