"""Issue 34 item 10, a sibling of the zero-scale head: its bust framing had no region (the
camera sat on its target: a NaN view matrix, "invalid value encountered in divide"); it
frames the whole body instead."""

from __future__ import annotations

import numpy as np

from avatars import load_avatar
from render.camera import CameraOptions, frame_camera
from tests.avatars.glb import with_scale
from tests.conftest import asset


def test_bust_framing_of_a_zero_scale_head_frames_the_body(tmp_path):
    robot = load_avatar(with_scale(asset("vrm", "debug_robot.vrm"), tmp_path / "robot.vrm", (0, 0, 0)))
    bust = frame_camera(robot, 16 / 9, CameraOptions())
    full = frame_camera(robot, 16 / 9, CameraOptions(framing="full"))
    assert np.all(np.isfinite(bust.view_matrix()))
    assert np.array_equal(bust.position, full.position) and np.array_equal(bust.target, full.target)
    whole = load_avatar(asset("vrm", "debug_robot.vrm"))          # a head with a size: framed as before
    assert not np.array_equal(frame_camera(whole, 16 / 9, CameraOptions()).position, full.position)
