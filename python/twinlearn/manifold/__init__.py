"""Manifold learning: UMAP on the CPU and CUDA backends."""

from ._umap import UMAP

__all__ = ["UMAP"]
