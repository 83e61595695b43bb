"""Head pose in avatar terms: camera frame -> avatar frame, mirror, recenter, limits.

Frames. MediaPipe's camera frame has x right, y up, z toward the viewer; the avatar frame
(glTF) has +Y up and the avatar facing +Z, toward the viewer. The axes coincide, so
without mirroring the avatar copies the face exactly as the camera sees it (an unmirrored
video). Yaw/pitch/roll follow :mod:`avatars.math3d`: yaw > 0 turns the nose toward +X
(the avatar's own left, the screen's right), pitch > 0 looks down, roll > 0 tilts the
head counter-clockwise as seen on screen.

Mirror (on by default, selfie view): the avatar is the user's reflection in the plane
x = 0. With the reflection M = diag(−1, 1, 1), R' = M·R·M, i.e. the quaternion
(x, y, z, w) -> (x, −y, −z, w) and the translation (x, y, z) -> (−x, y, z): yaw and roll
change sign, pitch does not. A user turning to THEIR left (the nose toward camera +x,
positive camera yaw) turns the avatar to the SCREEN's left (negative avatar yaw).

Recenter: the neutral pose (R0, t0) is the one the user holds when looking "straight",
taken after mirroring. Modelling the difference as the camera's own rotation, the head's
rotation relative to neutral is R0⁻¹·R and its displacement R0⁻¹·(t − t0). Without a
neutral, R0 = I and t0 = (0, 0, −``default_distance_m``).

Limits: yaw, pitch and roll of the recentered rotation are clamped per axis, translation
per component.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from avatars.math3d import euler_from_quat, quat_conj, quat_from_euler, quat_mul, vec_transform_quat

MIRROR_Q = np.array([1.0, -1.0, -1.0, 1.0])
MIRROR_T = np.array([-1.0, 1.0, 1.0])


def mirror_pose(rotation: np.ndarray, translation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Reflect a pose in the plane x = 0 (module doc); returns new arrays."""
    return np.asarray(rotation, np.float64) * MIRROR_Q, np.asarray(translation, np.float64) * MIRROR_T


@dataclass(frozen=True)
class HeadPoseOptions:
    """Settings of :class:`HeadPoseMapper`. Angles in radians, distances in metres.

    Attributes:
        mirror: selfie view (module doc).
        yaw_limit, pitch_limit, roll_limit: symmetric per-axis limits of the output.
        translation_scale: multiplies the displacement (1 = true metres).
        translation_limit: per-component limit of the output displacement.
        default_distance_m: the assumed neutral distance before any recenter.
    """

    mirror: bool = True
    yaw_limit: float = math.radians(80.0)
    pitch_limit: float = math.radians(60.0)
    roll_limit: float = math.radians(60.0)
    translation_scale: float = 1.0
    translation_limit: float = 0.3
    default_distance_m: float = 0.5


class HeadPoseMapper:
    """Converts camera-frame face poses to avatar-frame head poses (module doc)."""

    def __init__(self, options: HeadPoseOptions = HeadPoseOptions()) -> None:
        self.options = options
        self.clear_neutral()

    @property
    def has_neutral(self) -> bool:
        return self._has_neutral

    def clear_neutral(self) -> None:
        """Back to the default neutral (facing the camera at ``default_distance_m``)."""
        self._q0_inv = np.array([0.0, 0.0, 0.0, 1.0])
        self._t0 = np.array([0.0, 0.0, -self.options.default_distance_m])
        self._has_neutral = False

    def mirrored(self, rotation: np.ndarray, translation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The camera-frame pose in the avatar's axes, mirrored if the option says so."""
        if self.options.mirror:
            return mirror_pose(rotation, translation)
        return np.array(rotation, np.float64), np.array(translation, np.float64)

    def recenter(self, rotation: np.ndarray, translation: np.ndarray) -> None:
        """Take this camera-frame pose (4,), (3,) metres as the neutral one."""
        q0, t0 = self.mirrored(rotation, translation)
        self._q0_inv = quat_conj(q0 / np.linalg.norm(q0))
        self._t0 = t0
        self._has_neutral = True

    def apply(self, rotation: np.ndarray, translation: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Avatar-frame head rotation (4,) and displacement (3,) metres relative to neutral,
        limited, from a camera-frame pose (4,), (3,) metres."""
        o = self.options
        q, t = self.mirrored(rotation, translation)
        q = quat_mul(self._q0_inv, q)
        if q[3] < 0:
            q = -q
        d = vec_transform_quat(t - self._t0, self._q0_inv, via_matrix=True) * o.translation_scale
        np.clip(d, -o.translation_limit, o.translation_limit, out=d)
        yaw, pitch, roll = euler_from_quat(q)
        if abs(yaw) > o.yaw_limit or abs(pitch) > o.pitch_limit or abs(roll) > o.roll_limit:
            q = quat_from_euler(
                float(np.clip(yaw, -o.yaw_limit, o.yaw_limit)),
                float(np.clip(pitch, -o.pitch_limit, o.pitch_limit)),
                float(np.clip(roll, -o.roll_limit, o.roll_limit)),
            )
        return q, d

    def euler(self, rotation: np.ndarray, translation: np.ndarray | None = None) -> np.ndarray:
        """(yaw, pitch, roll) radians of :meth:`apply` (convenience for tests and the CLI)."""
        return euler_from_quat(self.apply(rotation, np.zeros(3) if translation is None else translation)[0])
