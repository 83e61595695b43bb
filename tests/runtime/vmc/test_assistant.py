"""Assistant input (``--vmc-listen`` on 39540): the camera input stays the pose source; the
received face replaces or merges with the tracked one (``[vmc] face``), and with ``head =
"vmc"`` the received Head bone replaces the tracked head — exact values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from runtime.clock import ReplayClock
from runtime.pose_inputs import TrackInput
from runtime.vmc import VmcInput, VmcInputOptions, VmcReceiver
from tracking.body import BONE_INDEX, EXPRESSION_INDEX, F_EXPR
from tracking.expressions import BLENDSHAPE_INDEX
from tracking.pose_track import PoseTrack, TrackHeader

from .oscdecode import bundle, message

CAM_YAW = math.radians(10.0)
NET_YAW = math.radians(25.0)      # the received Head bone, about Unity's +Y
MS = 1_000_000
TOL = 1e-6                        # float32 on the wire


def _camera():
    bs = np.zeros((2, 52))
    bs[:, BLENDSHAPE_INDEX["jawOpen"]] = 0.3
    bs[:, BLENDSHAPE_INDEX["eyeBlinkLeft"]] = 0.6
    rot = [(0.0, math.sin(CAM_YAW / 2), 0.0, math.cos(CAM_YAW / 2))] * 2
    return TrackInput(PoseTrack([0, 10_000 * MS], rot, blendshapes=bs, header=TrackHeader(frame="avatar")))


def _sample(options):
    clock = ReplayClock(0)
    rx = VmcReceiver("127.0.0.1", 0)
    inp = VmcInput(rx, options=options, inner=_camera())
    inp.start(clock)
    inp.sample(0)                                  # the run's t0: the first (empty) record
    clock.advance(100 * MS)
    rx.handle(bundle(
        message("/VMC/Ext/Blend/Val", ",sf", "jawOpen", 0.5),
        message("/VMC/Ext/Blend/Val", ",sf", "EyeBlinkLeft", 0.2),     # names are case-insensitive
        message("/VMC/Ext/Blend/Val", ",sf", "Joy", 0.75),
        message("/VMC/Ext/Blend/Apply", ","),
        message("/VMC/Ext/Bone/Pos", ",sfffffff", "Head", 0.0, 0.07, 0.01, 0.0, math.sin(NET_YAW / 2), 0.0,
                math.cos(NET_YAW / 2))))
    inp.pump(clock.now_ns())
    out = inp.sample(clock.now_ns() + 50 * MS)     # after the record (arrival + one 60 Hz frame)
    inp.close()
    return out


def test_replace_takes_the_received_face_and_keeps_the_camera_head():
    out = _sample(VmcInputOptions(face="replace"))
    assert out.rotation == pytest.approx([0.0, math.sin(CAM_YAW / 2), 0.0, math.cos(CAM_YAW / 2)], abs=1e-12)
    assert out.blendshapes[BLENDSHAPE_INDEX["jawOpen"]] == pytest.approx(0.5, abs=TOL)
    assert out.blendshapes[BLENDSHAPE_INDEX["eyeBlinkLeft"]] == pytest.approx(0.2, abs=TOL)
    assert out.body.flags[F_EXPR] == 1.0
    assert out.body.expressions[EXPRESSION_INDEX["happy"]] == pytest.approx(0.75, abs=TOL)
    assert out.body.mask[BONE_INDEX["head"]] == 0.0             # head = "camera": no network head


def test_merge_takes_the_larger_value_per_channel():
    out = _sample(VmcInputOptions(face="merge"))
    assert out.blendshapes[BLENDSHAPE_INDEX["jawOpen"]] == pytest.approx(0.5, abs=TOL)     # network
    assert out.blendshapes[BLENDSHAPE_INDEX["eyeBlinkLeft"]] == pytest.approx(0.6, abs=TOL)  # camera


def test_head_vmc_takes_the_received_head_bone_in_our_frame():
    out = _sample(VmcInputOptions(face="replace", head="vmc"))
    h = BONE_INDEX["head"]
    assert out.body.mask[h] == 1.0
    # Unity (x, y, z, w) -> ours (x, −y, −z, w): the same on-screen turn, about our −Y
    assert out.body.bones[h] == pytest.approx([0.0, -math.sin(NET_YAW / 2), 0.0, math.cos(NET_YAW / 2)], abs=TOL)
