"""Live metrics of the loop: latency, render fps, tracker time, drops, substeps.

Everything is kept in fixed-size ring buffers (the last ``window`` frames) so the loop
never allocates per frame; :meth:`Telemetry.summary` gives medians and 95th percentiles.
Latency is capture -> output: from the capture timestamp of the newest camera frame used by
a rendered frame to the moment that frame was handed to the outputs.

Counts kept elsewhere (a VMC receiver's packets: :meth:`Telemetry.watch`) are read when the
summary is made and appear in it under their name, in ``GET /status``, the ``--json``
summary and the HUD alike.
"""

from __future__ import annotations

import threading
from typing import Callable

import numpy as np


class _Ring:
    def __init__(self, n: int):
        self.data = np.zeros(n)
        self.n = 0
        self.i = 0

    def push(self, v: float) -> None:
        self.data[self.i] = v
        self.i = (self.i + 1) % len(self.data)
        self.n = min(self.n + 1, len(self.data))

    def values(self) -> np.ndarray:
        return self.data[: self.n] if self.n < len(self.data) else self.data

    def pct(self, q: float) -> float | None:
        return float(np.percentile(self.values(), q)) if self.n else None


class Telemetry:
    """Thread-safe counters for the HUD, ``GET /status`` and the exit summary."""

    def __init__(self, window: int = 600):
        self._lock = threading.Lock()
        self.latency_ms = _Ring(window)
        self.frame_ms = _Ring(window)
        self.tracker_ms = _Ring(window)
        self.substeps = _Ring(window)
        self.frames = 0
        self.dropped_frames = 0
        self.dropped_substeps = 0
        self.face_found = False
        self._last_frame_ns: int | None = None
        self._watched: dict[str, Callable[[], dict]] = {}

    def watch(self, name: str, counts: Callable[[], dict]) -> None:
        """Show ``counts()`` (a dict of numbers, read from any thread) under ``name`` in the
        summary and the HUD (e.g. ``"vmc"``: the VMC receiver's packet counts)."""
        self._watched[name] = counts

    def watched(self) -> dict[str, dict]:
        """{name: counts} of everything watched, read now."""
        return {k: dict(f()) for k, f in list(self._watched.items())}

    def frame(self, t_ns: int, *, substeps: int, latency_ns: int | None = None) -> None:
        """Record one rendered frame handed to the outputs at wall time ``t_ns`` (the clock's
        wall time, which keeps running while the run is paused: fps stays the render rate)."""
        with self._lock:
            if self._last_frame_ns is not None:
                self.frame_ms.push((t_ns - self._last_frame_ns) / 1e6)
            self._last_frame_ns = t_ns
            self.substeps.push(substeps)
            if latency_ns is not None:
                self.latency_ms.push(latency_ns / 1e6)
            self.frames += 1

    def tracker(self, ms: float, *, face_found: bool) -> None:
        with self._lock:
            self.tracker_ms.push(ms)
            self.face_found = face_found

    def drop(self, frames: int = 0, substeps: int = 0) -> None:
        with self._lock:
            self.dropped_frames += frames
            self.dropped_substeps += substeps

    def fps(self) -> float | None:
        med = self.frame_ms.pct(50)
        return 1000.0 / med if med else None

    def summary(self) -> dict:
        """p50/p95 of latency and tracker ms, render fps, drops and substeps per frame."""
        with self._lock:
            def r(x):
                return None if x is None else round(x, 3)

            return {
                "frames": self.frames,
                "fps": r(self.fps()),
                "latency_ms_p50": r(self.latency_ms.pct(50)),
                "latency_ms_p95": r(self.latency_ms.pct(95)),
                "tracker_ms_p50": r(self.tracker_ms.pct(50)),
                "tracker_ms_p95": r(self.tracker_ms.pct(95)),
                "substeps_per_frame": r(float(self.substeps.values().mean()) if self.substeps.n else None),
                "dropped_frames": self.dropped_frames,
                "dropped_substeps": self.dropped_substeps,
                "face_found": self.face_found,
                **self.watched(),
            }
