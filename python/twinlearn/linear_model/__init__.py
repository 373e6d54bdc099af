"""Linear models with scikit-learn's names, defaults and fitted attributes."""

from ._base import LinearRegression
from ._logistic import LogisticRegression
from ._ridge import Ridge, RidgeClassifier

__all__ = ["LinearRegression", "LogisticRegression", "Ridge", "RidgeClassifier"]
