"""Kernels of :class:`twinlearn.gaussian_process.GaussianProcessRegressor`.

These are scikit-learn's own kernel classes (``sklearn.gaussian_process.kernels``),
re-exported: hyperparameters, bounds, ``theta``, ``clone_with_theta``,
``get_params`` and the ``+``, ``*``, ``**`` algebra are scikit-learn's.
When a twinlearn estimator evaluates them, the kernel matrices and their
gradients of RBF, Matern (nu 0.5, 1.5, 2.5, inf), RationalQuadratic,
ExpSineSquared, DotProduct, WhiteKernel, ConstantKernel and their sums,
products and powers are computed by twinlearn's backends (docs/NUMERICS.md,
"Gaussian processes"); any other kernel (Matern of another nu, user
subclasses) is evaluated by its own ``__call__`` on NumPy.
"""

from sklearn.gaussian_process.kernels import (  # noqa: F401
    RBF,
    CompoundKernel,
    ConstantKernel,
    DotProduct,
    Exponentiation,
    ExpSineSquared,
    Hyperparameter,
    Kernel,
    Matern,
    PairwiseKernel,
    Product,
    RationalQuadratic,
    Sum,
    WhiteKernel,
)

__all__ = [
    "CompoundKernel",
    "ConstantKernel",
    "DotProduct",
    "ExpSineSquared",
    "Exponentiation",
    "Hyperparameter",
    "Kernel",
    "Matern",
    "PairwiseKernel",
    "Product",
    "RBF",
    "RationalQuadratic",
    "Sum",
    "WhiteKernel",
]
