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


# -- text where numbers are expected ------------------------------------------------
def _sklearn_text_message():
    from sklearn.utils import check_array

    with pytest.raises(ValueError) as e:
        check_array(np.array([["a"]]))
    return str(e.value)


@pytest.mark.parametrize("make", [
    lambda: np.array([["1", "2"], ["3", "4"]]),
    lambda: np.array([[b"1", b"2"], [b"3", b"4"]]),
    lambda: np.array([["1", 2.0], [3.0, 4.0]], dtype=object),
    lambda: [[1.0, "2"], [3.0, 4.0]],
], ids=["str", "bytes", "object", "list"])
def test_text_is_refused_with_sklearns_message(make):
    """scikit-learn's check_array words (dtype='numeric' refuses text), for
    every spelling of text; numbers as objects still pass."""
    with pytest.raises(ValueError) as e:
        _io.refuse_text(make())
    assert str(e.value) == _sklearn_text_message()
    _io.refuse_text(np.array([[1, 2.0]], dtype=object))


def test_text_column_of_a_dataframe_is_named():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"a": [1.0, 2.0], "label": ["x", "y"], "c": [3.0, 4.0]})
    with pytest.raises(ValueError, match="Column 'label' of X: it holds strings \\(e.g. 'x'\\)"):
        _io.refuse_text(X)
    _io.refuse_text(X[["a", "c"]])


def test_category_column_of_strings_is_named_with_its_codes():
    pd = pytest.importorskip("pandas")
    X = pd.DataFrame({"a": [1.0, 2.0], "color": pd.Categorical(["red", "blue"]),
                      "size": pd.Categorical([1, 2])})
    with pytest.raises(ValueError, match=r"Column 'color' of X: its categories are strings .*X\['color'\]\.cat\.codes"):
        _io.refuse_text(X)
    _io.refuse_text(X[["a", "size"]])  # numeric categories are numbers
