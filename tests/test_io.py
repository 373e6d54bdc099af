"""The input/output layer's dtype policy (twinlearn._io)."""

import numpy as np
import pytest

from twinlearn import _io


@pytest.mark.parametrize("spelling", [np.float32, np.dtype("float32"), "float32"])
def test_float32_stays_float32_whatever_its_spelling(spelling):
    X = np.arange(6, dtype=np.float64).reshape(3, 2)
    assert _io.as_dtype(X, spelling).dtype == np.float32
    assert _io.np_float_dtype(X.astype(spelling)) == np.float32


@pytest.mark.parametrize("dt", [np.int64, np.float16, np.float64, "int32"])
def test_other_dtypes_compute_in_float64(dt):
    X = np.arange(6).reshape(3, 2).astype(dt)
    assert _io.as_dtype(X, dt).dtype == np.float64
    assert _io.np_float_dtype(X) == np.float64


def test_as_dtype_copies_only_when_needed():
    X = np.ones((3, 2), dtype=np.float32)
    assert _io.as_dtype(X, np.float32) is X
