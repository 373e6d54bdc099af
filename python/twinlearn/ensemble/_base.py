"""The base of the gradient-boosting estimators: what GradientBoosting and the
scikit-learn-shaped boosters share (fit, prediction, model files,
importances), each stage in its own module.

A subclass provides ``_is_classifier()``, ``_core_loss(n_classes)`` (the
core's loss name), ``_core_params()`` (GbdtParams fields, _params) and
``_check_core_params()``; the other ``_core_*`` hooks have defaults here.
"""

from __future__ import annotations

from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ..base import TwinlearnEstimatorMixin
from . import _fit, _importance, _model, _model_io, _predict
from ._params import CLASSIFICATION_LOSSES

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
    leaf_count_ : ndarray of int64
        Tree t's ``2**depth`` training leaf counts, in the leaf order of ``leaf_values_`` (without the
        outputs): the number of training rows that took part in the tree (sample weight times
        bootstrap weight > 0; with ``subsample`` < 1 the tree's sampled rows) and reached the leaf.
        The default covers of :meth:`predict_contributions`. Empty for a model without them (saved
        by an older version, or continued from such a model).
    feature_importances_ : ndarray of shape (n_features_in_,)
        Total split gain per feature, normalized.
"""


class _BoostingCore(TwinlearnEstimatorMixin, BaseEstimator):
    """Fit and prediction machinery shared by the three public estimators.

    Subclasses provide ``_core_loss(n_classes)`` and ``_core_params()``."""

    #: The parameter that names the categorical columns (in error messages).
    _CAT_PARAM = "cat_features"

    # -- hooks ------------------------------------------------------------------
    def _allow_nan(self):
        return self._core_nan_mode() != "Forbidden"

    def _core_nan_mode(self):
        return "Min"

    def _core_loss_param(self):
        return 0.0

    def _core_eval_metric(self, loss_name):
        """The core's eval metric: 'Loss' or one of _params.EVAL_METRICS."""
        return "Loss"

    def _verbose_period(self):
        """Report every this many rounds; 0 = silent."""
        return 0

    def _metric_name(self, loss_name):
        return loss_name

    def _round_monitor(self, n_rows, loss_name, n_classes):
        """The per-round monitor of a fit (early stopping, progress lines:
        _early_stopping.RoundMonitor), or None."""
        return None

    def _cat_settings(self):
        """(cat_features, one_hot_max_size); the scikit-learn-shaped estimators have none."""
        return None, 2

    # -- fitting ----------------------------------------------------------------
    def _fit(self, X, y, sample_weight=None, eval_set=None, early_stopping_rounds=None, use_best_model=None,
             init_model=None):
        return _fit.fit(self, X, y, sample_weight, eval_set, early_stopping_rounds, use_best_model, init_model)

    # -- the fitted model -------------------------------------------------------
    def _fitted_grow_policy(self):
        return _model.fitted_grow_policy(self)

    def _split_nan_right(self):
        return _model.split_nan_right(self)

    def _truncate(self, n_trees):
        _model.truncate(self, n_trees)

    def _model_dict(self):
        return _model.model_dict(self)

    # -- prediction -------------------------------------------------------------
    def _predict_core(self, X, kind, n_trees=None):
        return _predict.predict_core(self, X, kind, n_trees)

    def _staged_core(self, X, kind, sklearn_shape=False):
        return _predict.staged_core(self, X, kind, sklearn_shape)

    def _value_kind(self):
        return _predict.value_kind(self)

    def _raw_to_decision(self, raw):
        return _predict.raw_to_decision(raw)

    def _proba_from_core(self, p):
        return _predict.proba_from_core(self, p)

    def _labels_from_raw(self, raw):
        return _predict.labels_from_raw(self, raw)

    def _tl_score_is_accuracy(self):
        # score (DeviceScoreMixin): accuracy for the classification losses, R^2 otherwise.
        return self._is_fitted_classifier()

    def _is_fitted_classifier(self):
        check_is_fitted(self)
        return self._loss_name in CLASSIFICATION_LOSSES

    def _require_classifier(self, what):
        if not self._is_fitted_classifier():
            raise AttributeError(f"{what} is available for classification losses only (loss={self._loss_name!r})")

    # -- model files ------------------------------------------------------------
    def save_model(self, fname):
        """Write the fitted model to `fname` as JSON (docs/GBDT_MODEL_FORMAT.md):
        a path (extension '.json' or none; another extension raises a
        ValueError) or a file object open for writing, text or binary (UTF-8).

        Floats round-trip exactly: a loaded model predicts the same bits."""
        check_is_fitted(self)
        _model_io.save(self, fname)

    def load_model(self, fname):
        """Replace this estimator's parameters and model by those saved in
        `fname` (by :meth:`save_model` of the same class): a path (extension
        '.json' or none), a file object open for reading (text or binary),
        or the file's bytes; returns self. Another extension, or content that
        is not a twinlearn JSON model, raises a ValueError. The
        ``device`` and ``numeric_mode`` parameters are kept, so a model
        fitted on a GPU loads and predicts on a machine without one."""
        return _model_io.load(self, fname)

    # -- importances ------------------------------------------------------------
    @property
    def feature_importances_(self):
        """Total split gain per feature, normalized to sum to 1 (zeros when no split has gain)."""
        return self.get_feature_importance("gain")

    def get_feature_importance(self, importance_type="gain", data=None, type=None, reference=None,
                               reference_weight=None):
        """Importance of each input feature, or (CatBoost's ``type='ShapValues'``)
        the SHAP values of the rows of `data`.

        Parameters
        ----------
        importance_type : {'gain', 'split', 'ShapValues'}, default='gain'
            'gain': the total split gain of the feature's splits, normalized to
            sum to 1 (``feature_importances_``); 'split': the number of splits
            on the feature (an int array): tree levels of oblivious trees,
            nodes of 'Depthwise' and 'Lossguide' trees (nodes that do not
            split, feature -1, are no splits and count for nothing). With ``cat_features`` an
            encoded column counts for the input column it came from.
            'ShapValues': as :meth:`predict_contributions` of `data`.
        data : array-like of shape (n_samples, n_features_in_), optional
            The rows to explain ('ShapValues' only, where it is required).
        type : str, optional
            CatBoost's name for importance_type (``type='ShapValues'``); when
            given it wins over importance_type.
        reference, reference_weight : optional
            'ShapValues': the rows whose weights per leaf are the covers
            (default: the training leaf counts ``leaf_count_``; see
            :meth:`predict_contributions`).

        Returns
        -------
        importances : ndarray of shape (n_features_in_,)
            For 'ShapValues', float64 of shape ``(n_samples, n_features_in_ + 1)``,
            the expected value last, or ``(n_samples, n_classes, n_features_in_ + 1)``
            for a model of several outputs (MultiClass), as CatBoost's.
        """
        kind = importance_type if type is None else type
        if kind == "ShapValues":
            if data is None:
                raise ValueError("get_feature_importance(type='ShapValues') needs data, the rows to explain")
            return _predict.contributions(self, data, reference, reference_weight)
        if data is not None or reference is not None or reference_weight is not None:
            raise ValueError(f"data and reference are for type='ShapValues', not {kind!r}")
        return _importance.feature_importance(self, kind)

    def predict_contributions(self, X, reference=None, reference_weight=None):
        """SHAP values: each input feature's contribution to the raw margin
        (``decision_function`` / ``predict_raw``, before the link) of each
        row, by exact TreeSHAP (Lundberg et al. 2018), XGBoost's
        ``predict(pred_contribs=True)`` and CatBoost's ShapValues.

        The conditional expectations weigh each branch by its cover. By
        default (``reference=None``) these are the training leaf counts
        ``leaf_count_``, LightGBM's rule: the number of training rows of the
        tree (positive sample and bootstrap weight, unweighted) that reached
        each leaf, so explaining a single row gives its contributions against
        the training data; a model without counts (saved by an older
        version) raises a ValueError asking for `reference`. With
        `reference`, the covers are the total ``reference_weight`` (default 1
        per row) of the `reference` rows that reach each leaf instead (the
        training rows, unweighted, with ``subsample=1``, give the default's
        covers). The last column is the expected value: the base score plus
        each tree's cover-weighted mean leaf value (the mean margin of the
        cover rows), and each row's values sum to its raw margin up to
        rounding. With categorical features an input column's value is the
        sum of its encoded columns'. Computed on the host, in float64, with
        the same bits on every device and thread count; device arrays are
        copied to the host and the result is a NumPy array.

        Returns
        -------
        contributions : ndarray of float64
            ``(n_samples, n_features_in_ + 1)`` for a model of one output,
            ``(n_samples, n_outputs_, n_features_in_ + 1)`` otherwise (MultiClass,
            MultiClassOneVsAll: one block per class).
        """
        return _predict.contributions(self, X, reference, reference_weight)

    @property
    def encoded_feature_names_(self):
        """With cat_features: the name of each column the trees split on
        (``split_feature_`` indexes these): input columns by name, one-hot
        columns as ``'name=value'``, target statistics as ``'name:ts'`` (one
        per class, ``'name:ts[k]'``, for MultiClass losses)."""
        return _importance.encoded_feature_names(self)
