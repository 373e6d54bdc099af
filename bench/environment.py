"""The record of where a benchmark ran: device, driver and CUDA versions, CPU,
library versions, thread pools, git commit and date."""

from __future__ import annotations

import datetime as _dt
import importlib.metadata as md
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent

#: Import name -> what the record calls it. Versions come from installed
#: package metadata, so nothing is imported just to read them.
LIBRARIES = {
    "numpy": "numpy",
    "scipy": "scipy",
    "sklearn": "scikit-learn",
    "threadpoolctl": "threadpoolctl",
    "torch": "torch",
    "cupy": "cupy",
    "xgboost": "xgboost",
    "lightgbm": "lightgbm",
    "catboost": "catboost",
    "faiss": "faiss",
    "cuml": "cuml",
    "umap": "umap-learn",
    "matplotlib": "matplotlib",
    "tqdm": "tqdm",
}


def _run(cmd: list[str], timeout=10) -> str | None:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=REPO_ROOT)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def git_info() -> dict:
    """The commit benchmarked. A copy of the tree made elsewhere (a remote
    machine, whose .git may be missing or stale) names it through
    TWINLEARN_BENCH_COMMIT, which wins; "dirty" is then unknown."""
    named = os.environ.get("TWINLEARN_BENCH_COMMIT")
    commit = None if named else _run(["git", "rev-parse", "HEAD"])
    if not commit:
        return {"commit": named or "unknown", "dirty": None}
    status = _run(["git", "status", "--porcelain", "--untracked-files=no"])
    return {"commit": commit, "dirty": bool(status) if status is not None else None}


def cpu_info() -> dict:
    model = None
    try:
        with open("/proc/cpuinfo") as f:
            m = re.search(r"^model name\s*:\s*(.+)$", f.read(), re.MULTILINE)
            model = m.group(1).strip() if m else None
    except OSError:
        pass
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    mem = None
    try:
        mem = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        pass
    return {
        "model": model or platform.processor() or platform.machine(),
        "logical_cores": os.cpu_count(),
        "usable_cores": usable,
        "memory_bytes": mem,
    }


def _version_of(module: str, distributions: dict) -> str | None:
    for dist in distributions.get(module, []):
        try:
            return md.version(dist)
        except md.PackageNotFoundError:
            continue
    mod = sys.modules.get(module)
    return getattr(mod, "__version__", None) if mod is not None else None


def library_versions() -> dict:
    out = {"python": platform.python_version()}
    distributions = md.packages_distributions()
    for module, label in LIBRARIES.items():
        out[label] = _version_of(module, distributions)
    try:
        import twinlearn

        out["twinlearn"] = twinlearn.__version__
    except ImportError:
        out["twinlearn"] = None
    return out


def thread_pools() -> list[dict]:
    """threadpoolctl's view of the OpenMP/BLAS pools loaded in this process."""
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    keep = ("user_api", "internal_api", "num_threads", "version", "threading_layer", "architecture")
    return [{k: p.get(k) for k in keep if k in p} for p in threadpool_info()]


def _cuda_version(v: int | None) -> str | None:
    """CUDA's integer version (13000) as '13.0'."""
    return f"{v // 1000}.{(v % 1000) // 10}" if v else None


def nvidia_smi() -> dict | None:
    if shutil.which("nvidia-smi") is None:
        return None
    out = {}
    query = _run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader"])
    fields = [s.strip() for s in query.splitlines()[0].rsplit(",", 2)] if query else []
    if len(fields) == 3:
        out.update(name=fields[0], driver_version=fields[1], memory_total=fields[2])
    banner = _run(["nvidia-smi"])
    m = re.search(r"CUDA Version:\s*([\d.]+)", banner or "")
    if m:
        out["cuda_version"] = m.group(1)
    return out or None


def device_record(device: str) -> dict:
    rec = {"device": device, "name": None, "twinlearn": None, "nvidia_smi": None}
    try:
        import twinlearn

        info = twinlearn.device_info()
        cuda = info.get("cuda") or {}
        rec["twinlearn"] = {
            "cuda_available": info["cuda_available"],
            "cuda_reason": info["cuda_reason"],
            "cuda_runtime": _cuda_version(cuda.get("runtime_version")),
            "cuda_driver_api": _cuda_version(cuda.get("driver_version")),
            "cuda_arch": cuda.get("arch"),
            "gpus": info["gpus"],
            "n_threads": twinlearn.get_n_threads(),
        }
    except Exception as exc:  # the record must not lose a finished run
        rec["twinlearn"] = {"error": f"{type(exc).__name__}: {exc}"}
    if device != "cpu":
        rec["nvidia_smi"] = nvidia_smi()
        gpus = (rec["twinlearn"] or {}).get("gpus") or []
        ordinal = int(device.split(":")[1])
        names = [g["name"] for g in gpus if g.get("id") == ordinal]
        rec["name"] = names[0] if names else (rec["nvidia_smi"] or {}).get("name", "unknown GPU")
    else:
        rec["name"] = f"CPU: {cpu_info()['model']}"
    return rec


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def device_slug(device: str, record: dict) -> str:
    """'nvidia-h200' for a GPU, 'cpu-<model>' for the CPU."""
    if device == "cpu":
        return "cpu-" + slug(cpu_info()["model"])[:40].strip("-")
    return slug(record.get("name") or "gpu")


def torch_settings() -> dict | None:
    torch = sys.modules.get("torch")
    if torch is None:
        return None
    return {
        "matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
        "num_threads": torch.get_num_threads(),
    }


def load_average() -> list[float] | None:
    """The 1, 5 and 15 minute load averages (a busy machine makes noisy timings)."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except (OSError, AttributeError):
        return None


def collect(device: str, load_at_start: list[float] | None = None) -> dict:
    """The environment record. Collected after the run, so that thread pools
    and versions reflect the libraries actually loaded."""
    now = _dt.datetime.now(_dt.timezone.utc)
    dev = device_record(device)
    return {
        "date": now.date().isoformat(),
        "timestamp": now.isoformat(timespec="seconds"),
        "git": git_info(),
        "device": dev,
        "device_slug": device_slug(device, dev),
        "cpu": cpu_info(),
        "platform": platform.platform(),
        "libraries": library_versions(),
        "thread_pools": thread_pools(),
        "torch": torch_settings(),
        "load_average": {"start": load_at_start, "end": load_average()},
    }
