"""Metrics: pairwise distances on the CPU and CUDA backends."""

from ._pairwise import pairwise_distances, pairwise_distances_argmin, pairwise_distances_argmin_min

__all__ = ["pairwise_distances", "pairwise_distances_argmin", "pairwise_distances_argmin_min"]
