"""VMC as a Marionette should take it (protocol.vmc.info, Marionette spec): a sender drives only
what it names — any subset of bones, with or without Root and Hips — and every other bone,
the hips and the root stay the avatar's own (here: the generated idle playing underneath).
A silent sender is held, then eased out on every channel it drove. The messages are built
with an independent VMC implementation (the ``vmcp`` package's protocol functions, encoded
by the tests' own OSC writer, tests/runtime/vmc/oscdecode.py), modelled on what real senders
send: VSeeFace (root, every bone, VRM 0.x blend names), VMagicMirror (upper body and hands),
XR Animator (a moving root and the whole body), iFacialMocap's desktop app (head bones with
positions all zero, perfect-sync names) and the issue's root + Head."""

from __future__ import annotations

import math

import numpy as np
import pytest

from avatars import load_avatar
from avatars.generate import default_avatar_path
from avatars.math3d import mat_decompose
from runtime.clock import ReplayClock
from runtime.loop import Loop
from runtime.rig import AvatarRig, MotionOptions, load_motion
from runtime.vmc import VmcInput, VmcInputOptions, VmcReceiver
from tracking.body import BODY_BONES

from .oscdecode import bundle, message

vmcp = pytest.importorskip("vmcp.protocol", reason="needs vmcp (pyproject dev extra)")
from vmcp.typing import (Bone, CalibrationMode, CalibrationState, CoordinateVector, ModelState,  # noqa: E402
                         Quaternion, TrackingState)

FPS = 30
FRAME = 1_000_000_000 // FPS
HOLD_S, EASE_S = 0.5, 1.0
TOL = 1e-5                 # float32 on the wire


def _msg(t) -> bytes:
    address, tags, args = t
    return message(address, tags, *args)


def _q(axis, angle):
    s = math.sin(angle / 2)
    return Quaternion(axis[0] * s, axis[1] * s, axis[2] * s, math.cos(angle / 2))


def _bones(names, angle=0.3):
    return [_msg(vmcp.bone_transform(Bone(n), CoordinateVector(0.0, 0.0, 0.0), _q((0, 1, 0), angle)))
            for n in names]


def _tail():
    return [_msg(("/VMC/Ext/Blend/Apply", ",", ())),
            _msg(vmcp.state(ModelState.LOADED, CalibrationState.CALIBRATED, CalibrationMode.NORMAL,
                            TrackingState.OK)),
            _msg(vmcp.time(1.0))]


UPPER = ["Spine", "Chest", "UpperChest", "Neck", "Head", "LeftShoulder", "RightShoulder", "LeftUpperArm",
         "RightUpperArm", "LeftLowerArm", "RightLowerArm", "LeftHand", "RightHand"]
FINGERS = [f"{s}{f}{g}" for s in ("Left", "Right") for f in ("Thumb", "Index", "Middle", "Ring", "Little")
           for g in ("Proximal", "Intermediate", "Distal")]
LEGS = [f"{s}{p}" for s in ("Left", "Right") for p in ("UpperLeg", "LowerLeg", "Foot", "Toes")]
ROOT0 = _msg(vmcp.root_transform(CoordinateVector(0.0, 0.0, 0.0), Quaternion(0.0, 0.0, 0.0, 1.0)))
HIPS = _msg(vmcp.bone_transform(Bone.HIPS, CoordinateVector(0.0, 0.85, 0.02), _q((0, 1, 0), 0.1)))

#: name -> (datagram, bones named, hips position named, root (Unity p, q) or None)
SENDERS = {
    "root+head (the issue)": (bundle(ROOT0, *_bones(["Head"]), *_tail()), ["Head"], False, None),
    "iFacialMocap (head, zero positions, perfect sync)": (bundle(
        *_bones(["Neck", "Head", "Spine"], 0.2),
        _msg(("/VMC/Ext/Bone/Pos", ",sfffffff", ("Hips", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0))),
        _msg(("/VMC/Ext/Blend/Val", ",sf", ("jawOpen", 0.4))), *_tail()),
        ["Neck", "Head", "Spine", "Hips"], False, None),
    "VMagicMirror (upper body and hands, no legs)": (bundle(ROOT0, *_bones(UPPER + FINGERS, 0.15),
                                                           _msg(("/VMC/Ext/Blend/Val", ",sf", ("Joy", 0.5))),
                                                           *_tail()), UPPER + FINGERS, False, None),
    "XR Animator (moving root, whole body)": (bundle(
        _msg(vmcp.root_transform(CoordinateVector(0.3, 0.0, -0.2), Quaternion(0.0, 0.0, 0.0, 1.0))), HIPS,
        *_bones(UPPER + LEGS, 0.1), *_tail()), ["Hips"] + UPPER + LEGS, True, (0.3, 0.0, -0.2)),
    "VSeeFace (root, every bone, VRM 0.x names)": (bundle(
        ROOT0, HIPS, *_bones(UPPER + LEGS + FINGERS, 0.05), _msg(("/VMC/Ext/Blend/Val", ",sf", ("A", 0.3))),
        *_tail()), ["Hips"] + UPPER + LEGS + FINGERS, True, None),
}


@pytest.fixture(scope="module")
def avatar():
    return load_avatar(default_avatar_path())


def _rig(av, body):
    rig = AvatarRig(av, body=body, motion=MotionOptions())
    load_motion("idle", options=MotionOptions()).apply(rig)
    return rig


def _run(av, datagram, frames_with_data, frames):
    """Two rigs on the same idle: one driven by a VMC sender for ``frames_with_data`` frames
    (then silent), one by nothing; their drawn worlds per frame."""
    rx = VmcReceiver("127.0.0.1", 0)
    inp = VmcInput(rx, options=VmcInputOptions(hold_s=HOLD_S, ease_s=EASE_S))
    clock = ReplayClock(0)
    got, own = [], []
    loop = Loop(_rig(av, True), inp, clock=clock, draw=lambda info: got.append(info.world.copy()))
    from runtime.pose_inputs import TrackInput
    from tracking.pose_track import PoseTrack, TrackHeader

    still = TrackInput(PoseTrack([0, 10**12], [[0, 0, 0, 1]] * 2, confidence=[0.0, 0.0],
                                 header=TrackHeader(frame="avatar")))
    ref = Loop(_rig(av, False), still, clock=ReplayClock(0), draw=lambda info: own.append(info.world.copy()))
    inp.start(clock)
    still.start(ref.clock if hasattr(ref, "clock") else ReplayClock(0))
    for k in range(frames):
        t = k * FRAME
        clock.advance(t - clock.now_ns())
        if k < frames_with_data:
            rx.handle(datagram)
        loop.frame(t)
        ref.frame(t)
    inp.close()
    return got, own


def _local(av, world, node):
    p = av.skeleton.parents[node]
    return world[node] if p < 0 else np.linalg.inv(world[p]) @ world[node]


def _unity_bone(vrm_name):
    from runtime.vmc.names import unity_bone_name

    return unity_bone_name(vrm_name)


@pytest.mark.parametrize("sender", list(SENDERS))
def test_a_partial_sender_moves_only_what_it_names(avatar, sender):
    datagram, named, hips_named, root = SENDERS[sender]
    got, own = _run(avatar, datagram, 20, 20)
    g, o = got[-1], own[-1]
    hum = avatar.humanoid
    moved = []
    for b in BODY_BONES:
        node = hum.get(b)
        if node is None:
            continue
        if _unity_bone(b) in named:
            moved.append(b)
            continue
        lg, lo = _local(avatar, g, node), _local(avatar, o, node)
        if b == "hips":
            continue
        # an unnamed bone keeps the avatar's own local rotation, exactly (up to float noise)
        assert np.allclose(lg[:3, :3], lo[:3, :3], atol=1e-9), (sender, b)
    hips = hum["hips"]
    dy = g[hips][1, 3] - o[hips][1, 3]
    if not hips_named and root is None:
        assert np.allclose(g[hips][:3, 3], o[hips][:3, 3], atol=1e-9), (sender, g[hips][:3, 3], o[hips][:3, 3])
    assert abs(dy) < 0.2, (sender, dy)                   # never dropped to the floor
    if root is not None:                                   # the root moves the avatar (Unity x mirrored)
        want = np.array([-root[0], root[1], root[2]])
        head = hum["head"]
        assert np.linalg.norm((g[head][:3, 3] - o[head][:3, 3])[[0, 2]] - want[[0, 2]]) < 0.05
    # what it names does move
    assert any(not np.allclose(_local(avatar, g, hum[b])[:3, :3], _local(avatar, o, hum[b])[:3, :3], atol=1e-4)
               for b in moved if b in hum)


def test_a_silent_sender_is_held_then_eased_out_on_every_channel(avatar):
    """Root (moved), Hips and the upper body for 1 s, then silence: during the hold the pose
    is the received one; after hold + ease every bone, the hips and the root are the
    avatar's own again (the idle), and the expression weight is 0."""
    root = _msg(vmcp.root_transform(CoordinateVector(0.5, 0.0, 0.0), _q((0, 1, 0), 0.4)))
    dg = bundle(root, HIPS, *_bones(UPPER, 0.3), _msg(("/VMC/Ext/Blend/Val", ",sf", ("Joy", 1.0))), *_tail())
    n_data = FPS
    frames = n_data + int((HOLD_S + EASE_S + 0.5) * FPS)
    got, own = _run(avatar, dg, n_data, frames)
    hips, head = avatar.humanoid["hips"], avatar.humanoid["head"]
    held = n_data + int(0.3 * FPS)                         # inside the hold
    assert np.linalg.norm(got[held][hips][:3, 3] - got[n_data][hips][:3, 3]) < 1e-3
    assert np.linalg.norm(got[held][hips][:3, 3] - own[held][hips][:3, 3]) > 0.3
    end = got[-1]
    for node in range(len(avatar.skeleton.parents)):
        if node in avatar.humanoid.values():
            assert np.allclose(end[node], own[-1][node], atol=1e-6), avatar.skeleton.names[node]
    assert np.allclose(end[head], own[-1][head], atol=1e-6)


def test_root_without_hips_keeps_the_hips_height(avatar):
    """The issue's repro at the pose level: 30 bundles of Root at the origin + Head + Apply:
    the hips stay where the idle puts them (the bug dropped them ~0.9 m, to the floor), also
    4 s after the last packet."""
    dg = bundle(ROOT0, *_bones(["Head"]), _msg(("/VMC/Ext/Blend/Apply", ",", ())))
    got, own = _run(avatar, dg, 30, 30 + 4 * FPS)
    hips = avatar.humanoid["hips"]
    for k in (10, 29, 30 + 4 * FPS - 1):
        assert abs(got[k][hips][1, 3] - own[k][hips][1, 3]) < 1e-9, (k, got[k][hips][1, 3], own[k][hips][1, 3])
    assert mat_decompose(got[-1][hips])[0][1] > 0.5
