"""The benchmark harness, on tiny sizes on the CPU: result schema, statuses
(absent, not implemented, not available, error), Markdown regeneration,
sweeps, the accelerated-scikit-learn hook, and the quality metrics."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from bench import cli, datasets, metrics, report, runner, workloads  # noqa: E402,F401  (registers workloads)
from bench.memory import HostMemoryProbe  # noqa: E402
from bench.registry import (  # noqa: E402
    FIT_TRANSFORM, REGISTRY, Peer, Scale, Workload, human_rows, register,
)
from bench.runner import add_speedups  # noqa: E402

STATUSES = {"ok", "absent", "not implemented", "not available", "skipped", "error"}
CONTENDER_KEYS = {"name", "library", "role", "input", "numeric_mode", "version", "status", "reason"}
OK_KEYS = {"times_s", "runs_s", "total_s", "first_run_s", "repeats", "single_run", "memory"}
WORKLOAD_KEYS = {"name", "title", "kind", "shape", "dtype", "steps", "metric", "contenders"}
SMOKE = ["--suite", "smoke", "--no-plots", "--quiet"]


def run_bench(tmp_path: Path, *args: str, name="result", device="cpu") -> tuple[dict, Path, Path]:
    out, md = tmp_path / f"{name}.json", tmp_path / f"{name}.md"
    assert cli.main([*SMOKE, "--device", device, "--out", str(out), "--markdown", str(md), *args]) == 0
    return json.loads(out.read_text()), out, md


def by_name(contenders: list[dict]) -> dict:
    return {r["name"]: r for r in contenders}


def records(result: dict, workload: str) -> dict:
    (w,) = [w for w in result["workloads"] if w["name"] == workload]
    return by_name(w["contenders"])


def check_schema(result: dict, device="cpu"):
    assert result["schema"] == report.SCHEMA_VERSION
    assert result["device"] == device
    env = result["environment"]
    for key in ("date", "git", "device", "cpu", "libraries", "thread_pools", "device_slug"):
        assert key in env
    assert env["git"]["commit"]
    assert env["libraries"]["scikit-learn"]
    assert env["cpu"]["usable_cores"] >= 1
    for w in result["workloads"]:
        assert WORKLOAD_KEYS <= set(w)
        for r in w["contenders"]:
            assert CONTENDER_KEYS <= set(r), r
            assert r["status"] in STATUSES, r
            if r["status"] != "ok":
                assert r["reason"], r
                continue
            assert OK_KEYS <= set(r), r
            assert set(r["times_s"]) == set(w["steps"])
            assert r["total_s"] == pytest.approx(sum(r["times_s"].values()))
            assert all(len(v) == r["repeats"] for v in r["runs_s"].values())
            assert r["memory"]["host_peak_bytes"] >= 0
            if w["metric"] and "quality_error" not in r:
                assert isinstance(r["quality"][w["metric"]["name"]], float)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory):
    """One smoke run shared by the tests that only read its output."""
    tmp = tmp_path_factory.mktemp("smoke")
    return run_bench(
        tmp, "--only", "standard_scaler,kmeans,pca,accel_standard_scaler,accel_ridge", "--repeats", "2"
    )


def test_smoke_result_schema(smoke):
    result, _, _ = smoke
    check_schema(result)
    assert [w["name"] for w in result["workloads"]] == [
        "standard_scaler", "kmeans", "pca", "accel_standard_scaler", "accel_ridge"
    ]
    sk = records(result, "pca")
    assert "scikit-learn" in sk and not any("(" in name for name in sk if name.startswith("scikit-learn"))
    assert sk["scikit-learn"]["status"] == "ok"
    assert sk["scikit-learn"]["repeats"] == 2
    assert sk["scikit-learn"]["threads"] >= 1


def test_pca_solver_variants_run_in_the_full_suite_only():
    from bench.contenders import contenders_for

    def sklearn_names(suite):
        return {c.name for c in contenders_for(workloads.PCA, "cpu", None, suite) if c.library == "scikit-learn"}

    assert sklearn_names("quick") == {"scikit-learn"}
    assert sklearn_names("full") == {"scikit-learn", "scikit-learn (full)", "scikit-learn (randomized)"}


def test_numpy_in_times_once_in_the_quick_suite_on_a_gpu():
    from bench.contenders import contenders_for

    def names(suite):
        return {c.name for c in contenders_for(workloads.KMEANS, "cuda:0", "cupy", suite) if c.library == "twinlearn"}

    modes = ("fast", "deterministic", "identical")
    assert names("quick") == {f"twinlearn {m} (cupy)" for m in modes} | {"twinlearn fast (numpy)"}
    assert names("full") == {f"twinlearn {m} ({k})" for m in modes for k in ("cupy", "numpy")}
    cpu = {c.name for c in contenders_for(workloads.KMEANS, "cpu", None, "quick") if c.library == "twinlearn"}
    assert cpu == {f"twinlearn {m} (numpy)" for m in modes}


def test_workloads_on_the_same_data_run_together_and_report_in_registry_order():
    names = ["standard_scaler", "kmeans", "min_max_scaler", "accel_standard_scaler", "accel_kmeans"]
    plan = [(REGISTRY[n], REGISTRY[n].scales["smoke"], [], []) for n in names]
    ordered = [item[0].name for item in runner.data_order(plan)]
    assert ordered == ["standard_scaler", "min_max_scaler", "accel_standard_scaler", "kmeans", "accel_kmeans"]


def test_plain_scikit_learn_is_measured_once_per_run(smoke):
    result, _, md = smoke
    base = records(result, "standard_scaler")["scikit-learn"]
    plain = records(result, "accel_standard_scaler")["scikit-learn"]
    assert plain["same_as"] == "standard_scaler: scikit-learn"
    assert plain["runs_s"] == base["runs_s"] and plain["quality"] == base["quality"]
    assert plain["role"] == "plain" and base["role"] == "scikit-learn"
    # Ridge under the accelerator has no plain twin among the workloads run: measured.
    assert "same_as" not in records(result, "accel_ridge")["scikit-learn"]
    assert "the measurement of standard_scaler: scikit-learn" in md.read_text()


def test_same_measurement_key_separates_params_and_data():
    from bench.contenders import Instance, sklearn_run_key

    scale = workloads.KMEANS.scales["smoke"]
    data = datasets.blobs(scale, 0, np.float32)
    inst = Instance(workloads.KMEANS, scale, data, "cpu")
    params = inst.params("sklearn")
    key = sklearn_run_key(workloads.KMEANS, inst, params)
    assert key == sklearn_run_key(workloads.KMEANS, inst, dict(params))
    init = params["init"].copy()
    init[0, 0] += 1.0  # other initial centres: another measurement
    assert key != sklearn_run_key(workloads.KMEANS, inst, {**params, "init": init})
    assert key != sklearn_run_key(workloads.KMEANS, inst, {**params, "max_iter": 21})
    other = Instance(workloads.KMEANS, scale.with_rows(scale.rows + 1), data, "cpu")
    assert key != sklearn_run_key(workloads.KMEANS, other, params)


def test_accelerator_overhead_is_measured_and_rendered():
    ov = cli.accel_overhead("cpu", repeats=3, n_samples=64, n_features=4)
    assert "error" not in ov, ov
    assert "StandardScaler" in ov["results"]
    r = ov["results"]["StandardScaler"]["transform"]
    assert r["overhead_us"] == pytest.approx(r["accelerated_us"] - r["native_us"])
    assert ov["max_overhead_us"] == max(m["overhead_us"] for per in ov["results"].values() for m in per.values())
    assert ov["max_proxy_us"] == max(m["proxy_us"] for per in ov["results"].values() for m in per.values())
    text = "\n".join(report._overhead_section(ov))
    assert "| StandardScaler.transform |" in text and ov["max_overhead_at"] in text
    assert ov["max_proxy_at"] in text and f"{r['proxy_us']:.1f} µs |" in text
    failed = report._overhead_section({"error": "RuntimeError: no GPU"})
    assert "Not measured: RuntimeError: no GPU" in failed[-1]


def test_twinlearn_modes_and_speedups(smoke):
    result, _, _ = smoke
    recs = records(result, "standard_scaler")
    for mode in ("fast", "deterministic", "identical"):
        r = recs[f"twinlearn {mode} (numpy)"]
        assert r["status"] == "ok", r
        assert r["numeric_mode"] == mode
        assert r["numeric_mode_used"] == "identical"  # StandardScaler always delivers identical
        assert r["device_used"] == "cpu"
        assert r["quality"]["max_abs_error"] < 1e-5
        assert r["speedup_vs"]["scikit-learn"] == pytest.approx(recs["scikit-learn"]["total_s"] / r["total_s"])


def test_missing_estimator_is_not_implemented(smoke):
    result, _, _ = smoke
    recs = records(result, "kmeans")
    # Until twinlearn.cluster.KMeans lands the record says so; afterwards it runs.
    twinlearn = [r for r in recs.values() if r["library"] == "twinlearn"]
    assert all(r["status"] in ("ok", "not implemented") for r in twinlearn)
    assert recs["scikit-learn"]["status"] == "ok"
    assert recs["scikit-learn"]["quality"]["n_iter"] <= 20


def test_markdown_regenerates_from_json(smoke):
    result, out, md = smoke
    text = md.read_text()
    assert text.startswith(report.GENERATED_MARK + "\n# Benchmarks")
    assert "make bench" in text
    assert result["environment"]["git"]["commit"][:12] in text or "unknown" in text
    assert result["environment"]["timestamp"] in text
    assert "This run used the CPU only" in text
    for w in result["workloads"]:
        assert f"### {w['title']}" in text
    again = md.with_name("again.md")
    assert cli.main(["--render", str(out), "--markdown", str(again), "--no-plots", "--quiet"]) == 0
    assert again.read_text() == text


def test_render_of_a_cpu_result_writes_beside_it(smoke, tmp_path, monkeypatch):
    # Without --markdown, a CPU result's page goes beside its file (as a CPU
    # run's does); the published page (here a stand-in) keeps the GPU run.
    result, out, md = smoke
    assert result["device"] == "cpu"
    published = tmp_path / "published.md"
    monkeypatch.setattr(report, "DEFAULT_MARKDOWN", published)
    copy = tmp_path / "cpu-run.json"
    copy.write_text(out.read_text())
    assert cli.main(["--render", str(copy), "--no-plots", "--quiet"]) == 0
    page = copy.with_suffix(".md").read_text()
    assert page.startswith(report.GENERATED_MARK) and copy.name in page
    assert not published.exists()


def test_merge_combines_separate_runs(smoke, tmp_path):
    result, out, _ = smoke
    sweep = {"workload": "kmeans", "title": "KMeans N x 8", "cols": 8,
             "points": [{"rows": 1024, "contenders": []}]}
    one = dict(result, workloads=result["workloads"][:2], elapsed_s=1.0)
    two = dict(result, workloads=result["workloads"][1:], sweeps=[sweep], elapsed_s=2.0)
    paths = [tmp_path / "one.json", tmp_path / "two.json"]
    for r, p in zip((one, two), paths):
        report.write_json(r, p)
    merged_path, md = tmp_path / "merged.json", tmp_path / "merged.md"
    argv = ["--merge", *map(str, paths), "--out", str(merged_path), "--markdown", str(md), "--no-plots", "--quiet"]
    assert cli.main(argv) == 0
    merged = json.loads(merged_path.read_text())
    assert [w["name"] for w in merged["workloads"]] == [w["name"] for w in result["workloads"]]
    assert merged["elapsed_s"] == 3.0
    assert merged["sweeps"] == [sweep]  # sweeps are named by "workload"
    check_schema(merged)
    for w in result["workloads"]:
        assert f"### {w['title']}" in md.read_text()
    # Results of another commit are refused.
    other = json.loads(json.dumps(two))
    other["environment"]["git"]["commit"] = "0" * 40
    report.write_json(other, paths[1])
    with pytest.raises(SystemExit):
        cli.main(argv)


def test_a_run_cut_short_keeps_what_it_measured(monkeypatch, tmp_path):
    real = runner.Runner.run_workload
    calls = []

    def cut_after_first(self, wl, scale, contenders):
        if calls:
            raise KeyboardInterrupt  # the run is killed during the second workload
        calls.append(wl.name)
        return real(self, wl, scale, contenders)

    monkeypatch.setattr(runner.Runner, "run_workload", cut_after_first)
    out = tmp_path / "cut.json"
    with pytest.raises(KeyboardInterrupt):
        cli.main([*SMOKE, "--device", "cpu", "--out", str(out), "--no-markdown", "--only", "standard_scaler,kmeans"])
    assert not out.exists()
    partial = json.loads((tmp_path / "cut.partial.json").read_text())
    assert [w["name"] for w in partial["workloads"]] == ["standard_scaler"]
    check_schema(partial)
    merged = tmp_path / "merged.json"
    monkeypatch.setattr(report, "DEFAULT_MARKDOWN", tmp_path / "default.md")
    argv = ["--merge", str(tmp_path / "cut.partial.json"), "--out", str(merged), "--no-markdown", "--no-plots", "--quiet"]
    assert cli.main(argv) == 0 and merged.exists()
    assert not (tmp_path / "default.md").exists()  # --no-markdown is honoured


def _failing_peer(args):
    raise RuntimeError("peer exploded")


@pytest.fixture
def synthetic(monkeypatch):
    """Workloads registered for one test: a twinlearn estimator that does not
    exist (in an existing module and in a missing one) and peers that are
    absent, GPU-only, or fail."""
    def add(**changes):
        fields = dict(
            name="test_synthetic",
            title="synthetic {rows} x {cols}",
            data=datasets.gaussian,
            scales={k: Scale(300, 4) for k in ("smoke", "cpu", "cuda")},
            estimator="preprocessing.NoSuchScalerForTests",
            sklearn="sklearn.preprocessing.StandardScaler",
            steps=(FIT_TRANSFORM,),
            quality=metrics.STANDARDIZED,
            peers=(
                Peer("Nowhere", "twinlearn_bench_no_such_module", _failing_peer),
                Peer("GPU only", "numpy", _failing_peer, gpu_only=True),
                Peer("Exploding", "numpy", _failing_peer),
            ),
        )
        fields.update(changes)
        wl = Workload(**fields)
        monkeypatch.setitem(REGISTRY, wl.name, wl)
        return wl

    return add


def test_absent_unimplemented_and_failing_contenders(synthetic, tmp_path):
    synthetic()
    synthetic(name="test_no_module", estimator="no_such_area_for_tests.Thing")
    result, _, _ = run_bench(tmp_path, "--only", "test_synthetic,test_no_module", "--repeats", "1")
    check_schema(result)
    for name in ("test_synthetic", "test_no_module"):
        recs = records(result, name)
        assert recs["twinlearn"]["status"] == "not implemented"
        assert recs["Nowhere"]["status"] == "absent"
        assert "not installed" in recs["Nowhere"]["reason"]
        assert recs["GPU only"]["status"] == "not available"
        assert recs["Exploding"]["status"] == "error"
        assert "peer exploded" in recs["Exploding"]["reason"]
        assert recs["scikit-learn"]["status"] == "ok"


def test_slow_first_run_is_the_only_run(tmp_path):
    result, _, _ = run_bench(tmp_path, "--only", "standard_scaler", "--single-run-above", "0")
    for r in records(result, "standard_scaler").values():
        if r["status"] == "ok":
            assert r["repeats"] == 1 and r["single_run"]
            assert r["total_s"] == r["first_run_s"]


class _SlowFirstCall:
    """A scaler whose first call in the process costs 0.5 s (a library
    loading its kernels): the warm-up on a small slice must absorb it."""

    loaded = False

    def fit_transform(self, X):
        if not _SlowFirstCall.loaded:
            time.sleep(0.5)
            _SlowFirstCall.loaded = True
        return (X - X.mean(axis=0)) / X.std(axis=0)


def test_first_call_cost_goes_to_the_warm_up(synthetic, tmp_path):
    _SlowFirstCall.loaded = False
    synthetic(name="test_slow_first_call", peers=(Peer("Lazy", "numpy", lambda args: _SlowFirstCall()),))
    result, _, _ = run_bench(tmp_path, "--only", "test_slow_first_call", "--single-run-above", "0.3")
    lazy = records(result, "test_slow_first_call")["Lazy"]
    assert lazy["status"] == "ok" and _SlowFirstCall.loaded
    assert lazy["repeats"] == 3 and not lazy["single_run"] and lazy["first_run_s"] < 0.3
    assert result["settings"]["warmup_slice_rows"] == runner.WARMUP_ROWS


class _SlowFirstFullRuns:
    """A scaler whose first four calls in the process (the slice's, then
    three at full size: this workload is smaller than the slice) take 0.1 s
    more (fresh pages, clocks rising): warm-up runs continue past them."""

    calls = 0

    def fit_transform(self, X):
        _SlowFirstFullRuns.calls += 1
        if _SlowFirstFullRuns.calls <= 4:
            time.sleep(0.1)
        return (X - X.mean(axis=0)) / X.std(axis=0)


@pytest.mark.parametrize("warmup_min", ["0.5", "0"])
def test_warm_up_runs_continue_while_runs_are_short(synthetic, tmp_path, warmup_min):
    _SlowFirstFullRuns.calls = 0
    synthetic(name="test_slow_first_runs", peers=(Peer("Warming", "numpy", lambda args: _SlowFirstFullRuns()),))
    result, _, md = run_bench(tmp_path, "--only", "test_slow_first_runs", "--warmup-min", warmup_min)
    rec = records(result, "test_slow_first_runs")["Warming"]
    slowest = max(rec["runs_s"]["fit_transform"])
    if warmup_min == "0":  # one warm-up run: two slow runs are timed
        assert rec["warmup_runs"] == 1 and slowest >= 0.1
    else:
        assert rec["warmup_runs"] >= 4 and slowest < 0.1
        assert result["settings"]["warmup_min_s"] == 0.5
        assert "then more until 0.5 s of them have passed" in md.read_text()


def _scaler_sweep(tmp_path, *args):
    """The full suite's sweep of standard_scaler at smoke sizes: (result, its sweep, page)."""
    result, _, md = run_bench(tmp_path, "--suite", "full", "--sizes", "smoke", "--only", "standard_scaler",
                              "--repeats", "1", *args)
    (sweep,) = result["sweeps"]
    return result, sweep, md


def test_full_suite_sweeps_rows(tmp_path):
    _, sweep, md = _scaler_sweep(tmp_path, "--sweep-max-rows", "4096", "--sweep-cutoff", "0")
    assert [p["rows"] for p in sweep["points"]] == [1024, 2048, 4096]
    first, *later = sweep["points"]
    assert by_name(first["contenders"])["scikit-learn"]["status"] == "ok"
    for p in later:  # a cutoff of 0 s: everything that ran once is skipped afterwards
        sk = by_name(p["contenders"])["scikit-learn"]
        assert sk["status"] == "skipped" and "sweep limit" in sk["reason"]
    assert "## Scaling" in md.read_text()


def test_sweep_starts_where_asked(tmp_path):
    result, sweep, _ = _scaler_sweep(tmp_path, "--sweep-min-rows", "3000", "--sweep-max-rows", "12000")
    assert [p["rows"] for p in sweep["points"]] == [3000, 6000, 12000]
    assert result["settings"]["sweep_min_rows"] == 3000


def test_accelerated_scikit_learn(monkeypatch, tmp_path):
    import twinlearn

    monkeypatch.delattr(twinlearn, "accelerate", raising=False)
    result, _, _ = run_bench(tmp_path, "--only", "accel_standard_scaler", name="without")
    recs = records(result, "accel_standard_scaler")
    assert recs["scikit-learn + twinlearn.accelerate"]["status"] == "not available"
    assert recs["scikit-learn"]["status"] == "skipped"

    # With an accelerator (here one that changes nothing) both arms run.
    monkeypatch.setattr(twinlearn, "accelerate", lambda est: est, raising=False)
    result, _, _ = run_bench(tmp_path, "--only", "accel_standard_scaler", "--repeats", "1", name="with")
    recs = records(result, "accel_standard_scaler")
    accel = recs["scikit-learn + twinlearn.accelerate"]
    assert accel["status"] == "ok" and recs["scikit-learn"]["status"] == "ok"
    assert accel["speedup_vs"]["scikit-learn"] > 0


@pytest.mark.gpu
def test_smoke_on_the_gpu(tmp_path):
    result, _, md = run_bench(tmp_path, "--only", "standard_scaler,kmeans", device="cuda")
    check_schema(result, device="cuda:0")
    env = result["environment"]
    assert env["device"]["name"] and env["device"]["twinlearn"]["cuda_available"]
    kind = result["settings"]["device_input"]
    assert kind in ("cupy", "torch")
    recs = records(result, "standard_scaler")
    for mode in ("fast", "deterministic", "identical"):
        for inp in (kind, "numpy"):
            r = recs[f"twinlearn {mode} ({inp})"]
            assert r["status"] == "ok", r
            assert r["device_used"] == "cuda:0"
            assert r["quality"]["max_abs_error"] < 1e-5
            assert "twinlearn" in r["memory"]["device_peak_bytes"]
            assert r["speedup_vs"]["scikit-learn"] > 0
    if recs["torch"]["status"] != "absent":
        assert recs["torch"]["status"] == "ok", recs["torch"]
        assert recs["torch"]["input"] == "torch"
        assert recs["torch"]["quality"]["max_abs_error"] < 1e-4
        assert "torch" in recs["torch"]["memory"]["device_peak_bytes"]
        torch_kmeans = records(result, "kmeans")["torch"]
        assert torch_kmeans["status"] == "ok", torch_kmeans
    assert "device memory" in md.read_text()


def test_unknown_workload_is_a_usage_error(capsys):
    with pytest.raises(SystemExit):
        cli.main([*SMOKE, "--device", "cpu", "--only", "no_such_workload"])
    assert "unknown workload" in capsys.readouterr().err


def test_list_names_every_workload_and_what_it_runs(capsys):
    # metric workloads hold a call object (no __qualname__) rather than a class
    assert cli.main(["--list"]) == 0
    out = capsys.readouterr().out
    assert len(out.splitlines()) == len(REGISTRY)
    assert "twinlearn.cluster.KMeans" in out


# -- pieces ---------------------------------------------------------------------


def _evaluation(data, outputs=None, model=None):
    return metrics.Evaluation(data, outputs or {}, model, call=None)


def test_scaler_metric_separates_right_from_wrong():
    data = datasets.gaussian(Scale(500, 3), seed=1, dtype=np.float32)
    X = data["X"].astype(np.float64)
    right = (X - X.mean(0)) / X.std(0)
    wrong = (X - X.mean(0)) / X.std(0, ddof=1)  # sample std: a different scaler
    assert metrics.standardized_error(_evaluation(data, {"fit_transform": right}))["max_abs_error"] < 1e-12
    assert metrics.standardized_error(_evaluation(data, {"fit_transform": wrong}))["max_abs_error"] > 1e-4


def test_recall_and_inertia_separate():
    data = datasets.blobs(Scale(400, 5, {"centers": 4, "n_queries": 20, "k": 4}), seed=2, dtype=np.float32)
    d2 = ((data["Q"][:, None, :].astype(np.float64) - data["X"][None]) ** 2).sum(-1)
    exact = np.argsort(d2, axis=1)[:, :10]
    assert metrics.recall_at_k(_evaluation(data, {"kneighbors": (None, exact)}))["recall@10"] == 1.0
    far = np.argsort(d2, axis=1)[:, -10:]
    assert metrics.recall_at_k(_evaluation(data, {"kneighbors": (None, far)}))["recall@10"] == 0.0

    class Model:
        cluster_centers_ = data["init"]

    at_init = metrics.inertia(_evaluation(data, model=Model()))["inertia"]
    Model.cluster_centers_ = data["init"] + 10.0
    assert metrics.inertia(_evaluation(data, model=Model()))["inertia"] > at_init


def test_speedups_are_peer_over_twinlearn():
    recs = [
        {"name": "twinlearn fast (numpy)", "role": "twinlearn", "status": "ok", "total_s": 0.5},
        {"name": "scikit-learn", "role": "scikit-learn", "status": "ok", "total_s": 2.0},
        {"name": "torch", "role": "peer", "status": "absent"},
    ]
    add_speedups(recs)
    assert recs[0]["speedup_vs"] == {"scikit-learn": 4.0}
    assert "speedup_vs" not in recs[1]


def test_host_memory_probe_sees_an_allocation():
    probe = HostMemoryProbe().start()
    block = np.ones(64 * 2**20 // 8)  # 64 MiB, touched
    mem = probe.stop()
    del block
    if mem["host_method"] != "VmHWM above start RSS":
        pytest.skip("the peak RSS counter cannot be reset here")
    assert mem["host_peak_bytes"] >= 48 * 2**20


def test_registry_rejects_duplicates_and_missing_scales():
    wl = REGISTRY["standard_scaler"]
    with pytest.raises(ValueError, match="twice"):
        register(wl)
    from dataclasses import replace

    with pytest.raises(ValueError, match="scale"):
        register(replace(wl, name="test_no_scales", scales={"smoke": Scale(10, 2)}))


def test_human_rows():
    assert [human_rows(n) for n in (2_000_000, 200_000, 1_048_576, 64)] == ["2M", "200k", "1,048,576", "64"]


def test_depth_workloads_differ_from_gbdt_in_depth_only():
    base = REGISTRY["gbdt"]
    for depth in (4, 8, 10):
        wl = REGISTRY[f"gbdt_depth{depth}"]
        assert wl.suites == frozenset({"full"}) and not wl.sweep
        scale = wl.scales["cuda"]
        assert (scale.rows, scale.cols) == (base.scales["cuda"].rows, base.scales["cuda"].cols)
        assert wl.resolve_params(scale, None, "twinlearn")["max_depth"] == depth
        sk = wl.resolve_params(scale, None, "sklearn")
        assert sk["max_depth"] == depth and sk["max_leaf_nodes"] == 2**depth


def test_categorical_dataset_holds_category_codes():
    data = datasets.categorical_classification(Scale(3000, 10), seed=0, dtype=np.float32)
    X = data["X"]
    assert X.shape == (3000, 10) and set(np.unique(data["y"])) == {0, 1}
    for i, m in enumerate(datasets.CATEGORY_COUNTS):
        col = X[:, 10 - len(datasets.CATEGORY_COUNTS) + i]
        assert np.array_equal(col, np.round(col)) and col.min() == 0 and col.max() == m - 1
    wl = REGISTRY["gbdt_categorical"]
    scale = wl.scales["cuda"]
    assert wl.resolve_params(scale, None, "twinlearn")["cat_features"] == [17, 18, 19]
    assert wl.resolve_params(scale, None, "sklearn")["categorical_features"] == [17, 18, 19]


class _FakeDeviceArray:
    """Stands for a device array: to_host() copies it through get(); records
    the rows each copy moved."""

    __module__ = "cupy._fake"
    copied: list = []

    def __init__(self, a):
        self.a = a

    def __getitem__(self, key):
        return _FakeDeviceArray(self.a[key])

    def get(self):
        _FakeDeviceArray.copied.append(self.a.shape[0])
        return self.a


def test_quality_moves_only_the_sampled_rows_of_a_device_output():
    n = 3 * metrics.QUALITY_ROWS + 5
    out = np.arange(2 * n, dtype=np.float64).reshape(n, 2)
    _FakeDeviceArray.copied = []
    host = metrics.HostOutputs({"fit_transform": _FakeDeviceArray(out), "other": out[:3]})
    sl = metrics._sample(n)
    assert np.array_equal(host.rows("fit_transform", sl), out[sl])
    assert _FakeDeviceArray.copied == [out[sl].shape[0]] and out[sl].shape[0] <= metrics.QUALITY_ROWS
    assert np.array_equal(host["fit_transform"], out)  # the whole output, once, when a metric asks
    assert _FakeDeviceArray.copied[-1] == n
    host.rows("fit_transform", sl)
    assert len(_FakeDeviceArray.copied) == 2  # later rows come from the host copy
    assert set(host) == {"fit_transform", "other"} and len(host) == 2


def test_contenders_of_one_input_kind_share_the_converted_data(monkeypatch, tmp_path):
    # Each key of the workload's data is converted once per input kind, not
    # once per contender (the warm-ups on the small slice convert their own).
    calls = []
    real = runner.to_input

    def counting(a, kind, device):
        if isinstance(a, np.ndarray) and a.shape[0] > runner.WARMUP_ROWS:
            calls.append(kind)
        return real(a, kind, device)

    monkeypatch.setattr(runner, "to_input", counting)
    result, _, _ = run_bench(tmp_path, "--only", "standard_scaler", "--sizes", "cpu", "--repeats", "1")
    recs = [r for r in result["workloads"][0]["contenders"] if r["status"] == "ok"]
    kinds = {r["input"] for r in recs}
    assert len(recs) > len(kinds) and calls.count("numpy") == 1 and len(calls) == len(kinds)


def test_a_cpu_run_keeps_the_published_page(tmp_path, monkeypatch):
    """docs/BENCHMARKS.md is a GPU run's page: a CPU run writes its own beside its result."""
    monkeypatch.setattr(report, "DEFAULT_MARKDOWN", tmp_path / "published.md")
    out = tmp_path / "cpu-run.json"
    argv = ["--suite", "quick", "--sizes", "smoke", "--only", "standard_scaler", "--device", "cpu", "--out", str(out),
            "--no-plots", "--quiet", "--repeats", "1"]
    assert cli.main(argv) == 0
    assert out.exists() and (tmp_path / "cpu-run.md").exists()
    assert not (tmp_path / "published.md").exists()


def test_contenders_option_runs_only_the_named_ones(tmp_path):
    result, sweep, _ = _scaler_sweep(tmp_path, "--sweep-max-rows", "2048", "--contenders",
                                     "twinlearn deterministic,Scikit-Learn")
    for recs in [records(result, "standard_scaler")] + [by_name(p["contenders"]) for p in sweep["points"]]:
        assert set(recs) == {"scikit-learn", "twinlearn deterministic (numpy)"}
    assert result["settings"]["contenders"] == "twinlearn deterministic,Scikit-Learn"
