"""Batched time-series models with statsmodels' parameters and results.

:class:`ExponentialSmoothing` (Holt-Winters) and :class:`ARIMA` fit one
series or a batch of many series at once: a 2-D input has time along axis 0
and one series per column.
"""

from ._arima import ARIMA
from ._holtwinters import ExponentialSmoothing, HoltWintersResults

__all__ = ["ARIMA", "ExponentialSmoothing", "HoltWintersResults"]
