"""Live frames phase-locked to the tracked poses (issue 20, item 2: render as soon as a new
pose arrives, without changing the output rate).

A live run on a free clock draws at its own 1/fps ticks, unrelated to the camera's: the
newest observation waits for the next tick (0 to one frame, half a frame on average) and
the pose filter reads a camera frame in the past to interpolate. When the camera delivers
at the output rate or a whole fraction of it (a 30 fps webcam into 30 or 60 fps output),
the ticks are instead steered so that observations arrive just before them, and a frame
may start up to half a period before its tick when the observation it waits for arrives:

- :class:`PoseArrivals` (written by the tracking thread, read by the render thread): a
  counter of observations that reached the filter, the capture interval (median of the
  last :data:`INTERVALS` intervals) and the tracker's latency (capture -> filter).
- :func:`locks`: the capture interval is m frame periods (m = 1..:data:`MAX_FRAMES_PER_POSE`,
  within :data:`LOCK_TOLERANCE`) and an observation came lately. Otherwise (a 25 fps clip
  into 30 fps output, a camera gone quiet, the tracker's warm-up) the free clock.
- :class:`PhaseLock` / :func:`steer`: the tick moves by a share of how far the frame's pose
  arrived from the middle of its tick's window (at most :data:`MAX_STEER` of a period per
  frame).
- :func:`wait_for_frame`: wait until the window before the tick opens, then until the tick
  or a new observation, whichever is first.
- :class:`ReadDelay`: the filter's read delay. Locked with m frames per pose, the
  tracker's latency less the draw's lag of one substep, plus m − 1 frame periods: with one
  frame per pose the frame drawn at an arrival shows that observation; with two, the frame
  at an arrival shows the pose half-way to it and the next frame shows it (no frame holds a
  pose). Free ticks: the configured interpolation delay. Eased, never jumped.

Every frame has its own tick, one period after the previous one, so the output rate is the
one asked for, locked or not (a frame starting early does not move the next tick). The
solver is untouched: substeps stay on the fixed 120 Hz grid of loop time and frames are
drawn at interpolated times between substeps (docs/design.md §2). Times are wall-clock ns.
"""

from __future__ import annotations

import statistics
import threading
from collections import deque

#: frames drawn per camera frame at most while locked (the others on their ticks in between)
MAX_FRAMES_PER_POSE = 4
#: the capture interval must be within this fraction of m frame periods to lock
LOCK_TOLERANCE = 0.1
#: capture intervals the interval estimate is the median of (a lock needs this many)
INTERVALS = 5
#: a frame may start this many frame periods before its tick when its pose arrives
WINDOW_PERIODS = 0.5
#: share of the arrival's offset from the window's middle the tick moves by per frame
STEER_GAIN = 0.2
#: ... at most this many frame periods per frame
MAX_STEER = 1 / 16
#: weight of the newest sample in the tracker-latency moving average
EMA_WEIGHT = 0.1
#: the read delay changes by at most this fraction of the loop time that passes
MAX_SLEW = 0.05


class PoseArrivals:
    """Observations reaching the pose filter, as the render thread needs to know of them.

    ``arrived`` is called on the tracking thread (under a lock); the render thread reads
    single attributes. Times are wall-clock ns of the run's clock (capture timestamps share it).

    Attributes:
        seq: observations arrived so far.
        interval_ns: median of the last :data:`INTERVALS` capture intervals (None before that many).
        latency_ns: moving average of capture -> arrival (the tracker's time; None before one).
        last_arrival_ns: when the newest observation arrived (None before one).
        frames_per_pose: the schedule's lock after the last frame (:func:`locks`; 0: free clock).
        frame_ns: the output's frame period the lock was decided for.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.seq = 0
        self.interval_ns: float | None = None
        self.latency_ns: float | None = None
        self.last_arrival_ns: int | None = None
        self.frames_per_pose = 0
        self.frame_ns = 0
        self._intervals: deque[int] = deque(maxlen=INTERVALS)
        self._last_capture: int | None = None

    @property
    def locked(self) -> bool:
        """Frames follow the arrivals (``frames_per_pose`` > 0)."""
        return self.frames_per_pose > 0

    def arrived(self, capture_ns: int, arrival_ns: int) -> None:
        """An observation captured at ``capture_ns`` reached the filter at ``arrival_ns``."""
        with self._cond:
            lat = float(arrival_ns - capture_ns)
            self.latency_ns = lat if self.latency_ns is None else self.latency_ns + EMA_WEIGHT * (lat - self.latency_ns)
            if self._last_capture is not None and capture_ns > self._last_capture:
                self._intervals.append(capture_ns - self._last_capture)
                if len(self._intervals) == INTERVALS:
                    self.interval_ns = float(statistics.median(self._intervals))
            self._last_capture = capture_ns
            self.last_arrival_ns = arrival_ns
            self.seq += 1
            self._cond.notify_all()

    def wait_newer(self, seq: int, timeout_s: float) -> bool:
        """Wait up to ``timeout_s`` for an observation after the first ``seq``; True if one came."""
        with self._cond:
            return self._cond.wait_for(lambda: self.seq > seq, max(timeout_s, 0.0))


def locks(arrivals: PoseArrivals | None, frame_ns: int, now_ns: int) -> int:
    """Frames per camera frame when frames should follow the arrivals, else 0: the capture
    interval is m frame periods (m = 1..:data:`MAX_FRAMES_PER_POSE`, within
    :data:`LOCK_TOLERANCE`; a 30 fps camera into 30 fps output: 1, into 60 fps: 2) and an
    observation arrived within 2·m periods of wall time ``now_ns``. Stored as
    ``arrivals.frames_per_pose`` (the decision for the frames that follow)."""
    if arrivals is None:
        return 0
    m = 0
    if arrivals.interval_ns is not None and arrivals.last_arrival_ns is not None:
        ratio = arrivals.interval_ns / frame_ns
        k = round(ratio)
        if (1 <= k <= MAX_FRAMES_PER_POSE and abs(ratio / k - 1.0) <= LOCK_TOLERANCE
                and now_ns - arrivals.last_arrival_ns <= 2 * k * frame_ns):
            m = k
    arrivals.frames_per_pose, arrivals.frame_ns = m, frame_ns
    return m


def steer(tick_ns: int, arrival_ns: int, frame_ns: int) -> int:
    """The correction (ns) to the next ticks after the frame of ``tick_ns``, for an arrival
    at ``arrival_ns``: a share (:data:`STEER_GAIN`, at most :data:`MAX_STEER` periods) of
    the arrival's phase error, its offset from the middle of the tick's window
    (``tick − WINDOW_PERIODS/2 · period``) taken modulo the period into [−period/2,
    period/2) (an arrival is some tick's pose: this one's, late or early, or a neighbour's)."""
    err = arrival_ns - (tick_ns - int(WINDOW_PERIODS * frame_ns) // 2)
    err = (err + frame_ns // 2) % frame_ns - frame_ns // 2
    cap = int(MAX_STEER * frame_ns)
    return max(-cap, min(cap, int(STEER_GAIN * err)))


class PhaseLock:
    """Steers the ticks once per arrival (render thread): after a frame, an arrival not
    steered by yet corrects the ticks by :func:`steer` against that frame's tick."""

    def __init__(self) -> None:
        self._seq = 0

    def correction(self, arrivals: PoseArrivals, tick_ns: int, frame_ns: int) -> int:
        """After the frame of ``tick_ns``: the tick correction, ns (0 without a new arrival)."""
        a = arrivals.last_arrival_ns
        if arrivals.seq <= self._seq or a is None:
            return 0
        self._seq = arrivals.seq
        return steer(tick_ns, a, frame_ns)


def wait_for_frame(clock, arrivals: PoseArrivals, tick_ns: int, frame_ns: int) -> bool:
    """Wait for the frame of ``tick_ns``: until its window opens (``tick − WINDOW_PERIODS ·
    period``), then until the tick or an observation arriving inside the window, whichever
    is first (an observation that came before the window is drawn at the tick: it belongs to
    an earlier phase, and the steering moves the ticks until poses land inside the windows).
    ``clock`` gives the wall time and the sleep. Returns True when an arrival starts it."""
    clock.sleep_until(tick_ns - int(WINDOW_PERIODS * frame_ns))
    return arrivals.wait_newer(arrivals.seq, (tick_ns - clock.wall_ns()) * 1e-9)


class ReadDelay:
    """How far behind the wall time the pose filter is read, per sample (loop time ``t``),
    in ns: with one frame per pose, the tracker's latency minus ``draw_lag_ns`` (frames are
    drawn that far behind their time: one substep), so a frame drawn at an arrival reads
    that observation; otherwise ``fallback_ns`` (the filter's configured delay). The delay
    eases toward its target by at most :data:`MAX_SLEW` of the loop time that passed, so a
    switch never jumps the pose. Render thread only (substeps and draws); a draw time
    before the newest substep uses the current delay unchanged.

    Args:
        fallback_ns: the configured interpolation delay, ns.
        arrivals: the input's arrivals (``frames_per_pose`` and ``latency_ns`` are read).
        draw_lag_ns: how far behind the frame's time the pose is drawn, ns.
    """

    def __init__(self, fallback_ns: int, arrivals: PoseArrivals, draw_lag_ns: int = 0):
        self.fallback_ns, self.arrivals, self.draw_lag_ns = int(fallback_ns), arrivals, int(draw_lag_ns)
        self.delay_ns = float(fallback_ns)
        self._t: int | None = None

    def target_ns(self) -> float:
        """The delay the reads ease toward now, ns: locked with m frames per pose, the
        tracker's latency − the draw lag + (m − 1) frame periods (the frame at an arrival
        reads that pose's capture time less (m − 1) frames, the last frame before the next
        pose reads it: every frame interpolates, none holds); else the fallback."""
        a = self.arrivals
        if a.frames_per_pose and a.latency_ns is not None:
            return max(0.0, a.latency_ns - self.draw_lag_ns + (a.frames_per_pose - 1) * a.frame_ns)
        return float(self.fallback_ns)

    def at(self, t_ns: int) -> int:
        """The delay (ns) to read loop time ``t_ns`` with."""
        if self._t is not None and t_ns > self._t:
            step = MAX_SLEW * (t_ns - self._t)
            d = self.target_ns() - self.delay_ns
            self.delay_ns += max(-step, min(step, d))
        if self._t is None or t_ns > self._t:
            self._t = t_ns
        return int(self.delay_ns)


__all__ = ["INTERVALS", "LOCK_TOLERANCE", "MAX_FRAMES_PER_POSE", "MAX_SLEW", "MAX_STEER", "PhaseLock", "PoseArrivals", "ReadDelay",
           "STEER_GAIN", "WINDOW_PERIODS", "locks", "steer", "wait_for_frame"]
