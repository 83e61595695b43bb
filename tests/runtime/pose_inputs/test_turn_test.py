"""The built-in ``turn-test`` pose input: the standard head turn (docs/design.md §4.5) as a track."""

import math

import numpy as np
import pytest

from avatars.clips.head_turn import head_turn_angles, head_turn_rotation
from avatars.math3d import euler_from_quat, quat_angle
from runtime.pose_inputs import head_turn_track

TIGHT = 1e-12


def test_head_turn_track_matches_the_formula():
    tr = head_turn_track(rate_hz=120)
    assert len(tr) == 12 * 120 + 1 and tr.end_ns == 12_000_000_000
    # the analytic formula at a few times
    yaw, pitch, roll = head_turn_angles(0.5)
    w = math.sin(math.pi * 0.5 / 4) ** 2
    assert yaw == pytest.approx(math.radians(60) * w * math.sin(2 * math.pi * 0.5 * 0.5), abs=TIGHT)
    assert pitch == pytest.approx(math.radians(15) * w * math.sin(2 * math.pi * 0.7 * 0.5), abs=TIGHT)
    assert roll == pytest.approx(math.radians(10) * w * math.sin(2 * math.pi * 0.3 * 0.5), abs=TIGHT)
    assert np.allclose(euler_from_quat(head_turn_rotation(0.5)), (yaw, pitch, roll), atol=1e-12)
    # samples at the track's own times are the pure function's values
    for k in (0, 60, 61, 239, 480, 1000):
        t = int(tr.t_ns[k])
        assert np.array_equal(tr.sample(t).rotation, head_turn_rotation(t * 1e-9))
    # between samples the slerp stays within a small interpolation error of the formula
    err = max(quat_angle(tr.sample(t).rotation, head_turn_rotation(t * 1e-9))
              for t in range(1_000_000, 4_000_000_000, 7_777_777))  # fmt: skip
    assert err < math.radians(0.01)
    # still (identity) after 4 s, and starts at rest
    assert np.array_equal(tr.sample(5_000_000_000).rotation, [0, 0, 0, 1])
    assert np.array_equal(tr.sample(0).rotation, [0, 0, 0, 1])
    peak = max(abs(euler_from_quat(tr.rotations[k])[0]) for k in range(len(tr)))
    assert math.radians(45) < peak <= math.radians(60)
