"""Peak memory of one contender, host and device.

Host: the peak resident set size (RSS) while the contender ran, above the RSS
when it started. On Linux the kernel's peak counter (VmHWM) is reset for each
contender (``/proc/self/clear_refs``), so the figure is the contender's own;
elsewhere it is the growth of ``ru_maxrss``, the process's lifetime peak, which
reads 0 when a contender stayed below an earlier peak.

Device: per library whose allocator can be read, the peak bytes allocated above
what was allocated when the contender started (its input data, when that lives
on the device, is not counted):
- twinlearn: its caching allocator's high-water mark. That mark cannot be reset;
  when a contender does not raise it, the figure is an upper bound (flagged).
- torch: ``torch.cuda.max_memory_allocated`` after ``reset_peak_memory_stats``.
- cupy: the bytes CuPy's memory pool holds after the run, starting from an
  emptied pool (the pool keeps freed blocks, so this approximates the peak).
Libraries with their own allocators (XGBoost, FAISS, cuML's RMM...) are not
measured.
"""

from __future__ import annotations

import re
import resource
import sys

_PROC_STATUS = "/proc/self/status"


def _proc_kib(field: str) -> int | None:
    try:
        with open(_PROC_STATUS) as f:
            m = re.search(rf"^{field}:\s+(\d+) kB", f.read(), re.MULTILINE)
        return int(m.group(1)) if m else None
    except OSError:
        return None


def _reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")  # 5 = reset the peak RSS counter only
        return True
    except OSError:
        return False


def _maxrss_bytes() -> int:
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return r if sys.platform == "darwin" else r * 1024  # bytes on macOS, KiB on Linux


class HostMemoryProbe:
    def start(self):
        rss = _proc_kib("VmRSS")
        self._hwm = rss is not None and _reset_peak_rss()
        if self._hwm:
            self._base = rss * 1024
        else:
            self._base = _maxrss_bytes()
        return self

    def stop(self) -> dict:
        if self._hwm:
            peak = (_proc_kib("VmHWM") or 0) * 1024
            return {"host_peak_bytes": max(peak - self._base, 0), "host_method": "VmHWM above start RSS"}
        return {"host_peak_bytes": max(_maxrss_bytes() - self._base, 0), "host_method": "ru_maxrss growth"}


class DeviceMemoryProbe:
    """Device memory of the given sources ('twinlearn', 'torch', 'cupy')."""

    def __init__(self, device: str, sources):
        self.ordinal = 0 if device == "cpu" else int(device.split(":")[1])
        self.sources = [] if device == "cpu" else list(dict.fromkeys(sources))
        self._start: dict = {}

    def start(self):
        for s in self.sources:
            if s == "twinlearn":
                st = _twinlearn_stats(self.ordinal)
                if st is not None:
                    self._start[s] = (st["peak_bytes"], st["in_use_bytes"])
            elif s == "torch":
                import torch

                torch.cuda.reset_peak_memory_stats(self.ordinal)
                self._start[s] = torch.cuda.memory_allocated(self.ordinal)
            elif s == "cupy":
                import cupy

                pool = cupy.get_default_memory_pool()
                pool.free_all_blocks()
                self._start[s] = pool.total_bytes()
        return self

    def stop(self) -> dict:
        peaks, upper = {}, []
        for s, start in self._start.items():
            if s == "twinlearn":
                peak0, in_use0 = start
                peak1 = _twinlearn_stats(self.ordinal)["peak_bytes"]
                if peak1 <= peak0:
                    upper.append(s)
                peaks[s] = max(peak1 - in_use0, 0)
            elif s == "torch":
                import torch

                peaks[s] = max(torch.cuda.max_memory_allocated(self.ordinal) - start, 0)
            elif s == "cupy":
                import cupy

                peaks[s] = max(cupy.get_default_memory_pool().total_bytes() - start, 0)
        out = {"device_peak_bytes": peaks}
        if upper:
            out["device_peak_upper_bound"] = upper
        return out


def _twinlearn_stats(ordinal: int):
    try:
        from twinlearn import _backend
    except ImportError:
        return None
    if not _backend.cuda_available():
        return None
    return _backend.cuda().allocator_stats(ordinal)
