"""Time-series models."""

from ._arima import ARIMA

__all__ = ["ARIMA"]
