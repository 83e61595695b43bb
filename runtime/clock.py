"""One clock owns time (DESIGN §2, §7): the monotonic clock live, a replay clock offline.

Times are integer nanoseconds. The loop asks the clock for "now" and to wait for the next
frame; with :class:`ReplayClock` nothing sleeps and frame times come from a schedule, so
offline runs are deterministic whatever the machine is doing.
"""

from __future__ import annotations

import random
import time
from typing import Iterator, Protocol

NS_PER_S = 1_000_000_000


class Clock(Protocol):
    def now_ns(self) -> int: ...

    def sleep_until(self, t_ns: int) -> None: ...


class MonotonicClock:
    """Live time: ``time.perf_counter_ns`` (monotonic, the same clock as capture timestamps)."""

    def now_ns(self) -> int:
        return time.perf_counter_ns()

    def sleep_until(self, t_ns: int) -> None:
        dt = (t_ns - time.perf_counter_ns()) / NS_PER_S
        if dt > 0:
            time.sleep(dt)


class ReplayClock:
    """Manual time for offline runs and tests: ``sleep_until`` jumps, ``advance`` steps."""

    def __init__(self, start_ns: int = 0):
        self._t = int(start_ns)

    def now_ns(self) -> int:
        return self._t

    def sleep_until(self, t_ns: int) -> None:
        self._t = max(self._t, int(t_ns))

    def advance(self, dt_ns: int) -> int:
        self._t += int(dt_ns)
        return self._t


def frame_times(fps: float, duration_ns: int, *, start_ns: int = 0, jitter: float = 0.0,
                seed: int = 0, include_end: bool = True) -> Iterator[int]:
    """Render frame times for an offline run: frame k at ``start + k * 1e9 / fps`` (integer ns).

    Args:
        fps: render rate, frames per second (> 0).
        duration_ns: the last frame is at or after ``start_ns + duration_ns``.
        jitter: 0 for a steady rate; else each frame interval is scaled by a uniform random
            factor in [1 - jitter, 1 + jitter] (deterministic for a given ``seed``), which
            models frame-time jitter and dropped frames.
        include_end: end with a frame exactly at ``start_ns + duration_ns`` (replays compare
            states up to the end); False gives the frames of a video of that duration
            (``duration · fps`` frames, the last one a frame interval before the end).
    """
    if fps <= 0:
        raise ValueError(f"fps must be > 0, got {fps}")
    rng = random.Random(seed)
    end = start_ns + duration_ns
    k = 0
    t = start_ns
    while True:
        if t >= end and not include_end:
            return
        yield t
        if t >= end:
            return
        k += 1
        if jitter:
            t += max(1, int(NS_PER_S / fps * (1.0 + jitter * (2.0 * rng.random() - 1.0))))
        else:
            t = start_ns + (k * NS_PER_S * 1000) // int(round(fps * 1000))
        t = min(t, end) if t > end else t
