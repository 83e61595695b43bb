"""The standard head-turn test motion (docs/design.md §4.5): the ``turn-test`` pose source (the
default without a webcam, :func:`runtime.pose_inputs.head_turn_track`) and the motion of
metrics, benchmarks and fps checks. Like the generated idle (:mod:`avatars.clips.idle`) it is
our own content, a pure function of time.

For 0 <= t <= 4 s the head's world rotation is Ry(yaw)·Rx(pitch)·Rz(roll) applied to its
rest world rotation, with

    yaw   = 60° · w · sin(2π · 0.5 · t)
    pitch = 15° · w · sin(2π · 0.7 · t)
    roll  = 10° · w · sin(2π · 0.3 · t)
    w     = sin²(π t / 4)

(the envelope starts and ends at rest with zero speed), then 8 s still at rest: 12 s in all.
Rotations are (x, y, z, w) quaternions in the avatar frame (+Y up, avatar facing +Z).
"""

from __future__ import annotations

import math

import numpy as np

from ..math3d import quat_from_euler

MOTION_S = 4.0
STILL_S = 8.0
DURATION_S = MOTION_S + STILL_S


def head_turn_angles(t: float) -> tuple[float, float, float]:
    """(yaw, pitch, roll) in radians at time ``t`` seconds of the standard head-turn test."""
    if t <= 0.0 or t >= MOTION_S:
        return 0.0, 0.0, 0.0
    w = math.sin(math.pi * t / MOTION_S) ** 2
    yaw = math.radians(60.0) * w * math.sin(2 * math.pi * 0.5 * t)
    pitch = math.radians(15.0) * w * math.sin(2 * math.pi * 0.7 * t)
    roll = math.radians(10.0) * w * math.sin(2 * math.pi * 0.3 * t)
    return yaw, pitch, roll


def head_turn_rotation(t: float) -> np.ndarray:
    """Head rotation (4,) xyzw relative to rest at ``t`` seconds of the standard head-turn test."""
    return quat_from_euler(*head_turn_angles(t))


#: Keys per second of :func:`head_turn_clip`.
CLIP_RATE_HZ = 60
#: The built-in motions made of the head turn: name -> (seconds of one loop, its motion seconds).
HEAD_TURN_MOTIONS = {"turn-test": (MOTION_S, MOTION_S), "move-then-settle": (DURATION_S, MOTION_S)}


def head_turn_clip(name: str = "move-then-settle"):
    """The head turn as a body-motion clip (:class:`avatars.clips.Clip`, looping, keyed at
    :data:`CLIP_RATE_HZ`): "turn-test" is the 4 s turn over and over; "move-then-settle" the
    turn then 8 s still (the metrics' motion: the hair comes to rest, runtime/settle.py
    measures when). The head bone carries the whole turn as a world delta on the avatar's rest
    pose (``rest=None``), the rest of the body stays at rest, so its subtree turns about the
    head joint as the metrics' poser does (docs/design.md §4.5).

    Raises:
        KeyError: another name than those of :data:`HEAD_TURN_MOTIONS`.
    """
    from .model import Clip

    loop_s, _ = HEAD_TURN_MOTIONS[name]
    t = np.arange(int(round(loop_s * CLIP_RATE_HZ)) + 1) / CLIP_RATE_HZ
    head = np.array([head_turn_rotation(float(x)) for x in t])
    still = np.tile([0.0, 0.0, 0.0, 1.0], (len(t), 1))
    return Clip(name=name, source="", times=t, rotations={"head": head, "neck": still}, hips_position=None,
                rest=None, loop=True, frame_rate=float(CLIP_RATE_HZ),
                notes=(f"generated: the standard head turn ({MOTION_S:g} s)"
                       + (f" then {STILL_S:g} s still" if loop_s > MOTION_S else ", repeated"),))
