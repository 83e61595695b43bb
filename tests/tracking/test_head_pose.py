"""Camera frame -> avatar frame: the mirror is a reflection in x = 0, and recentering
removes a tilted camera exactly."""

import math

import numpy as np
import pytest

from tracking.head_pose import HeadPoseMapper, HeadPoseOptions, mirror_pose
from avatars.math3d import (
    euler_from_quat, mat3_from_quat, quat_angle, quat_conj, quat_from_euler, quat_mul, vec_transform_quat,
)

TIGHT = 1e-12
M = np.diag([-1.0, 1.0, 1.0])


def test_mirror_is_the_reflection_in_x0():
    q = quat_from_euler(0.4, -0.2, 0.3)
    t = np.array([0.05, -0.02, -0.6])
    qm, tm = mirror_pose(q, t)
    assert np.allclose(mat3_from_quat(qm), M @ mat3_from_quat(q) @ M, atol=TIGHT)
    assert np.allclose(tm, M @ t, atol=TIGHT)
    y, p, r = euler_from_quat(qm)
    assert (y, p, r) == (pytest.approx(-0.4), pytest.approx(-0.2), pytest.approx(-0.3))


@pytest.mark.parametrize("mirror", [False, True])
def test_recenter_removes_a_tilted_camera(mirror):
    cam = quat_from_euler(math.radians(-8), math.radians(20), 0.0)  # camera-to-world: looking down, a bit aside
    cam_pos = np.array([0.0, 0.25, 0.1])
    neutral_world = np.array([0.0, 0.0, -0.55])  # the head's neutral position, world frame

    def observe(head_q, head_pos):
        """What the camera reports for a head with world rotation head_q at world position head_pos."""
        return quat_mul(quat_conj(cam), head_q), vec_transform_quat(head_pos - cam_pos, quat_conj(cam), via_matrix=True)

    mapper = HeadPoseMapper(HeadPoseOptions(mirror=mirror, translation_limit=10.0))
    mapper.recenter(*observe(np.array([0, 0, 0, 1.0]), neutral_world))
    head_q = quat_from_euler(math.radians(25), math.radians(-10), math.radians(5))
    offset = np.array([0.03, -0.02, 0.04])
    q, d = mapper.apply(*observe(head_q, neutral_world + offset))
    want_q, want_d = mirror_pose(head_q, offset) if mirror else (head_q, offset)
    assert quat_angle(q, want_q) < 1e-9
    assert np.allclose(d, want_d, atol=1e-12)
    assert mapper.has_neutral
    mapper.clear_neutral()
    assert not mapper.has_neutral and quat_angle(mapper.apply(*observe(head_q, neutral_world))[0], want_q) > 0.2


def test_translation_scale_and_limit():
    mapper = HeadPoseMapper(HeadPoseOptions(mirror=False, translation_scale=2.0, translation_limit=0.1))
    _, d = mapper.apply(np.array([0, 0, 0, 1.0]), np.array([0.03, 0.2, -0.5]))
    assert np.allclose(d, [0.06, 0.1, 0.0], atol=TIGHT)  # default neutral: 0.5 m straight ahead
