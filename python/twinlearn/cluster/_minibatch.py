"""The steps of a mini-batch KMeans fit: the counter-based draws, the
parameters that depend on the data, the initial centers of a run, the center
updates of a batch, the random reassignment of rarely hit centers and the
early-stopping test (scikit-learn's _mini_batch_step and
_mini_batch_convergence)."""

from __future__ import annotations

import warnings

import numpy as np
from sklearn.utils import check_random_state

from .. import _io


class MiniBatchSteps:
    """The steps of :class:`MiniBatchKMeans`' fit and partial_fit, on top of
    KMeans' checks (``_check_centers``)."""

    # -- draws -------------------------------------------------------------------
    # Streams of the counter-based generator, one per purpose; positions are
    # the step (or run) number.
    _S_VALID, _S_INIT_ROWS, _S_INIT, _S_BATCH, _S_REASSIGN = 1, 2, 3, 4, 5

    def _draw(self, what, *args):
        from .. import _backend

        core = _backend.core()
        ctx = core.Context("cpu", 1, "identical", 0)
        return np.asarray(getattr(core, what)(ctx, *args), dtype=np.int64)

    def _check_params(self, n):
        self._n_init = self._resolve_n_init(auto_random=3, stacklevel=4)
        self._batch_size = min(self.batch_size, n)
        init_size = self.init_size
        if init_size is None:
            init_size = 3 * self._batch_size
            if init_size < self.n_clusters:
                init_size = 3 * self.n_clusters
        elif init_size < self.n_clusters:
            warnings.warn(
                f"init_size={init_size} should be larger than n_clusters={self.n_clusters}. Setting it to "
                "min(3*n_clusters, n_samples)",
                RuntimeWarning,
                stacklevel=3,
            )
            init_size = 3 * self.n_clusters
        self._init_size = min(init_size, n)

    def _init_centroids(self, mod, ctx, X, sw, dtype, seed, run, subset):
        """Initial centers of run `run` from the rows `subset` of X (host, k x d)."""
        Xs = _io.take_rows(X, subset)
        sws = None if sw is None else np.ascontiguousarray(sw[subset])
        if isinstance(self.init, str):
            if self.init == "k-means++":
                return np.asarray(mod.kmeans_plusplus(ctx, Xs, sws, int(self.n_clusters), seed ^ (run + 1), 0).centers)
            idx = self._draw("rng_choice", seed, self._S_INIT * 1000003 + run, Xs.shape[0], self.n_clusters, False)
            return np.ascontiguousarray(_io.to_numpy(_io.take_rows(Xs, idx)), dtype=dtype)
        if callable(self.init):
            rs = check_random_state(seed % (2**32))
            return self._check_centers(self.init(_io.to_numpy(Xs), self.n_clusters, random_state=rs), X, dtype)
        return self._check_centers(self.init, X, dtype)

    def _step(self, mod, ctx, Xb, centers, dtype, seed, step, reassign):
        """scikit-learn's _mini_batch_step with unit weights; returns (new centers, batch inertia)."""
        new, inertia = self._update_centers(mod, ctx, Xb, None, centers, dtype)
        if reassign and self.reassignment_ratio > 0:
            self._reassign_centers(Xb, new, seed, step, self.verbose)
        return np.ascontiguousarray(new), inertia

    def _update_centers(self, mod, ctx, Xb, sw, centers, dtype):
        """The centers moved by the batch Xb (weights sw, None: unit) and the
        batch inertia; _counts takes the batch's weights."""
        r = mod.kmeans_assign_sums(ctx, Xb, sw, centers)
        inertia, sums, wsum = r.inertia, np.asarray(r.sums), np.asarray(r.wsum)
        old = centers.astype(np.float64)
        cnt = self._counts.astype(np.float64)
        new_cnt = cnt + wsum
        moved = wsum > 0
        upd = np.where(moved[:, None], (old * cnt[:, None] + sums) / np.where(moved, new_cnt, 1.0)[:, None], old)
        self._counts = np.where(moved, new_cnt, cnt).astype(dtype)
        return upd.astype(dtype), float(inertia)

    def _reassign_centers(self, Xb, centers, seed, step, verbose):
        """scikit-learn's random reassignment of the rarely hit centers to rows
        of the batch Xb (centers and _counts changed in place); seed None: the
        seed of the partial_fit calls."""
        b = Xb.shape[0]
        counts = self._counts
        to_reassign = counts < self.reassignment_ratio * counts.max()
        if to_reassign.sum() > 0.5 * b:
            keep = np.argsort(counts, kind="stable")[int(0.5 * b):]
            to_reassign[keep] = False
        n_re = int(to_reassign.sum())
        if n_re:
            seed = self._tl_seed if seed is None else seed
            rows = self._draw("rng_choice", seed, self._S_REASSIGN * 1000003 + step, b, n_re, False)
            if verbose:
                print(f"[MiniBatchKMeans] Reassigning {n_re} cluster centers.")
            centers[to_reassign] = np.asarray(_io.to_numpy(_io.take_rows(Xb, rows)), dtype=centers.dtype)
            counts[to_reassign] = np.min(counts[~to_reassign])

    def _random_reassign(self):
        self._n_since_last_reassign += self._batch_size
        if (self._counts == 0).any() or self._n_since_last_reassign >= 10 * self.n_clusters:
            self._n_since_last_reassign = 0
            return True
        return False

    def _convergence(self, step, n_steps, n, centers_squared_diff, batch_inertia):
        batch_inertia /= self._batch_size
        step = step + 1
        if step == 1:
            if self.verbose:
                print(f"Minibatch step {step}/{n_steps}: mean batch inertia: {batch_inertia}")
            return False
        if self._ewa_inertia is None:
            self._ewa_inertia = batch_inertia
        else:
            alpha = min(self._batch_size * 2.0 / (n + 1), 1)
            self._ewa_inertia = self._ewa_inertia * (1 - alpha) + batch_inertia * alpha
        if self.verbose:
            print(f"Minibatch step {step}/{n_steps}: mean batch inertia: {batch_inertia}, "
                  f"ewa inertia: {self._ewa_inertia}")
        if self._tol > 0.0 and centers_squared_diff <= self._tol:
            return True
        if self._ewa_inertia_min is None or self._ewa_inertia < self._ewa_inertia_min:
            self._no_improvement = 0
            self._ewa_inertia_min = self._ewa_inertia
        else:
            self._no_improvement += 1
        return self.max_no_improvement is not None and self._no_improvement >= self.max_no_improvement
