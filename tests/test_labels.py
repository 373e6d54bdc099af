"""Class labels counted in O(n) (twinlearn._labels) equal np.unique's, and
labels that cannot be counted go through scikit-learn's checks."""

import numpy as np
import pytest

from twinlearn import _labels


@pytest.mark.parametrize(
    "y",
    [
        np.array([1, 0, 1, 1, 0], dtype=np.int64),
        np.array([-5, 7, 7, 3, -5, 0], dtype=np.int32),
        np.array([2, 9, 4], dtype=np.uint8),
        np.array([True, False, True]),
        np.array([True, True]),
        np.array([0.0, 1.0, 1.0, 0.0]),
        np.array([3.0, -2.0, 3.0, 11.0], dtype=np.float32),
        np.array([0.0, -0.0, 2.0]),
        np.array([4, 4, 4]),
        np.random.default_rng(0).integers(-300, 300, 5000),
        np.random.default_rng(1).integers(0, 10, 5000).astype(np.float64),
        np.array([-128, 127, 0, -128], dtype=np.int8),  # the span overflows int8
        np.array([2**64 - 1, 2**64 - 3, 2**64 - 1], dtype=np.uint64),  # above int64, a narrow span
        np.array([-3, -2, -3, -1], dtype=np.int16),  # every value of the span present, lo < 0
        np.array([-1.0, 4096.0, -1.0], dtype=np.float16),  # y - lo = 4097 has no float16
    ],
)
def test_counted_labels_equal_np_unique(y):
    classes, codes = _labels.integral_classes(y)
    ref_classes, ref_codes = np.unique(y, return_inverse=True)
    assert classes.dtype == ref_classes.dtype
    np.testing.assert_array_equal(classes, ref_classes)
    np.testing.assert_array_equal(codes, ref_codes)
    assert codes.dtype == ref_codes.dtype


@pytest.mark.parametrize(
    "y",
    [
        np.array([0.5, 1.0]),
        np.array(["a", "b", "a"]),
        np.array([0, 1 << 40]),
        np.array([np.nan, 1.0]),
        np.array([np.inf, 1.0]),
        np.zeros((3, 2)),
        np.array([], dtype=np.int64),
        np.array([1, 2], dtype=object),
    ],
)
def test_labels_that_are_not_counted(y):
    assert _labels.integral_classes(y) is None


def test_encode_classes_falls_back_to_np_unique_and_the_checks():
    classes, codes = _labels.encode_classes(np.array(["b", "a", "b"]))
    np.testing.assert_array_equal(classes, ["a", "b"])
    np.testing.assert_array_equal(codes, [1, 0, 1])
    with pytest.raises(ValueError, match="Unknown label type"):
        _labels.encode_classes(np.array([0.5, 1.5, 0.25]))
