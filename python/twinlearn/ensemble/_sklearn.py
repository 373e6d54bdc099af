"""GradientBoostingClassifier and GradientBoostingRegressor: the model of
GradientBoosting with scikit-learn's names and defaults, in the style of
HistGradientBoostingClassifier and HistGradientBoostingRegressor."""

from __future__ import annotations

import numbers

import numpy as np

from sklearn.base import ClassifierMixin, RegressorMixin, _fit_context
from sklearn.utils.validation import check_is_fitted
from sklearn.utils._param_validation import Interval, RealNotInt, StrOptions

from .. import _native as native
from ..base import TL_PARAMETER_CONSTRAINTS, DeviceScoreMixin
from . import _predict
from ._base import _COMMON_DOC_ATTRIBUTES, _BoostingCore
from ._early_stopping import RoundMonitor
from ._params import sklearn_core_params

# How the parameters of both reach the core's GbdtParams (their _tl_native).
_SKLEARN_FIELDS = {"learning_rate": "learning_rate", "n_estimators": "n_estimators", "max_depth": "max_depth",
                   "max_leaf_nodes": ("grow_policy", "max_leaves"),
                   "min_samples_leaf": ("grow_policy", "min_data_in_leaf"), "l2_regularization": "l2_leaf_reg",
                   "max_bins": "border_count", "subsample": ("bootstrap", "subsample"), "random_state": "seed",
                   "monotonic_cst": ("grow_policy", "monotone_constraints"),
                   "interaction_cst": ("grow_policy", "interaction_constraints")}
_SKLEARN_PYTHON_ONLY = {
    "categorical_features": "encoded on the host before the fit (_categorical)",
    "early_stopping": "HGB's rule, applied in Python from the core's per-round callback (_early_stopping)",
    "scoring": "chooses the core's eval metric of the validation set (_early_stopping.SCORERS)",
    "validation_fraction": "the validation rows, split on the host and given to the core as its eval set",
    "n_iter_no_change": "HGB's rule (_early_stopping.should_stop)",
    "tol": "HGB's rule (_early_stopping.should_stop)",
    "verbose": "printed by Python from the core's per-round callback",
    "warm_start": "the fitted model becomes the core's init model (_warm)",
}
_SKLEARN_DERIVED = {
    "n_classes": "the classes of y",
    "early_stopping_rounds": "0: the callback stops the fit (HGB's rule), not the core",
    "eval_metric": "'Loss', or the metric of scoring with early stopping",
    "nan_mode": "'Min' for oblivious trees, 'Learned' for per-node ones (as scikit-learn's)",
    "boost_from_average": "True but for the multiclass loss",
    "bagging_temperature": "1: no Bayesian bootstrap",
    "rsm": "1: every feature",
    "min_child_weight": "1e-3: scikit-learn's min_hessian_to_split (a leaf needs that much hessian)",
    "min_split_gain": "-inf: no constraint",
}


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
        "monotonic_cst": ["array-like", dict, None],
        "interaction_cst": [list, tuple, StrOptions({"pairwise", "no_interactions"}), None],
        "warm_start": ["boolean"],
        "categorical_features": ["array-like", StrOptions({"from_dtype"}), None],
        "early_stopping": [StrOptions({"auto"}), "boolean"],
        "scoring": [str, None],
        "validation_fraction": [Interval(RealNotInt, 0, 1, closed="neither"),
                                Interval(numbers.Integral, 1, None, closed="left"), None],
        "n_iter_no_change": [Interval(numbers.Integral, 1, None, closed="left")],
        "tol": [Interval(numbers.Real, 0, None, closed="left")],
        "verbose": ["verbose"],
        "random_state": ["random_state"],
        **TL_PARAMETER_CONSTRAINTS,
    }

    _CAT_PARAM = "categorical_features"

    def _check_core_params(self):
        pass

    def _cat_settings(self):
        """categorical_features as GradientBoosting's cat_features, with its
        default one_hot_max_size (2)."""
        return self.categorical_features, 2

    def _per_node(self):
        """Best-first per-node trees (max_leaf_nodes, min_samples_leaf, monotonic_cst or
        interaction_cst set), else oblivious trees."""
        return (self.max_leaf_nodes is not None or self.min_samples_leaf != 1 or self.monotonic_cst is not None
                or self.interaction_cst is not None)

    def _core_params(self):
        return sklearn_core_params(self)

    def _round_monitor(self, n_rows, loss_name, n_classes):
        monitor = RoundMonitor(self, n_rows, loss_name, n_classes)
        if not monitor.needed():
            self.do_early_stopping_ = False
            self.train_score_ = np.asarray([], dtype=np.float64)
            self.validation_score_ = np.asarray([], dtype=np.float64)
            return None
        return monitor

    @property
    def n_iter_(self):
        """The number of boosting rounds fitted (HGB's name; ``n_estimators_``)."""
        check_is_fitted(self)
        return self.n_estimators_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

    def apply(self, X):
        """Each row's leaf index in each tree, int32 of shape (n_samples,
        n_trees) (as scikit-learn's forests' ``apply``; every output of a
        classifier's tree shares its leaves): leaf j of tree t holds the
        values ``leaf_values_[offset_t + j * n_outputs_ + k]``
        (docs/GBDT_MODEL_FORMAT.md)."""
        return _predict.leaf_indices(self, X)

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
        monotonic_cst=None,
        interaction_cst=None,
        class_weight=None,
        warm_start=False,
        early_stopping="auto",
        scoring="loss",
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-7,
        verbose=0,
        random_state=None,
        device=None,
        numeric_mode=None,
    ):
        self.loss = loss
        self.class_weight = class_weight
        self.warm_start = warm_start
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf
        self.l2_regularization = l2_regularization
        self.max_bins = max_bins
        self.subsample = subsample
        self.categorical_features = categorical_features
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.early_stopping = early_stopping
        self.scoring = scoring
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.verbose = verbose
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
        None (with ``min_samples_leaf=1`` and no ``monotonic_cst`` or
        ``interaction_cst``): oblivious trees of exactly
        ``max_depth`` levels, one split shared by each level's nodes. Set,
        or with ``min_samples_leaf > 1`` or a constraint: trees as scikit-learn's
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
        Whatever the tree kind, a split is made only where each child's
        hessian sum is 0 or at least 1e-3 (scikit-learn's
        ``min_hessian_to_split``; :class:`GradientBoosting`'s
        ``min_child_weight``): with strong class weights, leaves of only the
        light classes' rows are not made.
{l2_doc}    max_bins : int, default=255
        Maximum number of bins per feature for non-missing values (2 to
        256); NaN values get a bin of their own below every value.
    subsample : float in (0, 1], default=1.0
        The fraction of rows each tree is grown on, drawn anew for every
        tree (as in :class:`sklearn.ensemble.GradientBoostingClassifier`):
        below 1.0 each row takes part in a tree with this probability
        (:class:`GradientBoosting`'s ``bootstrap_type='Bernoulli'``).
    categorical_features : 'from_dtype', array-like of int or str, or boolean mask, default=None
        The categorical columns, as column indices, DataFrame column names,
        a boolean mask (:class:`GradientBoosting`'s ``cat_features``, with
        ``one_hot_max_size=2``) or 'from_dtype': a DataFrame's pandas
        category columns and columns of strings (scikit-learn's
        HistGradientBoosting takes category columns only; its default is
        'from_dtype', twinlearn's stays None). Their values are category
        codes (any numbers; NaN is a category of its own) or, in a DataFrame,
        labels: a category column's categories or the sorted strings of a
        string column become codes 0, 1, ... on the host (the same model as
        those integer codes, bit for bit), kept with the model; at
        prediction a label not seen in training is an unseen category and a
        missing one NaN. A column mixing label types raises a ValueError
        naming it. The encoding is CatBoost's,
        not scikit-learn's partition splits: a column with at most 2
        categories in training becomes one indicator per category, a column
        with more becomes ordered target statistics, the rows visited in an
        order drawn from ``random_state`` (docs/NUMERICS.md).
    monotonic_cst : array-like of int of shape (n_features,) or dict, default=None
        scikit-learn's monotonic constraints: per feature -1 (the prediction
        does not increase with it), 0 (no constraint) or 1 (does not
        decrease), or a dict from feature names to these values (data with
        column names). Set, it selects per-node trees (see
        ``max_leaf_nodes``). As in scikit-learn, a split whose children's
        values break the constraint is rejected, and every node's value is
        clipped to bounds inherited from its ancestors (cut at the midpoint
        of a constrained split's children's values), so leaves respect them.
        Not for multiclass classification or categorical features, nor with
        loss='absolute_error' or 'quantile' (whose leaves are residual
        quantiles, outside the bounds). CPU and GPU fits give the same bits.
    interaction_cst : {'pairwise', 'no_interactions'} or sequence of lists/tuples/sets of int, default=None
        scikit-learn's interaction constraints: groups of feature indices
        that may interact (features listed in no group form one more group).
        A node splits only on features of the groups that hold every feature
        split on along its path. Set, it selects per-node trees (see
        ``max_leaf_nodes``). A categorical feature's encoded columns belong
        to its groups.
    warm_start : bool, default=False
        As in HistGradientBoosting: when True, a fit of an already fitted
        estimator adds trees to its model until it has ``n_estimators``
        (equal: the fit does nothing; fewer than it has: a ValueError). The
        data must have the same features (and a classifier's y the same
        classes), else a ValueError. The continued fit bins X with the
        model's borders, starts every row from the model's raw prediction
        and numbers the new trees after the old ones, so on the same data
        and parameters (an integer ``random_state`` when subsampling) a
        fit of n1 trees grown to n1 + n2 is the model of one fit of n1 + n2
        trees, bit for bit, on the CPU and on a GPU. Not available with
        ``categorical_features`` (the continued fit would need the first
        fit's ordered target statistics of the training rows): a ValueError.
        Nor with early stopping on (``early_stopping=True``, or 'auto' with
        more than 10 000 rows): a ValueError; pass ``early_stopping=False``.
    early_stopping : 'auto' or bool, default='auto'
        Stop when the score has not improved for ``n_iter_no_change`` rounds
        (scikit-learn's HistGradientBoosting rule, below). 'auto': on when
        the data has more than 10 000 rows. Off, the fit is the one without
        these parameters, bit for bit.
    scoring : str or None, default='loss'
        The score early stopping follows (higher is better): 'loss' (the
        negative loss, scikit-learn's: half the mean squared error for
        'squared_error', the mean log loss, absolute error, pinball loss or
        Poisson half-deviance ``exp(f) - y f``), None (the estimator's
        ``score``: accuracy, R^2), or one of 'accuracy', 'roc_auc' (two
        classes), 'neg_log_loss', 'neg_root_mean_squared_error',
        'neg_mean_squared_error', 'neg_mean_absolute_error', 'r2'. These
        are the core's per-round eval metrics (computed on the host, the
        same on every device); other scorers and callables raise a
        ValueError. As scikit-learn, a scorer's training score uses at most
        10 000 training rows (drawn as HGB's ``_get_small_trainset``).
    validation_fraction : int, float or None, default=0.1
        The rows held out to score early stopping: a fraction in (0, 1) or
        a number of rows, drawn as scikit-learn's HistGradientBoosting does
        (``train_test_split`` of the rows, stratified by class for
        classifiers, under the seed
        ``check_random_state(random_state).randint(2**32 - 1)``), on the host.
        The trees are fitted on the other rows. None: score the training
        data.
    n_iter_no_change : int, default=10
    tol : float, default=1e-7
        Early stopping ends the fit after the round where none of the last
        ``n_iter_no_change`` scores is above the score
        ``n_iter_no_change + 1`` entries back plus ``tol`` (the scores
        start with the model before the first tree). All trees fitted are
        kept, as in scikit-learn.
    verbose : int, default=0
        1: a line when the fit starts and a summary ("Fit N trees in T s,
        (L total leaves)"); 2 and more: also a line per round, "[i/n] 1 tree,
        train loss: ..., val loss: ..., in 0.005s" (scikit-learn's format,
        without the per-round leaf count and depth, which the core reports
        only at the end, nor the time breakdown). Printed to ``sys.stdout``
        and flushed from the fitting thread, so they show in notebooks.
    random_state : int, RandomState instance or None, default=None
        Seeds the row sampling (subsample < 1.0), the row order of the
        categorical encoding and the validation split of early stopping;
        unused otherwise.

    ``max_iter`` (scikit-learn's name of ``n_estimators``) is no alias here:
    two parameters for one value break ``get_params``/``set_params`` round
    trips and ``clone``; the accelerator translates it.
    device : {None, 'auto', 'cpu', 'cuda', 'cuda:N'}, default=None
    numeric_mode : {None, 'fast', 'deterministic', 'identical'}, default=None
        Every mode is served by ``identical``.
"""


_EARLY_STOPPING_DOC_ATTRIBUTES = """    n_iter_ : int
        The number of boosting rounds fitted (``n_estimators_``).
    do_early_stopping_ : bool
    train_score_ : ndarray of shape (n_iter_ + 1,)
        The scores on the training data (a scorer's: at most 10 000 of its
        rows), entry 0 before the first tree; empty without early stopping.
    validation_score_ : ndarray of shape (n_iter_ + 1,)
        The scores on the validation rows; empty without early stopping or
        with ``validation_fraction=None``.
    """


class GradientBoostingClassifier(DeviceScoreMixin, ClassifierMixin, _SklearnShaped):
    # Assembled from shared pieces: an expression is no docstring, so it is assigned.
    __doc__ = """Gradient-boosted trees for classification, scikit-learn-shaped.

    The model of :class:`GradientBoosting` (Logloss for two classes, softmax
    'MultiClass' for more) with scikit-learn's names and defaults in the
    style of :class:`sklearn.ensemble.HistGradientBoostingClassifier`.
    Predicted probabilities and decision values are float64 (the margins
    summed in double, as scikit-learn's).

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
""" + _EARLY_STOPPING_DOC_ATTRIBUTES + _COMMON_DOC_ATTRIBUTES + """
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

    _tl_native = (
        native.Spec(
            "GbdtParams",
            fields={"loss": "loss", **_SKLEARN_FIELDS},
            python_only={**_SKLEARN_PYTHON_ONLY, "class_weight": "multiplies the sample weights"},
            derived={**_SKLEARN_DERIVED, "loss_param": "0: log_loss takes none"},
        ),
    )

    __init__ = _sklearn_shaped_init(default_loss="log_loss", default_l2=1.0)

    def _is_classifier(self):
        return True

    def _core_loss(self, n_classes):
        return "Logloss" if n_classes <= 2 else "MultiClass"

    def decision_function(self, X):
        """Raw margins (float64): (n_samples,) for two classes, else (n_samples, n_classes)."""
        return self._raw_to_decision(self._predict_core(X, "raw"))

    def predict_proba(self, X):
        """Class probabilities (float64), shape (n_samples, n_classes)."""
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
    float64 (the margins summed in double, as scikit-learn's).

    Parameters
    ----------
    loss : {'squared_error', 'absolute_error', 'quantile', 'poisson'}, default='squared_error'
        'poisson' fits counts with a log link (CatBoost's Poisson); predictions
        are then the expected values ``exp(margin)``. 'absolute_error' and
        'quantile' are :class:`GradientBoosting`'s 'MAE' and
        'Quantile:alpha=<alpha>': the trees are grown on the pinball loss's
        gradients and each leaf is set, as scikit-learn does, to
        ``learning_rate`` times the weighted median ('absolute_error') or
        alpha-quantile ('quantile') of its rows' residuals; the fit starts
        from the weighted median or alpha-quantile of y.
    alpha : float in (0, 1), default=0.9
        The quantile loss='quantile' predicts (scikit-learn's
        GradientBoostingRegressor name and default); used by that loss only.
    """ + _SKLEARN_PARAMS_DOC.replace("{l2_doc}", _L2_DOC_REGRESSOR) + """
    Attributes
    ----------
    n_outputs_ : int
""" + _EARLY_STOPPING_DOC_ATTRIBUTES + _COMMON_DOC_ATTRIBUTES + """
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

    _tl_native = (
        native.Spec(
            "GbdtParams",
            fields={"loss": "loss", "alpha": "loss_param", **_SKLEARN_FIELDS},
            python_only=_SKLEARN_PYTHON_ONLY,
            derived=_SKLEARN_DERIVED,
        ),
    )

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
        monotonic_cst=None,
        interaction_cst=None,
        warm_start=False,
        early_stopping="auto",
        scoring="loss",
        validation_fraction=0.1,
        n_iter_no_change=10,
        tol=1e-7,
        verbose=0,
        random_state=None,
        device=None,
        numeric_mode=None,
    ):
        self.loss = loss
        self.alpha = alpha
        self.warm_start = warm_start
        self.learning_rate = learning_rate
        self.n_estimators = n_estimators
        self.max_depth = max_depth
        self.max_leaf_nodes = max_leaf_nodes
        self.min_samples_leaf = min_samples_leaf
        self.l2_regularization = l2_regularization
        self.max_bins = max_bins
        self.subsample = subsample
        self.categorical_features = categorical_features
        self.monotonic_cst = monotonic_cst
        self.interaction_cst = interaction_cst
        self.early_stopping = early_stopping
        self.scoring = scoring
        self.validation_fraction = validation_fraction
        self.n_iter_no_change = n_iter_no_change
        self.tol = tol
        self.verbose = verbose
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
        """Predicted values (float64), shape (n_samples,): exp of the margin for loss='poisson'."""
        return self._predict_core(X, self._value_kind())[:, 0]

    def staged_predict(self, X):
        return self._staged_core(X, self._value_kind(), sklearn_shape=True)
