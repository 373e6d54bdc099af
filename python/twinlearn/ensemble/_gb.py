"""The estimators' former home, kept so that models pickled by earlier
versions (which name ``twinlearn.ensemble._gb.GradientBoosting`` and its
siblings) still load. The code lives in the stage modules of this package:
_params, _checks, _fit, _model, _predict, _importance, _model_io, _base,
_catboost and _sklearn."""

from ._base import _BoostingCore
from ._catboost import GradientBoosting
from ._params import parse_loss as _parse_loss, sampling_seed as _sampling_seed
from ._model import tree_split_counts as _tree_split_counts
from ._sklearn import GradientBoostingClassifier, GradientBoostingRegressor, _SklearnShaped

__all__ = ["GradientBoosting", "GradientBoostingClassifier", "GradientBoostingRegressor"]
