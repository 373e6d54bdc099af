"""A progress bar over contender runs: tqdm when importable, else a plain one
(a redrawn line on a terminal, one line per step otherwise)."""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, enabled: bool = True, stream=None):
        self.enabled = enabled
        self.stream = stream or sys.stderr
        self._bar = None
        self._done = 0
        self._total = 0
        self._t0 = time.perf_counter()

    def start(self, total: int):
        self._total, self._done, self._t0 = total, 0, time.perf_counter()
        if not self.enabled:
            return
        try:
            from tqdm import tqdm
        except ImportError:
            return
        self._bar = tqdm(total=total, file=self.stream, unit="run", dynamic_ncols=True)

    def update(self, label: str):
        """Called before each contender run; `label` says what runs now."""
        if not self.enabled:
            return
        if self._bar is not None:
            if self._done:
                self._bar.update(1)
            self._bar.set_description_str(label[:60])
        else:
            self._write(f"[{self._done + 1}/{self._total}] {self._elapsed()} {label}")
        self._done += 1

    def close(self):
        if not self.enabled:
            return
        if self._bar is not None:
            if self._done:
                self._bar.update(1)
            self._bar.close()
        elif self.stream.isatty():
            self.stream.write("\n")
        self.stream.flush()

    def _elapsed(self) -> str:
        s = int(time.perf_counter() - self._t0)
        return f"{s // 60:d}:{s % 60:02d}"

    def _write(self, line: str):
        if self.stream.isatty():
            filled = 30 * self._done // max(self._total, 1)
            bar = "#" * filled + "." * (30 - filled)
            self.stream.write(f"\r[{bar}] {line[:70]:<70}")
        else:
            self.stream.write(line + "\n")
        self.stream.flush()
