"""The live pose buffer on synthetic observations: exact hold / ease / re-acquire
behaviour, recenter without a jump, interpolation delay, mirror and limits."""

import math
import threading

import numpy as np
import pytest

from avatars.math3d import euler_from_quat, quat_angle, quat_from_euler
from tracking.filters import OneEuroParams
from tracking.head_pose import HeadPoseOptions
from tracking.lost_face import LostFaceOptions
from tracking.observation import FaceObservation
from tracking.pose_filter import PoseFilter, PoseFilterOptions, filter_observations

MS = 1_000_000
FRAME = 40 * MS
H = 1_000_000_000 // 120  # substep
TIGHT = 1e-9
LOST = LostFaceOptions(hold_s=0.5, ease_s=1.0, reacquire_s=0.4, stale_s=0.25)


def obs(t, yaw=0.0, pitch=0.0, roll=0.0, found=True, tz=-0.5):
    if not found:
        return FaceObservation.empty(t)
    return FaceObservation(t, True, quat_from_euler(yaw, pitch, roll), np.array([0.0, 0.0, tz]), confidence=1.0)


def plain(**kw):
    """No mirror, no recenter, no delay: outputs are easy to predict."""
    base = dict(head=HeadPoseOptions(mirror=False), recenter_at_start=False, delay_ns=0, lost=LOST)
    base.update(kw)
    return PoseFilter(PoseFilterOptions(**base))


def yaw_deg(s):
    return math.degrees(euler_from_quat(s.rotation)[0])


def run(pf, yaw_of_k, n, found_of_k=lambda k: True, t_end=None):
    """Push n observations at 25 fps; sample at 120 Hz; return (t, yaw deg, found, rotation)."""
    out = []
    t = 0
    k = 0
    t_end = t_end or n * FRAME
    while t <= t_end:
        while k < n and k * FRAME <= t:
            pf.push(obs(k * FRAME, math.radians(yaw_of_k(k)), found=found_of_k(k)))
            k += 1
        s = pf.sample(t)
        out.append((t, yaw_deg(s), s.found, s.rotation.copy()))
        t += H
    return out


def max_speed_deg_s(rows):
    return max(math.degrees(quat_angle(a[3], b[3])) / ((b[0] - a[0]) * 1e-9) for a, b in zip(rows, rows[1:]))


def test_before_any_face_the_pose_is_neutral():
    pf = PoseFilter()
    s = pf.sample(123)
    assert not s.found and np.array_equal(s.rotation, [0, 0, 0, 1]) and pf.state == "waiting"


def test_constant_pose_passes_through_and_recenter_at_start():
    pf = plain()
    rows = run(pf, lambda k: 20.0, 10)
    assert all(abs(r[1] - 20.0) < TIGHT and r[2] for r in rows[:-1])
    pf2 = PoseFilter(PoseFilterOptions(delay_ns=0, lost=LOST))  # defaults: mirror, recenter at start
    rows2 = run(pf2, lambda k: 20.0, 10)
    assert all(abs(r[1]) < TIGHT for r in rows2[:-1])


def test_mirror_turns_the_avatar_to_the_screens_left():
    pf = PoseFilter(PoseFilterOptions(recenter_at_start=False, delay_ns=0))
    pf.push(obs(0, yaw=math.radians(25)))  # the user turns to their left: camera-frame yaw > 0
    s = pf.sample(0)
    assert yaw_deg(s) == pytest.approx(-25.0, abs=1e-9)  # avatar yaw < 0: nose toward -X, the screen's left


def test_per_axis_limits():
    pf = plain(head=HeadPoseOptions(mirror=False, yaw_limit=math.radians(45), pitch_limit=math.radians(10)))
    pf.push(obs(0, yaw=math.radians(70), pitch=math.radians(-30), roll=math.radians(5)))
    y, p, r = np.degrees(euler_from_quat(pf.sample(0).rotation))
    assert (y, p) == (pytest.approx(45), pytest.approx(-10)) and r == pytest.approx(5)


def test_lost_face_holds_then_eases_to_neutral_without_a_jump():
    pf = plain()
    lost_at = 50
    rows = run(pf, lambda k: 30.0, 200, found_of_k=lambda k: k < lost_at, t_end=4_000 * MS)
    t_last = (lost_at - 1) * FRAME  # last time the face was seen
    hold = [r for r in rows if t_last <= r[0] <= t_last + 500 * MS]
    assert all(abs(r[1] - 30.0) < TIGHT for r in hold)
    assert all(not r[2] for r in rows if r[0] >= lost_at * FRAME)
    done = [r for r in rows if r[0] >= t_last + 1500 * MS]
    assert all(abs(r[1]) < TIGHT for r in done)
    # smoothstep over 1 s from 30 deg: peak speed 1.5 * 30 deg/s
    assert max_speed_deg_s(rows) == pytest.approx(1.5 * 30.0, rel=0.02)


def test_reacquire_blends_back_smoothly():
    pf = plain()
    # lost for 3 s (fully eased to neutral), then the face is back at 30 deg
    rows = run(pf, lambda k: 30.0, 200, found_of_k=lambda k: not 25 <= k < 100)
    t_r = 100 * FRAME
    assert max_speed_deg_s(rows) <= 1.5 * 30.0 / LOST.reacquire_s * 1.02
    before = [r for r in rows if r[0] < t_r]
    assert abs(before[-1][1]) < TIGHT
    after = [r for r in rows if r[0] >= t_r + 400 * MS]
    assert all(abs(r[1] - 30.0) < TIGHT and r[2] for r in after)
    assert pf.state == "tracking"


def test_short_dropout_only_holds():
    pf = plain()
    rows = run(pf, lambda k: 10.0 + k * 0.0, 60, found_of_k=lambda k: k not in (20, 21, 22))
    assert all(abs(r[1] - 10.0) < TIGHT for r in rows[:-1])  # never moved: 120 ms < hold


def test_stalled_observations_count_as_lost():
    pf = plain()
    for k in range(10):
        pf.push(obs(k * FRAME, yaw=math.radians(30)))
    t9 = 9 * FRAME
    assert pf.sample(t9 + 400 * MS).found is False  # no news for 0.4 s > stale 0.25 s
    assert yaw_deg(pf.sample(t9 + 400 * MS)) == pytest.approx(30.0)  # still holding
    assert yaw_deg(pf.sample(t9 + 1000 * MS)) == pytest.approx(15.0)  # halfway through the ease
    pf.push(obs(t9 + 2000 * MS, yaw=math.radians(30)))  # back after a stall: a re-acquire blend
    assert abs(yaw_deg(pf.sample(t9 + 2000 * MS))) < TIGHT
    assert yaw_deg(pf.sample(t9 + 2400 * MS)) == pytest.approx(30.0)


def test_recenter_on_demand_blends_to_the_new_neutral():
    pf = plain()
    rows = []
    for k in range(100):
        pf.push(obs(k * FRAME, yaw=math.radians(20), tz=-0.6))
        if k == 40:
            assert pf.recenter()
        for j in range(5):
            t = k * FRAME + j * 8 * MS
            rows.append((t, yaw_deg(pf.sample(t)), True, pf.sample(t).rotation.copy()))
    assert max_speed_deg_s(rows) <= 1.5 * 20.0 / LOST.reacquire_s * 1.02
    assert abs(rows[-1][1]) < TIGHT and np.allclose(pf.sample(99 * FRAME).translation, 0, atol=TIGHT)
    assert abs(rows[0][1] - 20.0) < TIGHT


def test_delay_interpolates_between_observations():
    pf = PoseFilter(PoseFilterOptions(head=HeadPoseOptions(mirror=False), recenter_at_start=False,
                                      delay_ns=FRAME, rotation=OneEuroParams(min_cutoff_hz=1e6)))  # fmt: skip
    for k in range(5):
        pf.push(obs(k * FRAME, yaw=math.radians(10 * k)))
    # queried one frame late: halfway between frames 2 and 3 -> 25 deg, no steps
    assert yaw_deg(pf.sample(3 * FRAME + FRAME // 2)) == pytest.approx(25.0, abs=1e-3)
    assert yaw_deg(pf.sample(4 * FRAME)) == pytest.approx(30.0, abs=1e-3)


def test_extrapolation_follows_constant_motion():
    common = dict(head=HeadPoseOptions(mirror=False), recenter_at_start=False, delay_ns=0,
                  rotation=OneEuroParams(min_cutoff_hz=1e6))  # fmt: skip
    hold, extra = PoseFilter(PoseFilterOptions(**common)), PoseFilter(PoseFilterOptions(extrapolate=True, **common))
    for k in range(5):
        for pf in (hold, extra):
            pf.push(obs(k * FRAME, yaw=math.radians(10 * k)))
    t = 4 * FRAME + 20 * MS
    assert yaw_deg(hold.sample(t)) == pytest.approx(40.0, abs=1e-3)
    assert yaw_deg(extra.sample(t)) == pytest.approx(45.0, abs=1e-3)
    # capped at max_extrapolation_ns (66.7 ms -> 16.7 deg ahead)
    assert yaw_deg(extra.sample(4 * FRAME + 200 * MS)) == pytest.approx(40 + 10 * 66.666667 / 40, abs=1e-3)


def test_old_observations_are_ignored_and_threads_are_safe():
    pf = plain()
    pf.push(obs(100 * MS, yaw=0.2))
    pf.push(obs(50 * MS, yaw=0.9))  # late arrival: ignored
    assert pf.observations == 1
    errors = []

    def reader():
        try:
            for i in range(2000):
                pf.sample(i * MS)
        except Exception as exc:  # noqa: BLE001
            errors.append(exc)

    th = threading.Thread(target=reader)
    th.start()
    for k in range(3, 500):
        pf.push(obs(k * 40 * MS, yaw=0.001 * k, found=k % 50 != 0))
    th.join()
    assert not errors


def test_filter_observations_gives_a_track_at_observation_times():
    observations = [obs(k * FRAME, yaw=math.radians(5)) for k in range(10)] + [obs(10 * FRAME, found=False)]
    tr = filter_observations(observations, PoseFilterOptions(recenter_at_start=False))
    assert len(tr) == 11 and tr.t_ns[-1] == 10 * FRAME and tr.header.frame == "avatar"
    assert list(tr.found) == [True] * 10 + [False]
    assert math.degrees(euler_from_quat(tr.rotations[3])[0]) == pytest.approx(-5.0)  # mirrored


def test_recenter_while_lost_applies_to_the_returning_face():
    pf = plain()
    for k in range(10):
        pf.push(obs(k * FRAME, yaw=math.radians(20)))
    pf.push(obs(10 * FRAME, found=False))
    assert pf.recenter() is False and pf.state == "lost"
    before = yaw_deg(pf.sample(10 * FRAME + 200 * MS))
    assert before == pytest.approx(20.0)  # still holding: recenter did not disturb the lost pose
    t_back = 10 * FRAME + 3000 * MS
    pf.push(obs(t_back, yaw=math.radians(35)))
    assert abs(yaw_deg(pf.sample(t_back))) < TIGHT  # blends from neutral (the fully eased pose) ...
    assert abs(yaw_deg(pf.sample(t_back + 500 * MS))) < TIGHT  # ... to the returning face, now neutral
