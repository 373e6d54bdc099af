"""Progress reporting of gradient-boosting fits (``verbose``), in CatBoost's format.

The core calls a :class:`FitProgress` after every round (holding the GIL only
for the call). It prints a line every ``period`` rounds, plus the first and
the last round, to ``sys.stderr``::

    0:	learn: 0.6812345	test: 0.6890123	best: 0.6890123 (0)	total: 12.1ms	remaining: 2.3s

``learn`` is the training loss (shown when the eval metric is the loss, or
without an eval set); ``test`` and ``best`` are the eval metric on the eval
set. On a terminal, a fit expected to take longer than ``BAR_AFTER_S``
seconds also gets a one-line progress bar, redrawn in place below the lines.
"""

from __future__ import annotations

import sys
import time

BAR_AFTER_S = 3.0  # expected total time above which a terminal gets the progress bar
BAR_REDRAW_S = 0.2  # the bar is redrawn at most this often
BAR_WIDTH = 30


def format_seconds(s: float) -> str:
    """CatBoost's style: 12.1ms, 2.35s, 1m 3s, 2h 5m 3s."""
    if s < 1.0:
        return f"{s * 1000:.3g}ms"
    if s < 60.0:
        return f"{s:.3g}s"
    s = int(round(s))
    if s < 3600:
        return f"{s // 60}m {s % 60}s"
    return f"{s // 3600}h {s % 3600 // 60}m {s % 60}s"


def _num(v: float) -> str:
    return f"{v:.7g}"


class FitProgress:
    """The per-round callback of a verbose fit.

    period: report every `period` rounds (>= 1). show_learn: print the training
    loss (the core then computes it on reported rounds). stream: where to write
    (default: sys.stderr at each write, so redirections apply)."""

    def __init__(self, period: int, *, show_learn: bool, stream=None):
        self.period = int(period)
        self.show_learn = show_learn
        self._stream = stream
        self._start = time.perf_counter()
        self._bar_shown = False
        self._bar_text = ""
        self._last_bar = 0.0
        self._tty = None

    @property
    def stream(self):
        return self._stream if self._stream is not None else sys.stderr

    def _is_tty(self):
        if self._tty is None:
            try:
                self._tty = bool(self.stream.isatty())
            except (AttributeError, ValueError):
                self._tty = False
        return self._tty

    def __call__(self, info: dict):
        t = info["round"]
        n = info["n_rounds"]
        now = time.perf_counter()
        elapsed = now - self._start
        remaining = elapsed / (t + 1) * (n - t - 1)
        last = t + 1 == n or info["stopping"]
        report = t % self.period == 0 or last
        bar = self._is_tty() and elapsed + remaining > BAR_AFTER_S and not last
        out = self.stream
        if report:
            parts = [f"{t}:"]
            if info["train_loss"] is not None:
                parts.append(f"learn: {_num(info['train_loss'])}")
            if info["eval_metric"] is not None:
                parts.append(f"test: {_num(info['eval_metric'])}")
                parts.append(f"best: {_num(info['best_metric'])} ({info['best_iteration']})")
            parts.append(f"total: {format_seconds(elapsed)}")
            parts.append(f"remaining: {format_seconds(remaining)}")
            self._clear_bar()
            out.write("\t".join(parts) + "\n")
        if bar and (report or now - self._last_bar >= BAR_REDRAW_S):
            done = int(BAR_WIDTH * (t + 1) / n)
            text = (f"[{'#' * done}{'.' * (BAR_WIDTH - done)}] {t + 1}/{n} ({100 * (t + 1) // n}%)  "
                    f"total: {format_seconds(elapsed)}  remaining: {format_seconds(remaining)}")
            out.write("\r" + text.ljust(len(self._bar_text)) if self._bar_shown else text)
            self._bar_text = text
            self._bar_shown = True
            self._last_bar = now
        elif last:
            self._clear_bar()
        if report or bar:
            out.flush()

    def _clear_bar(self):
        if self._bar_shown:
            self.stream.write("\r" + " " * len(self._bar_text) + "\r")
            self._bar_shown = False

    def close(self):
        """Removes the progress bar (the fit ended, or raised)."""
        self._clear_bar()
        try:
            self.stream.flush()
        except (AttributeError, ValueError):
            pass

    def summary(self, lines):
        """Closing lines (best iteration, early stopping, shrinking)."""
        self._clear_bar()
        for line in lines:
            self.stream.write(line + "\n")
        self.stream.flush()
