"""Timing contenders and running suites.

Each run builds a fresh estimator (untimed) and times every step with the GPU
synchronized before and after the call. Untimed full-size runs warm up
(kernel loading, allocator caches): one, then more while less than
``warmup_min_s`` has passed (at most ``warmup_max_runs``); then ``repeats``
runs are timed and their median reported.
Before any full-size run, each contender runs once, untimed, on a small slice
of the workload (``WARMUP_ROWS`` rows): that loads its kernels and library
handles (a CUDA context, cuBLAS) in this process, so that they are not
charged to the measurement. A contender whose first full-size run takes at
least ``single_run_above_s`` is not run again: that single run is the
measurement, recorded as such (repeats = 1). Nothing is ever extrapolated.
"""

from __future__ import annotations

import copy

import statistics
import time
import traceback
import warnings
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np

from . import datasets, metrics
from .arrays import DeviceSync, release_device_memory, to_host, to_input
from .contenders import ERROR, OK, SKIPPED, Contender, Instance, contenders_for
from .memory import DeviceMemoryProbe, HostMemoryProbe
from .registry import Workload


@dataclass
class RunConfig:
    suite: str  # 'smoke', 'quick' or 'full'
    device: str  # 'cpu' or 'cuda:0'
    device_input: str | None  # 'cupy' / 'torch' for data on the device, None on the CPU
    sizes: str  # which scale of each workload: 'smoke', 'cpu' or 'cuda'
    repeats: int = 3
    single_run_above_s: float = 2.0
    warmup_min_s: float = 0.5  # full-size warm-up runs continue until this much time has passed ...
    warmup_max_runs: int = 10  # ... or this many have run
    sweep_cutoff_s: float = 30.0
    sweep_min_rows: int | None = None
    sweep_max_rows: int | None = None
    contenders: tuple[str, ...] | None = None  # name prefixes to run; None: all


def picked(name: str, prefixes) -> bool:
    """Whether a contender runs under ``--contenders`` (name prefixes,
    case-insensitive; None runs every contender)."""
    return prefixes is None or any(name.lower().startswith(p.strip().lower()) for p in prefixes)


class _Inputs:
    """The host dataset converted, on first use, to one input kind (shared by
    the contenders of that kind in a workload)."""

    def __init__(self, data, kind: str, device: str):
        self._data, self._kind, self._device = data, kind, device
        self._converted: dict = {}

    def __getitem__(self, key):
        if key not in self._converted:
            self._converted[key] = to_input(self._data[key], self._kind, self._device)
        return self._converted[key]


def _trial(contender: Contender, inst: Instance, inputs: _Inputs, sync):
    """One run of all steps on a fresh estimator: (seconds per step, outputs, estimator)."""
    est = contender.build(inst)
    seconds, outputs = {}, {}
    for step in inst.workload.steps:
        method = getattr(est, step.method)
        args = [inputs[k] for k in step.args]
        sync()
        t0 = time.perf_counter()
        out = method(*args)
        sync()
        seconds[step.method] = time.perf_counter() - t0
        outputs[step.method] = None if out is est else out
    return seconds, outputs, est


#: Rows of the slice each contender warms up on before its full-size runs.
WARMUP_ROWS = 2048


def _warm_up(contender: Contender, inst: Instance | None, cfg: RunConfig, sync) -> None:
    """One untimed run on the small instance; a failure here is left for the
    measurement to report."""
    if inst is None or not contender.ready:
        return
    try:
        _trial(contender, inst, _Inputs(inst.data, contender.input, cfg.device), sync)
    except Exception:
        pass


def _measure(contender: Contender, inst: Instance, cfg: RunConfig, sync, with_quality: bool,
             inputs: _Inputs | None = None) -> dict:
    if inputs is None:
        inputs = _Inputs(inst.data, contender.input, cfg.device)
    for step in inst.workload.steps:  # move data before the memory probes start
        for key in step.args:
            inputs[key]
    host = HostMemoryProbe().start()
    device = DeviceMemoryProbe(cfg.device, contender.memory).start()

    seconds, outputs, est = _trial(contender, inst, inputs, sync)
    first = sum(seconds.values())
    runs = {k: [v] for k, v in seconds.items()}
    single = first >= cfg.single_run_above_s
    warmups = 1
    if not single:
        # More untimed runs while they are short: the first few full-size
        # runs of a process can be slower than the rest for reasons outside
        # the contender (fresh pages of a new output faulted in from several
        # threads, a GPU's clocks rising after idling).
        warm = first
        while warm < cfg.warmup_min_s and warmups < cfg.warmup_max_runs:
            outputs = est = None
            seconds, outputs, est = _trial(contender, inst, inputs, sync)
            warm += sum(seconds.values())
            warmups += 1
        runs = {k: [] for k in seconds}
        for _ in range(cfg.repeats):
            outputs = est = None  # let the previous run's outputs go first
            seconds, outputs, est = _trial(contender, inst, inputs, sync)
            for k, v in seconds.items():
                runs[k].append(v)
    rec = {
        "times_s": {k: statistics.median(v) for k, v in runs.items()},
        "runs_s": runs,
        "first_run_s": first,
        "warmup_runs": 0 if single else warmups,
        "repeats": 1 if single else cfg.repeats,
        "single_run": single,
        "memory": {**host.stop(), **device.stop()},
    }
    rec["total_s"] = sum(rec["times_s"].values())
    if contender.note is not None:
        rec["note"] = contender.note(inst)
    if contender.threads is not None:
        rec["threads"] = contender.threads()
    if contender.role == "twinlearn":
        rec["numeric_mode_used"] = est.numeric_mode_used()
        rec["device_used"] = est.device_used()
    if with_quality and inst.workload.quality is not None:
        rec.update(_quality(inst, est, outputs, inputs))
    return rec


def _quality(inst: Instance, est, outputs: dict, inputs: _Inputs) -> dict:
    def call(method, *keys):
        return to_host(getattr(est, method)(*[inputs[k] for k in keys]))

    ev = metrics.Evaluation(inst.data, metrics.HostOutputs(outputs), est, call)
    try:
        return {"quality": inst.workload.quality.fn(ev)}
    except Exception as exc:
        return {"quality": {}, "quality_error": f"{type(exc).__name__}: {exc}"}


def measure(contender: Contender, inst: Instance, cfg: RunConfig, sync, with_quality=True,
            inputs: _Inputs | None = None) -> dict:
    """The record of one contender on one workload instance; never raises.
    inputs: the instance's data already converted to the contender's input
    kind (shared by the contenders of one kind), else converted here."""
    rec = contender.describe()
    if not contender.ready:
        return rec
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            with contender.context() if contender.context else nullcontext():
                rec.update(_measure(contender, inst, cfg, sync, with_quality, inputs))
            rec["status"] = OK
        except Exception as exc:
            rec["status"] = ERROR
            rec["reason"] = f"{type(exc).__name__}: {exc}"
            rec["traceback"] = traceback.format_exc(limit=-6)
        finally:
            release_device_memory(cfg.device)
    messages = list(dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught))
    if messages:
        rec["warnings"] = messages[:5]
    return rec


def add_speedups(records: list[dict]) -> None:
    """Each twinlearn record gets ``speedup_vs``: peer time / twinlearn time,
    for every peer that ran (for accel workloads: plain / accelerated)."""
    ok = [r for r in records if r["status"] == OK]
    ours = [r for r in ok if r["role"] in ("twinlearn", "accelerated")]
    theirs = [r for r in ok if r["role"] not in ("twinlearn", "accelerated")]
    for r in ours:
        r["speedup_vs"] = {p["name"]: p["total_s"] / r["total_s"] for p in theirs if r["total_s"] > 0}


def _jsonable(value):
    if isinstance(value, np.ndarray):
        return f"<array {'x'.join(map(str, value.shape))} {value.dtype}>"
    if isinstance(value, (np.generic,)):
        return value.item()
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value if isinstance(value, (str, int, float, bool, type(None))) else repr(value)


def _params_record(inst: Instance) -> dict:
    wl = inst.workload
    out = {"shared": inst.params()}
    if wl.estimator is not None:
        out["twinlearn"] = inst.params("twinlearn")
    if wl.sklearn is not None:
        out["scikit-learn"] = inst.params("sklearn")
    return _jsonable(out)


def workload_record(wl: Workload, scale) -> dict:
    return {
        "name": wl.name,
        "title": wl.format_title(scale),
        "kind": wl.kind,
        "shape": _jsonable(scale.as_dict()),
        "dtype": wl.dtype,
        "steps": [s.method for s in wl.steps],
        "metric": None if wl.quality is None else {
            "name": wl.quality.primary,
            "higher_is_better": wl.quality.higher_is_better,
            "description": wl.quality.description,
        },
        "contenders": [],
    }


def _instance(wl: Workload, scale, cfg: RunConfig, rec: dict) -> Instance | None:
    """The workload's data at `scale`; on failure None, with the reason in `rec`."""
    t0 = time.perf_counter()
    try:
        data = datasets.load(wl.data, scale, wl.seed, wl.dtype)
    except Exception as exc:
        rec["data_error"] = f"{type(exc).__name__}: {exc}"
        return None
    rec["data_seconds"] = time.perf_counter() - t0
    return Instance(wl, scale, data, cfg.device)


def data_order(plan):
    """The plan with workloads on the same data next to each other (first
    appearance order, registry order within): the dataset is made once, and a
    plain scikit-learn run is measured before its accelerated twin needs it."""
    groups: dict = {}
    for item in plan:
        wl, scale = item[0], item[1]
        groups.setdefault((wl.data, scale.key(), wl.seed, wl.dtype), []).append(item)
    return [item for group in groups.values() for item in group]


class Runner:
    def __init__(self, cfg: RunConfig, progress):
        self.cfg = cfg
        self.progress = progress
        self.sync = DeviceSync(cfg.device)
        #: same-measurement key -> (workload name, record): see Contender.same
        self._measured: dict[tuple, tuple[str, dict]] = {}

    # -- planning (for the progress total) -----------------------------------
    def plan(self, workloads: list[Workload]):
        """[(workload, scale, contenders, sweep rows)]"""
        plan = []
        for wl in workloads:
            scale = wl.scales[self.cfg.sizes]
            contenders = [c for c in contenders_for(wl, self.cfg.device, self.cfg.device_input, self.cfg.suite)
                          if picked(c.name, self.cfg.contenders)]
            rows = sweep_rows(wl, scale, self.cfg) if self.cfg.suite == "full" and wl.sweep else []
            plan.append((wl, scale, contenders, rows))
        return plan

    @staticmethod
    def count(plan) -> int:
        return sum(len(c) * (1 + len(rows)) for _, _, c, rows in plan)

    # -- main table -------------------------------------------------------------
    def run_workload(self, wl: Workload, scale, contenders: list[Contender]) -> dict:
        t0 = time.perf_counter()
        rec = workload_record(wl, scale)
        inst = None
        small = None
        if any(c.ready for c in contenders):
            inst = _instance(wl, scale, self.cfg, rec)
            if inst is not None:
                rec["params"] = _params_record(inst)
                small = _instance(wl, scale.with_rows(min(scale.rows, WARMUP_ROWS)), self.cfg, {})
        # The data converted once per input kind (a device copy), shared by
        # the contenders of that kind (every run already reuses its inputs).
        shared: dict[str, _Inputs] = {}
        for c in contenders:
            self.progress.update(f"{wl.name}: {c.name}")
            if inst is None and c.ready:
                r = c.describe()
                r.update(status=ERROR, reason=f"no data: {rec.get('data_error')}")
            else:
                if inst is not None and c.input not in shared:
                    shared[c.input] = _Inputs(inst.data, c.input, self.cfg.device)
                r = self._measure_once(c, inst, small, wl.name, shared.get(c.input))
            rec["contenders"].append(r)
        shared.clear()
        release_device_memory(self.cfg.device)
        add_speedups(rec["contenders"])
        # Everything the workload cost: data, warm-ups, transfers, timed runs, quality.
        rec["wall_s"] = time.perf_counter() - t0
        return rec

    def _measure_once(self, c: Contender, inst: Instance | None, small, workload: str, inputs=None) -> dict:
        """measure(), or the record of the same measurement made earlier in
        this run (marked ``same_as``)."""
        key = c.same(inst) if c.same is not None and c.ready and inst is not None else None
        if key is not None and key in self._measured:
            source, earlier = self._measured[key]
            r = {**copy.deepcopy(earlier), **c.describe(), "status": earlier["status"]}
            r["same_as"] = f"{source}: {earlier['name']}"
            r.pop("wall_s", None)  # spent by the workload that measured it
            return r
        t0 = time.perf_counter()
        _warm_up(c, small, self.cfg, self.sync)
        r = measure(c, inst, self.cfg, self.sync, inputs=inputs)
        r["wall_s"] = time.perf_counter() - t0  # warm-up, input transfer (first of its kind), runs and quality
        if key is not None and r["status"] == OK:
            self._measured[key] = (workload, r)
        return r

    # -- scaling sweep ----------------------------------------------------------
    def run_sweep(self, wl: Workload, scale, contenders: list[Contender], rows: list[int]) -> dict:
        """Time (no quality) against rows; a contender slower than the cutoff
        at one size is skipped at the larger ones."""
        sweep = {"workload": wl.name, "title": wl.format_title(scale, rows="N"), "cols": scale.cols, "points": []}
        too_slow: dict[str, str] = {}
        for n in rows:
            point_scale = scale.with_rows(n)
            point = {"rows": n, "contenders": []}
            inst = _instance(wl, point_scale, self.cfg, point)
            for c in contenders:
                self.progress.update(f"{wl.name} sweep {n:,} rows: {c.name}")
                r = c.describe()
                if not c.ready:
                    pass
                elif inst is None:
                    r.update(status=ERROR, reason=f"no data: {point.get('data_error')}")
                elif c.name in too_slow:
                    r.update(status=SKIPPED, reason=too_slow[c.name])
                else:
                    r = measure(c, inst, self.cfg, self.sync, with_quality=False)
                    if r["status"] == OK and r["first_run_s"] > self.cfg.sweep_cutoff_s:
                        too_slow[c.name] = (
                            f"took {r['first_run_s']:.1f} s at {n:,} rows "
                            f"(sweep limit {self.cfg.sweep_cutoff_s:g} s)"
                        )
                point["contenders"].append(r)
            add_speedups(point["contenders"])
            sweep["points"].append(point)
            inst = None
            datasets.clear_cache()
        return sweep

    def run(self, workloads: list[Workload], checkpoint=None) -> tuple[list[dict], list[dict]]:
        """Run the plan; ``checkpoint(results, sweeps)``, when given, is called
        after each workload and each sweep with what has been measured so far."""
        plan = self.plan(workloads)
        self.progress.start(self.count(plan))
        results, sweeps = [], []
        save = checkpoint or (lambda r, s: None)
        try:
            for wl, scale, contenders, _ in data_order(plan):
                results.append(self.run_workload(wl, scale, contenders))
                save(results, sweeps)
            rank = {wl.name: i for i, (wl, *_rest) in enumerate(plan)}
            results.sort(key=lambda r: rank[r["name"]])  # the registry's order in the report
            datasets.clear_cache()
            for wl, scale, contenders, rows in plan:
                if rows:
                    sweeps.append(self.run_sweep(wl, scale, contenders, rows))
                    save(results, sweeps)
        finally:
            self.progress.close()
            datasets.clear_cache()
        return results, sweeps


# -- sweep sizes ----------------------------------------------------------------


def _host_available_bytes() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    import os

    return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")


def _device_free_bytes(device: str) -> int:
    import twinlearn

    ordinal = int(device.split(":")[1])
    for gpu in twinlearn.device_info()["gpus"]:
        if gpu["id"] == ordinal:
            return int(gpu["free_memory"])
    raise RuntimeError(f"{device} is not visible")


def memory_limit_rows(wl: Workload, scale, device: str) -> int:
    """The most rows whose data fits a third of free host memory and half of
    free device memory, at ``mem_factor`` bytes per byte of X."""
    per_row = scale.cols * np.dtype(wl.dtype).itemsize * wl.mem_factor
    budget = 0.3 * _host_available_bytes()
    if device != "cpu":
        budget = min(budget, 0.5 * _device_free_bytes(device))
    return int(budget // per_row)


def sweep_rows(wl: Workload, scale, cfg: RunConfig) -> list[int]:
    """Rows doubling from a 64th of the workload's size (at least 1024), or
    from ``sweep_min_rows``, up to the memory limit; on the CPU at most 8x the
    quick size."""
    start = 1 << max(10, (max(scale.rows // 64, 1) - 1).bit_length())
    if cfg.sweep_min_rows:
        start = max(1, cfg.sweep_min_rows)
    limit = memory_limit_rows(wl, scale, cfg.device)
    limit = min(limit, scale.rows * 8 if cfg.device == "cpu" else 1 << 27)
    if cfg.sweep_max_rows:
        limit = min(limit, cfg.sweep_max_rows)
    rows, n = [], start
    while n <= limit:
        rows.append(n)
        n *= 2
    return rows
