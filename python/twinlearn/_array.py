"""Array kinds, placement and allocation: now part of :mod:`twinlearn._io`
(kept as a name until every caller imports ``_io``)."""

from ._io import (  # noqa: F401
    FLOAT_DTYPES,
    as_device_matrix,
    current_stream,
    device_any,
    device_nonfinite,
    device_of,
    empty_like_kind,
    from_numpy_like,
    is_device_array,
    kind,
    to_numpy,
)
