"""Ensemble estimators: gradient-boosted decision trees, random forests, extra trees and isolation forests."""

from ._catboost import GradientBoosting
from ._forest import ExtraTreesClassifier, ExtraTreesRegressor, RandomForestClassifier, RandomForestRegressor
from ._iforest import IsolationForest
from ._sklearn import GradientBoostingClassifier, GradientBoostingRegressor

__all__ = [
    "GradientBoosting",
    "GradientBoostingClassifier",
    "GradientBoostingRegressor",
    "RandomForestClassifier",
    "RandomForestRegressor",
    "ExtraTreesClassifier",
    "ExtraTreesRegressor",
    "IsolationForest",
]
