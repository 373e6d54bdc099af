"""Who runs in a workload: twinlearn in each numeric mode, with data on the
device and NumPy in / NumPy out; scikit-learn (and its variants); peers from
other libraries. Every contender carries a status: 'ready', or why it does not
run ('absent', 'not implemented', 'not available', 'skipped', 'error').
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import importlib.util
import os
from collections.abc import Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .arrays import torch_cuda_usable
from .registry import Peer, PeerArgs, Scale, Workload

READY = "ready"
OK = "ok"
ABSENT = "absent"  # the library is not importable
NOT_IMPLEMENTED = "not implemented"  # twinlearn has no such estimator yet
NOT_AVAILABLE = "not available"  # present but cannot run here (needs a GPU, no accelerator...)
SKIPPED = "skipped"
ERROR = "error"

NUMERIC_MODES = ("fast", "deterministic", "identical")


@dataclass
class Instance:
    """A workload at one size, with its host data, on a device."""

    workload: Workload
    scale: Scale
    data: Any
    device: str

    def params(self, library: str | None = None) -> dict:
        return self.workload.resolve_params(self.scale, self.data, library)

    def peer_args(self) -> PeerArgs:
        return PeerArgs(self.params(), self.scale, self.data, self.device)


@dataclass
class Contender:
    name: str
    library: str
    role: str  # 'twinlearn', 'scikit-learn', 'peer', or for accel workloads 'plain' / 'accelerated'
    input: str = "numpy"  # 'numpy', 'cupy' or 'torch'
    numeric_mode: str | None = None
    build: Callable[[Instance], Any] | None = None  # a fresh estimator for each run
    context: Callable[[], AbstractContextManager] | None = None  # entered around all runs
    status: str = READY
    reason: str | None = None
    note: Callable[[Instance], str | None] | None = None
    version: str | None = None
    memory: tuple[str, ...] = ()  # device allocators to read (bench.memory)
    threads: Callable[[], int | None] | None = None
    #: ``same(inst) -> key``: runs with equal keys measure the same code on the
    #: same data, so one measurement serves them all in a run (plain
    #: scikit-learn in a workload and in its accelerated twin).
    same: Callable[[Instance], tuple] | None = None

    @property
    def ready(self) -> bool:
        return self.status == READY

    def describe(self) -> dict:
        return {
            "name": self.name,
            "library": self.library,
            "role": self.role,
            "input": self.input if self.ready else None,
            "numeric_mode": self.numeric_mode,
            "version": self.version,
            "status": self.status,
            "reason": self.reason,
        }


def contenders_for(
    workload: Workload, device: str, device_input: str | None, suite: str = "quick"
) -> list[Contender]:
    if workload.kind == "accel":
        return _accel_contenders(workload, device)
    out = _twinlearn_contenders(workload, device, device_input, suite)
    if workload.sklearn is not None:
        out += _sklearn_contenders(workload, suite)
    out += [_peer_contender(p, device, device_input) for p in workload.peers]
    return out


# -- twinlearn ---------------------------------------------------------------


def twinlearn_class(path: str | None):
    """(class, None), or (None, (status, reason)) when it cannot be had. A
    callable (a function workload's factory) is its own class."""
    if callable(path):
        return path, None
    if path is None:
        return None, (NOT_IMPLEMENTED, "twinlearn has no counterpart")
    if callable(path):  # a factory taking the parameters, device and numeric_mode
        return path, None
    module, _, name = path.rpartition(".")
    full = f"twinlearn.{module}" if module else "twinlearn"
    try:
        mod = importlib.import_module(full)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if missing.startswith("twinlearn.") and (full == missing or full.startswith(missing + ".")):
            return None, (NOT_IMPLEMENTED, f"{full} does not exist yet")
        return None, (ERROR, f"twinlearn could not be imported: {exc}")
    except ImportError as exc:
        return None, (ERROR, f"twinlearn could not be imported: {exc}")
    cls = getattr(mod, name, None)
    if cls is None:
        return None, (NOT_IMPLEMENTED, f"twinlearn.{path} does not exist yet")
    return cls, None


def _twinlearn_threads(device: str):
    def threads():
        if device != "cpu":
            return None
        import twinlearn

        return twinlearn.get_n_threads() or _cpu_count()

    return threads


#: On a GPU, the numeric modes whose NumPy-in / NumPy-out time each suite
#: reports (data on the device is timed in every mode): the host-device copies
#: are the same in every mode, so the quick suite times them once.
NUMPY_IN_MODES = {"quick": ("fast",)}


def _twinlearn_contenders(
    workload: Workload, device: str, device_input: str | None, suite: str = "full"
) -> list[Contender]:
    cls, problem = twinlearn_class(workload.estimator)
    if problem is not None:
        status, reason = problem
        return [Contender("twinlearn", "twinlearn", "twinlearn", status=status, reason=reason)]
    import twinlearn

    kinds = ["numpy"] if device == "cpu" else [k for k in (device_input, "numpy") if k]
    out = []
    numpy_modes = NUMPY_IN_MODES.get(suite, NUMERIC_MODES) if device != "cpu" else NUMERIC_MODES
    for mode in NUMERIC_MODES:
        for kind in kinds:
            if kind == "numpy" and device_input and mode not in numpy_modes:
                continue
            out.append(Contender(
                name=f"twinlearn {mode} ({kind})",
                library="twinlearn",
                role="twinlearn",
                input=kind,
                numeric_mode=mode,
                build=lambda inst, mode=mode: cls(
                    **inst.params("twinlearn"), device=inst.device, numeric_mode=mode
                ),
                version=twinlearn.__version__,
                memory=("twinlearn",) if kind == "numpy" else ("twinlearn", kind),
                threads=_twinlearn_threads(device),
            ))
    if device != "cpu" and device_input is None:
        out.append(Contender(
            "twinlearn (data on device)", "twinlearn", "twinlearn", status=NOT_AVAILABLE,
            reason="neither CuPy nor PyTorch with CUDA is importable",
        ))
    return out


# -- scikit-learn --------------------------------------------------------------


def sklearn_factory(spec):
    if callable(spec):
        return spec
    module, _, name = spec.rpartition(".")
    return getattr(importlib.import_module(module), name)


def sklearn_threads() -> int | None:
    """The largest thread count among the OpenMP and BLAS pools scikit-learn uses."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    counts = [p.get("num_threads") or 0 for p in threadpool_info()]
    return max(counts) if counts else None


def _stable(value):
    """A hashable, exact stand-in for a parameter value (arrays by content)."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.shape, value.dtype.str, hashlib.sha1(np.ascontiguousarray(value).tobytes()).hexdigest())
    if isinstance(value, Mapping):
        return tuple(sorted((k, _stable(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_stable(v) for v in value)
    return repr(value)


def sklearn_run_key(workload: Workload, inst: Instance, params: dict) -> tuple | None:
    """What makes two plain scikit-learn runs the same measurement: the class,
    its parameters, the data (generator, size, seed, dtype), the timed steps
    and the quality metric. None when the class is given as a factory."""
    if not isinstance(workload.sklearn, str):
        return None
    return (
        workload.sklearn, _stable(params), workload.data.__module__, workload.data.__qualname__,
        inst.scale.key(), workload.seed, workload.dtype, workload.steps,
        workload.quality.primary if workload.quality else None,
    )


def _sklearn_contenders(workload: Workload, suite: str = "quick") -> list[Contender]:
    import sklearn

    factory = sklearn_factory(workload.sklearn)
    base = workload.baseline
    version = sklearn.__version__ if base == "scikit-learn" else importlib.metadata.version(base)
    variants = {None: {}}
    if suite in workload.variants_suites:
        variants.update(workload.sklearn_variants)
    return [
        Contender(
            name=base if label is None else f"{base} ({label})",
            library=base,
            role="scikit-learn",
            build=lambda inst, extra=extra: factory(**{**inst.params("sklearn"), **extra}),
            version=version,
            threads=sklearn_threads,
            same=lambda inst, extra=extra: sklearn_run_key(workload, inst, {**inst.params("sklearn"), **extra}),
        )
        for label, extra in variants.items()
    ]


# -- peers --------------------------------------------------------------------


def _import_problem(module: str) -> str | None:
    """None when `module` imports; else why not."""
    if importlib.util.find_spec(module) is None:
        return f"{module} is not installed"
    try:
        importlib.import_module(module)
    except Exception as exc:  # a library can fail while loading its GPU runtime
        return f"{module} failed to import: {type(exc).__name__}: {exc}"
    return None


def _peer_contender(peer: Peer, device: str, device_input: str | None) -> Contender:
    base = Contender(peer.name, peer.name, "peer")
    problem = _import_problem(peer.module)
    if problem is not None:
        base.status, base.reason = ABSENT, problem
        return base
    base.version = getattr(importlib.import_module(peer.module), "__version__", None)
    if peer.gpu_only and device == "cpu":
        base.status, base.reason = NOT_AVAILABLE, "runs on a GPU only"
        return base
    kind = peer.input
    if kind == "device":
        kind = "numpy" if device == "cpu" else device_input
        if kind is None:
            base.status, base.reason = NOT_AVAILABLE, "neither CuPy nor PyTorch with CUDA is importable"
            return base
    if kind == "torch" and device != "cpu" and not torch_cuda_usable():
        base.status, base.reason = NOT_AVAILABLE, "PyTorch cannot use the GPU"
        return base
    base.input = kind
    base.build = lambda inst: peer.build(inst.peer_args())
    if peer.note is not None:
        base.note = lambda inst: peer.note(inst.peer_args())
    base.memory = ("torch",) if kind == "torch" else ()  # other libraries allocate through their own pools
    if kind == "torch" and device == "cpu":
        base.threads = lambda: importlib.import_module("torch").get_num_threads()
    return base


# -- accelerated scikit-learn -------------------------------------------------


def _accel_contenders(workload: Workload, device: str) -> list[Contender]:
    import sklearn

    factory = sklearn_factory(workload.sklearn)
    plain = Contender(
        "scikit-learn", "scikit-learn", "plain",
        build=lambda inst: factory(**inst.params("sklearn")),
        version=sklearn.__version__, threads=sklearn_threads,
        same=lambda inst: sklearn_run_key(workload, inst, inst.params("sklearn")),
    )
    accel = Contender("scikit-learn + twinlearn.accelerate", "twinlearn", "accelerated")
    try:
        import twinlearn
    except ImportError as exc:
        accel.status, accel.reason = ERROR, f"twinlearn could not be imported: {exc}"
        twinlearn = None
    accelerate = getattr(twinlearn, "accelerate", None)
    if twinlearn is not None and accelerate is None:
        accel.status, accel.reason = NOT_AVAILABLE, "twinlearn.accelerate does not exist in this build"
    if not accel.ready:
        plain.status, plain.reason = SKIPPED, "nothing to compare with: the accelerator is not available"
        return [plain, accel]
    accel.version = twinlearn.__version__
    accel.build = lambda inst: accelerate(factory(**inst.params("sklearn")))
    accel.context = lambda: twinlearn.config_context(device=device)
    accel.memory = ("twinlearn",)
    accel.threads = _twinlearn_threads(device)
    return [plain, accel]


def _cpu_count() -> int:
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
