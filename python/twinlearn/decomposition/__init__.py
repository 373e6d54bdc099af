"""Matrix decompositions: PCA, IncrementalPCA and TruncatedSVD on the CPU and
CUDA backends (docs/NUMERICS.md, "Decompositions")."""

from ._incremental_pca import IncrementalPCA
from ._pca import PCA
from ._truncated_svd import TruncatedSVD

__all__ = ["IncrementalPCA", "PCA", "TruncatedSVD"]
