"""Ensemble estimators: gradient-boosted decision trees."""

from ._catboost import GradientBoosting
from ._sklearn import GradientBoostingClassifier, GradientBoostingRegressor

__all__ = ["GradientBoosting", "GradientBoostingClassifier", "GradientBoostingRegressor"]
