"""One clock owns time (docs/design.md §2, §7): the clock, the fixed-step driver and the substep rate.

Times are integer nanoseconds. A run's :class:`Clock` is injected (live:
:class:`MonotonicClock`; offline runs and tests: :class:`ReplayClock`, where nothing sleeps
and frame times come from a schedule, so runs are exact whatever the machine is doing).
The clock has two time lines: wall time (pacing, capture and output timestamps) and loop
time, which stands still while the clock is paused. The loop only ever sees loop time, so a
pause stops the hair without restarting the substep grid.

The rate is stated once, :data:`RATE_HZ` (= :data:`solver.params.RATE_HZ`, re-exported
here); the chain set steps h = :data:`SUBSTEP_SECONDS` = 1/RATE_HZ and the loop refuses a
rig whose chain set steps another h.

The fixed-step driver (:class:`FixedStepDriver`): substeps of exactly h = 1/rate seconds on
an integer-nanosecond grid. Substep n of a run started at t0 happens at
``t_n = t0 + (n * NS_PER_S) // rate_hz`` nanoseconds: t_n is computed from n (never by
accumulating a rounded h, since 1e9/120 is not an integer), so every run that starts at the
same t0 visits the same substep times whatever the render rate, frame-time jitter or dropped
frames (docs/design.md §2). The physics uses h = 1/rate_hz as a float exactly; the step function
receives t_n so the caller samples the pose at t_n.

When a frame owes more than ``max_substeps`` substeps (a stall), the oldest debt is dropped
and counted: the substep index jumps forward and only the newest ``max_substeps`` substeps
are simulated, so the state is fresh and the grid stays aligned to t0.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Iterator

from solver.params import NS_PER_S, RATE_HZ, SUBSTEP_SECONDS  # noqa: F401 - the one statement of the rate
#: Live cap on substeps per frame: 24 = 200 ms of debt at 120 Hz (a 5 fps frame still runs in
#: full); a longer stall drops the older debt (counted). The run's ``max_substeps`` setting.
DEFAULT_MAX_SUBSTEPS = 24
#: A cap no frame reaches: offline runs and replays simulate every substep (no debt dropped).
NO_CAP = 1_000_000


@dataclass(frozen=True)
class Advance:
    """Result of one :meth:`FixedStepDriver.advance` (unpacks as ``(substeps, alpha)``).

    Attributes:
        substeps: substeps run by this call.
        alpha: render interpolation in [0, 1): (t_now − t_last) / (t_next − t_last), where
            t_last is the time of the newest substep; draw prev + alpha·(state − prev).
        dropped: substeps skipped by this call because of the cap.
    """

    substeps: int
    alpha: float
    dropped: int = 0

    def __iter__(self):
        yield self.substeps
        yield self.alpha


class FixedStepDriver:
    """Calls ``step_fn(t_n_ns)`` for every substep time t_n that has come due.

    Args:
        step_fn: called once per substep with the substep time (int nanoseconds).
        rate_hz: substeps per second (integer; 120 for the runtime).
        max_substeps: cap on substeps per :meth:`advance` call (≥ 1).
        t0_ns: start of the run; when None the first :meth:`advance` starts it.

    Raises:
        ValueError: a non-positive rate or cap.
    """

    def __init__(self, step_fn: Callable[[int], object], *, rate_hz: int = RATE_HZ,
                 max_substeps: int = DEFAULT_MAX_SUBSTEPS, t0_ns: int | None = None):
        if int(rate_hz) != rate_hz or rate_hz <= 0:
            raise ValueError(f"rate_hz must be a positive integer, not {rate_hz!r}")
        if max_substeps < 1:
            raise ValueError(f"max_substeps must be at least 1, not {max_substeps!r}")
        self.step_fn = step_fn
        self.rate_hz = int(rate_hz)
        self.max_substeps = int(max_substeps)
        #: h in seconds, exactly the float 1/rate_hz used by the physics.
        self.h = 1.0 / self.rate_hz
        self._t0: int | None = None
        self._n = 0
        self.dropped_substeps = 0
        self.substeps_run = 0
        if t0_ns is not None:
            self.start(t0_ns)

    # ------------------------------------------------------------------ grid
    @property
    def started(self) -> bool:
        return self._t0 is not None

    @property
    def t0_ns(self) -> int:
        if self._t0 is None:
            raise RuntimeError("the driver has not started")
        return self._t0

    @property
    def substep_index(self) -> int:
        """n of the newest substep (0: the initial state at t0, no step run yet)."""
        return self._n

    def substep_time_ns(self, n: int) -> int:
        """t_n = t0 + (n · 1e9) // rate_hz, integer nanoseconds."""
        return self.t0_ns + (n * NS_PER_S) // self.rate_hz

    @property
    def last_time_ns(self) -> int:
        """Time of the newest substep."""
        return self.substep_time_ns(self._n)

    def start(self, t0_ns: int) -> None:
        """Start (or restart) the grid at ``t0_ns``: substep 0 is the current state at t0.
        The counters (:attr:`substeps_run`, :attr:`dropped_substeps`) are kept."""
        self._t0 = int(t0_ns)
        self._n = 0

    # ------------------------------------------------------------------ stepping
    def advance(self, t_now_ns: int) -> Advance:
        """Run every substep with t_n ≤ ``t_now_ns`` (at most ``max_substeps``).

        The first call of an unstarted driver starts it at ``t_now_ns`` and runs nothing.
        A ``t_now_ns`` earlier than the newest substep runs nothing (alpha 0).

        Returns:
            :class:`Advance` (substeps run, alpha, dropped substeps).
        """
        t_now = int(t_now_ns)
        if self._t0 is None:
            self.start(t_now)
            return Advance(0, 0.0, 0)
        # newest due substep: largest n with t0 + n*1e9//rate <= t_now
        elapsed = t_now - self._t0
        if elapsed < 0:
            return Advance(0, 0.0, 0)
        n_due = (elapsed * self.rate_hz) // NS_PER_S
        # floor division above can be one too high or low near grid points: correct exactly
        while self.substep_time_ns(n_due) > t_now:
            n_due -= 1
        while self.substep_time_ns(n_due + 1) <= t_now:
            n_due += 1
        owed = n_due - self._n
        dropped = 0
        if owed > self.max_substeps:
            dropped = owed - self.max_substeps
            self._n += dropped
            self.dropped_substeps += dropped
            owed = self.max_substeps
        ran = 0
        while ran < owed:
            self._n += 1
            self.step_fn(self.substep_time_ns(self._n))
            ran += 1
        self.substeps_run += ran
        t_last = self.substep_time_ns(self._n)
        t_next = self.substep_time_ns(self._n + 1)
        alpha = 0.0 if t_now <= t_last else min((t_now - t_last) / (t_next - t_last), 1.0)
        return Advance(ran, alpha, dropped)


class Clock:
    """Time for one run (docs/design.md §7: one clock owns time; injectable).

    Two time lines, both integer nanoseconds:

    - wall time (:meth:`wall_ns`): never stops; the time base of capture timestamps, frame
      pacing (:meth:`sleep_until`) and output timestamps.
    - loop time (:meth:`now_ns`): wall time minus every pause so far. While the clock is
      paused (:meth:`pause`) loop time stands still, so the fixed-step grid, played tracks
      and the hair see no time pass; after :meth:`resume` it continues from where it
      stopped. Substep n stays at ``t0 + n·h`` of loop time: the grid survives a pause.

    Subclasses give the wall time (:meth:`wall_ns`) and the wait (:meth:`sleep_until`).
    Not thread-safe: the render thread owns the clock.
    """

    def __init__(self) -> None:
        self._paused_at: int | None = None   # wall time of the pause in progress
        self._paused_ns = 0                  # wall time spent in finished pauses

    def wall_ns(self) -> int:
        """Wall time, ns (never stops)."""
        raise NotImplementedError

    def sleep_until(self, wall_ns: int) -> None:
        """Wait until wall time ``wall_ns`` (returns at once when it has passed)."""
        raise NotImplementedError

    def now_ns(self) -> int:
        """Loop time, ns: wall time minus the time spent paused (stands still while paused)."""
        wall = self._paused_at if self._paused_at is not None else self.wall_ns()
        return wall - self._paused_ns

    def to_wall_ns(self, t_ns: int) -> int:
        """Wall time of loop time ``t_ns`` (for inputs stamped in wall time, such as a
        webcam's capture times): ``t_ns`` plus the finished pauses. Loop times before a
        pause map with the pauses finished since, which is exact for any t_ns at or after
        the last resume and for every time the loop still samples."""
        return int(t_ns) + self._paused_ns

    @property
    def paused(self) -> bool:
        return self._paused_at is not None

    @property
    def paused_ns(self) -> int:
        """Wall time spent paused so far, ns (including a pause in progress)."""
        current = self.wall_ns() - self._paused_at if self._paused_at is not None else 0
        return self._paused_ns + current

    def pause(self) -> None:
        """Stop loop time (no-op when already paused)."""
        if self._paused_at is None:
            self._paused_at = self.wall_ns()

    def resume(self) -> None:
        """Let loop time run again from where it stopped (no-op when not paused)."""
        if self._paused_at is not None:
            self._paused_ns += self.wall_ns() - self._paused_at
            self._paused_at = None

    def step(self, ns: int) -> None:
        """While paused, let loop time move on by ``ns`` (a single substep: ``1e9 / RATE_HZ``)
        and stand still again: the next frame runs the substeps due by then. No-op when running."""
        if self._paused_at is not None:
            self._paused_ns -= int(ns)

    def toggle_pause(self) -> bool:
        """Pause or resume; returns True when the clock is now paused."""
        if self.paused:
            self.resume()
        else:
            self.pause()
        return self.paused


class MonotonicClock(Clock):
    """Live time: wall time is ``time.perf_counter_ns`` (monotonic, the clock webcam capture
    timestamps use); :meth:`sleep_until` sleeps."""

    def wall_ns(self) -> int:
        return time.perf_counter_ns()

    def sleep_until(self, wall_ns: int) -> None:
        dt = (wall_ns - time.perf_counter_ns()) / NS_PER_S
        if dt > 0:
            time.sleep(dt)


class ReplayClock(Clock):
    """Manual time for offline runs and tests: wall time moves only when told
    (:meth:`sleep_until` jumps to the asked time, :meth:`advance` steps), so runs are exact
    and nothing waits.

    Args:
        start_ns: the wall (and loop) time at creation.
    """

    def __init__(self, start_ns: int = 0):
        super().__init__()
        self._t = int(start_ns)

    def wall_ns(self) -> int:
        return self._t

    def sleep_until(self, wall_ns: int) -> None:
        self._t = max(self._t, int(wall_ns))

    def advance(self, dt_ns: int) -> int:
        """Move wall time forward by ``dt_ns`` (≥ 0); returns the new wall time."""
        if dt_ns < 0:
            raise ValueError(f"a replay clock never goes back (dt_ns {dt_ns})")
        self._t += int(dt_ns)
        return self._t


def frame_offset_ns(k: int, fps: float) -> int:
    """Offset of render frame k from the start of a steady schedule: ``k · 1e9 / fps`` ns,
    rounded down (computed from k, never accumulated; fps to 1/1000 frame per second)."""
    return (k * NS_PER_S * 1000) // int(round(fps * 1000))


def frame_times(fps: float, duration_ns: int, *, start_ns: int = 0, jitter: float = 0.0,
                seed: int = 0) -> Iterator[int]:
    """Render frame times of a replay: frame k at ``start_ns + frame_offset_ns(k, fps)``, ending
    with a frame exactly at ``start_ns + duration_ns`` (replays compare states up to the end).

    Args:
        fps: render rate, frames per second (> 0).
        duration_ns: length of the schedule, ns.
        jitter: 0 for a steady rate; else each frame interval is scaled by a uniform random
            factor in [1 - jitter, 1 + jitter] (deterministic for a given ``seed``), which
            models frame-time jitter and dropped frames.

    Raises:
        ValueError: fps ≤ 0.
    """
    if fps <= 0:
        raise ValueError(f"fps must be > 0, got {fps}")
    rng = random.Random(seed)
    end = start_ns + duration_ns
    k = 0
    t = start_ns
    while True:
        yield t
        if t >= end:
            return
        k += 1
        if jitter:
            t += max(1, int(NS_PER_S / fps * (1.0 + jitter * (2.0 * rng.random() - 1.0))))
        else:
            t = start_ns + frame_offset_ns(k, fps)
        t = min(t, end)
