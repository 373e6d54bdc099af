"""twinlearn quick start: standardize a large matrix on the best device here,
compare with scikit-learn, and check that the CPU and GPU backends agree to
the bit in identical mode."""

import time

import numpy as np
from sklearn.preprocessing import StandardScaler as SkStandardScaler

import twinlearn

print(f"twinlearn {twinlearn.__version__}; running on: {twinlearn.vendor()}")
info = twinlearn.device_info()
if info["gpus"]:
    print("GPU:", info["gpus"][0]["name"])
else:
    print("no GPU used:", info["cuda_reason"])

rng = np.random.default_rng(0)
X = (rng.standard_normal((1_000_000, 64)) * rng.uniform(0.1, 100, 64) + rng.uniform(-5, 5, 64)).astype(np.float32)


def timed(fn):
    fn()  # warm-up
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


ours, t_ours = timed(lambda: twinlearn.StandardScaler().fit_transform(X))
ref, t_ref = timed(lambda: SkStandardScaler().fit_transform(X))
print(f"StandardScaler.fit_transform 1M x 64 float32: twinlearn {t_ours * 1e3:.1f} ms, "
      f"scikit-learn {t_ref * 1e3:.1f} ms")
print(f"max |twinlearn - scikit-learn| = {np.abs(ours - ref).max():.2e}")

with twinlearn.config_context(numeric_mode="identical"):
    cpu = twinlearn.StandardScaler(device="cpu").fit(X)
    print("numeric mode delivered:", cpu.numeric_mode_used())
    if twinlearn.vendor() == "cuda":
        gpu = twinlearn.StandardScaler(device="cuda").fit(X)
        same = (cpu.mean_.tobytes() == gpu.mean_.tobytes() and cpu.var_.tobytes() == gpu.var_.tobytes()
                and cpu.transform(X).tobytes() == gpu.transform(X).tobytes())
        print("CPU and GPU results bit-identical:", same)
    else:
        print("CPU-versus-GPU identity check: skipped (no GPU here)")
