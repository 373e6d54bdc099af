"""Helpers of the metric tests: run scikit-learn's and twinlearn's function
on the same arguments and compare results, errors and warnings."""

from __future__ import annotations

import warnings

import numpy as np

from twinlearn.testing import host


def outcome(fn, *args, **kw):
    """(result or (exception type, message), [(warning category, message)])."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(*args, **kw)
        except Exception as e:  # noqa: BLE001 - compared, not swallowed
            out = (type(e), str(e))
    return out, [(w.category, str(w.message)) for w in caught]


def flat(out):
    """A result as a list of float64 NumPy arrays (tuples flattened)."""
    parts = out if isinstance(out, tuple) else (out,)
    return [np.asarray(host(p) if hasattr(p, "shape") else p, dtype=np.float64) for p in parts if p is not None]


def assert_same_outcome(ref, got, *, exact=True, rtol=1e-12, atol=0.0):
    """Same warnings, same error, and the same bits (`exact`) or close values."""
    (r, rw), (g, gw) = ref, got
    assert rw == gw, f"warnings differ: {rw} vs {gw}"
    if isinstance(r, (str, dict)):
        assert r == g
        return
    if isinstance(r, tuple) and len(r) == 2 and isinstance(r[0], type) and issubclass(r[0], Exception):
        assert isinstance(g, tuple) and g[:2] == r, f"expected error {r}, got {g}"
        return
    assert not (isinstance(g, tuple) and len(g) == 2 and isinstance(g[0], type)), f"unexpected error {g}"
    fr, fg = flat(r), flat(g)
    assert len(fr) == len(fg)
    for a, b in zip(fr, fg):
        assert a.shape == b.shape, (a.shape, b.shape)
        if exact:
            assert a.tobytes() == b.tobytes(), f"bits differ:\n{a}\n{b}"
        else:
            np.testing.assert_allclose(b, a, rtol=rtol, atol=atol, equal_nan=True)
    if exact:
        for a, b in zip(r if isinstance(r, tuple) else (r,), g if isinstance(g, tuple) else (g,)):
            if isinstance(a, np.ndarray):
                assert np.asarray(host(b)).dtype == a.dtype, (a.dtype, b.dtype)
            elif a is not None:
                assert type(a) is type(b), (type(a), type(b))
