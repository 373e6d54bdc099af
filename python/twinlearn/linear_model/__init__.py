"""Linear models with scikit-learn's names, defaults and fitted attributes."""

from ._base import LinearRegression
from ._coordinate_descent import ElasticNet, Lasso
from ._logistic import LogisticRegression
from ._ridge import Ridge, RidgeClassifier

__all__ = ["ElasticNet", "Lasso", "LinearRegression", "LogisticRegression", "Ridge", "RidgeClassifier"]
