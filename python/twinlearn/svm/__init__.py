"""Support vector machines."""

from ._classes import SVC, SVR

__all__ = ["SVC", "SVR"]
