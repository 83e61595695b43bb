"""Quaternion and 4x4 matrix helpers shared by avatars/, solver/ and render/.

Conventions (DESIGN §3): quaternions are (x, y, z, w) as glTF stores them; matrices are
4x4 for column vectors (``p_world = M @ p_local``), float64, shape (4, 4) or (N, 4, 4).
All functions are vectorized over leading axes.
"""

from __future__ import annotations

import numpy as np


def quat_normalize(q: np.ndarray) -> np.ndarray:
    """(..., 4) -> unit quaternions (..., 4); a zero quaternion becomes identity."""
    q = np.asarray(q, dtype=np.float64)
    n = np.linalg.norm(q, axis=-1, keepdims=True)
    out = np.where(n > 0, q / np.where(n > 0, n, 1.0), np.array([0.0, 0.0, 0.0, 1.0]))
    return out


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Hamilton product a*b of (..., 4) xyzw quaternions (apply b first, then a)."""
    ax, ay, az, aw = np.moveaxis(np.asarray(a, np.float64), -1, 0)
    bx, by, bz, bw = np.moveaxis(np.asarray(b, np.float64), -1, 0)
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
    """Conjugate (the inverse of a unit quaternion), (..., 4)."""
    q = np.asarray(q, np.float64)
    return q * np.array([-1.0, -1.0, -1.0, 1.0])


def quat_rotate(q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Rotate vectors v (..., 3) by unit quaternions q (..., 4)."""
    q = np.asarray(q, np.float64)
    v = np.asarray(v, np.float64)
    u = q[..., :3]
    w = q[..., 3:4]
    t = 2.0 * np.cross(u, v)
    return v + w * t + np.cross(u, t)


def quat_from_axis_angle(axis: np.ndarray, angle: np.ndarray | float) -> np.ndarray:
    """Quaternion (..., 4) rotating by ``angle`` radians about unit ``axis`` (..., 3)."""
    axis = np.asarray(axis, np.float64)
    angle = np.asarray(angle, np.float64)[..., None]
    return np.concatenate([axis * np.sin(angle / 2), np.cos(angle / 2)], axis=-1)


def quat_from_euler_yxz(yaw: float, pitch: float, roll: float) -> np.ndarray:
    """Ry(yaw) * Rx(pitch) * Rz(roll) as an xyzw quaternion (radians, DESIGN §4.5)."""
    qy = quat_from_axis_angle(np.array([0.0, 1.0, 0.0]), yaw)
    qx = quat_from_axis_angle(np.array([1.0, 0.0, 0.0]), pitch)
    qz = quat_from_axis_angle(np.array([0.0, 0.0, 1.0]), roll)
    return quat_mul(qy, quat_mul(qx, qz))


def quat_to_mat3(q: np.ndarray) -> np.ndarray:
    """Unit quaternions (..., 4) -> rotation matrices (..., 3, 3)."""
    q = np.asarray(q, np.float64)
    x, y, z, w = np.moveaxis(q, -1, 0)
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    m = np.empty(q.shape[:-1] + (3, 3))
    m[..., 0, 0] = 1 - 2 * (yy + zz)
    m[..., 0, 1] = 2 * (xy - wz)
    m[..., 0, 2] = 2 * (xz + wy)
    m[..., 1, 0] = 2 * (xy + wz)
    m[..., 1, 1] = 1 - 2 * (xx + zz)
    m[..., 1, 2] = 2 * (yz - wx)
    m[..., 2, 0] = 2 * (xz - wy)
    m[..., 2, 1] = 2 * (yz + wx)
    m[..., 2, 2] = 1 - 2 * (xx + yy)
    return m


def mat3_to_quat(m: np.ndarray) -> np.ndarray:
    """Rotation matrices (..., 3, 3) -> unit xyzw quaternions (..., 4) with w >= 0."""
    m = np.asarray(m, np.float64)
    shape = m.shape[:-2]
    m = m.reshape(-1, 3, 3)
    q = np.empty((m.shape[0], 4))
    tr = m[:, 0, 0] + m[:, 1, 1] + m[:, 2, 2]
    for i in range(m.shape[0]):
        a = m[i]
        if tr[i] > 0:
            s = np.sqrt(tr[i] + 1.0) * 2
            q[i] = [(a[2, 1] - a[1, 2]) / s, (a[0, 2] - a[2, 0]) / s, (a[1, 0] - a[0, 1]) / s, 0.25 * s]
        elif a[0, 0] > a[1, 1] and a[0, 0] > a[2, 2]:
            s = np.sqrt(1.0 + a[0, 0] - a[1, 1] - a[2, 2]) * 2
            q[i] = [0.25 * s, (a[0, 1] + a[1, 0]) / s, (a[0, 2] + a[2, 0]) / s, (a[2, 1] - a[1, 2]) / s]
        elif a[1, 1] > a[2, 2]:
            s = np.sqrt(1.0 + a[1, 1] - a[0, 0] - a[2, 2]) * 2
            q[i] = [(a[0, 1] + a[1, 0]) / s, 0.25 * s, (a[1, 2] + a[2, 1]) / s, (a[0, 2] - a[2, 0]) / s]
        else:
            s = np.sqrt(1.0 + a[2, 2] - a[0, 0] - a[1, 1]) * 2
            q[i] = [(a[0, 2] + a[2, 0]) / s, (a[1, 2] + a[2, 1]) / s, 0.25 * s, (a[1, 0] - a[0, 1]) / s]
    q = quat_normalize(q)
    q[q[:, 3] < 0] *= -1
    return q.reshape(shape + (4,))


def quat_slerp(a: np.ndarray, b: np.ndarray, t: np.ndarray | float) -> np.ndarray:
    """Shortest-path spherical interpolation between unit quaternions, t in [0, 1]."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    t = np.asarray(t, np.float64)[..., None]
    d = np.sum(a * b, axis=-1, keepdims=True)
    b = np.where(d < 0, -b, b)
    d = np.abs(d)
    theta = np.arccos(np.clip(d, -1.0, 1.0))
    s = np.sin(theta)
    small = s < 1e-9
    s_safe = np.where(small, 1.0, s)
    wa = np.where(small, 1.0 - t, np.sin((1.0 - t) * theta) / s_safe)
    wb = np.where(small, t, np.sin(t * theta) / s_safe)
    return quat_normalize(wa * a + wb * b)


def compose_trs(t: np.ndarray, r: np.ndarray, s: np.ndarray) -> np.ndarray:
    """Translation (..., 3), rotation xyzw (..., 4), scale (..., 3) -> matrices (..., 4, 4) = T*R*S."""
    t = np.asarray(t, np.float64)
    m = np.zeros(t.shape[:-1] + (4, 4))
    m[..., :3, :3] = quat_to_mat3(r) * np.asarray(s, np.float64)[..., None, :]
    m[..., :3, 3] = t
    m[..., 3, 3] = 1.0
    return m


def decompose_trs(m: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Matrices (..., 4, 4) -> (translation (..., 3), rotation xyzw (..., 4), scale (..., 3)).

    Assumes no shear; a negative determinant is folded into the x scale.
    """
    m = np.asarray(m, np.float64)
    t = m[..., :3, 3].copy()
    cols = m[..., :3, :3]
    s = np.linalg.norm(cols, axis=-2)
    det = np.linalg.det(cols)
    s[..., 0] = np.where(det < 0, -s[..., 0], s[..., 0])
    rot = cols / np.where(s == 0, 1.0, s)[..., None, :]
    return t, mat3_to_quat(rot), s


def shortest_arc(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Quaternion (..., 4) rotating unit vector a onto unit vector b by the smallest angle."""
    a = np.asarray(a, np.float64)
    b = np.asarray(b, np.float64)
    d = np.sum(a * b, axis=-1, keepdims=True)
    c = np.cross(a, b)
    q = np.concatenate([c, 1.0 + d], axis=-1)
    # Antiparallel: rotate pi about any axis perpendicular to a.
    anti = (1.0 + d[..., 0]) < 1e-12
    if np.any(anti):
        alt = np.cross(a, np.array([1.0, 0.0, 0.0]))
        bad = np.linalg.norm(alt, axis=-1) < 1e-6
        alt = np.where(bad[..., None], np.cross(a, np.array([0.0, 1.0, 0.0])), alt)
        alt = alt / np.linalg.norm(alt, axis=-1, keepdims=True)
        q = np.where(anti[..., None], np.concatenate([alt, np.zeros_like(d)], axis=-1), q)
    return quat_normalize(q)
