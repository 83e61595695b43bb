"""Small affine and quaternion algebra for the numba kernels (``cache=True``, inlined).

3x4 affine matrices travel as 12-tuples (row-major r00 r01 r02 t0 r10 ... t2, column-vector
convention, DESIGN §3), vectors as 3-tuples and quaternions as (x, y, z, w) 4-tuples, which
numba keeps in registers: nothing here allocates.
"""

from __future__ import annotations

import math

from numba import njit

EPS = 1e-12
IDENT = (1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0)


@njit(inline="always", cache=True)
def world34(world, n):
    if n < 0:
        return IDENT
    return (world[n, 0, 0], world[n, 0, 1], world[n, 0, 2], world[n, 0, 3],
            world[n, 1, 0], world[n, 1, 1], world[n, 1, 2], world[n, 1, 3],
            world[n, 2, 0], world[n, 2, 1], world[n, 2, 2], world[n, 2, 3])


@njit(inline="always", cache=True)
def row34(a, r, c):
    return (a[r, c], a[r, c + 1], a[r, c + 2], a[r, c + 3], a[r, c + 4], a[r, c + 5],
            a[r, c + 6], a[r, c + 7], a[r, c + 8], a[r, c + 9], a[r, c + 10], a[r, c + 11])


@njit(inline="always", cache=True)
def put34(a, r, c, m):
    for j in range(12):
        a[r, c + j] = m[j]


@njit(inline="always", cache=True)
def mul34(a, b):
    return (
        a[0] * b[0] + a[1] * b[4] + a[2] * b[8],
        a[0] * b[1] + a[1] * b[5] + a[2] * b[9],
        a[0] * b[2] + a[1] * b[6] + a[2] * b[10],
        a[0] * b[3] + a[1] * b[7] + a[2] * b[11] + a[3],
        a[4] * b[0] + a[5] * b[4] + a[6] * b[8],
        a[4] * b[1] + a[5] * b[5] + a[6] * b[9],
        a[4] * b[2] + a[5] * b[6] + a[6] * b[10],
        a[4] * b[3] + a[5] * b[7] + a[6] * b[11] + a[7],
        a[8] * b[0] + a[9] * b[4] + a[10] * b[8],
        a[8] * b[1] + a[9] * b[5] + a[10] * b[9],
        a[8] * b[2] + a[9] * b[6] + a[10] * b[10],
        a[8] * b[3] + a[9] * b[7] + a[10] * b[11] + a[11],
    )


@njit(inline="always", cache=True)
def pt(m, x, y, z):
    return (m[0] * x + m[1] * y + m[2] * z + m[3],
            m[4] * x + m[5] * y + m[6] * z + m[7],
            m[8] * x + m[9] * y + m[10] * z + m[11])


@njit(inline="always", cache=True)
def vec(m, x, y, z):
    return (m[0] * x + m[1] * y + m[2] * z,
            m[4] * x + m[5] * y + m[6] * z,
            m[8] * x + m[9] * y + m[10] * z)


@njit(inline="always", cache=True)
def det3(m):
    return (m[0] * (m[5] * m[10] - m[6] * m[9])
            - m[1] * (m[4] * m[10] - m[6] * m[8])
            + m[2] * (m[4] * m[9] - m[5] * m[8]))


@njit(inline="always", cache=True)
def inv34(m):
    """Inverse of an affine 3x4 (adjugate / determinant); a singular matrix gives identity."""
    det = det3(m)
    if abs(det) < 1e-300:
        return IDENT
    i = 1.0 / det
    r00 = (m[5] * m[10] - m[6] * m[9]) * i
    r01 = (m[2] * m[9] - m[1] * m[10]) * i
    r02 = (m[1] * m[6] - m[2] * m[5]) * i
    r10 = (m[6] * m[8] - m[4] * m[10]) * i
    r11 = (m[0] * m[10] - m[2] * m[8]) * i
    r12 = (m[2] * m[4] - m[0] * m[6]) * i
    r20 = (m[4] * m[9] - m[5] * m[8]) * i
    r21 = (m[1] * m[8] - m[0] * m[9]) * i
    r22 = (m[0] * m[5] - m[1] * m[4]) * i
    tx, ty, tz = m[3], m[7], m[11]
    return (r00, r01, r02, -(r00 * tx + r01 * ty + r02 * tz),
            r10, r11, r12, -(r10 * tx + r11 * ty + r12 * tz),
            r20, r21, r22, -(r20 * tx + r21 * ty + r22 * tz))


@njit(inline="always", cache=True)
def inv_vec(m, x, y, z):
    """M3^-1 @ v without forming the inverse (adjugate times v over the determinant)."""
    det = det3(m)
    if abs(det) < 1e-300:
        return x, y, z
    i = 1.0 / det
    return (((m[5] * m[10] - m[6] * m[9]) * x + (m[2] * m[9] - m[1] * m[10]) * y
             + (m[1] * m[6] - m[2] * m[5]) * z) * i,
            ((m[6] * m[8] - m[4] * m[10]) * x + (m[0] * m[10] - m[2] * m[8]) * y
             + (m[2] * m[4] - m[0] * m[6]) * z) * i,
            ((m[4] * m[9] - m[5] * m[8]) * x + (m[1] * m[8] - m[0] * m[9]) * y
             + (m[0] * m[5] - m[1] * m[4]) * z) * i)


@njit(inline="always", cache=True)
def arc_quat(ax, ay, az, bx, by, bz):
    """Unit quaternion (x, y, z, w) of the shortest arc from unit a to unit b."""
    d = ax * bx + ay * by + az * bz
    if d < -1.0 + 1e-12:
        # antiparallel: half turn about an axis perpendicular to a
        px, py, pz = 0.0, az, -ay           # a x (1, 0, 0)
        n = px * px + py * py + pz * pz
        if n < 1e-12:
            px, py, pz = -az, 0.0, ax       # a x (0, 1, 0)
            n = px * px + py * py + pz * pz
        n = math.sqrt(n)
        return px / n, py / n, pz / n, 0.0
    cx = ay * bz - az * by
    cy = az * bx - ax * bz
    cz = ax * by - ay * bx
    w = 1.0 + d
    n = math.sqrt(cx * cx + cy * cy + cz * cz + w * w)
    return cx / n, cy / n, cz / n, w / n


@njit(inline="always", cache=True)
def quat_mat(x, y, z, w):
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    return (1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy),
            2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx),
            2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy))


@njit(inline="always", cache=True)
def rotate_frame(m, q):
    """The 3x4 ``m`` with its 3x3 part post-multiplied by the rotation q (translation kept)."""
    r = quat_mat(q[0], q[1], q[2], q[3])
    return (m[0] * r[0] + m[1] * r[3] + m[2] * r[6], m[0] * r[1] + m[1] * r[4] + m[2] * r[7],
            m[0] * r[2] + m[1] * r[5] + m[2] * r[8], m[3],
            m[4] * r[0] + m[5] * r[3] + m[6] * r[6], m[4] * r[1] + m[5] * r[4] + m[6] * r[7],
            m[4] * r[2] + m[5] * r[5] + m[6] * r[8], m[7],
            m[8] * r[0] + m[9] * r[3] + m[10] * r[6], m[8] * r[1] + m[9] * r[4] + m[10] * r[7],
            m[8] * r[2] + m[9] * r[5] + m[10] * r[8], m[11])


@njit(inline="always", cache=True)
def qmul(a0, a1, a2, a3, b0, b1, b2, b3):
    return (a3 * b0 + a0 * b3 + a1 * b2 - a2 * b1,
            a3 * b1 - a0 * b2 + a1 * b3 + a2 * b0,
            a3 * b2 + a0 * b1 - a1 * b0 + a2 * b3,
            a3 * b3 - a0 * b0 - a1 * b1 - a2 * b2)
