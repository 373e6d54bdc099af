"""Naive Bayes estimators."""

from ._gaussian_nb import GaussianNB

__all__ = ["GaussianNB"]
