"""Input checks: now part of :mod:`twinlearn._io` (kept as a name until
every caller imports ``_io``)."""

import numpy as np

from ._io import (  # noqa: F401
    FLOAT_DTYPES,
    INF_MESSAGE,
    check_device_shape,
    check_n_features,
    check_sample_weight,
    check_X,
    nan_message,
    np_float_dtype,
    raise_nonfinite,
    sklearn_nonfinite_message,
    transform_elementwise,
)


def zeros_to_one(scale):
    """scikit-learn's rule for scales of (near-)constant features: below
    10 * eps of their dtype they become 1 (NaN stays NaN)."""
    scale = np.array(scale, copy=True)
    scale[scale < 10 * np.finfo(scale.dtype).eps] = 1.0
    return scale
