"""Ensemble estimators: gradient-boosted decision trees, random forests and extra trees."""

from ._catboost import GradientBoosting
from ._forest import ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier, RandomForestRegressor
from ._sklearn import GradientBoostingClassifier, GradientBoostingRegressor

__all__ = [
    "GradientBoosting",
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
]
