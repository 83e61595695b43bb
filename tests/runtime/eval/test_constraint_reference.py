"""three-vrm's ``@pixiv/three-vrm-node-constraint`` 3.5.5 (Node.js) as the reference for the
rig's node constraints (runtime/eval/constraint_reference.py): the generated VRM 1.0 test
avatar (roll, aim, rotation, chained, weights 0 / 0.5 / 0.7 / 1) is loaded by three.js's
GLTFLoader with three-vrm's own loader plugin, posed frame by frame, updated by three-vrm's
manager, and compared with our compiled plan, destination by destination (the angle of the
rotation between the two local rotations). The packages are installed with npm on first use.
"""

from __future__ import annotations

import math
import shutil

import numpy as np
import pytest

from avatars import load_avatar
from avatars.constraint_avatar import build_constrained_avatar
from avatars.math3d import quat_from_axis_angle, quat_mul, quat_normalize, vec_transform_quat
from runtime.eval.constraint_reference import rotation_angle, run_ours, run_threevrm_constraints
from runtime.pose_inputs import TrackInput, head_turn_track
from runtime.rig import AvatarRig
from runtime.rig.kernels import TRS_Q, TRS_T
from tracking.pose_track import PoseSample

needs_node = pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed")

#: radians between our destination rotations and three-vrm's: both double precision, the same
#: operations in the same order (observed ≤ 2e-15; the issue's target is 1e-6)
AGREEMENT = 1e-12


@pytest.fixture(scope="module")
def vrm(tmp_path_factory):
    path = tmp_path_factory.mktemp("constrained") / "constrained.vrm"
    path.write_bytes(build_constrained_avatar())
    return path, load_avatar(path)


def _both(vrm, posed, rots, trans=None):
    path, avatar = vrm
    ref = run_threevrm_constraints(path, posed, rots, trans)
    ours = run_ours(avatar, posed, rots, trans)
    assert np.array_equal(ref["nodes"], ours["nodes"])
    return ref, ours, rotation_angle(ref["rotations"], ours["rotations"])


@needs_node
def test_random_poses_agree_with_three_vrm(vrm):
    """200 frames of random local rotations of every humanoid bone (large: uniform over
    rotations) and moved translations, plus the aim target's parent: every destination of
    every kind agrees with three-vrm."""
    _, avatar = vrm
    sk = avatar.skeleton
    posed = np.array(sorted(set(avatar.humanoid.values()) | {sk.find("ShoulderTip_L")}))
    rng = np.random.default_rng(15)
    rots = quat_normalize(rng.normal(size=(200, len(posed), 4)))
    trans = sk.rest_translation[posed][None] + rng.normal(scale=0.05, size=(200, len(posed), 3))
    _, ours, angle = _both(vrm, posed, rots, trans)
    assert angle.shape == (200, len(avatar.constraints))
    assert angle.max() <= AGREEMENT, angle.max(axis=0)
    # not a vacuous agreement: the destinations do turn (all but the weight-0 one)
    moved = rotation_angle(ours["rotations"], sk.rest_rotation[ours["nodes"]][None]).max(axis=0)
    still = ours["nodes"] == sk.find("Still")
    assert (moved[~still] > 0.5).all() and moved[still].max() == 0.0


@needs_node
def test_sleeve_twist_follows_the_forearm(vrm):
    """SleeveTwist_L (a child of the upper arm at the elbow, roll X from the forearm) over 60
    frames of a forearm that twists by θ about its own axis (up to ±120°) while the elbow
    bends by φ (up to 100°): the sleeve twists by exactly θ about the arm and does not bend —
    in three-vrm and in ours. ForearmTwist_L takes half the hand's twist."""
    _, avatar = vrm
    sk = avatar.skeleton
    lower, hand = sk.find("LowerArm_L"), sk.find("Hand_L")
    sleeve, half = sk.find("SleeveTwist_L"), sk.find("ForearmTwist_L")
    s0, h0 = sk.rest_rotation[lower], sk.rest_rotation[hand]
    axis_p = vec_transform_quat([1.0, 0.0, 0.0], s0)        # the forearm in the upper arm's frame
    bend_p = vec_transform_quat([0.0, 0.0, 1.0], s0)        # a bend axis perpendicular to it
    frames = 60
    theta = np.radians(120.0) * np.sin(np.linspace(0.0, 2.0 * np.pi, frames))
    phi = np.radians(100.0) * np.sin(np.linspace(0.0, np.pi, frames)) ** 2
    psi = np.radians(80.0) * np.sin(np.linspace(0.0, 3.0 * np.pi, frames))   # the hand's twist
    rots = np.empty((frames, 2, 4))
    for f in range(frames):
        twist = quat_from_axis_angle(axis_p, theta[f])
        rots[f, 0] = quat_mul(quat_from_axis_angle(bend_p, phi[f]), quat_mul(twist, s0))
        rots[f, 1] = quat_mul(h0, quat_from_axis_angle([1.0, 0.0, 0.0], psi[f]))
    ref, ours, angle = _both(vrm, np.array([lower, hand]), rots)
    assert angle.max() <= AGREEMENT
    k, j = int(np.nonzero(ours["nodes"] == sleeve)[0][0]), int(np.nonzero(ours["nodes"] == half)[0][0])
    d, dh = sk.rest_rotation[sleeve], sk.rest_rotation[half]
    for f in range(frames):
        expect = quat_mul(d, quat_from_axis_angle([1.0, 0.0, 0.0], theta[f]))   # twist θ, no bend
        assert rotation_angle(ours["rotations"][f, k], expect) <= AGREEMENT
        assert rotation_angle(ref["rotations"][f, k], expect) <= AGREEMENT
        expect_half = quat_mul(dh, quat_from_axis_angle([1.0, 0.0, 0.0], 0.5 * psi[f]))
        assert rotation_angle(ours["rotations"][f, j], expect_half) <= AGREEMENT
    assert np.abs(theta).max() > np.radians(119.0) and phi.max() > np.radians(99.0)


@needs_node
def test_rig_head_turn_agrees_with_three_vrm(vrm):
    """The rig as the app runs it (head drive on hips/neck/head, lowered arms baked into the base
    pose, every constraint in the drawn frame) over 2 s of the standard head turn with a lean:
    three-vrm, given the same hips/neck/head local transforms and lowered upper arms, gives the
    same destination rotations."""
    _, avatar = vrm
    sk = avatar.skeleton
    rig = AvatarRig(avatar)
    static = rig.drive.relaxed_arms(avatar)
    drive_nodes = list(rig.drive.nodes)
    posed = np.array(drive_nodes + sorted(static))
    inp = TrackInput(head_turn_track())
    s = PoseSample()
    out = np.empty_like(rig.world)
    frames = range(0, 240, 4)
    rots = np.empty((len(frames), len(posed), 4))
    trans = np.empty((len(frames), len(posed), 3))
    mine = np.empty((len(frames), len(avatar.constraints), 4))
    nodes = np.array(sorted(c.node for c in avatar.constraints))
    for i, n in enumerate(frames):
        t = n / 120.0
        inp.sample(n * 1_000_000_000 // 120, s)
        s.translation[:] = [0.1 * math.sin(3.0 * t), 0.0, 0.04 * math.cos(2.0 * t)]
        rig.pose_world(s, out)
        trs = rig.pose.trs
        for m, node in enumerate(posed):
            slot = rig.pose.slot_of[node]
            rots[i, m] = trs[slot, TRS_Q:TRS_Q + 4] if slot >= 0 else static[int(node)]
            trans[i, m] = trs[slot, TRS_T:TRS_T + 3] if slot >= 0 else sk.rest_translation[node]
        mine[i] = trs[rig.pose.slot_of[nodes], TRS_Q:TRS_Q + 4]
    ref = run_threevrm_constraints(vrm[0], posed, rots, trans)
    assert np.array_equal(ref["nodes"], nodes)
    angle = rotation_angle(ref["rotations"], mine)
    assert angle.max() <= AGREEMENT, angle.max(axis=0)
    # the head turn does move the constraints that read the neck and head
    turned = rotation_angle(mine, sk.rest_rotation[nodes][None]).max(axis=0)
    for name in ("Collar", "CollarTwist", "NeckAim"):
        assert turned[list(nodes).index(sk.find(name))] > 0.02
