"""Categorical features of gradient boosting, encoded on the host.

A categorical column (``cat_features``) holds category codes: any finite
numbers, compared for equality (NaN is a category of its own). With at most
``one_hot_max_size`` categories seen in training it becomes one indicator
column per category; with more, ordered target statistics (CatBoost's
scheme): the rows are visited in a random order drawn from twinlearn's shared
random generator (Philox, seeded from ``random_state``), and each row gets

    (sum of the targets of the earlier rows in its category + prior)
    / (number of those rows + 1)

so a row never sees its own target. The prior is the mean target. At
prediction (and for eval_set) a category gets the statistic of all training
rows; a category not seen in training gets the prior (one-hot: all zeros).
Targets: the 0/1 label (or probability) for binary losses, one statistic
column per class (its indicator) for MultiClass losses, the value for
regression. Sample weights do not enter the statistics.

The encoding runs on the host in float64, in the same order whatever the
device, so it is the same on the CPU and CUDA backends and the numeric
contract of the trees is unchanged. The encoded columns are: the numeric
columns in their order, then each categorical column's in the order of
``cat_features``.

In a pandas DataFrame a categorical column may hold labels instead of codes
(a category column, strings): :func:`frame_codes` turns them into codes
0, 1, ... (the category column's categories in order, else the sorted
labels) before the checks, at fit and prediction alike, and the labels are
saved with the model.
"""

from __future__ import annotations

import numpy as np

from .. import _io
from ._params import MULTICLASS_LOSSES, sampling_seed

#: Stream of the shared generator for the row order of the statistics.
TS_STREAM = 0x6361745F7473  # "cat_ts"


class CategoricalEncoder:
    """The fitted encoding (plain data: saved with the model)."""

    def __init__(self, n_features, cat_features, one_hot_max_size):
        self.n_features = int(n_features)
        self.cat_features = [int(j) for j in cat_features]
        self.one_hot_max_size = int(one_hot_max_size)
        self.categories = {}  # j -> sorted finite category values (float64), NaN last when seen
        self.stats = {}  # j -> (sums (n_categories, k), counts (n_categories,), priors (k,)), statistics only
        self.labels = {}  # j -> the labels of codes 0, 1, ... (pandas label columns: frame_codes)

    # -- fitting ------------------------------------------------------------------
    @property
    def numeric(self):
        cats = set(self.cat_features)
        return [j for j in range(self.n_features) if j not in cats]

    def fit_transform(self, X, targets, seed, draw_uniform):
        """Encoded float64 training matrix. targets: (n, k) float64;
        draw_uniform(seed, stream, n): the shared generator's uniforms."""
        n = X.shape[0]
        order = None
        parts = [X[:, self.numeric].astype(np.float64)]
        for j in self.cat_features:
            values = _category_column(X[:, j], j)
            cats = np.unique(values[~np.isnan(values)])
            if np.isnan(values).any():
                cats = np.append(cats, np.nan)
            self.categories[j] = cats
            codes = self._codes(j, values)
            if len(cats) <= self.one_hot_max_size:
                parts.append(self._one_hot(j, codes))
                continue
            if order is None:
                u = np.asarray(draw_uniform(seed, TS_STREAM, n), dtype=np.float64)
                order = np.argsort(u, kind="stable")
            m = len(cats)
            sums = np.zeros((m, targets.shape[1]))
            for k in range(targets.shape[1]):
                sums[:, k] = np.bincount(codes, weights=targets[:, k], minlength=m)
            counts = np.bincount(codes, minlength=m).astype(np.float64)
            priors = targets.mean(axis=0)
            self.stats[j] = (sums, counts, priors)
            parts.append(_ordered_statistics(codes, targets, priors, order, m))
        return np.ascontiguousarray(np.concatenate(parts, axis=1))

    # -- applying ---------------------------------------------------------------------
    def transform(self, X):
        """Encoded float64 matrix of new rows (training statistics of all rows)."""
        parts = [X[:, self.numeric].astype(np.float64)]
        for j in self.cat_features:
            codes = self._codes(j, _category_column(X[:, j], j))
            if j not in self.stats:
                parts.append(self._one_hot(j, codes))
                continue
            sums, counts, priors = self.stats[j]
            out = np.empty((X.shape[0], len(priors)))
            seen = codes >= 0
            out[seen] = (sums[codes[seen]] + priors) / (counts[codes[seen], None] + 1.0)
            out[~seen] = priors
            parts.append(out)
        return np.ascontiguousarray(np.concatenate(parts, axis=1))

    def _codes(self, j, values):
        """Index of each value among the training categories of column j, -1 if unseen."""
        cats = self.categories[j]
        finite = cats[~np.isnan(cats)]
        codes = np.full(values.shape[0], -1, dtype=np.intp)
        nan = np.isnan(values)
        if len(finite):
            pos = np.minimum(np.searchsorted(finite, values[~nan]), len(finite) - 1)
            codes[~nan] = np.where(finite[pos] == values[~nan], pos, -1)
        if len(finite) < len(cats):  # NaN seen in training: the last category
            codes[nan] = len(finite)
        return codes

    def _one_hot(self, j, codes):
        out = np.zeros((codes.shape[0], len(self.categories[j])))
        seen = codes >= 0
        out[np.flatnonzero(seen), codes[seen]] = 1.0
        return out

    # -- description ------------------------------------------------------------------
    def sources(self):
        """The input column of each encoded column."""
        src = list(self.numeric)
        for j in self.cat_features:
            width = self.stats[j][0].shape[1] if j in self.stats else len(self.categories[j])
            src += [j] * width
        return np.asarray(src, dtype=np.intp)

    def names(self, input_names):
        """A name for each encoded column: 'name', 'name=value' (one-hot), 'name:ts' or 'name:ts[k]'."""
        out = [str(input_names[j]) for j in self.numeric]
        for j in self.cat_features:
            name = str(input_names[j])
            if j in self.stats:
                k = self.stats[j][0].shape[1]
                out += [f"{name}:ts"] if k == 1 else [f"{name}:ts[{c}]" for c in range(k)]
            else:
                out += [f"{name}={v:g}" for v in self.categories[j]]
        return out

    @property
    def n_out(self):
        return len(self.sources())

    # -- persistence ------------------------------------------------------------------
    def to_dict(self, floats):
        """JSON-ready; `floats` turns an array into a list of JSON numbers."""
        cols = []
        for j in self.cat_features:
            cats = self.categories[j]
            entry = {"feature": j, "categories": floats(cats[~np.isnan(cats)]),
                     "nan_category": bool(np.isnan(cats).any())}
            if j in self.labels:
                entry["labels"] = list(self.labels[j])
            if j in self.stats:
                sums, counts, priors = self.stats[j]
                entry.update(sums=[floats(r) for r in sums], counts=floats(counts), priors=floats(priors))
            cols.append(entry)
        return {"n_input_features": self.n_features, "one_hot_max_size": self.one_hot_max_size, "columns": cols}

    @classmethod
    def from_dict(cls, doc, number):
        """The encoder of a saved model; `number` reads one JSON number."""
        cols = doc["columns"]
        enc = cls(doc["n_input_features"], [c["feature"] for c in cols], doc["one_hot_max_size"])
        for c in cols:
            j = int(c["feature"])
            if not 0 <= j < enc.n_features:
                raise ValueError(f"categorical feature {j} is outside the {enc.n_features} input features")
            cats = np.asarray([number(v) for v in c["categories"]], dtype=np.float64)
            if c.get("nan_category"):
                cats = np.append(cats, np.nan)
            enc.categories[j] = cats
            if "labels" in c:
                if not isinstance(c["labels"], list):
                    raise ValueError(f"the labels of categorical feature {j} must be a list")
                enc.labels[j] = list(c["labels"])
            if "sums" in c:
                sums = np.asarray([[number(v) for v in r] for r in c["sums"]], dtype=np.float64)
                counts = np.asarray([number(v) for v in c["counts"]], dtype=np.float64)
                priors = np.asarray([number(v) for v in c["priors"]], dtype=np.float64)
                if sums.shape != (len(cats), len(priors)) or counts.shape != (len(cats),):
                    raise ValueError(f"the statistics of categorical feature {j} do not match its categories")
                enc.stats[j] = (sums, counts, priors)
        return enc


def _category_column(col, j):
    col = np.asarray(col, dtype=np.float64)
    if np.isinf(col).any():
        raise ValueError(f"categorical feature {j} holds an infinite value; categories must be finite numbers or NaN")
    return col


def _ordered_statistics(codes, targets, priors, order, m):
    """Each row's statistic over the rows before it (in `order`) in its category."""
    n, k = targets.shape
    c = codes[order]
    t = targets[order]
    by_cat = np.argsort(c, kind="stable")  # rows of a category together, in visiting order
    cs, ts = c[by_cat], t[by_cat]
    starts = np.r_[0, np.flatnonzero(cs[1:] != cs[:-1]) + 1]
    group = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n]))
    before = np.arange(n) - starts[group]  # earlier rows of the same category
    csum = np.cumsum(ts, axis=0)
    base = np.where(starts[group][:, None] > 0, csum[starts[group] - 1], 0.0)
    prior_sum = csum - ts - base  # exclusive sum within the category
    values = (prior_sum + priors) / (before[:, None] + 1.0)
    out = np.empty((n, k))
    out[order[by_cat]] = values
    return out


# -- the estimator's side ------------------------------------------------------------
def cat_indices(est, cat_features):
    """cat_features as sorted unique column indices (ints, names or a boolean mask)."""
    values = np.asarray(cat_features)
    d = est.n_features_in_
    if values.dtype == bool:
        if values.shape != (d,):
            raise ValueError(f"{est._CAT_PARAM} as a boolean mask needs {d} entries, got shape {values.shape}")
        return [int(j) for j in np.flatnonzero(values)]
    out = []
    for v in values.ravel().tolist():
        if isinstance(v, str):
            names = getattr(est, "feature_names_in_", None)
            if names is None or v not in list(names):
                raise ValueError(f"{est._CAT_PARAM} names {v!r}, which is not a column name of X")
            v = list(names).index(v)
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 0 <= v < d:
            raise ValueError(f"{est._CAT_PARAM} must hold column indices in [0, {d}) or column names; got {v!r}")
        out.append(int(v))
    if len(set(out)) != len(out):
        raise ValueError(f"{est._CAT_PARAM} names a column twice: {out}")
    return sorted(out)


def encode_fit(est, X, y_codes, n_classes, loss_name):
    """The training matrix for the trees: X itself without categorical
    features, else its encoding (host float64); sets est._cat_encoder."""
    cat_features, one_hot_max_size = est._cat_settings()
    if isinstance(cat_features, str) and cat_features == "from_dtype":
        cat_features = getattr(est, "_cat_from_dtype", None)
    est._cat_encoder = None
    if cat_features is None or len(np.atleast_1d(np.asarray(cat_features, dtype=object))) == 0:
        return X
    enc = CategoricalEncoder(est.n_features_in_, cat_indices(est, cat_features), one_hot_max_size)
    if loss_name in MULTICLASS_LOSSES:
        targets = (y_codes[:, None] == np.arange(n_classes)[None, :]).astype(np.float64)
    else:
        targets = np.asarray(y_codes, dtype=np.float64)[:, None]
    seed = sampling_seed(est.random_state)
    mod, ctx = est._tl_context("cpu")

    def uniforms(seed, stream, n):
        return mod.rng_uniform(ctx, seed, stream, 0, n, "float64")

    encoded = enc.fit_transform(_io.to_numpy(X), targets, seed, uniforms)
    enc.labels = {j: v for j, v in (getattr(est, "_cat_labels", None) or {}).items() if j in enc.cat_features}
    est._cat_encoder = enc
    return encoded


def encode(est, X):
    """The encoded matrix for the trees (host float64), or X without cat_features."""
    enc = getattr(est, "_cat_encoder", None)
    return X if enc is None else enc.transform(_io.to_numpy(X))


# -- categories given as labels (pandas) -----------------------------------------------
def _is_frame(X):
    return hasattr(X, "columns") and hasattr(X, "iloc") and hasattr(X, "dtypes")


def _label_column(col):
    """True for a pandas column of labels: category dtype, or strings (object or string dtype)."""
    dt = col.dtype
    if getattr(dt, "name", "") == "category":
        return True
    if getattr(dt, "kind", "O") not in "OSU" and not str(dt).startswith("string"):
        return False
    return any(isinstance(v, (str, bytes)) for v in col.dropna().to_numpy(dtype=object)[:1000]) or \
        str(dt).startswith("string")


def frame_codes(est, X, reset):
    """X with its categorical label columns (pandas category dtype, strings)
    as float category codes, the encoding of est's categorical features
    (``_CAT_PARAM``: 'from_dtype', indices, names or a mask). At fit
    (reset) the labels of each column are sorted (a category column keeps its
    categories' order) and label k gets code k; est._cat_labels keeps them
    (saved with the model). Missing labels are NaN (a category of their
    own); a label not seen at fit gets a code no training row has (unseen).
    Other input passes unchanged."""
    if not _is_frame(X):
        if reset:
            est._cat_labels = {}
            est._cat_from_dtype = None
        return X
    cat_param = getattr(est, est._CAT_PARAM, None)
    from_dtype = isinstance(cat_param, str) and cat_param == "from_dtype"
    if reset:
        est._cat_from_dtype = None
        if from_dtype:
            est._cat_from_dtype = [j for j in range(X.shape[1]) if _label_column(X.iloc[:, j])]
        labels = {}
        if cat_param is not None and not from_dtype:
            # the named columns: through the same checks as the encoder's (names need feature names)
            class _Names:
                _CAT_PARAM = est._CAT_PARAM
                n_features_in_ = X.shape[1]
                feature_names_in_ = np.asarray([str(c) for c in X.columns], dtype=object)
            named = cat_indices(_Names, cat_param)
        else:
            named = est._cat_from_dtype or []
        for j in named:
            col = X.iloc[:, j]
            if not _label_column(col):
                continue
            if getattr(col.dtype, "name", "") == "category":
                vocab = [v.item() if hasattr(v, "item") else v for v in col.cat.categories]
            else:
                present = set(col.dropna().unique().tolist())
                kinds = {type(v) for v in present}
                if len(kinds) > 1:
                    raise ValueError(f"categorical column {X.columns[j]!r} mixes label types {sorted(k.__name__ for k in kinds)}; "
                                     "give one type (e.g. strings) per column")
                vocab = sorted(present)
            labels[j] = vocab
        est._cat_labels = labels
    labels = getattr(est, "_cat_labels", None) or {}
    if not labels:
        return X
    if not reset and X.shape[1] != getattr(est, "n_features_in_", X.shape[1]):
        return X  # the feature-count check reports it
    import pandas as pd

    X = X.copy()
    for j, vocab in labels.items():
        col = X.iloc[:, j]
        codes = pd.Index(vocab, dtype=object).get_indexer(col.to_numpy(dtype=object)).astype(np.float64)
        codes[codes < 0] = float(len(vocab))  # a label not seen at fit: a code no training row has
        codes[np.asarray(col.isna())] = np.nan
        X[X.columns[j]] = codes
    return X
