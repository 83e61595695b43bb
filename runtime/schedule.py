"""When frames are drawn: the offline and the live frame schedules of a run, on its clock.

- Offline (:func:`run_offline`): frame k at clock time ``start + k·1e9/fps`` (a
  :class:`~runtime.clock.ReplayClock` jumps there, nothing waits) until loop time reaches the
  duration: every frame is drawn, so a video has the source's duration whatever the speed.
  Into a window (``pace``), frame k is also held until ``k/fps`` seconds of real time after
  the first, so the clip plays at its own speed on screen (video and PNG outputs alone stay
  as fast as possible).
- Live (:func:`run_live`): frames paced to ``fps`` on the clock's wall time (which keeps
  running while paused, so a paused window still redraws); late frames are skipped and
  counted, never queued. A tracked live input's frames are phase-locked to its poses while
  the camera delivers at the frame rate or a whole fraction of it (:mod:`runtime.pose_lock`).

Between frames, ``between()`` handles the control service's work and the window's events.
Both stop at ``stop``; SIGTERM and SIGHUP are turned into KeyboardInterrupt around them by
:class:`sigterm_as_interrupt` so outputs are still flushed.
"""

from __future__ import annotations

import contextlib
import functools
import signal
import threading
import time
from typing import Callable

from .clock import NS_PER_S, Clock, frame_offset_ns
from .pose_lock import PhaseLock, PoseArrivals, locks, wait_for_frame


def offline_frame_count(fps: float, duration_ns: int) -> int:
    """Frames of an offline schedule without pauses: the k with ``frame_offset_ns(k) < duration``."""
    return -(-duration_ns * int(round(fps * 1000)) // (NS_PER_S * 1000))


def run_offline(clock: Clock, fps: float, duration_ns: int, *, draw: Callable[[int], None],
                between: Callable[[], None], stop: threading.Event,
                progress: Callable[[int, int], None] | None = None, pace: bool = False,
                real_ns: Callable[[], int] = time.perf_counter_ns) -> None:
    """Draw frames (``draw(t)``, t = loop time) on the offline schedule; ``progress(k, n)`` is
    told after every frame drawn (k of about n; the CLI shows a progress line). ``pace``:
    hold frame k until ``k/fps`` s of real time (``real_ns``) after frame 0, polling
    ``between()`` (the window's events) at least every :data:`PACE_POLL_S` while waiting."""
    start_wall, t0 = clock.wall_ns(), clock.now_ns()
    real0 = real_ns()
    n = offline_frame_count(fps, duration_ns)
    k = 0
    while not stop.is_set():
        clock.sleep_until(start_wall + frame_offset_ns(k, fps))
        if clock.now_ns() - t0 >= duration_ns:
            break
        if pace:
            due = real0 + frame_offset_ns(k, fps)
            while not stop.is_set() and (wait := due - real_ns()) > 0:
                time.sleep(min(wait * 1e-9, PACE_POLL_S))
                between()
        between()
        if stop.is_set():
            break
        draw(clock.now_ns())
        k += 1
        if progress is not None:
            progress(k, n)


def pacing_text(*, live: bool, fps: float, window: bool, vsync: bool, short: bool = False) -> str:
    """How a run's frames are paced, in a few words (the window title says it, so a window
    never claims another rate than the one it runs at): ``live, 60 fps, vsync``, ``offline,
    30 fps, paced to the clip's time`` (into a window), ``offline, 30 fps, as fast as
    possible`` (files only). ``short``: the HUD's line, which fits a compare-mode pane:
    ``60 fps vsync``, ``30 fps live``, ``30 fps offline``."""
    if short:
        return f"{fps:g} fps " + ("vsync" if live and window and vsync else "live" if live else "offline")
    if live:
        return f"live, {fps:g} fps" + (", vsync" if window and vsync else "")
    return f"offline, {fps:g} fps, " + ("paced to the clip's time" if window else "as fast as possible")


#: Longest wait between event polls while an offline window run waits for real time (s).
PACE_POLL_S = 0.02


def run_live(clock: Clock, fps: float, duration_ns: int | None, *, draw: Callable[[int], bool],
             between: Callable[[], None], stop: threading.Event, dropped: Callable[[int], None],
             arrivals: PoseArrivals | None = None, divisor: Callable[[], int] | None = None) -> None:
    """Draw frames (``draw(t)``, t = loop time; it returns False when the source ended) paced
    to ``fps`` until ``duration_ns`` of loop time (None: until the source ends or ``stop``).

    Every frame has a tick one period after the previous frame's; a frame that ends past its
    successor's tick starts that one at once and re-anchors the ticks there (no burst), and
    ``dropped(n)`` is told of the n whole periods that went without a frame (the lateness is
    carried over, so slow frames add up to drops). With ``arrivals`` (a tracked live input)
    the ticks are steered to the camera and a frame starts up to half a period before its
    tick when its pose arrives (:mod:`runtime.pose_lock`); the output rate stays ``fps``.
    ``divisor()`` (read before every frame; the quality governor's window-only ``rate`` step):
    the period is ``divisor()`` times 1/fps from then on."""
    base_ns = int(NS_PER_S / fps)
    frame_ns = base_ns
    t0 = clock.now_ns()
    tick = clock.wall_ns()
    late_ns = 0                       # lateness carried over: whole periods of it are drops
    phase = PhaseLock()
    while not stop.is_set():
        if duration_ns is not None and clock.now_ns() - t0 > duration_ns:
            break
        between()
        if stop.is_set():
            break
        if not draw(clock.now_ns()):
            break
        if divisor is not None:
            frame_ns = base_ns * divisor()
        now = clock.wall_ns()
        m = locks(arrivals, frame_ns, now)
        if m:
            tick += phase.correction(arrivals, tick, frame_ns)
        tick += frame_ns
        if now > tick:                # the next frame is late: now, and the ticks from here
            late_ns += now - tick
            tick = now
            if late_ns >= frame_ns:
                dropped(late_ns // frame_ns)
                late_ns %= frame_ns
        if m:
            wait_for_frame(clock, arrivals, tick, frame_ns)
        else:
            clock.sleep_until(tick)


class sigterm_as_interrupt:
    """SIGTERM and SIGHUP (the terminal closed) behave like Ctrl-C inside the block, so outputs
    are flushed and devices released; ``received`` remembers which signal it was (for the
    exit code, 128 + signal). Only on the main thread (signal handlers live there).

    Inside :meth:`deferred` (one frame: draw, hand to the sinks, count) the interrupt waits for
    the end of the block, so every output and the run's frame count end on the same frame (an
    interrupt between two sinks left the mp4 one frame longer than the PNGs and the summary). A
    second signal while one waits interrupts at once (a frame that hangs). Ctrl-C is handled
    the same way unless SIGINT was not Python's default handler (e.g. ignored by the shell).
    """

    #: getattr: SIGHUP (and on some platforms SIGTERM) does not exist everywhere
    SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s)

    def __init__(self):
        self._old: dict = {}
        self.received: int | None = None
        self._depth = 0
        self._pending = False

    def __enter__(self) -> "sigterm_as_interrupt":
        if threading.current_thread() is threading.main_thread():
            for s in self.SIGNALS:
                self._old[s] = signal.signal(s, self._handler)
            if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
                self._old[signal.SIGINT] = signal.signal(signal.SIGINT, self._handler)
        return self

    def _handler(self, signum, frame):
        self.received = signum
        if self._depth and not self._pending:
            self._pending = True           # raised at the end of the frame
            return
        raise KeyboardInterrupt

    @contextlib.contextmanager
    def deferred(self):
        """A context manager: an interrupt inside it is raised when it ends (see class doc);
        an exception leaving the block wins over it."""
        self._depth += 1
        try:
            yield
        finally:
            self._depth -= 1
            pending = self._depth == 0 and self._pending
            if pending:
                self._pending = False
        if pending:
            raise KeyboardInterrupt

    def deferring(self, step: Callable):
        """``step`` wrapped in :meth:`deferred` (a frame or the work between frames)."""
        @functools.wraps(step)
        def whole(*args):
            with self.deferred():
                return step(*args)
        return whole

    def __exit__(self, *exc) -> bool:
        for s, old in self._old.items():
            signal.signal(s, old)
        self._old.clear()
        return False

