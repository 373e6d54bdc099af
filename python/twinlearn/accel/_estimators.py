"""The accelerated estimators: one declarative entry each (see ``_registry.Entry``).

Only estimators twinlearn implements are declared; an entry whose twinlearn
class is missing from this build is skipped. A new estimator is one more
``Entry(...)`` here, then ``python -m twinlearn.accel --support-matrix >
docs/SUPPORT_MATRIX.md``.
"""

from __future__ import annotations

from ._registry import ANY, DEFAULT_MIN_ROWS, Entry

ENTRIES = (
    Entry(
        sklearn="sklearn.preprocessing.StandardScaler",
        twinlearn="twinlearn.preprocessing.StandardScaler",
        methods=("fit", "partial_fit", "transform", "fit_transform", "inverse_transform"),
        attributes=("mean_", "var_", "scale_", "n_samples_seen_"),
        params={"copy": ANY, "with_mean": ANY, "with_std": ANY},
        kwargs=("sample_weight", "copy"),
        allow_nan=True,
        min_rows=DEFAULT_MIN_ROWS,
        conformance=(
            ("sklearn.preprocessing.tests.test_data", ""),
            ("sklearn.tests.test_common", "StandardScaler"),
        ),
        conformance_k="standard_scaler or StandardScaler",
    ),
)
