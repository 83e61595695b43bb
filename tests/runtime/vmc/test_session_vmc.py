"""``--vmc-send`` in a whole session (the renderer, the loop, a recorded pose track with a
lost face): every drawn frame's bundle decoded by the tests' own OSC decoder — OK's tracking
status follows the input (1, 0 while the face is lost, 1 again), the head's Unity yaw has the
opposite sign of ours, and a new avatar in the running session (``swap_rig``, as ``POST
/avatar`` does) is sent with its own bones from the next frame."""

from __future__ import annotations

import math
import socket

import numpy as np

from avatars import load_avatar
from avatars.math3d import quat_mul
from runtime.config import RunConfig
from runtime.session import Session
from tracking.pose_track import PoseSample, TrackHeader
from tracking.track_io import PoseTrackWriter

from .oscdecode import decode

FPS = 10
YAW = math.radians(20.0)
LOST = (0.5, 1.0)          # seconds of the track without a face
SWAP_AT = 12               # frame after which the avatar becomes Godette


def _track(path):
    s = PoseSample()
    with PoseTrackWriter(path, TrackHeader(frame="avatar", source="test")) as w:
        for k in range(61):
            t = k / 30
            s.t_ns = int(round(t * 1e9))
            s.rotation[:] = (0.0, math.sin(YAW / 2), 0.0, math.cos(YAW / 2))
            s.found = not (LOST[0] <= t < LOST[1])
            s.confidence = 1.0 if s.found else 0.0
            w.write_sample(s)


def test_session_sends_ok_status_head_and_a_swapped_avatar(tmp_path, godette_path):
    track = tmp_path / "lost.jsonl"
    _track(track)
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(("127.0.0.1", 0))
    rx.settimeout(5.0)
    cfg = RunConfig(source=str(track), duration=1.9, fps=FPS, size=(160, 90), output=(f"png:{tmp_path}/png",),
                    vmc_send=(f"127.0.0.1:{rx.getsockname()[1]}",))
    godette = load_avatar(godette_path)
    frames = []

    def on_frame(info, rig):
        frames.append((info.t_ns, rig.avatar))
        if len(frames) == SWAP_AT:
            session.stage.swap_rig(session.stage.make_rig(godette, "rest-shape"))

    with Session(cfg, say=lambda s: None, on_frame=on_frame) as session:
        first = session.stage.rig.avatar
        session.run()
        sent = session.vmc_sender.stats.frames
    got = [decode(rx.recv(65535)) for _ in range(sent)]
    rx.close()
    assert sent == len(frames) >= 18
    status = [next(args for a, _, args in m if a == "/VMC/Ext/OK") for m in got]
    assert all(s[0] == 1 and len(s) == 4 for s in status)
    found = [s[3] for s in status]
    # draw times are frame k's time (offline): lost while LOST[0] <= t < LOST[1], give or take
    # the one frame the track's sampling needs to see the change
    for k, f in enumerate(found):
        t = k / FPS
        if t < LOST[0] - 0.05 or t > LOST[1] + 0.15:
            assert f == 1, (k, found)
        elif LOST[0] + 0.15 < t < LOST[1] - 0.05:
            assert f == 0, (k, found)
    assert found[0] == 1 and 0 in found and found[-1] == 1
    # the head turned left (+yaw about our +Y): the Unity Neck·Head quaternion turns about −Y
    bones = {args[0]: args[4:8] for a, _, args in got[4] if a == "/VMC/Ext/Bone/Pos"}
    q = quat_mul(np.array(bones["Neck"]), np.array(bones["Head"]))
    assert q[1] < -math.sin(YAW / 4) and abs(q[0]) < 0.05 and abs(q[2]) < 0.05
    # before the swap: the default avatar's bones (with its eyes); after it: Godette's
    names = [{args[0] for a, _, args in m if a == "/VMC/Ext/Bone/Pos"} for m in got]
    assert len(names[0]) == len(first.humanoid) and {"LeftEye", "RightEye"} <= names[0]
    assert all(n == names[0] for n in names[:SWAP_AT])
    assert all(len(n) == len(godette.humanoid) for n in names[SWAP_AT:]), ([len(n) for n in names], SWAP_AT, len(godette.humanoid))
    assert names[-1] != names[0]
    blends = {args[0] for a, _, args in got[-1] if a == "/VMC/Ext/Blend/Val"}
    assert len(blends) == len(godette.expressions) and "Joy" in blends
