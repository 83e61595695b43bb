"""Head drive (neck/head split) on Godette."""

from __future__ import annotations

import numpy as np
import pytest

from avatars import load_avatar
from avatars.math3d import mat_decompose, quat_from_euler, quat_mul
from runtime.rig.drive import DriveOptions, HeadDrive

ROT_TOL = 1e-12


@pytest.fixture(scope="module")
def godette(godette_path):
    return load_avatar(godette_path)


def same_rotation(a, b):
    return min(np.abs(a - b).max(), np.abs(a + b).max())


def test_head_world_rotation_is_exactly_the_tracked_rotation(godette):
    sk = godette.skeleton
    drive = HeadDrive(godette, options=DriveOptions(neck_share=0.35))
    q = quat_from_euler(np.radians(30), np.radians(-10), np.radians(5))
    rot = sk.rest_rotation.copy()
    t = sk.rest_translation.copy()
    drive.apply(q, None, rot, t)
    world = sk.forward_kinematics(rotation=rot, translation=t)
    r_world = mat_decompose(world)[1]
    r_rest = mat_decompose(sk.rest_world)[1]
    head, neck = godette.humanoid["head"], godette.humanoid["neck"]
    assert same_rotation(r_world[head], quat_mul(q, r_rest[head])) < ROT_TOL
    # the neck takes 35 % of the turn: its world yaw is 0.35 * 30 degrees here
    from avatars.math3d import quat_slerp
    d_neck = quat_slerp(np.array([0, 0, 0, 1.0]), q, 0.35)
    assert same_rotation(r_world[neck], quat_mul(d_neck, r_rest[neck])) < ROT_TOL
    # nothing else moved
    others = [i for i in range(sk.node_count) if i not in (head, neck) and not sk.is_ancestor(neck, i)]
    assert np.abs(world[others] - sk.rest_world[others]).max() == 0.0


def test_positive_yaw_turns_the_face_toward_plus_x(godette):
    """Yaw about +Y by +30°: the face (pointing +Z) turns toward +X (the avatar's left)."""
    sk = godette.skeleton
    drive = HeadDrive(godette)
    rot, t = sk.rest_rotation.copy(), sk.rest_translation.copy()
    drive.apply(quat_from_euler(np.radians(30), 0, 0), None, rot, t)
    world = sk.forward_kinematics(rotation=rot, translation=t)
    hair = sk.find("FrontHair_Center_L")
    head = godette.humanoid["head"]
    before = sk.rest_world[hair, :3, 3] - sk.rest_world[head, :3, 3]
    after = world[hair, :3, 3] - world[head, :3, 3]
    assert after[0] - before[0] == pytest.approx(before[2] * np.sin(np.radians(30)) - before[0] * (1 - np.cos(np.radians(30))), abs=1e-9)


def test_lean_is_clamped(godette):
    sk = godette.skeleton
    drive = HeadDrive(godette, options=DriveOptions(lean_share=1.0, max_lean=0.05))
    rot, t = sk.rest_rotation.copy(), sk.rest_translation.copy()
    drive.apply(np.array([0, 0, 0, 1.0]), np.array([0.5, -0.01, 0.0]), rot, t)
    hips = godette.humanoid["hips"]
    delta = sk.forward_kinematics(rotation=rot, translation=t)[hips, :3, 3] - sk.rest_world[hips, :3, 3]
    assert delta == pytest.approx([0.05, -0.01, 0.0], abs=1e-12)


def test_t_posed_arms_are_lowered_a_posed_left_alone(godette):
    from avatars.generate import default_avatar_path
    for avatar, moved in ((godette, True), (load_avatar(default_avatar_path()), False)):
        drive = HeadDrive(avatar, options=DriveOptions(arms_down_deg=65.0))
        arms = drive.relaxed_arms(avatar)
        assert bool(arms) is moved
        sk = avatar.skeleton
        rot = sk.rest_rotation.copy()
        for n, q in arms.items():
            rot[n] = q
        w = sk.forward_kinematics(rotation=rot)
        for side, sx in (("left", 1), ("right", -1)):
            ua, la = avatar.humanoid[f"{side}UpperArm"], avatar.humanoid[f"{side}LowerArm"]
            d = w[la, :3, 3] - w[ua, :3, 3]
            d /= np.linalg.norm(d)
            if moved:
                assert d == pytest.approx([sx * np.cos(np.radians(65)), -np.sin(np.radians(65)), 0], abs=1e-9)
            else:
                assert -d[1] > np.sin(np.radians(45))
