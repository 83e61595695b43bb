"""The webcam's arms on the avatar (runtime/hands): the solved wrist points where the landmarks
do, fingers curl with their landmarks, a lost hand eases to rest with bounded angular speed."""

import math

import numpy as np
import pytest

from avatars import load_avatar
from avatars.generate import default_avatar_path
from avatars.math3d import quat_angle
from runtime.hands.drive import HandDrive
from runtime.hands.solve import ArmSolver
from runtime.rig import AvatarRig
from tracking.hands import (ARM_W, FINGER_LANDMARKS, S_ARM, S_ELBOW, S_HAND, S_LANDMARKS, S_SHOULDER, S_WRIST,
                            SIDE_W, SIDES)
from tracking.pose_track import PoseSample

STEP = 1_000_000_000 // 120


@pytest.fixture(scope="module")
def godette(godette_path):
    return load_avatar(godette_path)


def arm_pose(avatar, elbow, wrist, *, hands=None):
    """Arm pose (ARM_W,) with the avatar's own shoulders; elbow/wrist offsets per side
    (mirrored in x for the right side)."""
    pos = np.asarray(avatar.skeleton.rest_world)[:, :3, 3]
    a = np.zeros(ARM_W)
    for s in SIDES:
        o = SIDES.index(s) * SIDE_W
        m = np.array([1.0 if s == "left" else -1.0, 1.0, 1.0])
        sh = pos[avatar.humanoid[f"{s}UpperArm"]]
        a[o + S_ARM] = 1.0
        a[o + S_SHOULDER:o + S_SHOULDER + 3] = sh
        a[o + S_ELBOW:o + S_ELBOW + 3] = sh + m * np.asarray(elbow)
        a[o + S_WRIST:o + S_WRIST + 3] = sh + m * np.asarray(wrist)
        if hands is not None:
            a[o + S_HAND] = 1.0
            a[o + S_LANDMARKS:o + SIDE_W] = (hands * m).ravel()
    return a


def _unit(v):
    return v / np.linalg.norm(v)


def _deg(a, b):
    return math.degrees(math.acos(float(np.clip(_unit(a) @ _unit(b), -1.0, 1.0))))


POSES = [((0.0, -0.25, 0.05), (0.0, -0.3, 0.3)),      # forearm forward
         ((0.2, 0.1, 0.0), (0.3, 0.35, 0.05)),         # waving
         ((0.25, 0.0, 0.0), (0.5, 0.0, 0.0)),          # T-pose, straight
         ((0.1, -0.2, 0.1), (-0.05, -0.1, 0.3))]       # across the body


@pytest.mark.parametrize("elbow, wrist", POSES)
def test_the_wrist_goes_where_the_landmarks_point(godette, elbow, wrist):
    """Shoulder -> wrist of the posed avatar within 0.5° of the tracked direction (the IK's
    target), the elbow bent toward the tracked elbow (upper arm within 15°: proportions differ)."""
    rig = AvatarRig(godette, hands=True)
    s = PoseSample()
    s.arms[:] = arm_pose(godette, elbow, wrist)
    world = np.zeros_like(rig.world)
    for k in range(240):                 # 2 s: eased in
        s.t_ns = k * STEP
        rig.pose_world(s, world)
    h = godette.humanoid
    for side in SIDES:
        o = SIDES.index(side) * SIDE_W
        sh, el, wr = (s.arms[o + k:o + k + 3] for k in (S_SHOULDER, S_ELBOW, S_WRIST))
        u, lo, hd = (world[h[f"{side}{b}"], :3, 3] for b in ("UpperArm", "LowerArm", "Hand"))
        assert _deg(hd - u, wr - sh) < 0.5, side
        assert _deg(lo - u, el - sh) < 15.0, side


def _hand_landmarks(curl: float) -> np.ndarray:
    """21 hand landmarks of a left hand in the avatar frame (palm down, fingers along +X),
    each non-thumb finger curled by ``curl`` radians per joint (about -Z: toward the palm, -Y)."""
    lm = np.zeros((21, 3))
    bases = {"Index": 0.02, "Middle": 0.0, "Ring": -0.02, "Little": -0.04}
    for f, z in bases.items():
        i0 = FINGER_LANDMARKS[f][0]
        p = np.array([0.08, 0.0, z])
        lm[i0] = p
        d = np.array([1.0, 0.0, 0.0])
        for k, i in enumerate(FINGER_LANDMARKS[f][1:]):
            a = curl * (k + 1)
            d = np.array([math.cos(a), -math.sin(a), 0.0])
            p = p + 0.025 * d
            lm[i] = p
    t = FINGER_LANDMARKS["Thumb"]
    for k, i in enumerate(t):
        lm[i] = [0.02 + 0.02 * k, 0.0, 0.04 + 0.01 * k]
    return lm


def test_fingers_curl_with_their_landmarks(godette):
    solver = ArmSolver(godette)
    if not solver.sides["left"].get("Index"):
        pytest.skip("this avatar has no index finger bones")
    straight = solver.solve(arm_pose(godette, (0.25, 0, 0), (0.5, 0, 0), hands=_hand_landmarks(0.0)), "left")
    curled = solver.solve(arm_pose(godette, (0.25, 0, 0), (0.5, 0, 0), hands=_hand_landmarks(0.5)), "left")
    name = solver.sides["left"]["Index"][1]
    bend = math.degrees(float(quat_angle(straight[name], curled[name])))
    assert 20.0 < bend < 40.0            # 0.5 rad (28.6°) more per joint


def test_a_lost_hand_eases_to_rest_with_bounded_speed(godette):
    """Tracked for 1 s, then out of view: the hand's world rotation moves at a bounded speed
    and ends exactly at the avatar's own pose (the rig without hands)."""
    drive = HandDrive(godette)
    bound = math.radians(720.0) + 1.5 * math.pi / drive.ease_s
    rig = AvatarRig(godette, hands=True)
    rest = AvatarRig(godette)
    s = PoseSample()
    tracked = arm_pose(godette, (0.2, 0.1, 0.0), (0.3, 0.35, 0.05))
    world = np.zeros_like(rig.world)
    hand = godette.humanoid["leftHand"]
    prev, speeds = None, []
    for k in range(360):
        s.t_ns = k * STEP
        s.arms[:] = tracked if k < 120 else 0.0
        rig.pose_world(s, world)
        from avatars.math3d import quat_from_mat

        q = quat_from_mat(world[hand, :3, :3], project=True)
        if prev is not None:
            speeds.append(float(quat_angle(prev, q)) * 120.0)
        prev = q
    assert max(speeds) <= bound, max(speeds)
    want = np.zeros_like(world)
    rest.pose_world(PoseSample(t_ns=s.t_ns), want)
    np.testing.assert_allclose(world, want, atol=1e-12)


def test_a_jump_in_tracking_is_rate_limited(godette):
    drive = HandDrive(godette, max_speed_deg=360.0)
    s = PoseSample()
    a = arm_pose(godette, (0.25, 0, 0), (0.5, 0, 0))
    b = arm_pose(godette, (0.0, -0.25, 0.05), (0.0, -0.3, 0.3))
    shown = []
    for k in range(120):
        s.t_ns = k * STEP
        s.arms[:] = a if k < 60 else b
        p = drive.body(s)
        shown.append(p.bones[__import__("tracking.body", fromlist=["x"]).BONE_INDEX["leftUpperArm"]].copy())
    steps = [math.degrees(float(quat_angle(shown[k], shown[k + 1]))) * 120 for k in range(60, 119)]
    assert max(steps) <= 360.0 + 1e-6


def test_without_hands_the_rig_is_unchanged(godette):
    """A rig with hands on and no arm in view poses exactly as one without."""
    a, b = AvatarRig(godette, hands=True), AvatarRig(godette)
    wa, wb = np.zeros_like(a.world), np.zeros_like(b.world)
    s = PoseSample(t_ns=5 * STEP)
    a.pose_world(s, wa)
    b.pose_world(s, wb)
    assert np.array_equal(wa, wb)
