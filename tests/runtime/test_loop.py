"""The loop with a replay clock and scripted pose tracks: frame-rate independence, stalls."""

from __future__ import annotations

import numpy as np
import pytest

from avatars import load_avatar
from avatars.clips.head_turn import head_turn_rotation
from runtime.clock import NS_PER_S, ReplayClock, frame_times
from runtime.loop import Loop
from runtime.pose_inputs import TrackInput, head_turn_track
from runtime.rig import AvatarRig
from tracking.pose_track import synthetic_track


@pytest.fixture(scope="module")
def godette(godette_path):
    return load_avatar(godette_path)


def run(avatar, track, fps, *, duration_ns, jitter=0.0, seed=0, stall_at_ns=None, stall_ns=0, max_substeps=8):
    rig = AvatarRig(avatar)
    states = {}

    def record(n, t, r):
        states[n] = (t, r.chains.tails.copy(), r.chains.velocities.copy())

    loop = Loop(rig, TrackInput(track), on_substep=record, max_substeps=max_substeps)
    times = list(frame_times(fps, duration_ns, start_ns=track.start_ns, jitter=jitter, seed=seed))
    if stall_at_ns is not None:
        times = [t if t < stall_at_ns else t + stall_ns for t in times]
    infos = [loop.frame(t) for t in times]
    return states, infos, loop


def test_5s_track_at_30_and_144_fps_identical_hair(godette):
    track = head_turn_track()
    d = 5 * NS_PER_S
    a, _, _ = run(godette, track, 30, duration_ns=d)
    b, _, _ = run(godette, track, 144, duration_ns=d)
    c, _, _ = run(godette, track, 60, duration_ns=d, jitter=0.6, seed=3)
    common = sorted(set(a) & set(b) & set(c))
    assert len(common) == 5 * 120 + 1
    for n in common:
        assert a[n][0] == b[n][0] == c[n][0]
        assert np.array_equal(a[n][1], b[n][1]) and np.array_equal(a[n][2], b[n][2]), n
        assert np.array_equal(a[n][1], c[n][1]) and np.array_equal(a[n][2], c[n][2]), n
    # and the hair did move
    assert np.abs(a[300][1] - a[0][1]).max() > 0.01


def test_stall_is_capped_and_counted(godette):
    track = head_turn_track()
    d = 4 * NS_PER_S
    stall_at = 2 * NS_PER_S
    states, infos, loop = run(godette, track, 60, duration_ns=d, stall_at_ns=stall_at, stall_ns=500_000_000,
                              max_substeps=8)
    assert max(i.substeps for i in infos) == 8            # no spiral: the cap holds
    stall_frame = next(i for i in infos if i.t_ns >= stall_at + 500_000_000)
    # the frame before the stall ran substep 238 (t = 1.9833 s); at t = 2.5 s substep 300 is
    # due: 62 owed, 8 run, the oldest 54 dropped and counted
    assert (stall_frame.substeps, stall_frame.dropped) == (8, 54)
    assert loop.metrics.dropped_substeps == 54
    # no explosion: every link keeps its rest length, velocities stay bounded
    for n, (t, tails, vel) in states.items():
        assert np.isfinite(tails).all() and np.abs(vel).max() < 50.0
    # substep times stay on the grid t0 + n*1e9//120
    t0 = track.start_ns
    assert all(t == t0 + (n * NS_PER_S) // 120 for n, (t, _, _) in states.items())


def test_draw_time_is_between_last_two_substeps(godette):
    track = synthetic_track(head_turn_rotation, duration_s=2.0, rate_hz=120)
    rig = AvatarRig(godette)
    seen = []
    loop = Loop(rig, TrackInput(track), draw=lambda info: seen.append(info))
    for t in frame_times(50, NS_PER_S):
        loop.frame(t)
    for info in seen[1:]:
        assert info.t_ns - 8_333_334 <= info.draw_t_ns <= info.t_ns
        assert info.world.shape == (godette.skeleton.node_count, 4, 4)


def test_a_pause_keeps_the_grid_and_the_hair(godette):
    """Pause lives in the clock: loop time stands still while paused, the substep grid keeps
    its t0 and its indices, and the hair states equal those of a run without the pause,
    each substep happening the paused time later on the wall clock."""
    track = head_turn_track()
    frame_ns = NS_PER_S // 30
    pause_at, pause_ns = 30 * frame_ns, 20 * frame_ns   # paused from frame 30 (1 s) to frame 50 of wall time

    def run(paused: bool):
        clock = ReplayClock(0)
        inp = TrackInput(track, live=True)
        inp.start(clock)
        states, worlds = {}, []

        def record(n, t, r):
            states[n] = (t, clock.to_wall_ns(t), *r.hair_state())

        loop = Loop(AvatarRig(godette), inp, clock=clock, on_substep=record,
                    draw=lambda info: worlds.append(info.world.copy()))
        infos = []
        for k in range(90):
            clock.sleep_until(k * frame_ns)
            if paused and clock.wall_ns() == pause_at:
                clock.pause()
            if paused and clock.wall_ns() == pause_at + pause_ns:
                clock.resume()
            infos.append(loop.frame(clock.now_ns()))
        return states, worlds, infos, loop

    ref, _, _, ref_loop = run(False)
    got, worlds, infos, loop = run(True)
    assert loop.driver.t0_ns == ref_loop.driver.t0_ns == 0
    assert sorted(got) == list(range(len(got))) and len(got) == len(ref) - 80   # 20 frames = 80 substeps fewer
    for n, (t, wall, tails, vel) in got.items():
        assert t == ref[n][0] and np.array_equal(tails, ref[n][2]) and np.array_equal(vel, ref[n][3]), n
        assert wall == (t if t <= pause_at else t + pause_ns), n
    paused = [i for i, info in enumerate(infos) if info.t_ns == pause_at]
    assert paused == list(range(30, 51))                  # the pause frame, 19 paused ones, the resume frame
    assert all(infos[i].substeps == 0 for i in paused[1:])
    assert all(np.array_equal(worlds[i], worlds[30]) for i in paused)   # the avatar stood still


def test_a_rig_stepping_another_h_is_refused(godette):
    from solver.chains import ChainSet

    rig = AvatarRig(godette)
    rig.chains = ChainSet.from_avatar(godette, substep=1.0 / 60)
    with pytest.raises(ValueError, match=r"loop runs 120 substeps per second"):
        Loop(rig, TrackInput(head_turn_track()))
    loop = Loop(AvatarRig(godette), TrackInput(head_turn_track()))
    with pytest.raises(ValueError, match=r"h = 0\.01666"):
        loop.set_rig(rig)
    assert loop.rig is not rig


def test_material_time_is_the_draw_time_since_the_first_substep(godette):
    """MToon UV animation runs on FrameInfo.time_s = (draw time - t0): the same draw time gives
    the same animation time at any frame rate (replays animate identically)."""
    track = head_turn_track()
    d = NS_PER_S
    _, a, _ = run(godette, track, 30, duration_ns=d)
    _, b, _ = run(godette, track, 60, duration_ns=d, jitter=0.5, seed=1)
    assert a[0].time_s == 0.0
    for info in a + b:
        assert info.time_s == (info.draw_t_ns - track.start_ns) * 1e-9
    by_draw = {i.draw_t_ns: i.time_s for i in a}
    common = [i for i in b if i.draw_t_ns in by_draw]
    assert common and all(by_draw[i.draw_t_ns] == i.time_s for i in common)
    assert a[-1].time_s > 0.9
