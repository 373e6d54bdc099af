"""Raw bits of arrays and their comparison.

:func:`bits` is what two arrays must share to be "the same bits": dtype,
shape and every byte (NaN payloads and the sign of zero included), taken
from host or device memory. :func:`assert_same_bits` says where and by how
much two arrays part when they do.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ._arrays import host


@dataclass(frozen=True)
class Bits:
    """The dtype, shape and raw bytes of an array (C order). Equal Bits mean
    equal bits; the repr names dtype, shape and a short hash, not the bytes."""

    dtype: str
    shape: tuple
    data: bytes

    def __repr__(self) -> str:
        digest = hashlib.blake2b(self.data, digest_size=6).hexdigest()
        return f"Bits({np.dtype(self.dtype).name}{list(self.shape)}, {digest})"


def _host_array(a) -> np.ndarray:
    a = np.asarray(host(a))
    if a.dtype.kind == "O":
        raise TypeError("object arrays have no raw bits to compare; compare their values")
    return a if a.flags.c_contiguous else a.copy(order="C")


def bits(a) -> Bits:
    """The raw bits of `a` (a NumPy, CuPy or PyTorch array, a scalar or anything
    array-like) as a comparable, hashable :class:`Bits`."""
    a = _host_array(a)
    return Bits(a.dtype.str, a.shape, a.tobytes(order="C"))


def same_bits(a, b) -> bool:
    """Whether `a` and `b` have the same dtype, shape and raw bits."""
    return bits(a) == bits(b)


def _ordered(a: np.ndarray) -> np.ndarray:
    """Integers whose order and differences are the floats' order and ULP
    distance (-0 just below +0)."""
    size = a.dtype.itemsize
    i = a.view({2: np.int16, 4: np.int32, 8: np.int64}[size]).astype(np.int64)
    low = np.int64(-(2 ** (8 * size - 1)))
    return np.where(i < 0, low - i - 1, i)


def ulp_distance(a, b) -> np.ndarray:
    """Elementwise distance between two float arrays of one dtype in units in the
    last place, as Python integers (0 for equal bits; -0 and +0 are 1 apart)."""
    a, b = _host_array(a), _host_array(b)
    if a.dtype != b.dtype or a.dtype.kind != "f":
        raise TypeError(f"ulp_distance needs two float arrays of one dtype, got {a.dtype} and {b.dtype}")
    return np.abs(_ordered(a).astype(object) - _ordered(b).astype(object))


def describe_difference(a, b) -> str | None:
    """None when `a` and `b` have the same bits, else one line: dtype or shape
    mismatch, or how many elements differ, the first one (index and both values)
    and, for floats, the largest ULP distance."""
    a, b = _host_array(a), _host_array(b)
    if a.dtype != b.dtype:
        return f"dtypes differ: {a.dtype} vs {b.dtype}"
    if a.shape != b.shape:
        return f"shapes differ: {a.shape} vs {b.shape}"
    if not a.size:
        return None
    width = a.dtype.itemsize
    va, vb = (x.reshape(-1).view(np.uint8).reshape(x.size, width) for x in (a, b))
    diff = (va != vb).any(axis=1)
    n = int(diff.sum())
    if not n:
        return None
    first = int(np.flatnonzero(diff)[0])
    index = np.unravel_index(first, a.shape) if a.ndim else ()
    x, y = a.reshape(-1)[first], b.reshape(-1)[first]
    msg = f"{n} of {a.size} {a.dtype} elements differ; first at index {tuple(int(i) for i in index)}: {x} vs {y}"
    if a.dtype.kind == "f":
        u = ulp_distance(a.reshape(-1)[diff], b.reshape(-1)[diff])
        msg += f" ({int(ulp_distance(x, y))} ulp); max {int(np.max(u))} ulp"
    return msg


def assert_same_bits(a, b, what: str = "") -> None:
    """Raise AssertionError unless `a` and `b` (host or device) have the same
    dtype, shape and raw bits; the message names the first differing element,
    both values and the ULP distance."""
    msg = describe_difference(a, b)
    if msg is not None:
        raise AssertionError(f"{what}: {msg}" if what else msg)
