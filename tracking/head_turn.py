"""The standard head-turn test motion (DESIGN §4.5), used by metrics, benchmarks and fps checks.

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


def euler_yxz_to_quat(yaw: float, pitch: float, roll: float) -> np.ndarray:
    """Ry(yaw)·Rx(pitch)·Rz(roll) as a unit (x, y, z, w) quaternion (radians)."""
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    # q = qy * qx * qz with qy = (0, sy, 0, cy), qx = (sp, 0, 0, cp), qz = (0, 0, sr, cr)
    x = cy * sp * cr + sy * cp * sr
    y = sy * cp * cr - cy * sp * sr
    z = cy * cp * sr - sy * sp * cr
    w = cy * cp * cr + sy * sp * sr
    return np.array([x, y, z, w])


def head_turn_rotation(t: float) -> np.ndarray:
    """Head rotation (4,) xyzw relative to rest at ``t`` seconds of the standard head-turn test."""
    return euler_yxz_to_quat(*head_turn_angles(t))
