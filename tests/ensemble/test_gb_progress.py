"""Progress reporting (verbose), the core's per-round hook, and Ctrl-C."""

import re
import sys

import numpy as np
import pytest

from twinlearn import GradientBoosting, _native
from gb_helpers import split, higgs_like


# ---------------------------------------------------------------------------
# Progress reporting (verbose), the per-round hook, Ctrl-C
# ---------------------------------------------------------------------------
_LINE = re.compile(r"^(\d+):(?:\tlearn: (\S+))?(?:\ttest: (\S+)\tbest: (\S+) \((\d+)\))?\ttotal: (\S+)\tremaining: (\S+)$")


def _report_lines(err):
    return [m for m in (_LINE.match(line) for line in err.splitlines()) if m]


def test_verbose_prints_catboost_lines_every_n_rounds(capsys):
    from sklearn.metrics import log_loss

    X, y = higgs_like(n=3000, d=6, seed=41)
    Xtr, Xte, ytr, yte = split(X, y)
    m = GradientBoosting(n_estimators=12, learning_rate=0.3, verbose=5, device="cpu").fit(
        Xtr, ytr, eval_set=(Xte, yte), use_best_model=False)
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = _report_lines(captured.err)
    assert [int(l.group(1)) for l in lines] == [0, 5, 10, 11]  # every 5 rounds and the last
    hist = m.evals_result_["validation"]["Logloss"]
    for l in lines:
        t = int(l.group(1))
        assert float(l.group(3)) == pytest.approx(hist[t], rel=1e-6)
        assert int(l.group(5)) == int(np.argmin(hist[: t + 1]))
        assert float(l.group(4)) == pytest.approx(min(hist[: t + 1]), rel=1e-6)
    last_learn = float(lines[-1].group(2))
    assert last_learn == pytest.approx(log_loss(ytr, m.predict_proba(Xtr)), rel=1e-5)
    assert f"bestIteration = {m.best_iteration_}" in captured.err and "bestTest = " in captured.err
    assert "\r" not in captured.err  # not a terminal: no progress bar


def test_verbose_true_reports_every_round_and_false_is_silent(capsys):
    X, y = higgs_like(n=1000, d=4, seed=42)
    GradientBoosting(n_estimators=7, verbose=True, device="cpu").fit(X, y)
    lines = _report_lines(capsys.readouterr().err)
    assert [int(l.group(1)) for l in lines] == list(range(7))
    assert all(l.group(2) is not None and l.group(3) is None for l in lines)  # learn only, no eval set
    for verbose in (False, 0):
        GradientBoosting(n_estimators=7, verbose=verbose, device="cpu").fit(X, y, eval_set=(X, y))
        assert capsys.readouterr().err == ""


def test_verbose_with_another_metric_shows_it_and_early_stopping(capsys):
    X, y = higgs_like(n=3000, d=6, seed=43)
    Xtr, Xte, ytr, yte = split(X, y)
    m = GradientBoosting(n_estimators=500, learning_rate=0.5, eval_metric="AUC", verbose=100, device="cpu").fit(
        Xtr, ytr, eval_set=(Xte, yte), early_stopping_rounds=10)
    err = capsys.readouterr().err
    lines = _report_lines(err)
    auc = m.evals_result_["validation"]["AUC"]
    assert int(lines[-1].group(1)) == len(auc) - 1  # the round early stopping ended on
    assert all(l.group(2) is None for l in lines)  # the metric is not the loss: no learn column
    assert float(lines[-1].group(3)) == pytest.approx(auc[-1], rel=1e-6)
    assert "Stopped by overfitting detector  (10 iterations wait)" in err
    assert f"Shrink model to first {m.best_iteration_ + 1} iterations." in err


def test_progress_bar_on_a_terminal(monkeypatch):
    import io

    from twinlearn.ensemble import _progress

    class Tty(io.StringIO):
        def isatty(self):
            return True

    fake = Tty()
    monkeypatch.setattr(sys, "stderr", fake)
    monkeypatch.setattr(_progress, "BAR_AFTER_S", 0.0)
    monkeypatch.setattr(_progress, "BAR_REDRAW_S", 0.0)
    X, y = higgs_like(n=1000, d=4, seed=44)
    GradientBoosting(n_estimators=20, verbose=10, device="cpu").fit(X, y)
    out = fake.getvalue()
    assert "[" + "#" * 3 in out and "/20 (" in out and "\r" in out
    assert [int(l.group(1)) for l in _report_lines(out.replace("\r", "\n"))] == [0, 10, 19]
    # the bar is cleared at the end: the text after the last newline is blank
    assert out.rsplit("\n", 1)[-1].strip() == ""
    # separating arm: above the threshold, the same fit on the same terminal draws no bar
    monkeypatch.setattr(_progress, "BAR_AFTER_S", 1e9)
    fake.seek(0)
    fake.truncate()
    GradientBoosting(n_estimators=20, verbose=10, device="cpu").fit(X, y)
    assert "\r" not in fake.getvalue() and "#" not in fake.getvalue()


def test_format_seconds():
    from twinlearn.ensemble._progress import format_seconds

    assert format_seconds(0.0121) == "12.1ms"
    assert format_seconds(2.345) == "2.35s"
    assert format_seconds(63.4) == "1m 3s"
    assert format_seconds(7503) == "2h 5m 3s"


def test_round_hook_calls_python_and_propagates_its_exceptions():
    X, y = higgs_like(n=2000, d=5, seed=45)
    X = np.ascontiguousarray(X, dtype=np.float64)
    yf = y.astype(np.float64)
    est = GradientBoosting(n_estimators=10, learning_rate=0.3, device="cpu")
    params = est._core_params()
    params.update(loss="Logloss", loss_param=0.0, n_classes=2, early_stopping_rounds=0, eval_metric="AUC",
                  boost_from_average=True)
    mod, ctx = est._tl_context("cpu", X)
    seen = []

    def hook(info):
        seen.append(info)
        return info["round"] != 3

    params = _native.params(mod.GbdtParams, **params)
    fit = mod.gbdt_fit(ctx, X, yf, None, params, X[:500], yf[:500], None, False, hook, 2)
    assert [d["round"] for d in seen] == [0, 1, 2, 3] and len(fit.tree_depth) == 4
    assert fit.stopped_by_callback
    assert [d["train_loss"] is not None for d in seen] == [True, False, True, False]
    assert [d["eval_metric"] for d in seen] == list(fit.eval_metric)
    assert seen[0]["n_rounds"] == 10 and seen[0]["stopping"] is False

    def boom(info):
        if info["round"] == 2:
            raise ZeroDivisionError("from the hook")

    with pytest.raises(ZeroDivisionError, match="from the hook"):
        mod.gbdt_fit(ctx, X, yf, None, params, None, None, None, False, boom, 0)


_INTERRUPT = r"""
import os, signal, sys, threading, time
import numpy as np
sys.path.insert(0, {path!r})
from twinlearn import GradientBoosting
# A process started with SIGINT ignored (a background job, some CI runners) passes that on,
# and Python then installs no KeyboardInterrupt handler: install it.
signal.signal(signal.SIGINT, signal.default_int_handler)
rng = np.random.default_rng(0)
X = rng.standard_normal((20000, 10)).astype(np.float32)
y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int)
m = GradientBoosting(n_estimators=10**6, learning_rate=0.01, verbose={verbose}, device="cpu")
done = threading.Event()


def interrupt():  # Ctrl-C after 1 s, repeated until the fit ends (a loaded machine may delay the first)
    if not done.wait(1.0):
        os.kill(os.getpid(), signal.SIGINT)
        while not done.wait(2.0):
            os.kill(os.getpid(), signal.SIGINT)


threading.Thread(target=interrupt, daemon=True).start()
t0 = time.perf_counter()
try:
    try:
        m.fit(X, y, eval_set=(X[:2000], y[:2000]))
        print("finished")
    finally:
        done.set()
except KeyboardInterrupt:
    print("interrupted", time.perf_counter() - t0, hasattr(m, "tree_depth_"))
m2 = GradientBoosting(n_estimators=3, device="cpu").fit(X, y)  # the library still works afterwards
print("after", m2.n_estimators_)
"""


@pytest.mark.parametrize("verbose", [0, 1000])
def test_ctrl_c_stops_a_fit_with_keyboard_interrupt(tmp_path, verbose):
    import os
    import subprocess

    path = os.path.join(os.path.dirname(__file__), "..", "..", "python")
    script = tmp_path / "interrupt.py"
    script.write_text(_INTERRUPT.format(path=os.path.abspath(path), verbose=verbose))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120,
                       env=dict(os.environ, TWINLEARN_NUM_THREADS="1"))
    assert r.returncode == 0, r.stderr
    words = r.stdout.split()
    assert words[0] == "interrupted", r.stdout
    assert words[2] == "False"  # no half-fitted model left behind
    assert words[-2:] == ["after", "3"]
