"""Pose-locked live frames (runtime.pose_lock, runtime.schedule.run_live with arrivals).

Deterministic: a ReplayClock and scripted arrivals (capture times, tracker latency) that
advance the clock the way the tracking thread would deliver them; no thread, no sleep.
"""

from __future__ import annotations

import threading

import pytest

from runtime.clock import ReplayClock
from runtime.pose_lock import (EARLIEST_PERIODS, LATEST_PERIODS, MAX_SLEW, PoseArrivals, ReadDelay, locks,
                               wait_for_pose)
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

    def deliver_due(self) -> None:
        while self.pending and self.pending[0][1] <= self.clock.wall_ns():
            cap, arr = self.pending.pop(0)
            self.arrived(cap, arr)

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
    clock = ReplayClock(0)
    arr = ScriptedArrivals(clock, captures, latency)
    starts, seen_newest = [], []
    stop = threading.Event()

    def draw(t):
        arr.deliver_due()
        starts.append(clock.wall_ns())
        seen_newest.append(arr._last_capture)
        clock.advance(draw_ns)
        if len(starts) >= n_frames:
            stop.set()
        return True

    drops = []
    run_live(clock, fps, None, draw=draw, between=lambda: None, stop=stop, dropped=drops.append, arrivals=arr)
    return starts, seen_newest, sum(drops), arr


def test_a_camera_at_the_frame_rate_starts_each_frame_at_its_pose():
    captures = [k * FRAME_30 + 3 * MS for k in range(80)]          # a 30 fps camera, any phase
    starts, newest, drops, arr = _run(captures, latency=12 * MS)
    # once the capture interval is known (a few arrivals in), every frame starts exactly at an arrival
    locked = [s for s in starts[6:]]
    assert all((s - 12 * MS - 3 * MS) % FRAME_30 == 0 for s in locked)
    # and shows the observation that just arrived: start - newest capture = the tracker's latency
    assert all(s - c == 12 * MS for s, c in zip(starts[6:], newest[6:]))
    assert arr.locked and drops == 0
    # one frame per camera frame: the output rate is the camera's (30 fps)
    gaps = {b - a for a, b in zip(starts[6:], starts[7:])}
    assert gaps == {FRAME_30} or gaps <= {FRAME_30, FRAME_30 + 1, FRAME_30 - 1}


def test_a_camera_at_half_the_frame_rate_starts_every_other_frame_at_its_pose():
    frame_60 = int(1e9 / 60)
    captures = [k * FRAME_30 + 5 * MS for k in range(60)]           # a 30 fps camera into 60 fps output
    starts, newest, drops, arr = _run(captures, latency=12 * MS, fps=60.0, n_frames=80)
    arrivals = {c + 12 * MS for c in captures}
    tail = starts[10:]
    at_pose = [s in arrivals for s in tail]
    assert arr.locked and drops == 0
    assert at_pose == [at_pose[0], not at_pose[0]] * (len(tail) // 2) + [at_pose[0]] * (len(tail) % 2)
    gaps = [b - a for a, b in zip(tail, tail[1:])]
    assert all(abs(g - frame_60) <= 1 * MS for g in gaps)             # 60 fps held


def test_a_clip_camera_at_another_rate_keeps_the_clock_schedule():
    captures = [k * 40 * MS for k in range(80)]                      # 25 fps into 30 fps output
    starts, _, drops, arr = _run(captures, latency=12 * MS)
    assert not arr.locked
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert all(g == FRAME_30 for g in gaps) and drops == 0          # the output rate asked for


def test_a_camera_that_stops_does_not_stall_the_output():
    captures = [k * FRAME_30 for k in range(10)]                     # then nothing
    starts, _, drops, arr = _run(captures, latency=12 * MS, n_frames=30)
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    # one deadline frame after the last arrival, then the clock schedule at the output rate
    assert max(gaps) <= int(LATEST_PERIODS * FRAME_30) + 1
    assert gaps[15:] == [FRAME_30] * len(gaps[15:]) and not arr.locked
    assert drops == 0


def test_a_late_pose_waits_for_the_deadline_and_the_next_frame_is_never_too_soon():
    captures = [k * FRAME_30 for k in range(60)]
    captures[20] += int(0.4 * FRAME_30)                              # one late frame (jitter)
    starts, _, _, _ = _run(captures, latency=10 * MS, n_frames=50)
    gaps = [b - a for a, b in zip(starts, starts[1:])]
    assert min(gaps) >= int(EARLIEST_PERIODS * FRAME_30)
    assert max(gaps) <= int(LATEST_PERIODS * FRAME_30) + 1


def test_locks_needs_an_interval_near_the_frame_period():
    a = PoseArrivals()
    assert not locks(a, FRAME_30, 0) and not locks(None, FRAME_30, 0)
    a.arrived(0, 10 * MS)
    a.arrived(FRAME_30, FRAME_30 + 10 * MS)
    now = FRAME_30 + 12 * MS
    assert locks(a, FRAME_30, now) == 1 and a.locked
    assert locks(a, int(1e9 / 60), now) == 2                         # a 60 fps output: every other frame
    assert locks(a, int(1e9 / 45), now) == 0 and not a.locked        # 1.5 frames per pose: the clock
    assert locks(a, FRAME_30, now + 3 * FRAME_30) == 0               # a camera gone quiet
    assert a.latency_ns == pytest.approx(10 * MS)


def test_read_delay_eases_to_the_tracker_latency_while_locked_and_back():
    a = PoseArrivals()
    a.arrived(0, 12 * MS)
    rd = ReadDelay(33 * MS, a)
    assert rd.at(0) == 33 * MS                                       # not locked: the configured delay
    a.locked = True
    t, delays = 0, []
    for _ in range(200):                                             # 120 Hz substeps
        t += FRAME_30 // 4
        delays.append(rd.at(t))
    steps = [abs(b - a_) for a_, b in zip([33 * MS] + delays, delays)]
    assert max(steps) <= MAX_SLEW * (FRAME_30 // 4) + 1              # never a jump
    assert delays[-1] == 12 * MS
    assert rd.at(t - 5 * MS) == 12 * MS                              # a draw time before the newest substep
    a.locked = False
    for _ in range(200):
        t += FRAME_30 // 4
        last = rd.at(t)
    assert last == 33 * MS


def test_wait_for_pose_holds_an_early_pose_until_the_earliest_start():
    clock = ReplayClock(0)
    arr = ScriptedArrivals(clock, [2 * MS], latency=1 * MS)           # arrives 3 ms after the frame began
    assert wait_for_pose(clock, arr, 0, 0, FRAME_30)
    assert clock.wall_ns() == int(EARLIEST_PERIODS * FRAME_30)
    clock2 = ReplayClock(0)
    none = ScriptedArrivals(clock2, [], latency=0)
    assert not wait_for_pose(clock2, none, 0, 0, FRAME_30)
    assert clock2.wall_ns() == int(LATEST_PERIODS * FRAME_30)


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
        assert arr.interval_ns == pytest.approx(1e9 / 30, rel=0.5)   # the capture stamps of a 30 fps camera
    if not frame_lock:
        assert not any(locked) and set(delays) == {33_333_333}
    else:
        # the delay stays the configured one until the schedule locks, then eases (never jumps)
        first = locked.index(True) if True in locked else len(locked)
        assert set(delays[:first]) <= {33_333_333}
        assert max(abs(b - a) for a, b in zip(delays, delays[1:])) <= MAX_SLEW * 0.2e9   # frames < 200 ms apart
