"""The progress of a matrix run: cells done, failed, cached, and the estimated time left.

On a terminal one line redrawn in place (``[#####.....] 12/40 cells · 9 done · 1 failed ·
2 cached · 3m20s left``); elsewhere (a log, CI) one line per finished cell with the same
counts. The estimate is the wall time per computed cell so far (parallel workers included)
times the cells left.
"""

from __future__ import annotations

import sys
import time


def _duration(seconds: float) -> str:
    s = int(round(seconds))
    if s >= 3600:
        return f"{s // 3600}h{s % 3600 // 60:02d}m"
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


class Progress:
    """Counts of a run of ``total`` cells, drawn on ``stream`` (default stderr); silent when
    ``enabled`` is False."""

    def __init__(self, total: int, stream=None, *, enabled: bool = True, width: int = 30):
        self.total = total
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.width = width
        self.done = self.failed = self.cached = 0
        self._start: float | None = None

    @property
    def finished(self) -> int:
        return self.done + self.failed + self.cached

    def eta_s(self) -> float | None:
        """Seconds left at the rate of the cells computed so far (None before the first)."""
        computed = self.done + self.failed
        if not computed or self._start is None:
            return None
        return (time.perf_counter() - self._start) / computed * (self.total - self.finished)

    def text(self) -> str:
        eta = self.eta_s()
        left = "" if eta is None else f" · {_duration(eta)} left"
        return (f"{self.finished}/{self.total} cells · {self.done} done · {self.failed} failed · "
                f"{self.cached} cached{left}")

    def add_cached(self, n: int = 1) -> None:
        self.cached += n

    def start(self) -> None:
        """The computing starts now (cached cells counted before do not enter the estimate)."""
        self._start = time.perf_counter()
        self._draw(None)

    def cell(self, label: str, status: str, seconds: float | None = None) -> None:
        """One computed cell finished with row status ``status`` ("ok", "skipped": done;
        "error": failed)."""
        if self._start is None:
            self._start = time.perf_counter()
        if status == "error":
            self.failed += 1
        else:
            self.done += 1
        word = {"ok": "ok", "error": "FAILED"}.get(status, status)
        self._draw(f"{word} {label}" + (f" ({seconds:.1f} s)" if seconds is not None else ""))

    def _draw(self, what: str | None) -> None:
        if not self.enabled:
            return
        if self.tty:
            filled = self.width * self.finished // max(self.total, 1)
            self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {self.text()}\x1b[K")
            if self.finished >= self.total:
                self.stream.write("\n")
        elif what is not None:
            self.stream.write(f"{self.text()}: {what}\n")
        else:
            self.stream.write(f"{self.text()}\n")
        self.stream.flush()
