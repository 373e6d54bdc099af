"""GradientBoosting: gradient-boosted decision trees with CatBoost's names
(``loss``, ``l2_leaf_reg``, ``border_count``,
``grow_policy="SymmetricTree"``).

Every fit delivers ``numeric_mode="identical"``: the histograms are exact
int64 sums of fixed-point gradients and every floating-point step is spelled
out, so the CPU and any GPU produce the same trees and predictions, bit for
bit, whatever the thread count (docs/NUMERICS.md).
"""

from __future__ import annotations

import numbers

from sklearn.base import _fit_context
from sklearn.utils import ClassifierTags, RegressorTags
from sklearn.utils._available_if import available_if
from sklearn.utils._param_validation import Interval, StrOptions

from .. import _native as native
from ..base import TL_PARAMETER_CONSTRAINTS, DeviceScoreMixin
from . import _predict
from ._base import _COMMON_DOC_ATTRIBUTES, _BoostingCore
from ._params import (
    CLASSIFICATION_LOSSES,
    LOG_LINK_LOSSES,
    MULTICLASS_LOSSES,
    catboost_core_params,
    catboost_eval_metric,
    check_catboost_params,
    loss_name_or_none,
    parse_loss,
)


def _has_classification_loss(est):
    return est.loss is None or loss_name_or_none(est.loss) in CLASSIFICATION_LOSSES


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
    loss : str or None, default=None
        CatBoost's names, parameters after a colon. None is
        CatBoostClassifier's default: 'Logloss' for two classes, 'MultiClass'
        for more (``n_outputs_`` is then the number of classes).
        Classification: 'Logloss' (exactly two classes; any labels),
        'CrossEntropy' (two classes, or probabilistic targets in [0, 1]),
        'MultiClass' (softmax over two or more classes), 'MultiClassOneVsAll'
        (one sigmoid per class; predict_proba normalizes them to sum to 1).
        Regression: 'RMSE', 'Huber:delta=D' (D > 0), 'Poisson' (counts, log
        link), 'Tweedie:variance_power=P' (1 < P < 2, log link), 'MAE',
        'Quantile:alpha=A' (0 < A < 1; 'Quantile' alone means A = 0.5);
        under a log link ``predict`` returns ``exp(margin)``. Leaf values are
        ``-G/(H + l2_leaf_reg) * learning_rate`` (Newton steps) for every
        loss with a hessian. 'MAE' and 'Quantile' have none: their trees are
        grown on the pinball loss's derivative in the prediction (``-alpha *
        w`` where the target is above the prediction, else ``(1 - alpha) *
        w``, as in CatBoost; 'MAE' is 'Quantile:alpha=0.5', the same model)
        with the row weight as hessian, and each leaf is then set to
        ``learning_rate`` times the weighted alpha-quantile of its rows'
        residuals ``y - prediction`` (the smallest residual whose running
        weight, sorted by value, reaches alpha times the leaf's weight; rows
        weighted by sample weight times bootstrap weight), as CatBoost's
        default ``leaf_estimation_method='Exact'`` and scikit-learn do;
        l2_leaf_reg does not enter these leaves. With boost_from_average they start from the weighted median (MAE)
        or the weighted alpha-quantile (Quantile) of y. Their loss values
        (``evals_result_``) are the mean absolute error (MAE) and the mean
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
        They are quantiles of the training values; with ``sample_weight``,
        weighted ones (a row of weight w counts as w rows, rows of weight 0
        not at all).
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
    monotone_constraints : list, array, str or dict, default=None
        CatBoost's monotone constraints: per feature -1 (the prediction does
        not increase with it), 0 or 1 (does not decrease), as a list or
        array of one value per feature, a string ``'(1,0,-1)'``, a dict from
        feature index or column name to value, or a list of
        ``'feature:value'`` strings (unnamed features 0). A nonzero one
        needs grow_policy 'Depthwise' or 'Lossguide' (a ValueError
        otherwise; CatBoost also constrains oblivious trees): a split whose
        children's values break it is rejected and every node's value is
        clipped to bounds inherited from its ancestors (scikit-learn's
        HistGradientBoosting rules, docs/NUMERICS.md). Not with multiclass
        losses, 'MAE' or 'Quantile', nor on ``cat_features``.
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
        equality, NaN a category of its own; in a DataFrame also labels (a
        pandas category column, strings), coded 0, 1, ... in the categories'
        order or the labels' sorted order, kept with the model (an unseen
        label is an unseen category). A column with at most
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
        lowest loss by default; the first round of the best value). After
        a fit with ``init_model``, counted from init_model's first tree.
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
        "loss": [str, None],
        "n_estimators": [Interval(numbers.Integral, 1, None, closed="left")],
        "learning_rate": [Interval(numbers.Real, 0, None, closed="neither")],
        "max_depth": [Interval(numbers.Integral, 1, 16, closed="both")],
        "l2_leaf_reg": [Interval(numbers.Real, 0, None, closed="left")],
        "border_count": [Interval(numbers.Integral, 1, 255, closed="both")],
        "grow_policy": [StrOptions({"SymmetricTree", "Depthwise", "Lossguide"})],
        "max_leaves": [Interval(numbers.Integral, 2, None, closed="left"), None],
        "min_data_in_leaf": [Interval(numbers.Integral, 1, None, closed="left")],
        "monotone_constraints": ["array-like", dict, str, None],
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

    _tl_native = (
        native.Spec(
            "GbdtParams",
            fields={"loss": ("loss", "loss_param"), "n_estimators": "n_estimators", "learning_rate": "learning_rate",
                    "max_depth": "max_depth", "l2_leaf_reg": "l2_leaf_reg", "border_count": "border_count",
                    "grow_policy": "grow_policy", "max_leaves": "max_leaves", "min_data_in_leaf": "min_data_in_leaf",
                    "monotone_constraints": "monotone_constraints", "nan_mode": "nan_mode", "boost_from_average": "boost_from_average",
                    "bootstrap_type": "bootstrap", "subsample": "subsample",
                    "bagging_temperature": "bagging_temperature", "rsm": "rsm",
                    "min_child_weight": "min_child_weight", "min_split_gain": "min_split_gain",
                    "eval_metric": "eval_metric", "random_state": "seed"},
            python_only={"cat_features": "encoded on the host before the fit (_categorical)",
                         "one_hot_max_size": "encoded on the host before the fit (_categorical)",
                         "verbose": "reported by Python from the core's per-round callback"},
            derived={"n_classes": "the classes of y", "early_stopping_rounds": "fit's argument",
                     "interaction_constraints": "none (CatBoost has no such parameter)"},
        ),
    )

    def __init__(
        self,
        *,
        loss=None,
        n_estimators=1000,
        learning_rate=0.03,
        max_depth=6,
        l2_leaf_reg=3.0,
        border_count=128,
        grow_policy="SymmetricTree",
        max_leaves=None,
        min_data_in_leaf=1,
        monotone_constraints=None,
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
        self.monotone_constraints = monotone_constraints
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
        tags = super().__sklearn_tags__()
        name = "MultiClass" if self.loss is None else loss_name_or_none(self.loss)
        if name in CLASSIFICATION_LOSSES:
            tags.estimator_type = "classifier"
            tags.classifier_tags = ClassifierTags(multi_class=name in MULTICLASS_LOSSES)
        else:
            tags.estimator_type = "regressor"
            tags.regressor_tags = RegressorTags()
            tags.target_tags.positive_only = name in LOG_LINK_LOSSES
        tags.target_tags.required = True
        tags.input_tags.allow_nan = self.nan_mode != "Forbidden"
        return tags

    def _is_classifier(self):
        return _has_classification_loss(self)

    def _core_loss(self, n_classes):
        if self.loss is None:  # CatBoostClassifier's default: by the number of classes
            return "MultiClass" if n_classes > 2 else "Logloss"
        return parse_loss(self.loss)[0]

    def _core_loss_param(self):
        return 0.0 if self.loss is None else parse_loss(self.loss)[1]

    def _metric_name(self, loss_name):
        return loss_name if self.loss is None else self.loss

    def _core_eval_metric(self, loss_name):
        return catboost_eval_metric(self, loss_name)

    def _verbose_period(self):
        return int(self.verbose)  # True: every round

    def _core_nan_mode(self):
        return self.nan_mode

    def _check_core_params(self):
        check_catboost_params(self)

    def _core_params(self):
        return catboost_core_params(self)

    @_fit_context(prefer_skip_nested_validation=True)
    def fit(self, X, y, sample_weight=None, eval_set=None, early_stopping_rounds=None, use_best_model=None,
            init_model=None):
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
        init_model : GradientBoosting, str or path-like, default=None
            Continue boosting from this model (CatBoost's ``init_model``): a
            fitted GradientBoosting, or the path of a model written by
            :meth:`save_model`. Its loss, classes, number of features,
            ``nan_mode`` and grow policy must be this fit's (else a
            ValueError). The fit adds ``n_estimators`` new trees to a copy of
            its trees (init_model itself is not changed): X is binned with its
            borders (``border_count`` is not used), every row starts from its
            raw prediction, its ``base_score_`` is kept, and the new trees are
            numbered after its own, so their row samples and ``rsm`` subsets
            are those the trees would get in one fit. On the same data and
            parameters (an integer ``random_state`` when sampling), n1 trees
            continued by n2 are the model of one fit of n1 + n2 trees, bit for
            bit, on the CPU and on a GPU. With an eval_set, ``evals_result_``
            covers the new rounds, the best iteration and early stopping are
            searched among them only, and ``best_iteration_`` counts the
            model's trees (it is at least init_model's tree count), so
            ``use_best_model`` never cuts into init_model's trees. Not
            available with ``cat_features`` (the continued fit would need
            the first fit's ordered target statistics of the training rows,
            which the model does not keep): a ValueError.

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
        return self._fit(X, y, sample_weight, eval_set, early_stopping_rounds, use_best_model, init_model)

    def predict_raw(self, X, n_trees=None, iteration_range=None):
        """Raw margins (float64): shape (n_samples,), or (n_samples, n_classes) for MultiClass.

        n_trees: use only the first n_trees trees (default all).
        iteration_range: (begin, end), use only trees [begin, end) (XGBoost's
        name; ``end=0``: up to the last tree), the base score included;
        exclusive with n_trees."""
        raw = self._range_core(X, "raw", n_trees, iteration_range)
        return raw[:, 0] if raw.shape[1] == 1 else raw

    def _range_core(self, X, kind, n_trees, iteration_range):
        return _predict.predict_core(self, X, kind, n_trees, iteration_range)

    @available_if(_has_classification_loss)
    def decision_function(self, X):
        """Raw margins (float64) in scikit-learn's shape: (n_samples,) for two classes
        (MultiClass with two classes: margin of class 1 minus margin of class 0), else
        (n_samples, n_classes)."""
        return self._raw_to_decision(self._predict_core(X, "raw"))

    @available_if(_has_classification_loss)
    def predict_proba(self, X, n_trees=None, iteration_range=None):
        """Class probabilities (float64), shape (n_samples, n_classes).

        n_trees, iteration_range: as in :meth:`predict_raw`."""
        self._require_classifier("predict_proba")
        return self._proba_from_core(self._range_core(X, "probability", n_trees, iteration_range))

    def predict(self, X, n_trees=None, iteration_range=None, pred_leaf=False):
        """Class labels (classification losses) or predicted values (RMSE, float64).

        n_trees, iteration_range: as in :meth:`predict_raw`.
        pred_leaf: return instead each row's leaf index in each tree of the
        range, int32 of shape (n_samples, n_trees) (XGBoost's
        ``predict(pred_leaf=True)``, CatBoost's ``calc_leaf_indexes``): leaf j
        of tree t holds the values ``leaf_values_[offset_t + j * n_outputs_
        + k]`` (docs/GBDT_MODEL_FORMAT.md)."""
        if pred_leaf:
            return _predict.leaf_indices(self, X, n_trees, iteration_range)
        if self._is_fitted_classifier():
            return self._labels_from_raw(self._range_core(X, "raw", n_trees, iteration_range))
        return self._range_core(X, self._value_kind(), n_trees, iteration_range)[:, 0]

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

