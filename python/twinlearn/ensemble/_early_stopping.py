"""Early stopping and progress lines of the scikit-learn-shaped boosters, as
scikit-learn's HistGradientBoosting does them.

The validation split is scikit-learn's ``train_test_split`` of the row
indices (stratified by class for classifiers) under HGB's seed
``check_random_state(random_state).randint(2**32 - 1, dtype='u8')``, drawn on
the host with NumPy, so it is the same whatever the device. The core fits the
training part with the validation part as its eval set (no core-side
stopping: ``early_stopping_rounds=0``); after every round the core's
per-round callback hands the eval loss or metric (and the training loss) to a
:class:`RoundMonitor`, which turns it into HGB's score (higher is better),
applies HGB's rule (:func:`should_stop`) and ends the fit by returning False.

Scores (``train_score_``, ``validation_score_``) are HGB's: entry 0 is the
model before the first tree (the base score), entry i the model of i trees.
``scoring='loss'`` is the negative of HGB's loss: half the mean squared error
for 'squared_error' (the core reports its root, squared back here), the
mean log loss, absolute error, pinball loss or Poisson half-deviance
``exp(f) - y f`` otherwise. The other scorers (``SCORERS``) map onto the
core's eval metrics; a scorer that does not raises a ValueError naming it.

The score of entry 0 is known only once the core has fixed the base score,
after the fit, so the one check whose reference is entry 0 (after
``n_iter_no_change`` trees) is made after the fit: when it says stop, the
model is cut to those trees, which are the trees a fit stopped there has.
"""

from __future__ import annotations

import time

import numpy as np
from sklearn.utils import check_random_state

from .. import _io

#: HGB's early_stopping='auto' is on above this many rows.
AUTO_ROWS = 10_000
#: HGB scores a scorer's training score on at most this many training rows.
SMALL_TRAINSET = 10_000

# scorer name -> (core eval metric, who may use it)
SCORERS = {
    "loss": ("Loss", "any"),
    "accuracy": ("Accuracy", "classifier"),
    "roc_auc": ("AUC", "binary"),
    "neg_log_loss": ("Loss", "classifier"),
    "neg_root_mean_squared_error": ("RMSE", "regressor"),
    "neg_mean_squared_error": ("RMSE", "regressor"),
    "neg_mean_absolute_error": ("MAE", "regressor"),
    "r2": ("RMSE", "regressor"),
}


def should_stop(scores, n_iter_no_change, tol):
    """HGB's rule (``_should_stop``): stop when none of the last
    ``n_iter_no_change`` scores beats the one before them by more than tol."""
    reference_position = n_iter_no_change + 1
    if len(scores) < reference_position:
        return False
    reference_score = scores[-reference_position] + tol
    return not any(score > reference_score for score in scores[-reference_position + 1:])


def split_seed(random_state):
    """HGB's ``_random_seed``: the seed of its validation split."""
    return check_random_state(random_state).randint(np.iinfo(np.uint32).max, dtype="u8")


def split_indices(n, y_codes, validation_fraction, seed, stratify):
    """(train rows, validation rows) as HGB's train_test_split of the data draws them."""
    from sklearn.model_selection import train_test_split

    return train_test_split(np.arange(n), test_size=validation_fraction,
                            stratify=y_codes if stratify else None, random_state=seed)


def small_trainset(n, y_codes, seed, stratify):
    """HGB's ``_get_small_trainset`` rows (all rows up to SMALL_TRAINSET)."""
    if n <= SMALL_TRAINSET:
        return None
    from sklearn.utils import resample

    return resample(np.arange(n), n_samples=SMALL_TRAINSET, replace=False, random_state=seed,
                    stratify=y_codes if stratify else None)


def resolve_scoring(est, loss_name, n_classes):
    """(scorer name, core eval metric) of est.scoring; a ValueError for one the core cannot score."""
    scoring = est.scoring
    classifier = est._is_classifier()
    if scoring is None:
        scoring = "accuracy" if classifier else "r2"
    if not isinstance(scoring, str) or scoring not in SCORERS:
        names = ", ".join(repr(s) for s in SCORERS)
        raise ValueError(f"scoring={est.scoring!r} is not supported by {type(est).__name__}: use None (the "
                         f"estimator's score) or one of {names}")
    metric, who = SCORERS[scoring]
    if (who in ("classifier", "binary") and not classifier) or (who == "regressor" and classifier) or (
            who == "binary" and n_classes > 2):
        raise ValueError(f"scoring={scoring!r} does not apply to {type(est).__name__}"
                         + (f" with {n_classes} classes" if who == "binary" and classifier else ""))
    return scoring, metric


def _weighted_mean(v, w):
    return float(np.average(v, weights=w)) if w is not None else float(np.mean(v))


def hgb_loss_at(loss_name, loss_param, raw, y, w):
    """HGB's loss of raw margins (m x n_outputs) on the host, in float64."""
    f = raw[:, 0]
    if loss_name == "RMSE":
        return 0.5 * _weighted_mean((y - f) ** 2, w)
    if loss_name == "Logloss":
        return _weighted_mean(np.logaddexp(0.0, f) - y * f, w)
    if loss_name == "MultiClass":
        mx = raw.max(axis=1)
        lse = mx + np.log(np.exp(raw - mx[:, None]).sum(axis=1))
        return _weighted_mean(lse - raw[np.arange(raw.shape[0]), y.astype(np.intp)], w)
    if loss_name == "MAE":
        return _weighted_mean(np.abs(y - f), w)
    if loss_name == "Quantile":
        r = y - f
        return _weighted_mean(np.where(r > 0, loss_param * r, (loss_param - 1.0) * r), w)
    if loss_name == "Poisson":
        return _weighted_mean(np.exp(f) - y * f, w)
    raise ValueError(f"no HGB loss for the core loss {loss_name!r}")


class _Scorer:
    """Turns the core's per-round values of one data set into HGB scores."""

    def __init__(self, scoring, metric, loss_name, loss_param, y, w):
        self.scoring, self.metric, self.loss_name, self.loss_param = scoring, metric, loss_name, loss_param
        self.y, self.w = y, w
        if scoring == "r2":
            ww = np.ones_like(y) if w is None else w
            mean = np.sum(ww * y) / np.sum(ww)
            self.r2_scale = np.sum(ww) / np.sum(ww * (y - mean) ** 2)

    def from_core(self, v):
        """The HGB score of the core's value v (its loss for 'Loss', else its metric)."""
        v = float(v)
        if self.metric == "Loss":
            return -(0.5 * v * v if self.loss_name == "RMSE" else v)
        if self.scoring == "neg_mean_squared_error":
            return -v * v
        if self.scoring == "r2":
            return float(1.0 - v * v * self.r2_scale)
        if self.scoring in ("neg_root_mean_squared_error", "neg_mean_absolute_error"):
            return -v
        return v

    def at(self, raw):
        """The score of raw margins (host float64), computed on the host."""
        from .. import _core

        if self.metric == "Loss":
            return -hgb_loss_at(self.loss_name, self.loss_param, raw, self.y, self.w)
        return self.from_core(_core.gbdt_metric(self.metric, self.loss_name, np.ascontiguousarray(raw), self.y,
                                                self.w))


def _n_leaves(est):
    """Leaves of each fitted tree."""
    depths = np.asarray(est.tree_depth_, dtype=np.int64)
    if est._fitted_grow_policy() == "SymmetricTree":
        return 2 ** depths
    feats = np.asarray(est.split_feature_)
    out, off = [], 0
    for d in depths:
        k = 2 ** int(d) - 1
        out.append(int(np.count_nonzero(feats[off:off + k] >= 0)) + 1)
        off += k
    return np.asarray(out, dtype=np.int64)


class RoundMonitor:
    """The per-round callback of a scikit-learn-shaped fit: early stopping
    and ``verbose`` lines (HGB's format, printed to sys.stdout and flushed,
    so they show in notebooks too)."""

    def __init__(self, est, n_rows, loss_name, n_classes):
        self.est = est
        self.verbose = int(est.verbose)
        self.loss_name = loss_name
        self.loss_param = est._core_loss_param()
        self.n_iter_no_change = int(est.n_iter_no_change)
        self.tol = float(est.tol)
        es = est.early_stopping
        self.stopping = n_rows > AUTO_ROWS if es == "auto" else bool(es)
        self.use_val = self.stopping and est.validation_fraction is not None
        self.scoring, self.metric = (resolve_scoring(est, loss_name, n_classes) if self.stopping
                                     else ("loss", "Loss"))
        self.by_loss = self.metric == "Loss"
        self.seed = split_seed(est.random_state) if self.stopping else None
        self.train_core, self.val_core = [], []
        self.small = None
        self.start = self.last = None

    # -- before the fit ----------------------------------------------------------
    def split(self, X, y_codes, sw):
        """The training part of (X, y codes, weights); keeps the validation part."""
        if not self.use_val:
            return X, y_codes, sw
        tr, va = split_indices(X.shape[0], y_codes, self.est.validation_fraction, self.seed,
                               self.est._is_classifier())
        self.val = (_io.take_rows(X, va), y_codes[va], None if sw is None else sw[va])
        return (_io.take_rows(X, tr), np.ascontiguousarray(y_codes[tr]),
                None if sw is None else np.ascontiguousarray(sw[tr]))

    def eval_set(self, X, y_codes, sw, encode):
        """The core's eval set (encoded X, y codes, weights) or (None,)*3; X, y
        codes, sw: the training part (encoded X)."""
        if self.stopping and not self.by_loss:
            rows = small_trainset(X.shape[0], y_codes, self.seed, self.est._is_classifier())
            Xs = X if rows is None else _io.take_rows(X, rows)
            ys = y_codes if rows is None else y_codes[rows]
            ws = sw if rows is None or sw is None else sw[rows]
            self.small = (Xs, np.ascontiguousarray(ys), None if ws is None else np.ascontiguousarray(ws))
        if self.use_val:
            vX, vy, vw = self.val
            vX = encode(vX)
            self.val = (vX, np.ascontiguousarray(vy), vw)
            return self.val
        if self.small is not None:
            return self.small
        return None, None, None

    @property
    def core_metric(self):
        return self.metric if self.stopping else "Loss"

    @property
    def train_loss_every(self):
        """The core reports the training loss every round: HGB's training score by loss."""
        return 1 if (self.stopping and self.by_loss) else 0

    def needed(self):
        return self.stopping or self.verbose > 0

    def begin(self):
        self.start = self.last = time.perf_counter()
        if self.verbose:
            print("Fitting gradient boosted rounds:", flush=True)

    # -- every round -------------------------------------------------------------
    def _stop_scores(self):
        """The stopping series known during the fit (entry 0 unknown: None)."""
        if self.use_val or not self.by_loss:
            sc = self._val_scorer
            return [None] + [sc.from_core(v) for v in self.val_core]
        sc = self._train_scorer
        return [None] + [sc.from_core(v) for v in self.train_core]

    def __call__(self, info):
        t = int(info["round"])
        if self.stopping:
            if info["train_loss"] is not None and self.by_loss:
                self.train_core.append(info["train_loss"])
            if info["eval_loss"] is not None:
                self.val_core.append(info["eval_loss"] if self.by_loss else info["eval_metric"])
        stop = False
        if self.stopping and t >= self.n_iter_no_change:  # the reference is not entry 0
            stop = should_stop(self._stop_scores(), self.n_iter_no_change, self.tol)
        if self.verbose >= 2:
            now = time.perf_counter()
            parts = [f"[{t + 1}/{info['n_rounds']}] 1 tree, "]
            if self.stopping:
                name, factor = ("loss", -1) if self.scoring == "loss" else ("score", 1)
                if self.by_loss:
                    parts.append(f"train {name}: {factor * self._train_scorer.from_core(self.train_core[-1]):.5f}, ")
                if self.val_core:
                    label = "val" if self.use_val else "train"
                    parts.append(f"{label} {name}: {factor * self._val_scorer.from_core(self.val_core[-1]):.5f}, ")
            parts.append(f"in {now - self.last:0.3f}s")
            print("".join(parts), flush=True)
            self.last = now
        return not stop

    def prepare_scorers(self, y_train, w_train):
        """The scorers of the training and validation series (after eval_set)."""
        self._train_scorer = _Scorer(self.scoring, self.metric, self.loss_name, self.loss_param, y_train, w_train)
        ev = self.val if self.use_val else self.small
        self._val_scorer = None
        if ev is not None:
            self._val_scorer = _Scorer(self.scoring, self.metric, self.loss_name, self.loss_param, ev[1], ev[2])

    # -- after the fit -----------------------------------------------------------
    def finish(self, est):
        """HGB's fitted attributes; the check against entry 0; verbose summary."""
        est.do_early_stopping_ = self.stopping
        train, val = [], []
        if self.stopping:
            base = np.asarray(est.base_score_, dtype=np.float64)
            sv = self._val_scorer
            if self.by_loss:
                st = self._train_scorer
                train = [st.at(np.tile(base, (st.y.shape[0], 1)))] + [st.from_core(v) for v in self.train_core]
            if sv is not None:
                val = [sv.at(np.tile(base, (sv.y.shape[0], 1)))] + [sv.from_core(v) for v in self.val_core]
            series = val if (self.use_val or not self.by_loss) else train
            n = self.n_iter_no_change
            if len(series) > n + 1 and should_stop(series[:n + 1], n, self.tol):
                est._truncate(n)
                train, val = train[:n + 1], val[:n + 1]
            if not self.by_loss:
                if self.use_val:
                    train = self._small_train_scores(est)
                else:  # the eval set was the small training set
                    train, val = val, []
        est.train_score_ = np.asarray(train, dtype=np.float64)
        est.validation_score_ = np.asarray(val if self.use_val else [], dtype=np.float64)
        if self.verbose:
            leaves = int(_n_leaves(est).sum())
            print(f"Fit {len(est.tree_depth_)} trees in {time.perf_counter() - self.start:.3f} s, "
                  f"({leaves} total leaves)", flush=True)

    def _small_train_scores(self, est):
        """A scorer's training scores on HGB's small training set, model by model on the host."""
        Xs, ys, ws = self.small
        Xs = np.ascontiguousarray(_io.to_numpy(Xs))
        sc = _Scorer(self.scoring, self.metric, self.loss_name, self.loss_param, ys, ws)
        mod, ctx = est._tl_context("cpu")
        model = est._model_dict()
        acc = np.tile(np.asarray(est.base_score_, dtype=np.float64), (Xs.shape[0], 1))
        out = [sc.at(acc)]
        for t in range(len(est.tree_depth_)):
            mod.gbdt_predict_stage(ctx, model, Xs, t, t + 1, acc)
            out.append(sc.at(acc))
        return out
