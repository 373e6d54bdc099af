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
    Entry(
        sklearn="sklearn.preprocessing.MinMaxScaler",
        twinlearn="twinlearn.preprocessing.MinMaxScaler",
        methods=("fit", "partial_fit", "transform", "fit_transform", "inverse_transform"),
        attributes=("min_", "scale_", "data_min_", "data_max_", "data_range_", "n_samples_seen_"),
        params={"feature_range": ANY, "copy": ANY, "clip": ANY},
        allow_nan=True,
        min_rows=DEFAULT_MIN_ROWS,
        conformance=(
            ("sklearn.preprocessing.tests.test_data", ""),
            ("sklearn.tests.test_common", "MinMaxScaler"),
        ),
        conformance_k="min_max_scaler or minmax_scaler or MinMaxScaler",
    ),
    Entry(
        sklearn="sklearn.preprocessing.MaxAbsScaler",
        twinlearn="twinlearn.preprocessing.MaxAbsScaler",
        methods=("fit", "partial_fit", "transform", "fit_transform", "inverse_transform"),
        attributes=("scale_", "max_abs_", "n_samples_seen_"),
        params={"copy": ANY, "clip": ANY},
        allow_nan=True,
        min_rows=DEFAULT_MIN_ROWS,
        conformance=(
            ("sklearn.preprocessing.tests.test_data", ""),
            ("sklearn.tests.test_common", "MaxAbsScaler"),
        ),
        conformance_k="maxabs_scaler or max_abs_scaler or MaxAbsScaler",
    ),
    Entry(
        sklearn="sklearn.preprocessing.RobustScaler",
        twinlearn="twinlearn.preprocessing.RobustScaler",
        methods=("fit", "transform", "fit_transform", "inverse_transform"),
        attributes=("center_", "scale_"),
        params={"copy": ANY, "quantile_range": ANY, "unit_variance": ANY, "with_centering": ANY,
                "with_scaling": ANY},
        allow_nan=True,
        min_rows=DEFAULT_MIN_ROWS,
        conformance=(
            ("sklearn.preprocessing.tests.test_data", ""),
            ("sklearn.tests.test_common", "RobustScaler"),
        ),
        conformance_k="robust_scaler or RobustScaler",
    ),
    Entry(
        sklearn="sklearn.preprocessing.Normalizer",
        twinlearn="twinlearn.preprocessing.Normalizer",
        methods=("fit", "transform", "fit_transform"),
        attributes=(),
        params={"norm": ANY, "copy": ANY},
        kwargs=("copy",),
        min_rows=DEFAULT_MIN_ROWS,
        conformance=(
            ("sklearn.preprocessing.tests.test_data", ""),
            ("sklearn.tests.test_common", "Normalizer"),
        ),
        conformance_k="normalize or normalizer or Normalizer",
    ),
    Entry(
        sklearn="sklearn.naive_bayes.GaussianNB",
        twinlearn="twinlearn.naive_bayes.GaussianNB",
        methods=("fit", "partial_fit", "predict", "predict_proba", "predict_log_proba",
                 "predict_joint_log_proba", "score"),
        attributes=("class_count_", "class_prior_", "classes_", "var_", "theta_", "epsilon_"),
        params={"priors": ANY, "var_smoothing": ANY},
        kwargs=("sample_weight", "classes"),
        min_rows=DEFAULT_MIN_ROWS,
        task="classifier",
        conformance=(
            ("sklearn.tests.test_naive_bayes", ""),
            ("sklearn.tests.test_common", "GaussianNB"),
        ),
        conformance_k="gnb or GaussianNB or gaussian",
    ),
)
