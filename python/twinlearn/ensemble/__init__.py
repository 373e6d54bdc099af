"""Ensemble estimators: gradient-boosted decision trees."""

from ._gb import GradientBoosting, GradientBoostingClassifier, GradientBoostingRegressor

__all__ = ["GradientBoosting", "GradientBoostingClassifier", "GradientBoostingRegressor"]
