"""Preprocessing estimators."""

from ._data import StandardScaler
from ._scalers import MaxAbsScaler, MinMaxScaler, Normalizer, RobustScaler

__all__ = ["MaxAbsScaler", "MinMaxScaler", "Normalizer", "RobustScaler", "StandardScaler"]
