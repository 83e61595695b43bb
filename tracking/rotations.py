"""Quaternion and Euler helpers used by the tracking package.

Conventions (DESIGN §3): quaternions are ``(x, y, z, w)`` float64 arrays of shape ``(4,)``
or ``(N, 4)``; rotations act on column vectors; angles are radians.

Yaw / pitch / roll (used for limits, tests and the CLI) decompose a rotation as

    R = Ry(yaw) · Rx(pitch) · Rz(roll)

in a right-handed frame with +Y up and the face looking along +Z (toward the viewer), the
frame of both MediaPipe's camera space and the avatar (glTF). Hence:

- yaw > 0: rotation about +Y; the nose turns toward +X (the face's own left, the viewer's
  right).
- pitch > 0: rotation about +X; the nose goes down (−Y): looking down.
- roll > 0: rotation about +Z; the top of the head tilts toward −X (the face's own right,
  the viewer's left): counter-clockwise as the viewer sees it.

This is the same order as the standard head-turn test (DESIGN §4.5).
"""

from __future__ import annotations

import math

import numpy as np

IDENTITY = np.array([0.0, 0.0, 0.0, 1.0])


def quat_normalize(q: np.ndarray) -> np.ndarray:
    """Unit quaternion(s) ``(..., 4)``; a zero quaternion becomes the identity."""
    q = np.asarray(q, dtype=np.float64)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    out = np.where(n > 0.0, q / np.where(n > 0.0, n, 1.0), IDENTITY)
    return out


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product ``a ⊗ b`` of ``(..., 4)`` quaternions: apply ``b`` first, then ``a``."""
    ax, ay, az, aw = np.moveaxis(np.asarray(a, dtype=np.float64), -1, 0)
    bx, by, bz, bw = np.moveaxis(np.asarray(b, dtype=np.float64), -1, 0)
    return np.stack(
        [
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ],
        axis=-1,
    )


def quat_conj(q: np.ndarray) -> np.ndarray:
    """Conjugate (the inverse of a unit quaternion), ``(..., 4)``."""
    q = np.asarray(q, dtype=np.float64)
    return q * np.array([-1.0, -1.0, -1.0, 1.0])


def quat_from_axis_angle(axis, angle: float) -> np.ndarray:
    """Rotation of ``angle`` radians about the unit-normalised ``axis`` (3,), as (4,)."""
    axis = np.asarray(axis, dtype=np.float64)
    n = np.linalg.norm(axis)
    if n == 0.0:
        return IDENTITY.copy()
    s = math.sin(0.5 * angle) / n
    return np.array([axis[0] * s, axis[1] * s, axis[2] * s, math.cos(0.5 * angle)])


def quat_to_matrix(q: np.ndarray) -> np.ndarray:
    """3×3 rotation matrix of a unit quaternion (4,)."""
    x, y, z, w = np.asarray(q, dtype=np.float64)
    return np.array(
        [
            [1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
            [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
            [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)],
        ]
    )


def quat_from_matrix(m: np.ndarray) -> np.ndarray:
    """Unit quaternion (4,) with ``w >= 0`` of the rotation part of a 3×3 (or 4×4) matrix.

    The upper-left 3×3 block is first projected onto the nearest rotation (SVD), so a
    matrix carrying a uniform scale or small numeric drift is accepted.
    Source: Shepperd's method (J. Guidance & Control 1978), branch on the largest diagonal.
    """
    m = np.asarray(m, dtype=np.float64)[:3, :3]
    u, _, vt = np.linalg.svd(m)
    r = u @ vt
    if np.linalg.det(r) < 0:  # a reflection: flip the weakest axis
        u[:, -1] *= -1.0
        r = u @ vt
    tr = r[0, 0] + r[1, 1] + r[2, 2]
    if tr > 0:
        s = 2.0 * math.sqrt(1.0 + tr)
        q = [(r[2, 1] - r[1, 2]) / s, (r[0, 2] - r[2, 0]) / s, (r[1, 0] - r[0, 1]) / s, 0.25 * s]
    elif r[0, 0] > r[1, 1] and r[0, 0] > r[2, 2]:
        s = 2.0 * math.sqrt(1.0 + r[0, 0] - r[1, 1] - r[2, 2])
        q = [0.25 * s, (r[0, 1] + r[1, 0]) / s, (r[0, 2] + r[2, 0]) / s, (r[2, 1] - r[1, 2]) / s]
    elif r[1, 1] > r[2, 2]:
        s = 2.0 * math.sqrt(1.0 + r[1, 1] - r[0, 0] - r[2, 2])
        q = [(r[0, 1] + r[1, 0]) / s, 0.25 * s, (r[1, 2] + r[2, 1]) / s, (r[0, 2] - r[2, 0]) / s]
    else:
        s = 2.0 * math.sqrt(1.0 + r[2, 2] - r[0, 0] - r[1, 1])
        q = [(r[0, 2] + r[2, 0]) / s, (r[1, 2] + r[2, 1]) / s, 0.25 * s, (r[1, 0] - r[0, 1]) / s]
    q = np.array(q)
    if q[3] < 0:
        q = -q
    return q / np.linalg.norm(q)


def quat_from_euler(yaw: float, pitch: float, roll: float) -> np.ndarray:
    """``Ry(yaw)·Rx(pitch)·Rz(roll)`` as a quaternion (4,); radians; signs in the module doc."""
    cy, sy = math.cos(0.5 * yaw), math.sin(0.5 * yaw)
    cp, sp = math.cos(0.5 * pitch), math.sin(0.5 * pitch)
    cr, sr = math.cos(0.5 * roll), math.sin(0.5 * roll)
    # qy ⊗ qx ⊗ qz expanded
    return np.array(
        [
            cy * sp * cr + sy * cp * sr,
            sy * cp * cr - cy * sp * sr,
            cy * cp * sr - sy * sp * cr,
            cy * cp * cr + sy * sp * sr,
        ]
    )


def euler_from_quat(q: np.ndarray) -> np.ndarray:
    """``(yaw, pitch, roll)`` radians, shape ``(..., 3)``, inverse of :func:`quat_from_euler`.

    Pitch is in [−π/2, π/2]; yaw and roll in (−π, π].
    """
    q = np.asarray(q, dtype=np.float64)
    x, y, z, w = np.moveaxis(q, -1, 0)
    r02 = 2 * (x * z + y * w)
    r22 = 1 - 2 * (x * x + y * y)
    r12 = 2 * (y * z - x * w)
    r10 = 2 * (x * y + z * w)
    r11 = 1 - 2 * (x * x + z * z)
    yaw = np.arctan2(r02, r22)
    pitch = np.arcsin(np.clip(-r12, -1.0, 1.0))
    roll = np.arctan2(r10, r11)
    return np.stack([yaw, pitch, roll], axis=-1)


def quat_angle(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Geodesic angle in radians between unit quaternions ``a`` and ``b`` (``(..., 4)``).

    Computed as 2·atan2(|vec(a⁻¹b)|, |w(a⁻¹b)|), exact to rounding even for tiny angles
    (arccos of the dot product loses half the digits there).
    """
    d = quat_mul(quat_conj(a), b)
    return 2.0 * np.arctan2(np.linalg.norm(d[..., :3], axis=-1), np.abs(d[..., 3]))


def quat_log(q: np.ndarray) -> np.ndarray:
    """Rotation vector (axis · angle, radians) (3,) of a unit quaternion, shortest arc."""
    q = np.asarray(q, dtype=np.float64)
    if q[3] < 0:
        q = -q
    v = q[:3]
    s = math.sqrt(float(v @ v))
    if s < 1e-12:
        return 2.0 * v
    return v * (2.0 * math.atan2(s, q[3]) / s)


def quat_slerp(a: np.ndarray, b: np.ndarray, u: float, out: np.ndarray | None = None) -> np.ndarray:
    """Spherical linear interpolation from ``a`` (u = 0) to ``b`` (u = 1), shortest arc.

    Returns exactly ``a`` at ``u == 0`` and exactly ``b`` (or ``-b``, the same rotation, when
    the arc crosses hemispheres) at ``u == 1``. Writes into ``out`` (4,) when given.
    Source: Shoemake, "Animating rotation with quaternion curves", SIGGRAPH 1985.
    """
    if out is None:
        out = np.empty(4)
    ax, ay, az, aw = float(a[0]), float(a[1]), float(a[2]), float(a[3])
    bx, by, bz, bw = float(b[0]), float(b[1]), float(b[2]), float(b[3])
    if u <= 0.0:
        out[0], out[1], out[2], out[3] = ax, ay, az, aw
        return out
    d = ax * bx + ay * by + az * bz + aw * bw
    sign = 1.0
    if d < 0.0:
        d, sign = -d, -1.0
    if u >= 1.0:
        out[0], out[1], out[2], out[3] = sign * bx, sign * by, sign * bz, sign * bw
        return out
    if d > 0.9995:  # nearly parallel: normalised lerp is exact to ~1e-7 rad
        ka, kb = 1.0 - u, u * sign
    else:
        th = math.acos(d)
        st = math.sin(th)
        ka, kb = math.sin((1.0 - u) * th) / st, sign * math.sin(u * th) / st
    x, y, z, w = ka * ax + kb * bx, ka * ay + kb * by, ka * az + kb * bz, ka * aw + kb * bw
    n = math.sqrt(x * x + y * y + z * z + w * w)
    out[0], out[1], out[2], out[3] = x / n, y / n, z / n, w / n
    return out


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vector(s) ``v`` ``(..., 3)`` by the unit quaternion ``q`` (4,)."""
    return np.asarray(v, dtype=np.float64) @ quat_to_matrix(q).T


def quat_exp(v: np.ndarray) -> np.ndarray:
    """Unit quaternion (4,) of the rotation vector ``v`` (3,) (axis · angle, radians)."""
    v = np.asarray(v, dtype=np.float64)
    a = math.sqrt(float(v @ v))
    if a < 1e-12:
        q = np.array([0.5 * v[0], 0.5 * v[1], 0.5 * v[2], 1.0])
        return q / np.linalg.norm(q)
    s = math.sin(0.5 * a) / a
    return np.array([v[0] * s, v[1] * s, v[2] * s, math.cos(0.5 * a)])
