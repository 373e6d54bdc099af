"""The estimators' former home, kept so that models pickled by earlier
versions (which name ``twinlearn.ensemble._gb.GradientBoosting`` and its
siblings) still load. The code lives in the stage modules of this package:
_params, _checks, _fit, _model, _predict, _importance, _model_io, _base,
_catboost (GradientBoosting) and _sklearn (the scikit-learn-shaped pair)."""

from ._catboost import GradientBoosting
from ._sklearn import GradientBoostingClassifier, GradientBoostingRegressor

__all__ = ["GradientBoosting", "GradientBoostingClassifier", "GradientBoostingRegressor"]
