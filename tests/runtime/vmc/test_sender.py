"""VMC Performer: our raw datagrams decoded by the tests' own OSC decoder — every address's
type tag, the Head bone's Unity-space rotation for a known head yaw, blend names and values,
OK's tracking status going 0 on a lost face and back."""

from __future__ import annotations

import math
import socket

import numpy as np
import pytest

from avatars import load_avatar
from avatars.generate import default_avatar_path
from runtime.rig import AvatarRig
from runtime.vmc import VmcSender, parse_target
from tracking.pose_track import PoseSample

from .oscdecode import decode

TOL = 1e-6   # float32 on the wire
TAGS = {"/VMC/Ext/Root/Pos": ",sfffffff", "/VMC/Ext/Bone/Pos": ",sfffffff", "/VMC/Ext/Blend/Val": ",sf",
        "/VMC/Ext/Blend/Apply": ",", "/VMC/Ext/OK": ",iiii", "/VMC/Ext/T": ",f"}


@pytest.fixture(scope="module")
def godette(godette_path):
    return load_avatar(godette_path)


def _listener():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    s.settimeout(2.0)
    return s


def _frame(avatar, yaw_deg=0.0, found=True, blends=None):
    rig = AvatarRig(avatar)
    s = PoseSample()
    h = math.radians(yaw_deg) / 2
    s.rotation[:] = (0.0, math.sin(h), 0.0, math.cos(h))
    s.found = found
    world = rig.draw_pose(s, 0.0).copy()
    return world, dict(blends or {})


def _send(avatar, world, expr, found=True, **kw):
    rx = _listener()
    with VmcSender(avatar, [rx.getsockname()], **kw) as tx:
        tx.send_frame(world, expr, 1.25, found=found)
        data = rx.recv(65535)
    rx.close()
    return decode(data)


def test_every_address_has_the_spec_type_tags_and_no_int_for_a_float(godette):
    world, expr = _frame(godette, blends={"happy": 0.25})
    msgs = _send(godette, world, expr)
    seen = {a for a, _, _ in msgs}
    assert seen == set(TAGS)
    for addr, tags, args in msgs:
        assert tags == TAGS[addr], addr
        for t, a in zip(tags[1:], args):
            assert isinstance(a, {"f": float, "i": int, "s": str}[t])
    order = [a for a, _, _ in msgs]
    assert order.index("/VMC/Ext/Blend/Apply") > max(i for i, a in enumerate(order) if a == "/VMC/Ext/Blend/Val")
    ok = [args for a, _, args in msgs if a == "/VMC/Ext/OK"][0]
    assert ok == [1, 3, 0, 1]
    assert [args for a, _, args in msgs if a == "/VMC/Ext/T"][0][0] == pytest.approx(1.25)
    bones = {args[0] for a, _, args in msgs if a == "/VMC/Ext/Bone/Pos"}
    assert {"Hips", "Spine", "Head", "Neck", "LeftUpperArm", "RightHand"} <= bones
    assert len(bones) == len(godette.humanoid)


def test_rest_pose_is_the_identity_in_every_bone(godette):
    world, _ = _frame(godette)
    for addr, _, args in _send(godette, world, {}):
        if addr == "/VMC/Ext/Bone/Pos" and args[0] not in ("LeftUpperArm", "RightUpperArm"):
            assert args[4:8] == pytest.approx([0, 0, 0, 1], abs=TOL), args[0]


@pytest.mark.parametrize("yaw", [30.0, -30.0])
def test_head_yaw_sign_in_unity_space(godette, yaw):
    """Our avatar (facing +Z) turns by +yaw about +Y: its nose goes to +X, the screen's right
    (camera in front). Unity is left-handed with X mirrored, so the same on-screen turn is a
    rotation about Unity +Y by −yaw: the Head's + Neck's Unity quaternion has y = −sin(yaw/2)·...,
    and Unity's forward (0, 0, 1) rotated by it points to Unity −X (the screen's right there)."""
    world, _ = _frame(godette, yaw)
    msgs = {args[0]: args[1:] for a, _, args in _send(godette, world, {}) if a == "/VMC/Ext/Bone/Pos"}
    # the neck and head share the turn (neck_share); their product is the whole head turn
    from avatars.math3d import quat_mul, vec_transform_quat

    q = quat_mul(np.array(msgs["Neck"][3:7]), np.array(msgs["Head"][3:7]))
    h = math.radians(yaw) / 2
    assert q == pytest.approx([0.0, -math.sin(h), 0.0, math.cos(h)], abs=1e-5)
    fwd = vec_transform_quat(np.array([0.0, 0.0, 1.0]), q)   # the same quaternion algebra (a rotation is
    assert np.sign(fwd[0]) == -np.sign(yaw)                   # handedness-free); Unity −X = screen right


def test_blend_names_vrm0_by_default_vrm1_as_option(godette):
    world, _ = _frame(godette)
    expr = {"happy": 0.5, "aa": 0.25, "blinkLeft": 1.0, "lookUp": 0.125}
    v0 = {args[0]: args[1] for a, _, args in _send(godette, world, expr) if a == "/VMC/Ext/Blend/Val"}
    assert v0["Joy"] == 0.5 and v0["A"] == 0.25 and v0["Blink_L"] == 1.0 and v0["LookUp"] == 0.125
    assert v0["Sorrow"] == 0.0 and "happy" not in v0
    assert len(v0) == len(godette.expressions)
    v1 = {args[0]: args[1] for a, _, args in _send(godette, world, expr, names="vrm1") if a == "/VMC/Ext/Blend/Val"}
    assert v1["happy"] == 0.5 and v1["blinkLeft"] == 1.0 and "Joy" not in v1


def test_ok_tracking_status_goes_0_on_a_lost_face_and_back(godette):
    world, _ = _frame(godette)
    rx = _listener()
    status = []
    with VmcSender(godette, [rx.getsockname()]) as tx:
        for found in (True, False, False, True):
            tx.send_frame(world, {}, 0.0, found=found)
            status.append([args for a, _, args in decode(rx.recv(65535)) if a == "/VMC/Ext/OK"][0][3])
    rx.close()
    assert status == [1, 0, 0, 1]


def test_divisor_sends_every_nth_frame(godette):
    world, _ = _frame(godette)
    rx = _listener()
    rx.settimeout(0.2)
    with VmcSender(godette, [rx.getsockname()], divisor=3) as tx:
        sent = [tx.send_frame(world, {}, 0.0, found=True) > 0 for _ in range(7)]
    assert sent == [True, False, False, True, False, False, True]
    rx.close()


def test_default_avatar_vrm1_thumbs_shifted():
    av = load_avatar(default_avatar_path())
    names = {args[0] for a, _, args in _send(av, av.skeleton.rest_world, {}) if a == "/VMC/Ext/Bone/Pos"}
    assert "Head" in names and "Hips" in names
    from runtime.vmc.names import unity_bone_name

    assert unity_bone_name("leftThumbMetacarpal") == "LeftThumbProximal"
    assert unity_bone_name("leftThumbProximal") == "LeftThumbIntermediate"
    assert unity_bone_name("rightThumbDistal") == "RightThumbDistal"
    assert unity_bone_name("upperChest") == "UpperChest"


def test_parse_target():
    assert parse_target("192.168.1.5") == ("192.168.1.5", 39539)
    assert parse_target("localhost:39540") == ("localhost", 39540)
    with pytest.raises(ValueError):
        parse_target("host:99999")
