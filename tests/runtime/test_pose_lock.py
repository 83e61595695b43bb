"""Live frames phase-locked to the tracked poses (runtime.pose_lock, runtime.schedule.run_live).

Deterministic: a ReplayClock and scripted arrivals (capture times, tracker latency) that
advance the clock the way the tracking thread would deliver them; no thread, no sleep.
"""

from __future__ import annotations

import threading

import pytest

from runtime.clock import ReplayClock
from runtime.pose_lock import (INTERVALS, MAX_SLEW, MAX_STEER, STEER_GAIN, WINDOW_PERIODS, PoseArrivals, ReadDelay,
                               locks, steer, wait_for_frame)
from runtime.schedule import run_live

MS = 1_000_000
FRAME_30 = int(1e9 / 30)


class ScriptedArrivals(PoseArrivals):
    """Observations captured at ``captures`` (wall ns) reaching the filter ``latency`` later;
    waiting moves the clock to the next arrival (or to the timeout)."""

    def __init__(self, clock: ReplayClock, captures: list[int], latency: int):
        super().__init__()
        self.clock, self.latency = clock, latency
        self.pending = [(c, c + latency) for c in captures]
        self.pending.sort(key=lambda p: p[1])

    @property
    def seq(self) -> int:                 # what a tracking thread would have delivered by now
        if self.__dict__.get("pending") and not self.__dict__.get("_delivering"):
            self.deliver_due()
        return self.__dict__.get("_seq", 0)

    @seq.setter
    def seq(self, value: int) -> None:
        self.__dict__["_seq"] = value

    def deliver_due(self) -> None:
        self._delivering = True
        try:
            while self.pending and self.pending[0][1] <= self.clock.wall_ns():
                cap, arr = self.pending.pop(0)
                self.arrived(cap, arr)
        finally:
            self._delivering = False

    def wait_newer(self, seq: int, timeout_s: float) -> bool:
        deadline = self.clock.wall_ns() + int(round(max(timeout_s, 0.0) * 1e9))
        self.deliver_due()
        while self.seq <= seq:
            if not self.pending or self.pending[0][1] > deadline:
                self.clock.sleep_until(deadline)
                self.deliver_due()
                return self.seq > seq
            self.clock.sleep_until(self.pending[0][1])
            self.deliver_due()
        return True


def _run(captures, latency, fps=30.0, n_frames=60, draw_ns=5 * MS):
    """``latency``: ns, or a function of the frame index giving it (jitter)."""
    clock = ReplayClock(0)
    lat = latency if callable(latency) else (lambda k: latency)
    arr = ScriptedArrivals(clock, [], 0)
    arr.pending = sorted(((c, c + lat(k)) for k, c in enumerate(captures)), key=lambda p: p[1])
    starts, seen_newest = [], []
    stop = threading.Event()

    def draw(t):
        arr.deliver_due()
        starts.append(clock.wall_ns())
        seen_newest.append(arr._last_capture)
        clock.advance(draw_ns(len(starts)) if callable(draw_ns) else draw_ns)
        if len(starts) >= n_frames:
            stop.set()
        return True

    drops = []
    run_live(clock, fps, None, draw=draw, between=lambda: None, stop=stop, dropped=drops.append, arrivals=arr)
    return starts, seen_newest, sum(drops), arr


def test_a_camera_at_the_frame_rate_gets_each_pose_drawn_as_it_arrives():
    captures = [k * FRAME_30 + 21 * MS for k in range(200)]          # a 30 fps camera, any phase
    starts, newest, drops, arr = _run(captures, latency=12 * MS, n_frames=150)
    arrivals = {c + 12 * MS for c in captures}
    tail = slice(60, None)                                           # once the ticks have been steered
    assert all(s in arrivals for s in starts[tail])                  # each frame starts at an arrival
    assert all(s - c == 12 * MS for s, c in zip(starts[tail], newest[tail]))   # and draws that pose
    assert arr.frames_per_pose == 1 and drops == 0
    tail_starts = starts[tail]
    assert tail_starts[-1] - tail_starts[0] == pytest.approx((len(tail_starts) - 1) * FRAME_30, abs=FRAME_30 // 2)


def test_a_camera_at_half_the_frame_rate_starts_every_other_frame_at_its_pose():
    frame_60 = int(1e9 / 60)
    captures = [k * FRAME_30 + 5 * MS for k in range(200)]           # a 30 fps camera into 60 fps output
    starts, newest, drops, arr = _run(captures, latency=12 * MS, fps=60.0, n_frames=240)
    arrivals = {c + 12 * MS for c in captures}
    tail = starts[120:]
    at_pose = [s in arrivals for s in tail]
    assert arr.frames_per_pose == 2 and drops == 0
    assert at_pose == [at_pose[0], not at_pose[0]] * (len(tail) // 2)
    gaps = [b - a for a, b in zip(tail, tail[1:])]
    assert all(abs(g - frame_60) <= int(0.5 * frame_60) for g in gaps)
    assert tail[-1] - tail[0] == pytest.approx((len(tail) - 1) * frame_60, abs=frame_60)   # 60 fps held


def test_tracker_jitter_never_adds_frames():
    """Review finding: a pose later than the deadline used to start an extra frame. Each
    frame has its own tick now: over 4 s the frame count is the rate's."""
    import random

    rng = random.Random(7)
    jitter = [rng.randint(8, 26) * MS for _ in range(400)]
    captures = [k * FRAME_30 for k in range(400)]
    starts, _, drops, arr = _run(captures, latency=lambda k: jitter[k], n_frames=200)
    tail = starts[50:]                                              # once steered: one frame per period
    assert tail[-1] - tail[0] == pytest.approx((len(tail) - 1) * FRAME_30, abs=FRAME_30)
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    # a frame starts at most half a period (its window) plus one steering step early
    assert min(gaps) >= FRAME_30 - int(WINDOW_PERIODS * FRAME_30) - int(MAX_STEER * FRAME_30) - 1
    assert drops == 0 and arr.frames_per_pose == 1


def test_a_clip_camera_at_another_rate_keeps_the_free_clock():
    captures = [k * 40 * MS for k in range(80)]                      # 25 fps into 30 fps output
    starts, _, drops, arr = _run(captures, latency=12 * MS)
    assert not arr.locked
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert all(g == FRAME_30 for g in gaps) and drops == 0          # the output rate asked for


def test_a_camera_that_stops_does_not_stall_the_output():
    captures = [k * FRAME_30 for k in range(40)]                     # then nothing
    starts, _, drops, arr = _run(captures, latency=12 * MS, n_frames=80)
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert max(gaps) <= FRAME_30 + int(WINDOW_PERIODS * FRAME_30) + 1   # the last locked frame began early
    assert gaps[50:] == [FRAME_30] * len(gaps[50:]) and not arr.locked
    assert drops == 0


def test_slow_frames_add_up_to_counted_drops_without_a_burst():
    """Review finding: 45 ms frames at 30 fps ran at 22 fps with no drop counted."""
    starts, _, drops, _ = _run([], latency=0, n_frames=90, draw_ns=45 * MS)
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert set(gaps) == {45 * MS}                                    # no catch-up burst
    span = starts[-1] + 45 * MS - starts[0]
    assert drops == span // FRAME_30 - 90 or drops == span // FRAME_30 - 89


def test_locks_needs_steady_intervals_near_whole_frame_periods():
    a = PoseArrivals()
    assert not locks(a, FRAME_30, 0) and not locks(None, FRAME_30, 0)
    a.arrived(0, 400 * MS)                                           # the tracker's warm-up
    for k in range(1, INTERVALS + 1):
        a.arrived(k * FRAME_30, k * FRAME_30 + 10 * MS)
        if k < INTERVALS:                                            # fewer intervals than the median needs
            assert not locks(a, FRAME_30, k * FRAME_30 + 12 * MS)
    now = INTERVALS * FRAME_30 + 12 * MS
    assert locks(a, FRAME_30, now) == 1 and a.locked
    assert locks(a, int(1e9 / 60), now) == 2                         # a 60 fps output: every other frame
    assert locks(a, int(1e9 / 45), now) == 0 and not a.locked        # 1.5 frames per pose: the free clock
    assert locks(a, FRAME_30, now + 3 * FRAME_30) == 0               # a camera gone quiet
    assert a.latency_ns < 400 * MS


def test_steer_moves_the_tick_toward_the_arrival_by_a_bounded_share():
    w2 = int(WINDOW_PERIODS * FRAME_30) // 2
    assert steer(100 * MS, 100 * MS - w2, FRAME_30) == 0             # in the middle of the window
    assert steer(100 * MS, 100 * MS - w2 + 5 * MS, FRAME_30) == int(STEER_GAIN * 5 * MS)
    assert steer(100 * MS, 100 * MS + 5 * MS, FRAME_30) == int(MAX_STEER * FRAME_30)    # late: capped
    assert steer(100 * MS, 100 * MS - 24 * MS, FRAME_30) == -int(MAX_STEER * FRAME_30)  # early: capped
    assert steer(100 * MS, 100 * MS + 9 * MS, FRAME_30) == -int(MAX_STEER * FRAME_30)   # the next tick's, early


def test_read_delay_eases_to_the_tracker_latency_while_locked_and_back():
    a = PoseArrivals()
    a.arrived(0, 12 * MS)
    rd = ReadDelay(33 * MS, a, draw_lag_ns=8 * MS)
    assert rd.at(0) == 33 * MS                                       # not locked: the configured delay
    a.frames_per_pose, a.frame_ns = 1, FRAME_30
    t, delays = 0, []
    for _ in range(200):                                             # 120 Hz substeps
        t += FRAME_30 // 4
        delays.append(rd.at(t))
    steps = [abs(b - a_) for a_, b in zip([33 * MS] + delays, delays)]
    assert max(steps) <= MAX_SLEW * (FRAME_30 // 4) + 1              # never a jump
    assert delays[-1] == 4 * MS                                      # latency - draw lag
    assert rd.at(t - 5 * MS) == 4 * MS                               # a draw time before the newest substep
    a.frames_per_pose, a.frame_ns = 2, int(1e9 / 60)                # 60 fps: one frame more of delay
    for _ in range(200):
        t += FRAME_30 // 4
        last = rd.at(t)
    assert last == 4 * MS + int(1e9 / 60)
    a.frames_per_pose = 0                                            # free ticks: the configured delay
    for _ in range(200):
        t += FRAME_30 // 4
        last = rd.at(t)
    assert last == 33 * MS


def test_wait_for_frame_opens_half_a_period_before_the_tick():
    clock = ReplayClock(0)
    tick = 100 * MS
    early = ScriptedArrivals(clock, [60 * MS], latency=1 * MS)        # arrived before the window opened
    assert not wait_for_frame(clock, early, tick, FRAME_30) and clock.wall_ns() == tick   # drawn at the tick
    clock2 = ReplayClock(0)
    inside = ScriptedArrivals(clock2, [90 * MS], latency=1 * MS)
    assert wait_for_frame(clock2, inside, tick, FRAME_30) and clock2.wall_ns() == 91 * MS
    clock3 = ReplayClock(0)
    none = ScriptedArrivals(clock3, [], latency=0)
    assert not wait_for_frame(clock3, none, tick, FRAME_30) and clock3.wall_ns() == tick


@pytest.mark.parametrize("frame_lock", [True, False])
def test_a_live_run_on_the_real_clip_feeds_the_arrivals(tmp_path, frame_lock):
    """The real selfie clip delivered as a 30 fps camera, the real MediaPipe tracker, a 30 fps
    live run into an mp4: every observation that reached the filter is counted with its
    capture interval and tracker latency; with ``frame_lock = false`` the schedule never
    locks and the filter keeps its configured delay. (No timing bound: the machine is shared.)"""
    from runtime.config import RunConfig
    from runtime.eval.loop_bench import retimed_clip
    from runtime.session import Session
    from tests.conftest import asset

    clip = retimed_clip(str(asset("face", "mediapipe_selfie_segmentation_web.mp4")), 30.0, str(tmp_path))
    cfg = RunConfig(source=clip, realtime=True, fps=30, size=(160, 96), duration=2.0, frame_lock=frame_lock,
                    output=(f"video:{tmp_path}/l.mp4",))
    locked, delays = [], []
    with Session(cfg, say=lambda s: None) as session:
        inp = session.pose_input
        session.on_frame = lambda info, rig: (locked.append(inp.arrivals.locked), delays.append(inp.read_delay_ns))
        session.run()
        arr = inp.arrivals
        assert arr.seq == inp.frames > 10
        assert 0 < arr.latency_ns < 2e9
        # the capture stamps of a 30 fps camera: a whole number of camera frames apart (a loaded
        # machine's tracker skips to the newest frame, so 2 or 3 frame periods are right too)
        periods = arr.interval_ns / (1e9 / 30)
        assert round(periods) >= 1 and periods == pytest.approx(round(periods), abs=0.25)
    if not frame_lock:
        assert not any(locked) and set(delays) == {33_333_333}
    else:
        # the delay stays the configured one until the schedule locks, then eases (never jumps)
        first = locked.index(True) if True in locked else len(locked)
        assert set(delays[:first]) <= {33_333_333}
        assert max(abs(b - a) for a, b in zip(delays, delays[1:])) <= MAX_SLEW * 0.2e9   # frames < 200 ms apart


def test_the_window_rate_step_doubles_the_period_from_the_next_frame():
    """The quality governor's window-only ``rate`` step: ``divisor()`` read after each frame."""
    clock = ReplayClock(0)
    starts = []
    stop = threading.Event()
    div = {"n": 1}

    def draw(t):
        starts.append(clock.wall_ns())
        clock.advance(5 * MS)
        if len(starts) == 5:
            div["n"] = 2                 # the step, taken after frame 5
        if len(starts) == 10:
            div["n"] = 1
        if len(starts) >= 15:
            stop.set()
        return True

    drops = []
    run_live(clock, 30.0, None, draw=draw, between=lambda: None, stop=stop, dropped=drops.append,
             divisor=lambda: div["n"])
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert gaps == [FRAME_30] * 4 + [2 * FRAME_30] * 5 + [FRAME_30] * 5 and drops == []
