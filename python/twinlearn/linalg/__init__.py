"""Matrix products on the CPU and CUDA backends, honouring the numeric mode.

:func:`matmul` is ``op(A) @ op(B)`` with either operand transposed;
:func:`gram` is the Gram matrix ``Zᵀ Z`` of (optionally centred, weighted)
rows, the building block of PCA and of linear models. In ``identical`` and
``deterministic`` mode both run the canonical product (docs/NUMERICS.md): the
same bits on the CPU and on any GPU. In ``fast`` mode on a GPU they call cuBLAS.
"""

from ._linalg import gram, matmul

__all__ = ["gram", "matmul"]
