"""Pose-locked live frames: draw as soon as a new tracked pose arrives (issue 20, item 2).

A live run on a clock schedule draws at its own 1/fps ticks, unrelated to the camera's:
the newest observation waits for the next tick (0 to one frame, ~half a frame on average)
and the pose filter reads a camera frame in the past to interpolate. When the camera
delivers at the output rate (a 30 fps webcam and 30 fps output, the usual case), the frame
can instead start the moment the tracking thread hands the filter a new observation, and
the filter can read right at that observation instead of a frame behind it.

- :class:`PoseArrivals` (written by the tracking thread, read by the render thread): a
  counter of observations that reached the filter, the capture interval and the tracker's
  latency (capture -> filter), both as exponential moving averages.
- :func:`locks` decides per frame: the capture interval is within :data:`LOCK_TOLERANCE` of
  a whole number m of frame periods (a 30 fps camera into 30 or 60 fps output) and an
  observation came lately; a frame starts at each arrival, the m − 1 others follow it on
  the clock. Otherwise (a 25 fps clip into 30 fps
  output, a 60 fps camera, a camera gone quiet) the clock schedule stays, so the output rate
  is the one asked for.
- :class:`ReadDelay`: the filter's read delay (the tracker's latency while locked, the
  configured interpolation delay otherwise, eased between the two).
- :func:`wait_for_pose`: after a frame that started at ``start``, wait for an observation
  newer than the ones that frame saw, at the earliest half a frame period after ``start``
  (never faster than twice the rate) and at the latest 1.25 periods after it (a late or
  missing observation does not stall the output: that frame holds/eases as any other).

The solver is untouched: substeps stay on the fixed 120 Hz grid of loop time, frames are
drawn at interpolated times between substeps, so a replay is the same whatever the frame
times (DESIGN §2). Only when frames are drawn, and how old the pose shown is, change.
"""

from __future__ import annotations

import threading

#: frames drawn per camera frame at most while locked (the others on the clock in between)
MAX_FRAMES_PER_POSE = 4
#: the capture interval must be within this fraction of m frame periods to lock
LOCK_TOLERANCE = 0.1
#: a locked frame starts no earlier than this many frame periods after the previous one
EARLIEST_PERIODS = 0.5
#: ... and no later than this many (a missing observation does not stall the output)
LATEST_PERIODS = 1.25
#: weight of the newest sample in the moving averages
EMA_WEIGHT = 0.1
#: the read delay changes by at most this fraction of the loop time that passes
MAX_SLEW = 0.05


class PoseArrivals:
    """Observations reaching the pose filter, as the render thread needs to know of them.

    ``arrived`` is called on the tracking thread; everything else on the render thread.
    Times are wall-clock ns of the run's clock (capture timestamps share it).

    Attributes:
        seq: observations arrived so far.
        interval_ns: moving average of the capture interval (None before two arrived).
        latency_ns: moving average of capture -> arrival (the tracker's time; None before one).
        last_arrival_ns: when the newest observation arrived (None before one).
        locked: the live schedule's decision for the frame being drawn (:func:`locks`).
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.seq = 0
        self.interval_ns: float | None = None
        self.latency_ns: float | None = None
        self._last_capture: int | None = None
        self.last_arrival_ns: int | None = None
        self.locked = False

    def arrived(self, capture_ns: int, arrival_ns: int) -> None:
        """An observation captured at ``capture_ns`` reached the filter at ``arrival_ns``."""
        with self._cond:
            lat = float(arrival_ns - capture_ns)
            self.latency_ns = lat if self.latency_ns is None else self.latency_ns + EMA_WEIGHT * (lat - self.latency_ns)
            if self._last_capture is not None and capture_ns > self._last_capture:
                d = float(capture_ns - self._last_capture)
                self.interval_ns = d if self.interval_ns is None else self.interval_ns + EMA_WEIGHT * (d - self.interval_ns)
            self._last_capture = capture_ns
            self.last_arrival_ns = arrival_ns
            self.seq += 1
            self._cond.notify_all()

    def wait_newer(self, seq: int, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for an observation after the first ``seq``; True if one came."""
        with self._cond:
            return self._cond.wait_for(lambda: self.seq > seq, max(timeout_s, 0.0))


def locks(arrivals: PoseArrivals | None, frame_ns: int, now_ns: int) -> int:
    """How many frames per camera frame when frames should follow the arrivals, else 0: the
    capture interval is m frame periods (m = 1..:data:`MAX_FRAMES_PER_POSE`, within
    :data:`LOCK_TOLERANCE`; a 30 fps camera into 30 fps output: 1, into 60 fps: 2) and an
    observation arrived lately (within :data:`LATEST_PERIODS` + 1 camera frames of wall time
    ``now_ns``). Stored as ``arrivals.locked`` (True when m > 0)."""
    m = 0
    if arrivals is not None and arrivals.interval_ns is not None and arrivals.last_arrival_ns is not None:
        ratio = arrivals.interval_ns / frame_ns
        k = round(ratio)
        if (1 <= k <= MAX_FRAMES_PER_POSE and abs(ratio / k - 1.0) <= LOCK_TOLERANCE
                and now_ns - arrivals.last_arrival_ns <= (LATEST_PERIODS + 1.0) * k * frame_ns):
            m = k
    if arrivals is not None:
        arrivals.locked = m > 0
    return m


class ReadDelay:
    """How far behind the wall time the pose filter is read, per sample (loop time ``t``):
    while frames are locked, the tracker's latency (so a frame drawn at an arrival reads that
    observation, not one a frame older), else ``fallback_ns`` (the filter's configured delay).
    The delay eases toward its target by at most :data:`MAX_SLEW` of the loop time that
    passed, so switching never jumps the pose (a 5 % time warp for a few tenths of a second).
    Read on the render thread only (substeps and draws); a draw time before the newest
    substep uses the current delay unchanged."""

    def __init__(self, fallback_ns: int, arrivals: PoseArrivals):
        self.fallback_ns, self.arrivals = int(fallback_ns), arrivals
        self.delay_ns = float(fallback_ns)
        self._t: int | None = None

    def target_ns(self) -> float:
        a = self.arrivals
        return a.latency_ns if a.locked and a.latency_ns is not None else float(self.fallback_ns)

    def at(self, t_ns: int) -> int:
        """The delay (ns) to read loop time ``t_ns`` with."""
        if self._t is not None and t_ns > self._t:
            step = MAX_SLEW * (t_ns - self._t)
            d = self.target_ns() - self.delay_ns
            self.delay_ns += max(-step, min(step, d))
        if self._t is None or t_ns > self._t:
            self._t = t_ns
        return int(self.delay_ns)


def wait_for_pose(clock, arrivals: PoseArrivals, seen: int, start_ns: int, frame_ns: int) -> bool:
    """After a frame that began at wall time ``start_ns`` having seen ``seen`` arrivals: wait
    for a newer observation until ``start + LATEST_PERIODS·frame``, then (if it came early)
    until ``start + EARLIEST_PERIODS·frame``. Returns True when the next frame is started by
    an arrival, False at the deadline. ``clock`` gives the wall time and the sleep."""
    deadline = start_ns + int(LATEST_PERIODS * frame_ns)
    came = arrivals.wait_newer(seen, (deadline - clock.wall_ns()) * 1e-9)
    clock.sleep_until(start_ns + int(EARLIEST_PERIODS * frame_ns))
    return came


__all__ = ["EARLIEST_PERIODS", "LATEST_PERIODS", "LOCK_TOLERANCE", "MAX_FRAMES_PER_POSE", "MAX_SLEW", "PoseArrivals", "ReadDelay", "locks",
           "wait_for_pose"]
