"""Command line: ``twinlearn doctor [--json]`` (also ``python -m twinlearn doctor``)."""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

from . import _backend, _info, identity
from ._config import ENV_VARS, get_n_threads, get_numeric_mode


def _selfcheck_data(dtype):
    """A small matrix with hostile values: huge range, denormals, signed zeros, NaN."""
    rng = np.random.default_rng(12345)
    big, small, denorm = (1e150, 1e-300, 5e-324) if dtype == np.float64 else (1e30, 1e-36, 1e-45)
    X = rng.standard_normal((3001, 7)) * np.array([small, 1e-5, 1.0, 1e5, big, 3.0, 1.0])
    X[::97, 1] = denorm
    X[5, 2] = -0.0
    X[11, 6] = np.nan
    X[:, 5] = 7.25  # constant column
    w = rng.uniform(0.5, 2.0, size=X.shape[0])
    return np.ascontiguousarray(X.astype(dtype)), np.ascontiguousarray(w.astype(dtype))


def _selfcheck(mod, device):
    """Runs the canonical reductions and the scaler on `device`; returns a bit hash.
    The thread count is the configuration's (1 in a forked child: OpenMP's
    threads do not survive a fork)."""
    ctx = mod.Context(device, get_n_threads(), "identical", 0, 0)
    hashes = []
    for dt in (np.float64, np.float32):
        Xd, wd = _selfcheck_data(dt)
        stats = np.asarray(mod.column_stats(ctx, Xd, wd))
        mean = np.ascontiguousarray(stats[1])
        with np.errstate(invalid="ignore", divide="ignore"):
            scale = np.ascontiguousarray(np.sqrt(stats[2] / stats[0]))
        scale[scale == 0] = 1.0
        out = np.empty_like(Xd)
        mod.column_affine_apply(ctx, Xd, out, sub=mean, div=scale)
        hashes += [identity.hash_bits(stats), identity.hash_bits(out)]
    return ":".join(hashes)


def doctor_report() -> dict:
    facts = _info.versions()  # the same facts show_versions prints
    core = _backend.core()
    rep = {
        "twinlearn": facts["twinlearn"],
        "python": facts["python"],
        "platform": facts["platform"],
        "numpy": facts["numpy"],
        "scipy": facts["scipy"],
        "scikit-learn": facts["scikit-learn"],
        "cpu_isa": facts["cpu_isa"],
        "backends": {"cpu": True, "cuda": facts["cuda_compiled"]},
        "install": facts["install"],
        "location": facts["location"],
        "cuda_arch": facts["cuda_arch"],
        "cuda_runtime": facts["cuda_runtime"],
        "cuda_driver": facts["cuda_driver"],
        "gpus": facts["gpus"],
        "gpu_unusable_reason": facts["gpu_unusable_reason"],
        "default_numeric_mode": get_numeric_mode(),
        "environment": {k: os.environ[k] for k in ENV_VARS if k in os.environ},
        "selfcheck": {},
        "ok": True,
    }
    try:
        ref = _selfcheck(core, "cpu")
        rep["selfcheck"]["cpu"] = {"ok": True, "hash": ref}
    except Exception as exc:  # a broken CPU backend is a failure
        rep["selfcheck"]["cpu"] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        rep["ok"] = False
        ref = None
    if rep["gpus"]:
        mod = _backend.cuda()
        for g in rep["gpus"]:
            dev = f"cuda:{g['id']}"
            g["compute_capability"] = list(g["compute_capability"])
            # The device code of this build that runs on this GPU (None: none does).
            g["kernels"] = _info.gpu_code_for(g["compute_capability"], rep["cuda_arch"])
            if g["kernels"] is None:
                rep["selfcheck"][dev] = {"ok": False, "error": f"this build has no device code for compute capability "
                                         f"{'.'.join(map(str, g['compute_capability']))} (compiled for "
                                         f"{rep['cuda_arch']}): build with TWINLEARN_CUDA_ARCH including it"}
                rep["ok"] = False
                continue
            try:
                h = _selfcheck(mod, dev)
                same = ref is not None and h == ref
                rep["selfcheck"][dev] = {"ok": same, "hash": h, "identical_to_cpu": same}
                if not same:
                    rep["ok"] = False
            except Exception as exc:
                rep["selfcheck"][dev] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
                rep["ok"] = False
    return rep


def _fmt_bytes(b):
    return f"{b / 2**30:.1f} GiB"


def print_doctor(rep: dict, out=None) -> None:
    out = out if out is not None else sys.stdout
    p = lambda *a: print(*a, file=out)  # noqa: E731
    p(f"twinlearn {rep['twinlearn']}  (Python {rep['python']}, NumPy {rep['numpy']}, "
      f"scikit-learn {rep['scikit-learn']})")
    p(f"platform: {rep['platform']}")
    p(f"installed as: {rep['install']} ({rep['location']})")
    p(f"backends: cpu yes ({rep['cpu_isa']} kernels); cuda {'compiled for ' + _info.describe_cuda_arch(rep['cuda_arch']) if rep['backends']['cuda'] else 'not available'}")
    if rep["backends"]["cuda"]:
        p(f"CUDA runtime {rep['cuda_runtime']}, driver {rep['cuda_driver'] or 'none'}")
    if rep["gpus"]:
        for g in rep["gpus"]:
            cc = ".".join(map(str, g["compute_capability"]))
            p(f"GPU {g['id']}: {g['name']}, compute capability {cc}, {g['multiprocessors']} SMs, "
              f"{_fmt_bytes(g['total_memory'])} ({_fmt_bytes(g['free_memory'])} free); "
              f"runs {g.get('kernels') or 'no code of this build'}")
    else:
        p(f"GPU: none used: {rep['gpu_unusable_reason']}")
    p(f"default numeric mode: {rep['default_numeric_mode']}")
    env = rep["environment"]
    p("environment: " + (", ".join(f"{k}={v}" for k, v in env.items()) if env else "no TWINLEARN_* variables set"))
    for dev, r in rep["selfcheck"].items():
        if r["ok"]:
            extra = " (bit-identical to the CPU backend)" if dev != "cpu" else ""
            p(f"self-check {dev}: passed{extra}")
        elif "error" in r:
            p(f"self-check {dev}: FAILED: {r['error']}")
        else:
            p(f"self-check {dev}: FAILED: bits differ from the CPU backend")
    p("status: " + ("OK" if rep["ok"] else "BROKEN"))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="twinlearn", description="twinlearn command line")
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("doctor", help="report backends and GPUs, and self-check them")
    d.add_argument("--json", action="store_true", help="print the report as JSON")
    args = parser.parse_args(argv)
    if args.command == "doctor":
        rep = doctor_report()
        if args.json:
            print(json.dumps(rep, indent=2, default=str))
        else:
            print_doctor(rep)
        return 0 if rep["ok"] else 1
    return 2  # pragma: no cover


if __name__ == "__main__":
    sys.exit(main())
