"""Gradient-boosted decision trees on the CPU and CUDA backends.

:class:`GradientBoosting` follows CatBoost's names (``loss="Logloss"``,
``l2_leaf_reg``, ``border_count``, ``grow_policy="SymmetricTree"``);
:class:`GradientBoostingClassifier` and :class:`GradientBoostingRegressor`
give the same model scikit-learn's shape and names.

Every fit delivers ``numeric_mode="identical"``: the histograms are exact
int64 sums of fixed-point gradients and every floating-point step is spelled
out, so the CPU and any GPU produce the same trees and predictions, bit for
bit, whatever the thread count (docs/NUMERICS.md).
"""

from __future__ import annotations

import numbers

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils._available_if import available_if
from sklearn.utils import check_random_state
from sklearn.utils._param_validation import Interval, StrOptions
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from .. import _array, _labels, identity
from .._input import check_device_shape, check_n_features
from ..base import TL_PARAMETER_CONSTRAINTS, DeviceScoreMixin, TwinlearnEstimatorMixin

_FLOAT_DTYPES = (np.float64, np.float32)
_CLASSIFICATION_LOSSES = ("Logloss", "CrossEntropy", "MultiClass", "MultiClassOneVsAll")
_LOG_LINK_LOSSES = ("Poisson", "Tweedie")
# loss name -> the name of its parameter (CatBoost's "Name:param=value" syntax), or None
_LOSSES = {
    "Logloss": None,
    "CrossEntropy": None,
    "MultiClass": None,
    "MultiClassOneVsAll": None,
    "RMSE": None,
    "Poisson": None,
    "Tweedie": "variance_power",
    "Huber": "delta",
    "MAE": None,
    "Quantile": "alpha",
}
# The parameter's value when the loss string leaves it out (CatBoost's defaults); absent: required.
_LOSS_PARAM_DEFAULTS = {"Quantile": 0.5}
_NOT_YET = ("MAPE", "Expectile", "LogLinQuantile", "Lq", "MultiRMSE", "RMSEWithUncertainty", "LogCosh", "Cox",
            "Focal")
# eval_metric values other than the loss itself (GbdtMetric in the core)
_EVAL_METRICS = ("AUC", "Accuracy", "RMSE", "MAE")


def _parse_loss(loss):
    """(name, parameter) of a loss string such as 'Logloss' or 'Tweedie:variance_power=1.5'."""
    if not isinstance(loss, str):
        raise ValueError(f"loss must be a string, got {loss!r}")
    name, _, rest = loss.partition(":")
    if name in _NOT_YET:
        raise ValueError(f"loss={name!r} is not available yet; available: {', '.join(_LOSSES)}")
    if name not in _LOSSES:
        raise ValueError(f"loss must be one of {', '.join(repr(k) for k in _LOSSES)}; got {loss!r}")
    pname = _LOSSES[name]
    if pname is None:
        if rest:
            raise ValueError(f"loss {name!r} takes no parameters, got {loss!r}")
        return name, 0.0
    if not rest and name in _LOSS_PARAM_DEFAULTS:
        return name, _LOSS_PARAM_DEFAULTS[name]
    key, eq, value = rest.partition("=")
    if key != pname or not eq:
        raise ValueError(f"loss {name!r} needs its parameter: '{name}:{pname}=<value>', got {loss!r}")
    try:
        v = float(value)
    except ValueError:
        raise ValueError(f"loss {loss!r}: {pname} must be a number") from None
    if name == "Tweedie" and not 1.0 < v < 2.0:
        raise ValueError(f"loss {loss!r}: variance_power must be in (1, 2)")
    if name == "Huber" and not (np.isfinite(v) and v > 0):
        raise ValueError(f"loss {loss!r}: delta must be > 0")
    if name == "Quantile" and not 0.0 < v < 1.0:
        raise ValueError(f"loss {loss!r}: alpha must be in (0, 1)")
    return name, v


def _probabilistic(y):
    """True for CrossEntropy targets given as probabilities (floats in [0, 1], not all 0 or 1)."""
    y = np.asarray(y)
    return y.dtype.kind == "f" and bool(np.all((y >= 0) & (y <= 1))) and not bool(np.all((y == 0) | (y == 1)))


def _sampling_seed(random_state):
    """A 63-bit seed for the counter-based sampling draws, from scikit-learn's random_state."""
    return int(check_random_state(random_state).randint(np.iinfo(np.int64).max, dtype=np.int64))


def _loss_name_or_none(loss):
    try:
        return _parse_loss(loss)[0]
    except ValueError:
        return None


#: The grow policies the core fits and predicts (CatBoost's names).
_GROW_POLICIES = ("SymmetricTree", "Depthwise", "Lossguide")
#: The policies with one split entry per node.
_PER_NODE = ("Depthwise", "Lossguide")
#: Leaves of a Lossguide tree when max_leaves is None (CatBoost's default).
_DEFAULT_MAX_LEAVES = 31


def _tree_split_counts(tree_depth, grow_policy):
    """Split entries per tree (int64 array): the depth d for 'SymmetricTree'
    (one split per level), 2**d - 1 for 'Depthwise' and 'Lossguide' (one per
    node, level-major)."""
    depth = np.asarray(tree_depth, dtype=np.int64)
    if grow_policy in _PER_NODE:
        return (np.int64(1) << depth) - 1
    if grow_policy == "SymmetricTree":
        return depth.copy()
    raise ValueError(f"grow_policy must be one of {', '.join(map(repr, _GROW_POLICIES))}, got {grow_policy!r}")


_MODEL_KEYS = (
    "borders",
    "border_offsets",
    "tree_depth",
    "split_feature",
    "split_bin",
    "split_border",
    "split_gain",
    "split_nan_right",
    "leaf_values",
    "base_score",
)


class _BoostingCore(TwinlearnEstimatorMixin, BaseEstimator):
    """Fit and prediction machinery shared by the three public estimators.

    Subclasses provide ``_core_loss(n_classes)`` and ``_core_params()``."""

    # -- input ----------------------------------------------------------------
    def _allow_nan(self):
        return self._core_nan_mode() != "Forbidden"

    def _core_nan_mode(self):
        return "Min"

    def _check_X(self, X, device, *, reset, y="no_y"):
        """(X, y) as arrays the backend for `device` takes (X not copied when usable).
        y="no_y": X alone (prediction); y=None at fit raises scikit-learn's message."""
        nan_ok = "allow-nan" if self._allow_nan() else True
        if _array.is_device_array(X) and device != "cpu":
            X = _array.as_device_matrix(X, "X")
            n = X.shape[0]
            check_device_shape(X, type(self).__name__)
            check_n_features(self, X.shape[1], reset=reset)
            if isinstance(y, str) and y == "no_y":
                y = None
            else:
                y = validate_data(self, X="no_validation", y=None if y is None else _array.to_numpy(y), reset=False)
                if y.shape[0] != n:
                    raise ValueError(f"Found input variables with inconsistent numbers of samples: [{n}, {y.shape[0]}]")
            if _array.device_any(X, "inf"):
                raise ValueError("Input X contains infinity or a value too large for dtype('float64').")
            return X, y
        if _array.is_device_array(X):
            X = _array.to_numpy(X)
        if isinstance(y, str) and y == "no_y":
            X = validate_data(self, X, accept_sparse=False, dtype=_FLOAT_DTYPES, ensure_all_finite=nan_ok,
                              reset=reset, order="C")
            return X, None
        X, y = validate_data(self, X, y, accept_sparse=False, dtype=_FLOAT_DTYPES, ensure_all_finite=nan_ok,
                             reset=reset, order="C", y_numeric=not self._is_classifier())
        return X, y

    # -- fitting --------------------------------------------------------------
    def _encode_target(self, y, loss_name, classes_codes=None):
        """Labels as float64 codes for the core; sets classes_ for classification.
        classes_codes: y's (classes, codes) from _labels.integral_classes;
        None when the labels are not integral (then checked and sorted)."""
        if loss_name == "CrossEntropy" and _probabilistic(y):
            # probabilistic targets: the classes are 0 and 1
            self.classes_ = np.array([0, 1])
            self.n_classes_ = 2
            return np.ascontiguousarray(y, dtype=np.float64), 2
        if not self._is_classifier():
            y = np.asarray(y, dtype=np.float64)
            if not np.all(np.isfinite(y)):
                raise ValueError("Input y contains NaN or infinity.")
            return y, 1
        classes, codes = classes_codes if classes_codes is not None else _labels.checked_unique(y)
        if len(classes) < 2:
            raise ValueError(
                f"{type(self).__name__} needs samples of at least 2 classes in the data, but the data "
                f"contains only one class: {classes[0]!r}"
            )
        if loss_name in ("Logloss", "CrossEntropy") and len(classes) != 2:
            raise ValueError(
                f"Only binary classification is supported by loss={loss_name!r}: y has {len(classes)} classes; "
                "use loss='MultiClass' for more than two classes"
            )
        self.classes_ = classes
        self.n_classes_ = len(classes)
        return codes.astype(np.float64), len(classes)

    def _fit(self, X, y, sample_weight=None, eval_set=None, early_stopping_rounds=None, use_best_model=None):
        self._tl_validate_params()
        self._check_core_params()
        device = self._tl_device(X)
        X, y = self._check_X(X, device, reset=True, y=y)
        y = np.asarray(y)
        counted = None
        if self._is_classifier():
            counted = _labels.integral_classes(y)
            loss_name = self._core_loss(len(counted[0]) if counted is not None else len(np.unique(y)))
        else:
            loss_name = self._core_loss(0)
        y_codes, n_classes = self._encode_target(y, loss_name, counted)
        X = self._encode_categorical_fit(X, y_codes, n_classes, loss_name, device)
        sw = None
        if sample_weight is not None:
            sw = np.ascontiguousarray(
                _check_sample_weight(sample_weight, np.empty((X.shape[0], 0)), dtype=np.float64), dtype=np.float64
            )
        sw = self._with_class_weight(y, sw)
        eX = ey = ew = None
        if eval_set is not None:
            eX, ey, ew = self._check_eval_set(eval_set, device, loss_name)
            eX = self._encode_categorical(eX)
        params = self._core_params()
        if params.get("bootstrap_type", "No") != "No" or params.get("rsm", 1.0) < 1.0:
            params["seed"] = _sampling_seed(self.random_state)
        metric = self._core_eval_metric(loss_name)
        params.update(
            loss=loss_name,
            loss_param=self._core_loss_param(),
            n_classes=max(n_classes, 2),
            early_stopping_rounds=int(early_stopping_rounds or 0),
            eval_metric=metric,
        )
        if params["boost_from_average"] is None:
            params["boost_from_average"] = loss_name not in ("MultiClass", "MultiClassOneVsAll")
        mod, ctx = self._tl_context(device, X)
        period = self._verbose_period()
        progress = None
        if period:
            from ._progress import FitProgress

            progress = FitProgress(period, show_learn=eX is None or metric == "Loss")
        try:
            model, info = mod.gbdt_fit(ctx, X, y_codes, sw, params, eX, ey, ew, False, progress,
                                       period if progress is not None and progress.show_learn else 0)
        finally:
            if progress is not None:
                progress.close()
        for key in _MODEL_KEYS:
            setattr(self, key + "_", np.asarray(model[key]))
        self.grow_policy_ = str(model.get("grow_policy", "SymmetricTree"))
        if self.grow_policy_ != params.get("grow_policy", "SymmetricTree"):
            raise RuntimeError(f"the core fitted grow_policy {self.grow_policy_!r}, not the "
                               f"{params.get('grow_policy', 'SymmetricTree')!r} requested")
        self._loss_name = loss_name
        self._nan_mode = params["nan_mode"]
        self.n_outputs_ = int(model["n_outputs"])
        self.evals_result_ = {}
        self.best_iteration_ = None
        if eX is not None:
            history = {}
            if metric != "Loss":
                history[metric] = np.asarray(info["eval_metric"]).tolist()
            history[self._metric_name(loss_name)] = np.asarray(info["eval_loss"]).tolist()
            self.evals_result_ = {"validation": history}
            self.best_iteration_ = int(info["best_iteration"])
            n_done = len(self.tree_depth_)
            if use_best_model is None or use_best_model:
                self._truncate(self.best_iteration_ + 1)
            if progress is not None:
                best = next(iter(history.values()))[self.best_iteration_]
                lines = []
                if info["stopped_early"]:
                    lines.append(f"Stopped by overfitting detector  ({int(early_stopping_rounds)} iterations wait)")
                lines += ["", f"bestTest = {best:.16g}", f"bestIteration = {self.best_iteration_}", ""]
                if len(self.tree_depth_) < n_done:
                    lines.append(f"Shrink model to first {len(self.tree_depth_)} iterations.")
                progress.summary(lines)
        self.n_estimators_ = int(len(self.tree_depth_))
        for key in ("borders_", "split_feature_", "split_bin_", "split_nan_right_", "leaf_values_", "base_score_"):
            identity.record(f"{type(self).__name__}.{key}", getattr(self, key))
        self._tl_record_fit(device, "identical")
        return self

    def _check_eval_set(self, eval_set, device, loss_name):
        if isinstance(eval_set, list):
            if len(eval_set) != 1:
                raise ValueError("eval_set must be one (X, y) pair (or a list holding one)")
            eval_set = eval_set[0]
        if not isinstance(eval_set, tuple) or len(eval_set) not in (2, 3):
            raise ValueError("eval_set must be a tuple (X, y) or (X, y, sample_weight)")
        eX, ey = eval_set[0], eval_set[1]
        ew = eval_set[2] if len(eval_set) == 3 else None
        eX, _ = self._check_X(eX, device, reset=False)
        ey = np.asarray(_array.to_numpy(ey))
        if ey.ndim != 1 or ey.shape[0] != eX.shape[0]:
            raise ValueError(f"eval_set y has shape {ey.shape}, expected ({eX.shape[0]},)")
        if loss_name == "CrossEntropy" and _probabilistic(ey):
            ey = ey.astype(np.float64)
        elif self._is_classifier():
            unknown = np.setdiff1d(np.unique(ey), self.classes_)
            if unknown.size:
                raise ValueError(f"eval_set y contains labels not seen in y: {unknown[:5].tolist()}")
            ey = np.searchsorted(self.classes_, ey).astype(np.float64)
        else:
            ey = ey.astype(np.float64)
        if ew is not None:
            ew = np.ascontiguousarray(_check_sample_weight(ew, np.empty((eX.shape[0], 0)), dtype=np.float64))
        return eX, np.ascontiguousarray(ey), ew

    def _with_class_weight(self, y, sw):
        """Sample weights times the class weights (``class_weight``, where the
        estimator has it), as scikit-learn's HistGradientBoostingClassifier."""
        cw = getattr(self, "class_weight", None)
        if cw is None:
            return sw
        from sklearn.utils.class_weight import compute_sample_weight

        expanded = compute_sample_weight(cw, y)
        return np.ascontiguousarray(expanded if sw is None else sw * expanded, dtype=np.float64)

    def _fitted_grow_policy(self):
        """The layout of the split arrays; models pickled before Depthwise existed are oblivious."""
        return getattr(self, "grow_policy_", "SymmetricTree")

    def _truncate(self, n_trees):
        """Keeps the first n_trees trees."""
        depth = self.tree_depth_[:n_trees]
        n_split = int(_tree_split_counts(depth, self._fitted_grow_policy()).sum())
        n_leaf = int(((1 << depth.astype(np.int64)) * self.n_outputs_).sum())
        self.tree_depth_ = depth.copy()
        for key in ("split_feature_", "split_bin_", "split_border_", "split_gain_"):
            setattr(self, key, getattr(self, key)[:n_split].copy())
        nan_right = self._split_nan_right()
        self.split_nan_right_ = nan_right[:n_split].copy() if nan_right.size else nan_right
        self.leaf_values_ = self.leaf_values_[:n_leaf].copy()

    def _split_nan_right(self):
        """split_nan_right_ (empty unless nan_mode 'Learned'; models of older versions lack it)."""
        return np.asarray(getattr(self, "split_nan_right_", np.zeros(0, dtype=np.uint8)), dtype=np.uint8)

    # -- prediction -----------------------------------------------------------
    def _model_dict(self):
        return {
            "loss": self._loss_name,
            "nan_mode": self._nan_mode,
            "grow_policy": self._fitted_grow_policy(),
            "n_features": int(len(self.border_offsets_) - 1),  # the encoded width with cat_features
            "n_outputs": int(self.n_outputs_),
            "borders": np.ascontiguousarray(self.borders_, dtype=np.float64),
            "border_offsets": np.ascontiguousarray(self.border_offsets_, dtype=np.int32),
            "tree_depth": np.ascontiguousarray(self.tree_depth_, dtype=np.int32),
            "split_feature": np.ascontiguousarray(self.split_feature_, dtype=np.int32),
            "split_bin": np.ascontiguousarray(self.split_bin_, dtype=np.int32),
            "split_border": np.ascontiguousarray(self.split_border_, dtype=np.float64),
            "split_gain": np.ascontiguousarray(self.split_gain_, dtype=np.float64),
            "split_nan_right": np.ascontiguousarray(self._split_nan_right()),
            "leaf_values": np.ascontiguousarray(self.leaf_values_, dtype=np.float64),
            "base_score": np.ascontiguousarray(self.base_score_, dtype=np.float64),
        }

    def _predict_core(self, X, kind, n_trees=None):
        """float32 (n, n_outputs) raw margins or probabilities, in the caller's array type."""
        check_is_fitted(self)
        device = self._tl_device(X)
        orig = X
        X, _ = self._check_X(X, device, reset=False)
        X = self._encode_categorical(X)
        out = _array.empty_like_kind(X, (X.shape[0], self.n_outputs_), np.dtype(np.float32))
        mod, ctx = self._tl_context(device, X)
        mod.gbdt_predict(ctx, self._model_dict(), X, -1 if n_trees is None else int(n_trees), kind, out)
        identity.record(f"{type(self).__name__}.predict_{kind}", out)
        if _array.is_device_array(orig) and not _array.is_device_array(out):
            return _array.from_numpy_like(orig, out)
        return out

    def _staged_core(self, X, kind, sklearn_shape=False):
        """The predictions after each tree, NumPy: float32 (n, n_outputs), or
        with sklearn_shape in scikit-learn's shape (gbdt_link). An estimator
        whose ``_tl_float64_output`` is set (twinlearn.accel's, serving
        scikit-learn code) yields the same values as float64."""
        check_is_fitted(self)
        device = self._tl_device(X)
        X, _ = self._check_X(X, device, reset=False)
        X = self._encode_categorical(X)
        mod, ctx = self._tl_context(device, X)
        model = self._model_dict()
        acc = np.empty((X.shape[0], self.n_outputs_), dtype=np.float64)
        acc[:] = self.base_score_[None, :]
        f64 = self.__dict__.get("_tl_float64_output", False)
        for t in range(len(self.tree_depth_)):
            mod.gbdt_predict_stage(ctx, model, X, t, t + 1, acc)
            yield mod.gbdt_link(self._loss_name, acc, kind, sklearn_shape, f64)

    def _core_loss_param(self):
        return 0.0

    def _core_eval_metric(self, loss_name):
        """The core's eval metric: 'Loss' or one of _EVAL_METRICS."""
        return "Loss"

    def _verbose_period(self):
        """Report every this many rounds; 0 = silent."""
        return 0

    def _metric_name(self, loss_name):
        return loss_name

    def _value_kind(self):
        """The prediction of a regression loss: the margin, or its exponent under a log link."""
        check_is_fitted(self)
        return "exponent" if self._loss_name in _LOG_LINK_LOSSES else "raw"

    def _raw_to_decision(self, raw):
        """scikit-learn's decision_function shape: (n,) for two classes (softmax over two outputs:
        the difference of the margins), else (n, n_classes)."""
        if raw.shape[1] == 1:
            return raw[:, 0]
        if raw.shape[1] == 2:
            return raw[:, 1] - raw[:, 0]
        return raw

    def _proba_from_core(self, p):
        if self._loss_name in ("Logloss", "CrossEntropy"):
            p1 = p[:, 0]
            xp = _namespace(p1)
            return xp.stack([1 - p1, p1], axis=1)
        return p

    def _labels_from_raw(self, raw):
        """Class labels of the raw margins (n, 1) or (n, n_classes): in raw's
        array type, on its device, when raw is a device array and the classes
        are numeric (as the linear classifiers' labels); NumPy otherwise."""
        if _array.is_device_array(raw) and self.classes_.dtype.kind in "biuf":
            torch_like = _array.kind(raw) == "torch"
            if raw.shape[1] == 1:
                hit = raw[:, 0] > 0
                idx = hit.long() if torch_like else hit.astype(np.intp)
            else:
                idx = raw.argmax(dim=1) if torch_like else raw.argmax(axis=1)
            return _array.from_numpy_like(raw, self.classes_)[idx]
        raw = _array.to_numpy(raw)
        if raw.shape[1] == 1:
            return self.classes_[(raw[:, 0] > 0).astype(np.intp)]
        return self.classes_[np.argmax(raw, axis=1)]

    def save_model(self, fname):
        """Write the fitted model to `fname` as JSON (docs/GBDT_MODEL_FORMAT.md).

        Floats round-trip exactly: a loaded model predicts the same bits."""
        from . import _model_io

        check_is_fitted(self)
        _model_io.save(self, fname)

    def load_model(self, fname):
        """Replace this estimator's parameters and model by those saved in
        `fname` (by :meth:`save_model` of the same class); returns self. The
        ``device`` and ``numeric_mode`` parameters are kept, so a model
        fitted on a GPU loads and predicts on a machine without one."""
        from . import _model_io

        return _model_io.load(self, fname)

    @property
    def feature_importances_(self):
        """Total split gain per feature, normalized to sum to 1 (zeros when no split has gain)."""
        return self.get_feature_importance("gain")

    def get_feature_importance(self, importance_type="gain"):
        """Importance of each input feature.

        Parameters
        ----------
        importance_type : {'gain', 'split'}, default='gain'
            'gain': the total split gain of the feature's splits, normalized to
            sum to 1 (``feature_importances_``); 'split': the number of splits
            on the feature (an int array): tree levels of oblivious trees,
            nodes of 'Depthwise' and 'Lossguide' trees (nodes that do not
            split, feature -1, are no splits and count for nothing). With ``cat_features`` an
            encoded column counts for the input column it came from.

        Returns
        -------
        importances : ndarray of shape (n_features_in_,)
        """
        check_is_fitted(self)
        if importance_type not in ("gain", "split"):
            raise ValueError(f"importance_type must be 'gain' or 'split', got {importance_type!r}")
        feature = np.asarray(self.split_feature_, dtype=np.intp)
        gain = np.asarray(self.split_gain_, dtype=np.float64)
        real = feature >= 0  # Depthwise nodes that do not split hold -1
        feature, gain = feature[real], gain[real]
        enc = getattr(self, "_cat_encoder", None)
        if enc is not None:  # an encoded column counts for the input column it came from
            feature = enc.sources()[feature]
        if importance_type == "split":
            return np.bincount(feature, minlength=self.n_features_in_).astype(np.int64)
        imp = np.zeros(self.n_features_in_, dtype=np.float64)
        np.add.at(imp, feature, np.maximum(gain, 0.0))
        total = imp.sum()
        return imp / total if total > 0 else imp

    @property
    def encoded_feature_names_(self):
        """With cat_features: the name of each column the trees split on
        (``split_feature_`` indexes these): input columns by name, one-hot
        columns as ``'name=value'``, target statistics as ``'name:ts'`` (one
        per class, ``'name:ts[k]'``, for MultiClass losses)."""
        check_is_fitted(self)
        names = getattr(self, "feature_names_in_", None)
        if names is None:
            names = [f"x{j}" for j in range(self.n_features_in_)]
        enc = getattr(self, "_cat_encoder", None)
        return np.asarray(list(names) if enc is None else enc.names(names), dtype=object)

    # -- categorical features --------------------------------------------------
    def _cat_settings(self):
        """(cat_features, one_hot_max_size); the scikit-learn-shaped estimators have none."""
        return None, 2

    #: The parameter that names the categorical columns (in error messages).
    _CAT_PARAM = "cat_features"

    def _cat_indices(self, cat_features):
        """cat_features as sorted unique column indices (ints, names or a boolean mask)."""
        values = np.asarray(cat_features)
        d = self.n_features_in_
        if values.dtype == bool:
            if values.shape != (d,):
                raise ValueError(f"{self._CAT_PARAM} as a boolean mask needs {d} entries, got shape {values.shape}")
            return [int(j) for j in np.flatnonzero(values)]
        out = []
        for v in values.ravel().tolist():
            if isinstance(v, str):
                names = getattr(self, "feature_names_in_", None)
                if names is None or v not in list(names):
                    raise ValueError(f"{self._CAT_PARAM} names {v!r}, which is not a column name of X")
                v = list(names).index(v)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < d:
                raise ValueError(f"{self._CAT_PARAM} must hold column indices in [0, {d}) or column names; got {v!r}")
            out.append(int(v))
        if len(set(out)) != len(out):
            raise ValueError(f"{self._CAT_PARAM} names a column twice: {out}")
        return sorted(out)

    def _encode_categorical_fit(self, X, y_codes, n_classes, loss_name, device):
        cat_features, one_hot_max_size = self._cat_settings()
        self._cat_encoder = None
        if cat_features is None or len(np.atleast_1d(np.asarray(cat_features, dtype=object))) == 0:
            return X
        from ._categorical import CategoricalEncoder

        enc = CategoricalEncoder(self.n_features_in_, self._cat_indices(cat_features), one_hot_max_size)
        if loss_name in ("MultiClass", "MultiClassOneVsAll"):
            targets = (y_codes[:, None] == np.arange(n_classes)[None, :]).astype(np.float64)
        else:
            targets = np.asarray(y_codes, dtype=np.float64)[:, None]
        seed = _sampling_seed(self.random_state)
        mod, ctx = self._tl_context("cpu")

        def uniforms(seed, stream, n):
            return mod.rng_uniform(ctx, seed, stream, 0, n, "float64")

        encoded = enc.fit_transform(_array.to_numpy(X), targets, seed, uniforms)
        self._cat_encoder = enc
        return encoded

    def _encode_categorical(self, X):
        """The encoded matrix for the trees (host float64), or X without cat_features."""
        enc = getattr(self, "_cat_encoder", None)
        return X if enc is None else enc.transform(_array.to_numpy(X))


def _namespace(a):
    k = _array.kind(a)
    if k == "cupy":
        import cupy

        return cupy
    if k == "torch":
        import torch

        return torch
    return np


_COMMON_DOC_ATTRIBUTES = """
    n_estimators_ : int
        Number of trees in the model (fewer than ``n_estimators`` after early stopping with use_best_model).
    n_features_in_ : int
    feature_names_in_ : ndarray of shape (n_features_in_,)
    borders_ : ndarray of float64
        Every feature's borders, increasing; feature j's are ``borders_[border_offsets_[j]:border_offsets_[j+1]]``.
    border_offsets_ : ndarray of int32, shape (n_features_in_ + 1,)
    grow_policy_ : str
        How the trees grew: 'SymmetricTree' (oblivious), 'Depthwise' or
        'Lossguide' (the last two share the per-node layout).
    tree_depth_ : ndarray of int32, shape (n_estimators_,)
    split_feature_, split_bin_, split_border_, split_gain_ : ndarrays
        The splits of the trees, tree after tree. A tree of depth d has d entries under
        'SymmetricTree' (one split per level, shared by all the level's nodes, level 0 first) and
        ``2**d - 1`` under 'Depthwise' and 'Lossguide' (one per node, level-major: the node of level l whose leaf
        prefix, bits 0 .. l-1 of the leaf index, is p is entry ``2**l - 1 + p``; its left child keeps
        prefix p, its right child gets ``p + 2**l``). A row goes right at a split when its value of
        ``split_feature_`` exceeds ``split_border_`` (NaN: right under nan_mode='Max', or under
        'Learned' where ``split_nan_right_`` is 1). A Depthwise node that does not split has feature
        and bin -1, border and gain 0: every row goes left, so the leaves below its right side are
        empty (value 0).
    split_nan_right_ : ndarray of uint8
        Under nan_mode='Learned', one entry per split: 1 where the split sends NaN right (learned
        from the training rows with NaN). Empty under every other nan_mode.
    leaf_values_ : ndarray of float64
        Tree t's ``2**depth * n_outputs_`` leaf values (both policies), leaf index = sum over levels
        of (went right) << level.
    base_score_ : ndarray of float64, shape (n_outputs_,)
    feature_importances_ : ndarray of shape (n_features_in_,)
        Total split gain per feature, normalized.
"""


def _has_classification_loss(est):
    return _loss_name_or_none(est.loss) in _CLASSIFICATION_LOSSES


class GradientBoosting(DeviceScoreMixin, _BoostingCore):
    # Assembled from shared pieces: an expression is no docstring, so it is assigned.
    __doc__ = """Gradient-boosted decision trees, CatBoost-shaped.

    Features are quantized into at most ``border_count + 1`` bins (borders
    from quantiles of a sample of at most 200000 rows). By default each tree
    is symmetric (oblivious): one (feature, border) split per level, shared
    by all the level's leaves, chosen to maximize the sum over leaves of the
    split gain ``G_L^2/(H_L+l2) + G_R^2/(H_R+l2) - G^2/(H+l2)``;
    ``grow_policy='Depthwise'`` lets every node of a level choose its own
    split, and ``grow_policy='Lossguide'`` grows the trees best-first (the
    leaf whose split gains most splits next, up to ``max_leaves`` leaves).
    Leaf values are the Newton step
    ``-G/(H+l2_leaf_reg) * learning_rate``. Histograms are exact
    fixed-point sums, so every numeric mode delivers ``identical``: the same
    model on the CPU and on a GPU.

    Parameters
    ----------
    loss : str, default='Logloss'
        CatBoost's names, parameters after a colon.
        Classification: 'Logloss' (exactly two classes; any labels),
        'CrossEntropy' (two classes, or probabilistic targets in [0, 1]),
        'MultiClass' (softmax over two or more classes), 'MultiClassOneVsAll'
        (one sigmoid per class; predict_proba normalizes them to sum to 1).
        Regression: 'RMSE', 'Huber:delta=D' (D > 0), 'Poisson' (counts, log
        link), 'Tweedie:variance_power=P' (1 < P < 2, log link), 'MAE',
        'Quantile:alpha=A' (0 < A < 1; 'Quantile' alone means A = 0.5);
        under a log link ``predict`` returns ``exp(margin)``. Leaf values are
        ``-G/(H + l2_leaf_reg) * learning_rate`` for every loss: Newton steps
        where the loss has a hessian. 'MAE' and 'Quantile' have none: their
        per-row gradient is the pinball loss's derivative in the prediction
        (``-alpha * w`` where the target is above the prediction, else
        ``(1 - alpha) * w``, as in CatBoost; 'MAE' is 'Quantile:alpha=0.5',
        the same trees) and their per-row hessian is the row weight, so every
        leaf moves by a gradient step of at most ``learning_rate *
        max(alpha, 1 - alpha)`` in the target's units. **This is not
        CatBoost's default for these losses**, which sets each leaf to the
        exact weighted quantile of its residuals (``leaf_estimation_method=
        'Exact'``); here the leaves are CatBoost's ``'Gradient'`` steps, so
        targets of large scale need more rounds or a larger learning_rate.
        With boost_from_average they start from the weighted median (MAE)
        or the weighted alpha-quantile (Quantile) of y. Their loss values
        (evals_result_) are the mean absolute error (MAE) and the mean
        pinball loss (Quantile). Other CatBoost losses raise a ValueError
        (not available yet).
    n_estimators : int, default=1000
        Boosting rounds (CatBoost's ``iterations`` default).
    learning_rate : float, default=0.03
        CatBoost's usual default; CatBoost may pick another automatically,
        this estimator does not.
    max_depth : int, default=6
        Depth of every tree (1 to 16).
    l2_leaf_reg : float, default=3.0
        L2 regularization of leaf values (>= 0).
    border_count : int, default=128
        Borders per feature (1 to 255): at most ``border_count + 1`` bins.
    grow_policy : {'SymmetricTree', 'Depthwise', 'Lossguide'}, default='SymmetricTree'
        'SymmetricTree': oblivious trees, one split per level shared by all
        the level's nodes (the split whose gain summed over the nodes is
        largest). 'Depthwise': trees grown level by level where each node
        picks its own best (feature, border) by the same gain (summed over
        the outputs; ties go to the lowest feature, then the lowest border).
        A node splits only when its best gain is positive (so both children
        hold rows), above ``min_split_gain`` (when given) and allowed by
        ``min_child_weight``; a node that does not split sends all its rows
        left. The tree stops at the first level where no node splits, so its
        depth may be below ``max_depth``. The leaves keep the oblivious
        numbering (``2**depth`` per tree, see ``split_feature_``), and CPU
        and GPU fits give the same bits as for oblivious trees.
        'Lossguide': best-first growth within ``max_depth``, as LightGBM's
        leaf-wise trees: among the leaves so far, the one whose best split
        (the same gain and rules as 'Depthwise') gains most splits next
        (the lowest node in level order on ties), until the tree has
        ``max_leaves`` leaves or no leaf can split. The models use the
        'Depthwise' layout; CPU and GPU fits give the same bits.
    max_leaves : int or None, default=None
        'Lossguide' only (as in CatBoost): the most leaves a tree may have,
        at least 2; None means 31, CatBoost's default. Given with another
        grow_policy it raises a ValueError.
    min_data_in_leaf : int, default=1
        As in CatBoost it applies to 'Depthwise' and 'Lossguide' only; a
        value other than 1 with 'SymmetricTree' raises a ValueError. A node
        does not split where a child would hold fewer rows than this (rows
        that take part in the tree: sample weight times bootstrap weight
        > 0), counted exactly in the histograms; scikit-learn's
        HistGradientBoosting calls it ``min_samples_leaf`` (default 20).
    nan_mode : {'Min', 'Max', 'Learned', 'Forbidden'}, default='Min'
        NaN feature values go to a dedicated bin below ('Min') or above
        ('Max') every value, or raise ('Forbidden'). 'Learned'
        (grow_policy 'Depthwise' and 'Lossguide' only, as XGBoost and
        LightGBM do): every split learns where NaN goes. For each candidate
        border of a feature with NaN in the training data, the node's gain
        with its NaN rows on the left and on the right are both scored and
        the larger is kept (left on ties); ``split_nan_right_`` records the
        choice. NaN in a feature without NaN at fit time goes left.
    boost_from_average : bool or None, default=None
        Start from the best constant (mean for RMSE, log-odds for Logloss,
        weighted median for MAE, weighted alpha-quantile for Quantile: the
        smallest target whose cumulative weight reaches alpha of the total)
        instead of 0. None: True for every loss but MultiClass and
        MultiClassOneVsAll.
    bootstrap_type : {'No', 'Bernoulli', 'Bayesian'}, default='No'
        Row sampling, drawn anew for every tree (CatBoost's
        ``sampling_frequency='PerTree'``): each row's weight in the tree
        multiplies its sample weight while the tree's splits and leaf values
        are chosen. 'No': every row with weight 1. 'Bernoulli': a row takes
        part with probability ``subsample`` (weight 1, else 0). 'Bayesian':
        weight ``(-log u) ** bagging_temperature`` with ``u`` uniform in
        (0, 1]. CatBoost's CPU default is 'MVS', which is not available here
        (it raises a ValueError); the default 'No' keeps fits without
        sampling exactly as before these options existed.
    subsample : float in (0, 1] or None, default=None
        'Bernoulli' only: the probability that a row takes part in a tree;
        None means 0.8, as in CatBoost. Giving it with 'No' or 'Bayesian'
        raises a ValueError (as CatBoost does).
    bagging_temperature : float >= 0 or None, default=None
        'Bayesian' only: the power of the exponential weights; 0 gives every
        row weight 1, 1 (the default when None) exponential weights, larger
        values more aggressive bagging. Giving it with another bootstrap_type
        raises a ValueError.
    cat_features : array-like of int or str, or boolean mask, default=None
        The categorical columns (indices, DataFrame column names, or a mask).
        Their values are category codes: any finite numbers compared for
        equality, NaN a category of its own. A column with at most
        ``one_hot_max_size`` categories in training becomes one indicator
        column per category; one with more becomes ordered target
        statistics, CatBoost's scheme: rows are visited in an order drawn
        from twinlearn's shared random generator (seeded from
        ``random_state``) and each gets (sum of the targets of the earlier
        rows of its category + prior) / (their number + 1), the prior being
        the mean target (one statistic per class for MultiClass losses).
        Prediction uses the statistics of all training rows; a category not
        seen in training gets the prior (one-hot: all zeros). The encoding
        runs on the host, identically for every device; ``split_feature_``
        then indexes the encoded columns, named by ``encoded_feature_names_``,
        and ``feature_importances_`` adds them up per input column.
    one_hot_max_size : int >= 1, default=2
        The most categories a categorical column may have to be one-hot encoded.
    rsm : float in (0, 1], default=1.0
        Random subspace: each tree may split only on a random subset of
        ``max(1, round(rsm * m))`` of the m features that have borders,
        drawn anew for every tree (CatBoost draws per level; here per tree).
        1 uses every feature and draws nothing.
    min_child_weight : float >= 0, default=0.0
        A candidate split of a level is rejected when one of the leaves it
        makes has, for some output, a hessian sum (of weighted rows) that is
        positive and below this value; leaves with hessian sum 0 (no rows)
        are exempt, so the shared split of an oblivious tree is not blocked
        by leaves that are already empty. When every candidate of a level is
        rejected the tree stops growing there (it is then shallower than
        max_depth); below the root this is rare, since repeating an earlier
        level's split (which keeps every leaf whole, with score 0) stays
        admissible; ``min_split_gain=0.0`` stops such levels. 0 means no
        constraint. For MAE and Quantile the hessian is the row weight, so
        this is a minimum (weighted) row count. With 'Depthwise' the rule
        applies to each node's candidates: a node whose every candidate is
        rejected does not split.
    min_split_gain : float >= 0 or None, default=None
        The tree stops growing at the first level whose best split score
        (the sum over the level's leaves of ``G_L^2/(H_L+l2) +
        G_R^2/(H_R+l2) - G^2/(H+l2)``, the value in ``split_gain_``) is not
        above this value. None: no constraint (a level always splits, even
        on a score <= 0, as CatBoost does); 0.0 keeps only splits of
        positive score. With 'Depthwise' it applies to each node's best
        gain: a node splits only when its gain is positive and above this
        value.
    eval_metric : {None, 'AUC', 'Accuracy', 'RMSE', 'MAE'} or str, default=None
        What the eval set is scored with each round: None or the loss itself
        (its string or its name) use the loss. 'AUC' (binary losses: the
        weighted area under the ROC curve of the margins, ties counted half)
        and 'Accuracy' (classification losses; the class ``predict`` would
        give) are better when higher; 'RMSE' and 'MAE' (regression losses,
        on the values ``predict`` gives) when lower. With an eval_set,
        ``best_iteration_``, ``early_stopping_rounds`` and ``use_best_model``
        follow this metric, and ``evals_result_['validation']`` holds it
        beside the loss. Computed on the host from the eval set's current
        predictions, in a fixed order: the same values on the CPU and on a
        GPU. Without an eval_set it is not used.
    verbose : bool or int, default=False
        CatBoost's meaning: False or 0 prints nothing; True reports every
        round; an int N every N rounds (and the last round). Reports go to
        ``sys.stderr`` as CatBoost's lines, e.g. ``0:\tlearn: 0.6812345\t
        test: 0.6890123\tbest: 0.6890123 (0)\ttotal: 12.1ms\tremaining:
        2.3s``, where ``learn`` is the training loss (shown when the eval
        metric is the loss or without an eval_set) and ``test``/``best`` the
        eval metric; the best iteration follows at the end. On a terminal, a
        fit expected to take more than a few seconds also shows a one-line
        progress bar, updated in place. Ctrl-C stops any fit (verbose or
        not) after the current round with KeyboardInterrupt.
    random_state : int, RandomState instance or None, default=None
        Seeds the sampling draws (bootstrap_type other than 'No', rsm < 1).
        The draws come from the project's counter-based generator, so a fit
        is the same bits on the CPU and on a GPU for the same integer seed;
        the rows and features drawn differ from CatBoost's for the same
        seed. Unused without sampling.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
        Where to compute; None follows :func:`twinlearn.get_device`.
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None
        Every mode is served by ``identical``.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels (classification losses).
    n_outputs_ : int
        1 for Logloss and RMSE, the number of classes for MultiClass.
    best_iteration_ : int or None
        With an eval_set: the 0-based round of the best eval metric (the
        lowest loss by default; the first round of the best value).
    evals_result_ : dict
        ``{'validation': {loss: [per-round eval loss]}}`` with an eval_set;
        with an eval_metric other than the loss, ``{'validation': {metric:
        [...], loss: [...]}}``.
    """ + _COMMON_DOC_ATTRIBUTES + """
    Examples
    --------
    >>> import numpy as np
    >>> from twinlearn.ensemble import GradientBoosting
    >>> rng = np.random.default_rng(0)
    >>> X = rng.random((500, 4), dtype=np.float32)
    >>> y = (X[:, 0] + X[:, 1] > 1.0).astype(int)
    >>> model = GradientBoosting(n_estimators=50, learning_rate=0.3, device="cpu").fit(X, y)
    >>> model.predict_proba(X[:2]).shape
    (2, 2)
    >>> model.numeric_mode_used()
    'identical'
    """

    _parameter_constraints: dict = {
        "loss": [str],
        "n_estimators": [Interval(numbers.Integral, 1, None, closed="left")],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_depth": [Interval(numbers.Integral, 1, 16, closed="both")],
        "l2_leaf_reg": [Interval(numbers.Real, 0, None, closed="left")],
        "border_count": [Interval(numbers.Integral, 1, 255, closed="both")],
        "grow_policy": [StrOptions({"SymmetricTree", "Depthwise", "Lossguide"})],
        "max_leaves": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "min_data_in_leaf": [Interval(numbers.Integral, 1, None, closed="left")],
        "nan_mode": [StrOptions({"Min", "Max", "Learned", "Forbidden"})],
        "boost_from_average": ["boolean", None],
        "bootstrap_type": [StrOptions({"No", "Bernoulli", "Bayesian", "MVS"})],
        "subsample": [Interval(numbers.Real, 0, 1, closed="right"), None],
        "bagging_temperature": [Interval(numbers.Real, 0, None, closed="left"), None],
        "rsm": [Interval(numbers.Real, 0, 1, closed="right")],
        "min_child_weight": [Interval(numbers.Real, 0, None, closed="left")],
        "min_split_gain": [Interval(numbers.Real, 0, None, closed="left"), None],
        "eval_metric": [str, None],
        "cat_features": ["array-like", None],
        "one_hot_max_size": [Interval(numbers.Integral, 1, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        **TL_PARAMETER_CONSTRAINTS,
    }

    def __init__(
        self,
        *,
        loss="Logloss",
        n_estimators=1000,
        learning_rate=0.03,
        max_depth=6,
        l2_leaf_reg=3.0,
        border_count=128,
        grow_policy="SymmetricTree",
        max_leaves=None,
        min_data_in_leaf=1,
        nan_mode="Min",
        boost_from_average=None,
        bootstrap_type="No",
        subsample=None,
        bagging_temperature=None,
        rsm=1.0,
        min_child_weight=0.0,
        min_split_gain=None,
        eval_metric=None,
        cat_features=None,
        one_hot_max_size=2,
        verbose=False,
        random_state=None,
        device=None,
        numeric_mode=None,
    ):
        self.loss = loss
        self.n_estimators = n_estimators
        self.learning_rate = learning_rate
        self.max_depth = max_depth
        self.l2_leaf_reg = l2_leaf_reg
        self.border_count = border_count
        self.grow_policy = grow_policy
        self.max_leaves = max_leaves
        self.min_data_in_leaf = min_data_in_leaf
        self.nan_mode = nan_mode
        self.boost_from_average = boost_from_average
        self.bootstrap_type = bootstrap_type
        self.subsample = subsample
        self.bagging_temperature = bagging_temperature
        self.rsm = rsm
        self.min_child_weight = min_child_weight
        self.min_split_gain = min_split_gain
        self.eval_metric = eval_metric
        self.cat_features = cat_features
        self.one_hot_max_size = one_hot_max_size
        self.verbose = verbose
        self.random_state = random_state
        self.device = device
        self.numeric_mode = numeric_mode

    def _cat_settings(self):
        return self.cat_features, self.one_hot_max_size

    def __sklearn_tags__(self):
        from sklearn.utils import ClassifierTags, RegressorTags

        tags = super().__sklearn_tags__()
        name = _loss_name_or_none(self.loss)
        if name in _CLASSIFICATION_LOSSES:
            tags.estimator_type = "classifier"
            tags.classifier_tags = ClassifierTags(multi_class=name in ("MultiClass", "MultiClassOneVsAll"))
        else:
            tags.estimator_type = "regressor"
            tags.regressor_tags = RegressorTags()
            tags.target_tags.positive_only = name in _LOG_LINK_LOSSES
        tags.target_tags.required = True
        tags.input_tags.allow_nan = self.nan_mode != "Forbidden"
        return tags

    def _is_classifier(self):
        return _loss_name_or_none(self.loss) in _CLASSIFICATION_LOSSES

    def _core_loss(self, n_classes):
        return _parse_loss(self.loss)[0]

    def _core_loss_param(self):
        return _parse_loss(self.loss)[1]

    def _metric_name(self, loss_name):
        return self.loss

    def _core_eval_metric(self, loss_name):
        m = self.eval_metric
        if m is None or m == self.loss or m == loss_name:
            return "Loss"
        if m not in _EVAL_METRICS:
            raise ValueError(
                f"eval_metric must be None, one of {', '.join(repr(v) for v in _EVAL_METRICS)}, or the loss "
                f"({self.loss!r}); got {m!r}"
            )
        return m

    def _verbose_period(self):
        return int(self.verbose)  # True: every round

    def _core_nan_mode(self):
        return self.nan_mode

    def _check_core_params(self):
        _parse_loss(self.loss)
        if self.grow_policy not in _GROW_POLICIES:
            raise ValueError(
                f"grow_policy={self.grow_policy!r} is not supported; use 'SymmetricTree' (oblivious trees), "
                "'Depthwise' or 'Lossguide'"
            )
        if self.nan_mode == "Learned" and self.grow_policy not in _PER_NODE:
            raise ValueError(
                f"nan_mode='Learned' needs grow_policy 'Depthwise' or 'Lossguide' (an oblivious level has one "
                f"split for all its nodes); got grow_policy={self.grow_policy!r}"
            )
        if self.max_leaves is not None and self.grow_policy != "Lossguide":
            raise ValueError(
                f"max_leaves applies to grow_policy='Lossguide' only (as in CatBoost); with "
                f"grow_policy={self.grow_policy!r} leave it at None"
            )
        if self.min_data_in_leaf != 1 and self.grow_policy == "SymmetricTree":
            raise ValueError(
                "min_data_in_leaf applies to grow_policy 'Depthwise' and 'Lossguide' only (as in CatBoost); "
                "with 'SymmetricTree' leave it at 1"
            )
        if self.bootstrap_type == "MVS":
            raise ValueError("bootstrap_type='MVS' is not available yet; use 'No', 'Bernoulli' or 'Bayesian'")
        if self.subsample is not None and self.bootstrap_type != "Bernoulli":
            raise ValueError(
                f"subsample applies to bootstrap_type='Bernoulli' only (as in CatBoost); "
                f"with bootstrap_type={self.bootstrap_type!r} leave it at None"
            )
        if self.bagging_temperature is not None and self.bootstrap_type != "Bayesian":
            raise ValueError(
                f"bagging_temperature applies to bootstrap_type='Bayesian' only (as in CatBoost); "
                f"with bootstrap_type={self.bootstrap_type!r} leave it at None"
            )

    def _core_params(self):
        return {
            "n_estimators": int(self.n_estimators),
            "max_depth": int(self.max_depth),
            "learning_rate": float(self.learning_rate),
            "l2_leaf_reg": float(self.l2_leaf_reg),
            "border_count": int(self.border_count),
            "grow_policy": self.grow_policy,
            "max_leaves": _DEFAULT_MAX_LEAVES if self.max_leaves is None else int(self.max_leaves),
            "min_data_in_leaf": int(self.min_data_in_leaf),
            "nan_mode": self.nan_mode,
            "boost_from_average": self.boost_from_average,
            "bootstrap_type": self.bootstrap_type,
            "subsample": 0.8 if self.subsample is None else float(self.subsample),
            "bagging_temperature": 1.0 if self.bagging_temperature is None else float(self.bagging_temperature),
            "rsm": float(self.rsm),
            "min_child_weight": float(self.min_child_weight),
            "min_split_gain": None if self.min_split_gain is None else float(self.min_split_gain),
        }

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, eval_set=None, early_stopping_rounds=None, use_best_model=None):
        """Fit the boosted trees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            NumPy arrays, or CuPy / PyTorch / DLPack device arrays.
        y : array-like of shape (n_samples,)
            Class labels (Logloss: two classes; MultiClass: two or more) or
            regression targets (RMSE).
        sample_weight : array-like of shape (n_samples,), default=None
        eval_set : tuple (X_val, y_val[, sample_weight_val]), default=None
            Data whose loss is computed after every round.
        early_stopping_rounds : int, default=None
            With eval_set: stop after this many rounds without improvement.
        use_best_model : bool, default=None
            With eval_set: keep only the trees up to the best round
            (None: True, as in CatBoost).

        Returns
        -------
        self : object
        """
        if early_stopping_rounds is not None and (
            isinstance(early_stopping_rounds, bool)
            or not isinstance(early_stopping_rounds, numbers.Integral)
            or early_stopping_rounds < 1
        ):
            raise ValueError(f"early_stopping_rounds must be a positive int or None, got {early_stopping_rounds!r}")
        if early_stopping_rounds is not None and eval_set is None:
            raise ValueError("early_stopping_rounds needs an eval_set")
        return self._fit(X, y, sample_weight, eval_set, early_stopping_rounds, use_best_model)

    def predict_raw(self, X, n_trees=None):
        """Raw margins (float32): shape (n_samples,), or (n_samples, n_classes) for MultiClass.

        n_trees: use only the first n_trees trees (default all)."""
        raw = self._predict_core(X, "raw", n_trees)
        return raw[:, 0] if raw.shape[1] == 1 else raw

    @available_if(_has_classification_loss)
    def decision_function(self, X):
        """Raw margins (float32) in scikit-learn's shape: (n_samples,) for two classes
        (MultiClass with two classes: margin of class 1 minus margin of class 0), else
        (n_samples, n_classes)."""
        return self._raw_to_decision(self._predict_core(X, "raw"))

    @available_if(_has_classification_loss)
    def predict_proba(self, X, n_trees=None):
        """Class probabilities (float32), shape (n_samples, n_classes)."""
        self._require_classifier("predict_proba")
        return self._proba_from_core(self._predict_core(X, "probability", n_trees))

    def predict(self, X, n_trees=None):
        """Class labels (classification losses) or predicted values (RMSE, float32)."""
        if self._is_fitted_classifier():
            return self._labels_from_raw(self._predict_core(X, "raw", n_trees))
        return self._predict_core(X, self._value_kind(), n_trees)[:, 0]

    def staged_predict(self, X):
        """Predictions after each tree (a generator of NumPy arrays)."""
        if self._is_fitted_classifier():
            for raw in self._staged_core(X, "raw"):
                yield self._labels_from_raw(raw)
        else:
            for v in self._staged_core(X, self._value_kind()):
                yield v[:, 0]

    @available_if(_has_classification_loss)
    def staged_predict_proba(self, X):
        """Class probabilities after each tree (a generator of NumPy arrays)."""
        self._require_classifier("staged_predict_proba")
        for p in self._staged_core(X, "probability"):
            yield self._proba_from_core(p)

    def _tl_score_is_accuracy(self):
        # score (DeviceScoreMixin): accuracy for the classification losses, R^2 otherwise.
        return self._is_fitted_classifier()

    def _is_fitted_classifier(self):
        check_is_fitted(self)
        return self._loss_name in _CLASSIFICATION_LOSSES

    def _require_classifier(self, what):
        if not self._is_fitted_classifier():
            raise AttributeError(f"{what} is available for classification losses only (loss={self._loss_name!r})")


class _SklearnShaped(_BoostingCore):
    _parameter_constraints: dict = {
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "n_estimators": [Interval(numbers.Integral, 1, None, closed="left")],
        "max_depth": [Interval(numbers.Integral, 1, 16, closed="both")],
        "max_leaf_nodes": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "min_samples_leaf": [Interval(numbers.Integral, 1, None, closed="left")],
        "l2_regularization": [Interval(numbers.Real, 0, None, closed="left")],
        "max_bins": [Interval(numbers.Integral, 2, 256, closed="both")],
        "subsample": [Interval(numbers.Real, 0, 1, closed="right")],
        "categorical_features": ["array-like", None],
        "random_state": ["random_state"],
        **TL_PARAMETER_CONSTRAINTS,
    }

    def _check_core_params(self):
        pass

    _CAT_PARAM = "categorical_features"

    def _cat_settings(self):
        """categorical_features as GradientBoosting's cat_features, with its
        default one_hot_max_size (2)."""
        return self.categorical_features, 2

    def _per_node(self):
        """Best-first per-node trees (max_leaf_nodes or min_samples_leaf set), else oblivious trees."""
        return self.max_leaf_nodes is not None or self.min_samples_leaf != 1

    def _core_params(self):
        out = {
            "n_estimators": int(self.n_estimators),
            "max_depth": int(self.max_depth),
            "learning_rate": float(self.learning_rate),
            "l2_leaf_reg": float(self.l2_regularization),
            "border_count": int(self.max_bins) - 1,
            "nan_mode": "Min",
            "boost_from_average": None,
            "bootstrap_type": "Bernoulli" if self.subsample < 1.0 else "No",
            "subsample": float(self.subsample),
        }
        if self._per_node():
            # Lossguide with max_leaves 0: up to 2**max_depth leaves.
            out.update(grow_policy="Lossguide", nan_mode="Learned", min_data_in_leaf=int(self.min_samples_leaf),
                       max_leaves=0 if self.max_leaf_nodes is None else int(self.max_leaf_nodes))
        return out

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None):
        """Fit the boosted trees.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        y : array-like of shape (n_samples,)
        sample_weight : array-like of shape (n_samples,), default=None

        Returns
        -------
        self : object
        """
        return self._fit(X, y, sample_weight)


def _sklearn_shaped_init(default_loss, default_l2):
    """The ``__init__`` of a scikit-learn-shaped booster: the parameters of
    _SklearnShaped, ``loss`` defaulting to `default_loss` and
    ``l2_regularization`` to `default_l2`."""

    def __init__(
        self,
        *,
        loss=default_loss,
        learning_rate=0.1,
        n_estimators=100,
        max_depth=6,
        max_leaf_nodes=None,
        min_samples_leaf=1,
        l2_regularization=default_l2,
        max_bins=255,
        subsample=1.0,
        categorical_features=None,
        class_weight=None,
        random_state=None,
        device=None,
        numeric_mode=None,
    ):
        self.loss = loss
        self.class_weight = class_weight
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf
        self.l2_regularization = l2_regularization
        self.max_bins = max_bins
        self.subsample = subsample
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.device = device
        self.numeric_mode = numeric_mode

    return __init__


_L2_DOC_CLASSIFIER = """    l2_regularization : float, default=1.0
        L2 regularization of the leaf values (:class:`GradientBoosting`'s
        ``l2_leaf_reg``). A classifier's hessians p (1 - p) are at most 1/4,
        so 1.0 weighs as much as 4 or more rows in a leaf, about what the
        regressor's 3.0 weighs; CatBoost's 3.0 scored lower on digits and
        breast_cancer, scikit-learn's 0.0 lower on iris, where single-row
        leaves of oblivious trees (which have no minimum leaf size) then
        give overconfident probabilities (docs/GBDT_QUALITY.md).
"""

_L2_DOC_REGRESSOR = """    l2_regularization : float, default=3.0
        L2 regularization of the leaf values (:class:`GradientBoosting`'s
        ``l2_leaf_reg``, CatBoost's default). Oblivious trees have no
        minimum leaf size (scikit-learn's has 20 rows), and on diabetes 3.0
        scored better than 0.0 (docs/GBDT_QUALITY.md).
"""

_SKLEARN_PARAMS_DOC = """
    learning_rate : float, default=0.1
    n_estimators : int, default=100
        Number of boosting rounds (trees).
    max_depth : int, default=6
        Depth of every tree, 1 to 16.
    max_leaf_nodes : int or None, default=None
        None (with ``min_samples_leaf=1``): oblivious trees of exactly
        ``max_depth`` levels, one split shared by each level's nodes. Set,
        or with ``min_samples_leaf > 1``: trees as scikit-learn's
        HistGradientBoosting grows them, node by node and best first (the
        leaf whose split gains most splits next) within ``max_depth``, up to
        this many leaves (None: ``2**max_depth``), NaN sent to the side each
        split learns (:class:`GradientBoosting`'s ``grow_policy='Lossguide'``,
        ``nan_mode='Learned'``). At least 2.
    min_samples_leaf : int, default=1
        Per-node trees only (a value above 1 selects them, see
        ``max_leaf_nodes``): a node does not split where a child would hold
        fewer rows than this (rows with positive sample weight; scikit-learn
        counts every row). scikit-learn's default is 20.
{l2_doc}    max_bins : int, default=255
        Maximum number of bins per feature for non-missing values (2 to
        256); NaN values get a bin of their own below every value.
    subsample : float in (0, 1], default=1.0
        The fraction of rows each tree is grown on, drawn anew for every
        tree (as in :class:`sklearn.ensemble.GradientBoostingClassifier`):
        below 1.0 each row takes part in a tree with this probability
        (:class:`GradientBoosting`'s ``bootstrap_type='Bernoulli'``).
    categorical_features : array-like of int or str, or boolean mask, default=None
        The categorical columns, as column indices, DataFrame column names or
        a boolean mask (:class:`GradientBoosting`'s ``cat_features``, with
        ``one_hot_max_size=2``). Their values are category codes (any
        numbers; NaN is a category of its own). The encoding is CatBoost's,
        not scikit-learn's partition splits: a column with at most 2
        categories in training becomes one indicator per category, a column
        with more becomes ordered target statistics, the rows visited in an
        order drawn from ``random_state`` (docs/NUMERICS.md). ``'from_dtype'``
        is not accepted: name the columns.
    random_state : int, RandomState instance or None, default=None
        Seeds the row sampling (subsample < 1.0) and the row order of the
        categorical encoding; unused otherwise.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None
        Every mode is served by ``identical``.
"""


class GradientBoostingClassifier(DeviceScoreMixin, ClassifierMixin, _SklearnShaped):
    # Assembled from shared pieces: an expression is no docstring, so it is assigned.
    __doc__ = """Gradient-boosted trees for classification, scikit-learn-shaped.

    The model of :class:`GradientBoosting` (Logloss for two classes, softmax
    'MultiClass' for more) with scikit-learn's names and defaults in the
    style of :class:`sklearn.ensemble.HistGradientBoostingClassifier`.
    Predicted probabilities and decision values are float32.

    Parameters
    ----------
    loss : {'log_loss'}, default='log_loss'
    class_weight : dict, 'balanced' or None, default=None
        Weights of the classes, multiplying the sample weights (as in
        scikit-learn: 'balanced' weighs class c by
        ``n_samples / (n_classes * count(c))``).
    """ + _SKLEARN_PARAMS_DOC.replace("{l2_doc}", _L2_DOC_CLASSIFIER) + """
    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
    n_classes_ : int
    n_outputs_ : int
    """ + _COMMON_DOC_ATTRIBUTES + """
    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from twinlearn.ensemble import GradientBoostingClassifier
    >>> X, y = load_breast_cancer(return_X_y=True)
    >>> clf = GradientBoostingClassifier(n_estimators=20, device="cpu").fit(X, y)
    >>> clf.score(X, y) > 0.95
    True
    """

    _parameter_constraints: dict = {
        "loss": [StrOptions({"log_loss"})],
        "class_weight": [dict, StrOptions({"balanced"}), None],
        **_SklearnShaped._parameter_constraints,
    }

    __init__ = _sklearn_shaped_init(default_loss="log_loss", default_l2=1.0)

    def _is_classifier(self):
        return True

    def _core_loss(self, n_classes):
        return "Logloss" if n_classes <= 2 else "MultiClass"

    def decision_function(self, X):
        """Raw margins (float32): (n_samples,) for two classes, else (n_samples, n_classes)."""
        return self._raw_to_decision(self._predict_core(X, "raw"))

    def predict_proba(self, X):
        """Class probabilities (float32), shape (n_samples, n_classes)."""
        return self._proba_from_core(self._predict_core(X, "probability"))

    def predict(self, X):
        """Predicted class labels."""
        return self._labels_from_raw(self._predict_core(X, "raw"))

    def staged_predict(self, X):
        for raw in self._staged_core(X, "raw"):
            yield self._labels_from_raw(raw)

    def staged_predict_proba(self, X):
        return self._staged_core(X, "probability", sklearn_shape=True)

    def staged_decision_function(self, X):
        return self._staged_core(X, "raw", sklearn_shape=True)


class GradientBoostingRegressor(DeviceScoreMixin, RegressorMixin, _SklearnShaped):
    # Assembled from shared pieces: an expression is no docstring, so it is assigned.
    __doc__ = """Gradient-boosted trees for regression, scikit-learn-shaped.

    The model of :class:`GradientBoosting` with ``loss='RMSE'`` (a gradient
    step on the squared error), with scikit-learn's names. Predictions are
    float32.

    Parameters
    ----------
    loss : {'squared_error', 'absolute_error', 'quantile', 'poisson'}, default='squared_error'
        'poisson' fits counts with a log link (CatBoost's Poisson); predictions
        are then the expected values ``exp(margin)``. 'absolute_error' and
        'quantile' are :class:`GradientBoosting`'s 'MAE' and
        'Quantile:alpha=<alpha>': their leaf values are gradient steps of the
        pinball loss (the hessian is the row weight), not the exact leaf
        quantiles scikit-learn's estimators compute, so each tree moves a
        leaf by at most ``learning_rate * max(alpha, 1 - alpha)`` in the
        target's units; the fit starts from the weighted median
        ('absolute_error') or weighted alpha-quantile ('quantile') of y.
    alpha : float in (0, 1), default=0.9
        The quantile loss='quantile' predicts (scikit-learn's
        GradientBoostingRegressor name and default); used by that loss only.
    """ + _SKLEARN_PARAMS_DOC.replace("{l2_doc}", _L2_DOC_REGRESSOR) + """
    Attributes
    ----------
    n_outputs_ : int
    """ + _COMMON_DOC_ATTRIBUTES + """
    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from twinlearn.ensemble import GradientBoostingRegressor
    >>> X, y = load_diabetes(return_X_y=True)
    >>> reg = GradientBoostingRegressor(n_estimators=50, device="cpu").fit(X, y)
    >>> reg.score(X, y) > 0.6
    True
    """

    _parameter_constraints: dict = {
        "loss": [StrOptions({"squared_error", "absolute_error", "quantile", "poisson"})],
        "alpha": [Interval(numbers.Real, 0, 1, closed="neither")],
        **_SklearnShaped._parameter_constraints,
    }

    _CORE_LOSSES = {"squared_error": "RMSE", "absolute_error": "MAE", "quantile": "Quantile", "poisson": "Poisson"}

    def __init__(
        self,
        *,
        loss="squared_error",
        alpha=0.9,
        learning_rate=0.1,
        n_estimators=100,
        max_depth=6,
        max_leaf_nodes=None,
        min_samples_leaf=1,
        l2_regularization=3.0,
        max_bins=255,
        subsample=1.0,
        categorical_features=None,
        random_state=None,
        device=None,
        numeric_mode=None,
    ):
        self.loss = loss
        self.alpha = alpha
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf
        self.l2_regularization = l2_regularization
        self.max_bins = max_bins
        self.subsample = subsample
        self.categorical_features = categorical_features
        self.random_state = random_state
        self.device = device
        self.numeric_mode = numeric_mode

    def _is_classifier(self):
        return False

    def _core_loss(self, n_classes):
        return self._CORE_LOSSES[self.loss]

    def _core_loss_param(self):
        return float(self.alpha) if self.loss == "quantile" else 0.0

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.target_tags.positive_only = self.loss == "poisson"
        return tags

    def predict(self, X):
        """Predicted values (float32), shape (n_samples,): exp of the margin for loss='poisson'."""
        return self._predict_core(X, self._value_kind())[:, 0]

    def staged_predict(self, X):
        return self._staged_core(X, self._value_kind(), sklearn_shape=True)
