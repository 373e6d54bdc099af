"""Tools for testing twinlearn estimators: bits, bit-identity checks, hostile data.

- **Bits.** :func:`bits` is the raw-bit view of an array (NumPy, CuPy,
  PyTorch, scalars): dtype, shape and bytes, comparable and hashable.
  :func:`assert_same_bits` fails with the first differing element, both
  values and their ULP distance; :func:`same_bits` is its boolean form.
- **Fitted estimators.** :func:`snapshot` holds an estimator's public fitted
  attributes and its outputs on some rows; :func:`assert_same_fitted`
  compares two estimators bit for bit.
- **The numeric contract.** :func:`assert_deterministic` (run to run),
  :func:`assert_identical_across_threads` and
  :func:`assert_identical_across_devices` (CPU against CUDA, identical
  mode; skips without a GPU) take a factory of unfitted estimators.
  :func:`assert_separates` shows that a check tells a rule's right spelling
  from a broken one (a separating test, docs/NUMERICS.md).
- **Data.** :mod:`twinlearn.testing.fixtures`: ties, ±0, subnormals,
  duplicate rows, odd sizes, wide matrices, NaN/inf.
  :func:`host` and :func:`to_device` move arrays between NumPy and
  CuPy/PyTorch.
- **Estimators.** :mod:`twinlearn.testing.estimators` registers every public
  estimator with small, fast parameters, its task and its waivers.

The package imports pytest only inside the helpers that skip.
"""

from ._arrays import DEVICE_LIBS, gpu_required, host, same_kind, skip_without_gpu, to_device
from ._bits import Bits, assert_same_bits, bits, describe_difference, same_bits, ulp_distance
from ._checks import (
    assert_deterministic,
    assert_identical_across_devices,
    assert_identical_across_threads,
    assert_separates,
    fit_snapshot,
)
from ._fitted import (
    OUTPUT_METHODS,
    assert_same_fitted,
    assert_same_snapshot,
    fitted_attributes,
    outputs,
    snapshot,
    snapshot_differences,
)

__all__ = [
    "Bits",
    "DEVICE_LIBS",
    "OUTPUT_METHODS",
    "assert_deterministic",
    "assert_identical_across_devices",
    "assert_identical_across_threads",
    "assert_same_bits",
    "assert_same_fitted",
    "assert_same_snapshot",
    "assert_separates",
    "bits",
    "describe_difference",
    "fit_snapshot",
    "fitted_attributes",
    "gpu_required",
    "host",
    "outputs",
    "same_bits",
    "same_kind",
    "skip_without_gpu",
    "snapshot",
    "snapshot_differences",
    "to_device",
    "ulp_distance",
]
