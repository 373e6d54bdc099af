"""Preprocessing estimators."""

from ._data import StandardScaler

__all__ = ["StandardScaler"]
