"""Class labels of classifiers: ``np.unique(y, return_inverse=True)`` in O(n).

Sorting a million labels to find two classes costs more than many fits (np.unique
with return_inverse takes about 0.15 s on 2M float labels), so integral labels
(integers, booleans, and floats that are whole numbers) are counted instead:
one bincount over the range of the labels. Anything else (strings, objects,
fractional floats, a range of a million or more) goes through scikit-learn's
check_classification_targets and np.unique, as before.
"""

from __future__ import annotations

import numpy as np
from sklearn.utils.multiclass import check_classification_targets

#: Widest range of integral labels that is counted (a bincount of this many slots).
MAX_COUNTED_RANGE = 1 << 20


def integral_classes(y):
    """(classes, codes) as ``np.unique(y, return_inverse=True)`` for 1-D
    integral labels, classes in y's dtype; None when y is not such labels
    (not 1-D, empty, not numeric, not whole numbers, or too wide a range)."""
    y = np.asarray(y)
    if y.ndim != 1 or y.size == 0:
        return None
    if y.dtype.kind == "f":
        with np.errstate(invalid="ignore"):  # NaN and inf cast to some integer, then fail the comparison
            shifted = y.astype(np.intp)
        if not np.array_equal(shifted, y):
            return None
    elif y.dtype.kind not in "iub":
        return None
    lo, hi = int(y.min()), int(y.max())
    if hi - lo >= MAX_COUNTED_RANGE:
        return None
    if y.dtype.kind == "u" and y.dtype.itemsize >= np.dtype(np.intp).itemsize:
        shifted = (y - y.dtype.type(lo)).astype(np.intp)  # values above intp's range, a narrow span
    else:
        if y.dtype.kind != "f":
            shifted = y.astype(np.intp)
        if lo:
            shifted -= lo
    # shifted = y - lo as intp (one array, made once); when every value of the
    # span occurs (two classes 0 and 1, say) it is already the codes.
    present = np.flatnonzero(np.bincount(shifted, minlength=hi - lo + 1))
    # lo + present: for integers in y's dtype (wrapping arithmetic, exact since
    # every class fits it; lo may exceed int64), else from int64.
    if y.dtype.kind in "iu":
        classes = present.astype(y.dtype) + y.dtype.type(lo)
    else:
        classes = (present + lo).astype(y.dtype)
    if present.shape[0] == hi - lo + 1:
        return classes, shifted
    lut = np.full(hi - lo + 1, -1, dtype=np.intp)
    lut[present] = np.arange(present.shape[0], dtype=np.intp)
    return classes, lut[shifted]


def checked_unique(y):
    """(classes, codes) by scikit-learn's target check and np.unique: for
    labels that integral_classes does not count."""
    check_classification_targets(y)
    return np.unique(y, return_inverse=True)


def encode_classes(y):
    """(classes, codes) of 1-D classification labels, with scikit-learn's
    target checks (integral labels always pass them: they are binary or
    multiclass)."""
    enc = integral_classes(y)
    return enc if enc is not None else checked_unique(y)

