"""World-space retargeting (issue 15 item 2): every shared clip onto every test avatar, the
world deltas carried over, rest alignment from T-pose clips to A-posed avatars, hips motion
scaled by leg length, root motion removable."""

from __future__ import annotations

import numpy as np
import pytest

from avatars import load_avatar
from avatars.clips import load_file
from avatars.generate import default_avatar_path, layered_avatar_path
from avatars.humanoid import REQUIRED_BONES
from avatars.math3d import mat_decompose, quat_angle, quat_conj, quat_mul
from runtime.rig import AvatarRig, MotionOptions, RetargetOptions
from runtime.rig.retarget import _leg, retarget
from tests.conftest import asset
from tracking.pose_track import PoseSample

UAL = ("anim", "ual", "AnimationLibrary_Godot_Standard.gltf")
VRMA = ("idle_loop.vrma", "test.vrma", "Jump.vrma", "Clapping.vrma", "Goodbye.vrma")
AVATARS = ("godette", "default", "layered", "robot")
#: World matrices posed from retargeted rotations agree with the deltas to this (rad): the
#: sample times are whole nanoseconds, the keys float32 seconds (a 1 ns offset turns a fast
#: bone by ~5e-9 rad).
WORLD_TOL = 1e-7


@pytest.fixture(scope="module")
def avatars():
    return {"godette": load_avatar(asset("vrm", "Godette_vrm_v4.vrm")), "default": load_avatar(default_avatar_path()),
            "layered": load_avatar(layered_avatar_path()), "robot": load_avatar(asset("vrm", "debug_robot.vrm"))}


@pytest.fixture(scope="module")
def clips():
    out = load_file(asset(*UAL))
    for name in VRMA:
        out += load_file(asset("anim", name))
    return out


@pytest.mark.parametrize("name", AVATARS)
def test_every_shared_clip_retargets_onto_every_avatar(avatars, clips, name):
    """No missing required joint, no non-finite value, no track on a hair joint (the seeds'
    check over 260 x 2 clips; here 46 + 5 clips x 4 avatars)."""
    avatar = avatars[name]
    hair = {int(j.node) for s in avatar.springs for j in s.joints}
    rig = AvatarRig(avatar, motion=MotionOptions(in_place=True, fade_s=0.0))
    s = PoseSample()
    world = np.empty_like(rig.world)
    assert len(clips) == 51
    for clip in clips:
        for in_place in (True, False):
            rc = retarget(clip, avatar, options=RetargetOptions(in_place=in_place))
            assert rc.missing_required == (), (clip.name, rc.missing_required)
            assert all(b in rc.bones for b in REQUIRED_BONES if b in avatar.humanoid), clip.name
            assert np.all(np.isfinite(rc.local)) and np.all(np.isfinite(rc.hips_local)), clip.name
            assert not set(rc.nodes.tolist()) & hair and rc.authored.size == 0, clip.name
        # played: every sampled pose is finite
        rig.play_motion([clip])
        for t in np.linspace(0.0, clip.duration_s, 7):
            s.t_ns = int(t * 1e9) + 10_000_000_000 * (clips.index(clip) + 1)
            rig.pose_world(s, world)
            assert np.all(np.isfinite(world)), (clip.name, t)


def _world_rotations(rig, t):
    s = PoseSample()
    s.t_ns = int(round(t * 1e9))
    w = rig.pose_world(s, np.empty_like(rig.world))
    return mat_decompose(w)[1]


def test_world_deltas_carry_over_on_a_t_pose_avatar(avatars):
    """debug_robot is in the VRM T-pose like the VRMA: every bone's world rotation relative to
    its rest is the clip's world delta (no rest alignment needed), whatever its local axes."""
    avatar = avatars["robot"]
    (clip,) = load_file(asset("anim", "Jump.vrma"))
    rig = AvatarRig(avatar, motion=MotionOptions(fade_s=0.0, after="hold", rest_align=False))
    rig.play_motion([clip])
    rig.reset(PoseSample())
    rest = mat_decompose(avatar.skeleton.rest_world)[1]
    for k in (10, 40, 80):
        t = float(clip.times[k])
        w = _world_rotations(rig, t)
        for b, n in avatar.humanoid.items():
            if b in clip.rotations and b not in ("neck", "leftShoulder", "rightShoulder", "head"):
                d = quat_mul(w[n], quat_conj(rest[n]))
                assert quat_angle(d, clip.rotations[b][k]) < WORLD_TOL, (b, t)


def test_rest_alignment_lifts_a_posed_arms_to_the_clip_t_pose(avatars):
    """The default avatar stands in an A-pose; the library's A_TPose clip holds its T-pose:
    retargeted, the avatar's arm bones point where the clip's do (within the clip's own
    departure from its rest at key 0)."""
    avatar = avatars["default"]
    clips = {c.name: c for c in load_file(asset(*UAL), names=["A_TPose"])}
    clip = clips["A_TPose"]
    rig = AvatarRig(avatar, motion=MotionOptions(fade_s=0.0, after="hold"))
    rig.play_motion([clip])
    rig.reset(PoseSample())
    s = PoseSample()
    w = rig.pose_world(s, np.empty_like(rig.world))
    h = avatar.humanoid
    for a, b in (("leftUpperArm", "leftLowerArm"), ("rightLowerArm", "rightHand"), ("leftUpperLeg", "leftLowerLeg")):
        d_av = w[h[b], :3, 3] - w[h[a], :3, 3]
        d_cl = clip.rest.position[b] - clip.rest.position[a]
        cosang = d_av @ d_cl / np.linalg.norm(d_av) / np.linalg.norm(d_cl)
        assert np.degrees(np.arccos(min(1.0, cosang))) < 6.0, (a, b)
    # without alignment the arms keep the A-pose
    rig2 = AvatarRig(avatar, motion=MotionOptions(fade_s=0.0, after="hold", rest_align=False))
    rig2.play_motion([clip])
    w2 = rig2.pose_world(s, np.empty_like(rig.world))
    d = w2[h["leftLowerArm"], :3, 3] - w2[h["leftUpperArm"], :3, 3]
    assert d[1] / np.linalg.norm(d) < -0.5           # still hanging down


def test_hips_motion_is_scaled_by_leg_length_and_root_motion_removable(avatars):
    avatar = avatars["godette"]
    (roll,) = load_file(asset(*UAL), names=["Roll"])
    rest_t = mat_decompose(avatar.skeleton.rest_world)[0]
    leg_av = _leg({b: rest_t[n] for b, n in avatar.humanoid.items()})
    leg_cl = _leg(roll.rest.position)
    moved = retarget(roll, avatar, options=RetargetOptions(in_place=False))
    assert moved.scale == pytest.approx(leg_av / leg_cl)
    stay = retarget(roll, avatar, options=RetargetOptions(in_place=True))
    travel_clip = roll.hips_position[-1] - roll.hips_position[0]
    travel = moved.hips_local[-1] - moved.hips_local[0]
    assert np.linalg.norm(travel[[0, 2]]) == pytest.approx(moved.scale * np.linalg.norm(travel_clip[[0, 2]]),
                                                           rel=1e-6)
    assert np.linalg.norm((stay.hips_local[-1] - stay.hips_local[0])[[0, 2]]) < 1e-9
    assert np.allclose(stay.hips_local[:, 1], moved.hips_local[:, 1])   # the vertical stays


def test_a_clip_upper_chest_folds_into_the_avatar_neck(avatars):
    """Godette has no upperChest: the clip's upperChest rotation reaches her neck in world
    space (three-vrm drops it; see runtime/eval/motion_reference.py)."""
    avatar = avatars["godette"]
    (clip,) = load_file(asset(*UAL), names=["Dance_Loop"])
    rc = retarget(clip, avatar, options=RetargetOptions(rest_align=False))
    rig = AvatarRig(avatar, motion=MotionOptions(fade_s=0.0, after="hold", rest_align=False))
    rig.play_motion([clip])
    rig.reset(PoseSample())                      # the program starts at t = 0
    rest = mat_decompose(avatar.skeleton.rest_world)[1]
    k = 12
    w = _world_rotations(rig, float(clip.times[k]))
    n = avatar.humanoid["neck"]
    assert "upperChest" not in avatar.humanoid and "upperChest" in clip.rotations and "upperChest" not in rc.bones
    assert quat_angle(quat_mul(w[n], quat_conj(rest[n])), clip.rotations["neck"][k]) < WORLD_TOL


def test_the_rest_pose_is_the_unanimated_one_never_the_current_pose(avatars):
    """The seeds' lesson: retargeting starts from the body's unanimated pose. A clip switched
    to while the avatar crouches with a turned head retargets exactly as on a fresh rig."""
    from avatars.math3d import quat_from_euler

    avatar = avatars["godette"]
    clips = {c.name: c for c in load_file(asset(*UAL), names=["Crouch_Idle_Loop", "Walk_Loop"])}
    rig = AvatarRig(avatar, motion=MotionOptions())
    rig.play_motion([clips["Crouch_Idle_Loop"]])
    s = PoseSample(rotation=quat_from_euler(0.6, 0.2, 0.0))
    rig.reset(s)
    for n in range(1, 240):
        s.t_ns = n * 1_000_000_000 // 120
        rig.substep(s)
    (live,) = rig.play_motion([clips["Walk_Loop"]])
    (fresh,) = AvatarRig(avatar, motion=MotionOptions()).play_motion([clips["Walk_Loop"]])
    assert np.array_equal(live.local, fresh.local) and np.array_equal(live.hips_local, fresh.hips_local)
