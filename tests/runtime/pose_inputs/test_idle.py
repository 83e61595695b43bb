"""Kiosk idle pose: fades in when nobody is there, out when a face arrives, never jumps."""

from __future__ import annotations

import numpy as np

from avatars.math3d import quat_angle
from runtime.pose_inputs import InputStatus, PoseInput
from runtime.pose_inputs.idle import IdlePose
from tracking.pose_track import PoseSample

MAX_DEG_PER_S = 20.0   # the idle sway is slow: 4° at 1/7 Hz plus a 1.5 s fade


class Scripted(PoseInput):
    """Neutral pose; a face is found from 3 s to 6 s."""

    def start(self, clock):
        pass

    def pump(self, t_ns):
        pass

    def sample(self, t_ns, out=None):
        out = out or PoseSample()
        out.rotation[:] = (0, 0, 0, 1)
        out.found = 3e9 <= t_ns < 6e9
        return out

    def status(self):
        return InputStatus(live=False)

    def recenter(self):
        pass

    def close(self):
        pass


def test_idle_fades_and_never_jumps():
    idle = IdlePose(Scripted())
    ts = np.arange(0, 10e9, 1e9 / 120).astype(np.int64)
    qs = np.array([idle.sample(int(t)).rotation.copy() for t in ts])
    speed = np.degrees(quat_angle(qs[1:], qs[:-1])) * 120
    assert speed.max() < MAX_DEG_PER_S
    yaw_amp = lambda a, b: np.degrees(quat_angle(qs[(ts >= a) & (ts < b)], np.array([0, 0, 0, 1.0]))).max()  # noqa
    assert yaw_amp(1.6e9, 3.0e9) > 1.0        # idle sway while nobody is there
    assert yaw_amp(4.6e9, 6.0e9) < 1e-9       # a face: exactly the tracked pose once faded out
    assert yaw_amp(8.0e9, 10e9) > 1.0         # nobody again: idle again
    assert idle.status().new_faces == 1       # one face arrived after a loss: the kiosk recenters on it
