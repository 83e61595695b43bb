"""Untrusted VMC input (docs/design.md §11): malformed OSC, wrong types, too few arguments, NaN/inf,
unknown bones, 10,000 distinct blend names and a flood of 10,000 packets per second are
dropped and counted, never raised; the loop keeps its frame rate under the flood (measured).
Real UDP on 127.0.0.1."""

from __future__ import annotations

import socket
import threading
import time

import numpy as np
import pytest

from avatars import load_avatar
from runtime.clock import MonotonicClock
from runtime.loop import Loop
from runtime.rig import AvatarRig
from runtime.vmc import VmcInput, VmcReceiver
from runtime.vmc.receiver import MAX_CUSTOM_NAMES

from .oscdecode import bundle, message

BONE = ",sfffffff"


def _rx():
    return VmcReceiver("127.0.0.1", 0)


def test_malformed_and_wrong_types_are_dropped_and_counted():
    rx = _rx()
    cases = [
        b"", b"garbage", b"/VMC/Ext/Bone/Pos\x00\x00",                     # no type tags: zero args
        b"#bundle\x00" + b"\x00" * 8 + b"\x00\x00\x00\x07abc",              # bad element size
        b"#bundle\x00" + b"\x00" * 8 + b"\x7f\xff\xff\xf0",                 # size past the end
        message("/VMC/Ext/Bone/Pos", ",sffffff", "Head", 0, 0, 0, 0, 0, 1),  # too few floats
        message("/VMC/Ext/Bone/Pos", ",siiiiiii", "Head", 0, 0, 0, 0, 0, 0, 1),   # ints for floats
        message("/VMC/Ext/Blend/Val", ",si", "Joy", 1),
        message("/VMC/Ext/Blend/Val", ",s", "Joy"),
        message("/VMC/Ext/OK", ",f", 1.0),
        message("/VMC/Ext/T", ",i", 3),
    ]
    nested = message("/VMC/Ext/T", ",f", 1.0)
    for _ in range(50):
        nested = bundle(nested)
    cases.append(nested)                                               # nested past the depth limit
    for c in cases:
        assert rx.handle(c) is False
    st = rx.stats
    assert st.malformed + st.bad_types == len(cases)
    assert st.bad_types == 6
    assert rx.take() is None
    rx.close()


def test_non_finite_values_and_unknown_bones_are_dropped():
    rx = _rx()
    nan, inf = float("nan"), float("inf")
    for args in ((nan, 0, 0, 0, 0, 0, 1), (0, 0, 0, 0, 0, 0, inf), (0, 0, 0, 0, 0, 0, 0)):
        rx.handle(message("/VMC/Ext/Bone/Pos", BONE, "Head", *args))
    rx.handle(message("/VMC/Ext/Blend/Val", ",sf", "Joy", nan))
    rx.handle(message("/VMC/Ext/Bone/Pos", BONE, "Tail", 0, 0, 0, 0, 0, 0, 1))
    rx.handle(message("/VMC/Ext/Bone/Pos", BONE, "H" * 5000, 0, 0, 0, 0, 0, 0, 1))
    rx.handle(message("/VMC/Ext/Unknown", ",f", 1.0))
    rx.handle(message("/VMC/Ext/Bone/Pos", BONE + "ii", "Head", 0, 0, 0, 0, 0, 0, 1, 5, 6))   # extra args: ok
    st = rx.stats
    assert (st.non_finite, st.unknown_bones, st.ignored, st.bones) == (4, 2, 1, 1)
    t, s = rx.take()
    assert s.body.mask.sum() == 1 and np.isfinite(s.body.bones).all()
    rx.close()


def test_ten_thousand_blend_names_are_bounded():
    rx = _rx()
    msgs = [message("/VMC/Ext/Blend/Val", ",sf", f"name{i}", 0.5) for i in range(10_000)]
    for k in range(0, 10_000, 100):
        rx.handle(bundle(*msgs[k:k + 100], message("/VMC/Ext/Blend/Apply", ",")))
    assert len(rx.custom_names) == MAX_CUSTOM_NAMES
    assert rx.stats.refused_names == 10_000 - MAX_CUSTOM_NAMES
    rx.handle(bundle(message("/VMC/Ext/Blend/Val", ",sf", "joy", 0.75), message("/VMC/Ext/Blend/Apply", ",")))
    _, s = rx.take()
    assert s.body.expressions[0] == 0.75       # presets still get through (case-insensitive)
    rx.close()


def test_a_flood_keeps_the_loop_at_its_frame_rate(godette_path):
    """10,000 packets per second (bone bundles and garbage) for 2 s at a receiving loop paced
    at 60 fps (pose sampling, substeps, the whole draw pose): the frames keep their rate."""
    av = load_avatar(godette_path)
    rx = _rx()
    port = rx.address[1]
    inp = VmcInput(rx)
    rig = AvatarRig(av, body=True)
    clock = MonotonicClock()
    loop = Loop(rig, inp, clock=clock, draw=lambda info: None)
    rig.warm_up()
    stop = threading.Event()
    sent = [0]
    good = bundle(*[message("/VMC/Ext/Bone/Pos", BONE, n, 0, 1, 0, 0, 0.1, 0, 0.995) for n in
                    ("Hips", "Spine", "Chest", "Neck", "Head", "LeftUpperArm")], message("/VMC/Ext/T", ",f", 1.0))
    bad = b"\x00" * 64

    def flood():
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        t0 = time.perf_counter()
        k = 0
        while not stop.is_set() and time.perf_counter() - t0 < 3.0:
            target = int((time.perf_counter() - t0) * 10_000)
            while k < target:
                s.sendto(good if k % 2 else bad, ("127.0.0.1", port))
                k += 1
            time.sleep(0.0005)
        sent[0] = k
        s.close()

    def frames(seconds):
        inp.start(clock) if not rx._thread.is_alive() else None
        times = []
        t_end = time.perf_counter() + seconds
        nxt = time.perf_counter()
        while time.perf_counter() < t_end:
            nxt += 1 / 60
            loop.frame(clock.now_ns())
            times.append(time.perf_counter())
            time.sleep(max(0.0, nxt - time.perf_counter()))
        d = np.diff(times)
        return len(times) / seconds, float(np.percentile(d, 99)) * 1e3

    quiet_fps, _ = frames(1.0)
    th = threading.Thread(target=flood)
    th.start()
    time.sleep(0.2)
    fps, p99 = frames(2.0)
    stop.set()
    th.join()
    st = rx.stats
    inp.close()
    print(f"\nflood: {sent[0]} packets sent; received {st.datagrams}, dropped {st.dropped}, states {st.states}; "
          f"loop {fps:.1f} fps (quiet {quiet_fps:.1f}), frame interval p99 {p99:.1f} ms")
    assert sent[0] >= 20_000
    assert st.malformed > 1000 and st.states > 1000
    assert fps >= 55.0, fps
    assert p99 < 40.0, p99


def test_root_and_hips_fold_into_the_hips_position(godette_path):
    """hips = p_root + R_root · p_hips (in our frame: Unity x mirrored), the reference computed
    with the math module; the hips rotation carries the root's. The receiver keeps root and
    hips apart (tracking/body.py); the rig folds them when it poses the avatar."""
    from avatars.math3d import mat3_from_quat, quat_mul, vec_transform_quat
    from tracking.pose_track import PoseSample

    rx = _rx()
    a = 0.7
    q_u = (0.0, np.sin(a / 2), 0.0, np.cos(a / 2))             # Unity root rotation about +Y
    rx.handle(bundle(message("/VMC/Ext/Root/Pos", BONE, "root", 0.5, 0.25, -1.0, *q_u),
                     message("/VMC/Ext/Bone/Pos", BONE, "Hips", 0.1, 0.9, 0.2, 0.0, 0.0, 0.0, 1.0)))
    _, s = rx.take()
    rx.close()
    q = np.array([0.0, -np.sin(a / 2), 0.0, np.cos(a / 2)])    # ours
    want = np.array([-0.5, 0.25, -1.0]) + vec_transform_quat(np.array([-0.1, 0.9, 0.2]), q)
    av = load_avatar(godette_path)
    rig = AvatarRig(av, body=True)
    world = rig.pose_world(PoseSample(body=s.body), np.zeros_like(rig.world))
    hips = av.humanoid["hips"]
    parent = av.skeleton.parents[hips]
    p_world = world[parent] if parent >= 0 else np.eye(4)
    assert world[hips][:3, 3] - p_world[:3, 3] == pytest.approx(want, abs=1e-6)
    rest = av.skeleton.rest_world[hips][:3, :3]
    assert world[hips][:3, :3] == pytest.approx(mat3_from_quat(quat_mul(q, np.array([0.0, 0.0, 0.0, 1.0]))) @ rest,
                                                abs=1e-6)
