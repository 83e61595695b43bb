"""Compiled substep kernels (numba, ``cache=True``): one call per substep, no allocation.

Entry points (all take ``world`` (N, 4, 4) float64 animated world matrices of the skeleton,
hair joints at their rest local rotations, and the packed buffers ``F`` float64 / ``I``
int64 described in :mod:`solver.layout`):

- :func:`step_kernel` advances one substep of h = F[G_H] seconds (DESIGN §4.1-§4.4);
- :func:`reset_kernel` puts every tail at rest under ``world`` with zero velocity;
- :func:`pose_kernel` turns (interpolated) tails into joint rotations for skinning,
  writing world matrices and/or local rotations without touching the simulation state.

Small 3x4 affine matrices travel as 12-tuples (row-major, column-vector convention) and
vectors as 3-tuples, which numba keeps in registers: the substep path allocates nothing.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .layout import (
    AI, A_NODE, A_SEG, CF, CI, CI_NODE, CI_SHAPE, C_BC, C_BR, C_NRM, C_OFF, C_RAD, C_TAIL, C_WA, C_WB, C_WN,
    C_WR, GF, G_CONTACT_TOL, G_H, G_TELEPORT, G_U_MIN, H_C, H_K, H_M, H_MAXIT, H_MODE, H_N_AUTO_RESET,
    H_N_CONTACT, H_N_CONTACT_TOTAL, H_N_ROOT_INSIDE, H_N_STEPS, H_N_UNRESOLVED, H_OF_CB, H_OF_CH, H_OF_COL,
    H_OF_G, H_OF_PAIRF, H_OF_POSE, H_OF_SEG, H_OI_AFF, H_OI_CAND, H_OI_CH, H_OI_COL, H_OI_PAIR, H_OI_SEG, H_P,
    H_S, KF, KI, KI_ANCHOR, KI_CENTER, KI_SEG0, KI_SEG1, K_APREV, K_CPREV, K_DET0, K_S, MODE_REST_SHAPE,
    MODE_VRM, PF, P_D, P_Q, P_RQ, P_W, SF, SHAPE_INSIDE_CAPSULE, SHAPE_INSIDE_SPHERE, SHAPE_PLANE, SHAPE_SPHERE,
    SI, SI_AUTH, SI_FAST, SI_NEEDW, SI_NODE, SI_P0, SI_P1, SI_REFMASK, SI_SPAR, S_B, S_DAMP, S_G, S_GPRE, S_HIT,
    S_K, S_L0, S_REL, S_TLOC, S_V, S_VDRAG, S_VEXT, S_VST, S_W, S_X, S_XP,
)

_EPS = 1e-12
_IDENT = (1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0)


# ============================================================== small affine algebra
@njit(inline="always", cache=True)
def _world34(world, n):
    if n < 0:
        return _IDENT
    return (world[n, 0, 0], world[n, 0, 1], world[n, 0, 2], world[n, 0, 3],
            world[n, 1, 0], world[n, 1, 1], world[n, 1, 2], world[n, 1, 3],
            world[n, 2, 0], world[n, 2, 1], world[n, 2, 2], world[n, 2, 3])


@njit(inline="always", cache=True)
def _row34(a, r, c):
    return (a[r, c], a[r, c + 1], a[r, c + 2], a[r, c + 3], a[r, c + 4], a[r, c + 5],
            a[r, c + 6], a[r, c + 7], a[r, c + 8], a[r, c + 9], a[r, c + 10], a[r, c + 11])


@njit(inline="always", cache=True)
def _put34(a, r, c, m):
    for j in range(12):
        a[r, c + j] = m[j]


@njit(inline="always", cache=True)
def _mul34(a, b):
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
def _pt(m, x, y, z):
    return (m[0] * x + m[1] * y + m[2] * z + m[3],
            m[4] * x + m[5] * y + m[6] * z + m[7],
            m[8] * x + m[9] * y + m[10] * z + m[11])


@njit(inline="always", cache=True)
def _vec(m, x, y, z):
    return (m[0] * x + m[1] * y + m[2] * z,
            m[4] * x + m[5] * y + m[6] * z,
            m[8] * x + m[9] * y + m[10] * z)


@njit(inline="always", cache=True)
def _det3(m):
    return (m[0] * (m[5] * m[10] - m[6] * m[9])
            - m[1] * (m[4] * m[10] - m[6] * m[8])
            + m[2] * (m[4] * m[9] - m[5] * m[8]))


@njit(inline="always", cache=True)
def _inv34(m):
    """Inverse of an affine 3x4 (adjugate / determinant); a singular matrix gives identity."""
    det = _det3(m)
    if abs(det) < 1e-300:
        return _IDENT
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
def _inv_vec(m, x, y, z):
    """M3^-1 @ v without forming the inverse (adjugate times v over the determinant)."""
    det = _det3(m)
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
def _arc_quat(ax, ay, az, bx, by, bz):
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
def _quat_mat(x, y, z, w):
    xx, yy, zz = x * x, y * y, z * z
    xy, xz, yz = x * y, x * z, y * z
    wx, wy, wz = w * x, w * y, w * z
    return (1.0 - 2.0 * (yy + zz), 2.0 * (xy - wz), 2.0 * (xz + wy),
            2.0 * (xy + wz), 1.0 - 2.0 * (xx + zz), 2.0 * (yz - wx),
            2.0 * (xz - wy), 2.0 * (yz + wx), 1.0 - 2.0 * (xx + yy))


@njit(inline="always", cache=True)
def _rotate_frame(m, q):
    """The 3x4 ``m`` with its 3x3 part post-multiplied by the rotation q (translation kept)."""
    r = _quat_mat(q[0], q[1], q[2], q[3])
    return (m[0] * r[0] + m[1] * r[3] + m[2] * r[6], m[0] * r[1] + m[1] * r[4] + m[2] * r[7],
            m[0] * r[2] + m[1] * r[5] + m[2] * r[8], m[3],
            m[4] * r[0] + m[5] * r[3] + m[6] * r[6], m[4] * r[1] + m[5] * r[4] + m[6] * r[7],
            m[4] * r[2] + m[5] * r[5] + m[6] * r[8], m[7],
            m[8] * r[0] + m[9] * r[3] + m[10] * r[6], m[8] * r[1] + m[9] * r[4] + m[10] * r[7],
            m[8] * r[2] + m[9] * r[5] + m[10] * r[8], m[11])


@njit(inline="always", cache=True)
def _qmul(a0, a1, a2, a3, b0, b1, b2, b3):
    return (a3 * b0 + a0 * b3 + a1 * b2 - a2 * b1,
            a3 * b1 - a0 * b2 + a1 * b3 + a2 * b0,
            a3 * b2 + a0 * b1 - a1 * b0 + a2 * b3,
            a3 * b3 - a0 * b0 - a1 * b1 - a2 * b2)


# ============================================================== geometry
@njit(inline="always", cache=True)
def _point_segment(px, py, pz, ax, ay, az, bx, by, bz):
    """Closest point q on segment a-b to p; returns (distance, qx, qy, qz)."""
    ex, ey, ez = bx - ax, by - ay, bz - az
    ee = ex * ex + ey * ey + ez * ez
    t = 0.0
    if ee > 1e-30:
        t = ((px - ax) * ex + (py - ay) * ey + (pz - az) * ez) / ee
        t = min(1.0, max(0.0, t))
    qx, qy, qz = ax + t * ex, ay + t * ey, az + t * ez
    dx, dy, dz = px - qx, py - qy, pz - qz
    return math.sqrt(dx * dx + dy * dy + dz * dz), qx, qy, qz


@njit(cache=True)
def _segment_segment(p0x, p0y, p0z, p1x, p1y, p1z, q0x, q0y, q0z, q1x, q1y, q1z):
    """Closest points of p(u) = p0 + u (p1 - p0) and q(v) = q0 + v (q1 - q0), u, v in [0, 1].

    Returns (distance, u, px, py, pz, qx, qy, qz). Ericson, Real-Time Collision Detection
    §5.1.9; degenerate segments (points) are handled.
    """
    d1x, d1y, d1z = p1x - p0x, p1y - p0y, p1z - p0z
    d2x, d2y, d2z = q1x - q0x, q1y - q0y, q1z - q0z
    rx, ry, rz = p0x - q0x, p0y - q0y, p0z - q0z
    a = d1x * d1x + d1y * d1y + d1z * d1z
    e = d2x * d2x + d2y * d2y + d2z * d2z
    f = d2x * rx + d2y * ry + d2z * rz
    u = 0.0
    v = 0.0
    if a <= 1e-30 and e <= 1e-30:
        u = 0.0
        v = 0.0
    elif a <= 1e-30:
        u = 0.0
        v = min(1.0, max(0.0, f / e))
    else:
        c = d1x * rx + d1y * ry + d1z * rz
        if e <= 1e-30:
            v = 0.0
            u = min(1.0, max(0.0, -c / a))
        else:
            b = d1x * d2x + d1y * d2y + d1z * d2z
            den = a * e - b * b
            if den > 1e-30:
                u = min(1.0, max(0.0, (b * f - c * e) / den))
            else:
                u = 0.0
            v = (b * u + f) / e
            if v < 0.0:
                v = 0.0
                u = min(1.0, max(0.0, -c / a))
            elif v > 1.0:
                v = 1.0
                u = min(1.0, max(0.0, (b - c) / a))
    px, py, pz = p0x + u * d1x, p0y + u * d1y, p0z + u * d1z
    qx, qy, qz = q0x + v * d2x, q0y + v * d2y, q0z + v * d2z
    dx, dy, dz = px - qx, py - qy, pz - qz
    return math.sqrt(dx * dx + dy * dy + dz * dz), u, px, py, pz, qx, qy, qz


@njit(cache=True)
def _contact(shape, col, c, ox, oy, oz, xx, xy, xz, rh, al, segment_wise):
    """Contact of link o-x with collider row ``c`` (world data in ``col``).

    Returns (nx, ny, nz, depth, u, hit, root_inside): the unit direction n in which the
    contact point must move, the separation still needed along it (metres), and the link
    parameter u of that point (1 = the tail). Outside shapes use the closest points of the
    link p(u) and the capsule axis q(v), u, v in [0, 1] (DESIGN §4.4); when the root o itself
    overlaps (it cannot move) or ``segment_wise`` is off, the tail alone is tested (u = 1).
    Inside shapes and planes are convex, so keeping the tail inside / above keeps the whole
    link there. ``al`` (metres) is the overlap this pair had in the authored rest pose,
    which is allowed (the rest pose stays an equilibrium).
    """
    ax, ay, az = col[c, C_WA], col[c, C_WA + 1], col[c, C_WA + 2]
    if shape == SHAPE_PLANE:
        nx, ny, nz = col[c, C_WN], col[c, C_WN + 1], col[c, C_WN + 2]
        sd = (xx - ax) * nx + (xy - ay) * ny + (xz - az) * nz - rh + al
        if sd >= 0.0:
            return 0.0, 0.0, 0.0, 0.0, 1.0, False, False
        return nx, ny, nz, -sd, 1.0, True, False
    rc = col[c, C_WR]
    if shape == SHAPE_SPHERE:
        # a capsule of zero length: the closest link point to the centre
        rr = rc + rh
        root_inside = False
        if segment_wise:
            ex, ey, ez = ox - ax, oy - ay, oz - az
            root_inside = ex * ex + ey * ey + ez * ez < rr * rr
        rr -= al
        if root_inside or not segment_wise:
            u = 1.0
            px, py, pz = xx, xy, xz
        else:
            lx, ly, lz = xx - ox, xy - oy, xz - oz
            ll = lx * lx + ly * ly + lz * lz
            u = 0.0
            if ll > 1e-30:
                u = min(1.0, max(0.0, ((ax - ox) * lx + (ay - oy) * ly + (az - oz) * lz) / ll))
            px, py, pz = ox + u * lx, oy + u * ly, oz + u * lz
        nx, ny, nz = px - ax, py - ay, pz - az
        d = math.sqrt(nx * nx + ny * ny + nz * nz)
        if d >= rr:
            return 0.0, 0.0, 0.0, 0.0, 1.0, False, root_inside
        if d < _EPS:
            nx, ny, nz = xx - ox, xy - oy, xz - oz
            d = math.sqrt(nx * nx + ny * ny + nz * nz)
            if d < _EPS:
                return 0.0, 0.0, 0.0, 0.0, 1.0, False, root_inside
            return nx / d, ny / d, nz / d, rr, u, True, root_inside
        return nx / d, ny / d, nz / d, rr - d, u, True, root_inside
    bx, by, bz = col[c, C_WB], col[c, C_WB + 1], col[c, C_WB + 2]
    if shape == SHAPE_INSIDE_SPHERE or shape == SHAPE_INSIDE_CAPSULE:

        rin = rc - rh + al
        dt, qx, qy, qz = _point_segment(xx, xy, xz, ax, ay, az, bx, by, bz)
        if dt <= rin or dt < _EPS:
            return 0.0, 0.0, 0.0, 0.0, 1.0, False, False
        return (qx - xx) / dt, (qy - xy) / dt, (qz - xz) / dt, dt - rin, 1.0, True, False
    # outside sphere / capsule
    rr = rc + rh
    root_inside = False
    if segment_wise:
        dr, _, _, _ = _point_segment(ox, oy, oz, ax, ay, az, bx, by, bz)
        root_inside = dr < rr
    rr -= al
    if root_inside or not segment_wise:
        u = 1.0
        d, qx, qy, qz = _point_segment(xx, xy, xz, ax, ay, az, bx, by, bz)
        px, py, pz = xx, xy, xz
    else:
        d, u, px, py, pz, qx, qy, qz = _segment_segment(ox, oy, oz, xx, xy, xz, ax, ay, az, bx, by, bz)
    if d >= rr:
        return 0.0, 0.0, 0.0, 0.0, 1.0, False, root_inside
    nx, ny, nz = px - qx, py - qy, pz - qz
    if d < _EPS:
        # on the axis: leave along the link direction
        nx, ny, nz = xx - ox, xy - oy, xz - oz
    nn = math.sqrt(nx * nx + ny * ny + nz * nz)
    if nn < _EPS:
        return 0.0, 0.0, 0.0, 0.0, 1.0, False, root_inside
    return nx / nn, ny / nn, nz / nn, rr - d, u, True, root_inside


@njit(inline="always", cache=True)
def _rotate_out(ox, oy, oz, xx, xy, xz, length, nx, ny, nz, depth, u, u_min):
    """Turn the link about its fixed root so that its point at parameter u moves ``depth``
    along n: the tail turns in the plane of the link and n by φ = depth / (u L sin β)
    (β the angle between n and the link; a Newton step on the separation), at most 1 rad
    per correction. When n runs along the link (β ≈ 0) a fixed tangent breaks the tie.
    Returns the new tail (exactly at distance L from the root)."""
    dx, dy, dz = xx - ox, xy - oy, xz - oz
    dn = math.sqrt(dx * dx + dy * dy + dz * dz)
    if dn < _EPS or length < _EPS:
        return xx, xy, xz
    dx, dy, dz = dx / dn, dy / dn, dz / dn
    nd = nx * dx + ny * dy + nz * dz
    tx, ty, tz = nx - nd * dx, ny - nd * dy, nz - nd * dz
    sinb = math.sqrt(tx * tx + ty * ty + tz * tz)
    if sinb < 1e-6:
        # n along the link: any tangent clears it; take world X (or Z) across the link
        tx, ty, tz = 1.0 - dx * dx, -dx * dy, -dx * dz
        tn = math.sqrt(tx * tx + ty * ty + tz * tz)
        if tn < 0.5:
            tx, ty, tz = -dz * dx, -dz * dy, 1.0 - dz * dz
            tn = math.sqrt(tx * tx + ty * ty + tz * tz)
        tx, ty, tz = tx / tn, ty / tn, tz / tn
    else:
        tx, ty, tz = tx / sinb, ty / sinb, tz / sinb
    phi = depth / (max(u, u_min) * length * max(sinb, 0.1))
    if phi > 1.0:
        phi = 1.0
    cp, sp = math.cos(phi), math.sin(phi)
    return (ox + length * (cp * dx + sp * tx), oy + length * (cp * dy + sp * ty),
            oz + length * (cp * dz + sp * tz))


@njit(cache=True)
def _pair_depth(shape, col, c, ox, oy, oz, xx, xy, xz, rh, segment_wise):
    """Overlap depth (metres, > 0 overlapping) of link o-x with collider ``c`` as
    :func:`_contact` tests it (no allowance)."""
    ax, ay, az = col[c, C_WA], col[c, C_WA + 1], col[c, C_WA + 2]
    if shape == SHAPE_PLANE:
        return rh - ((xx - ax) * col[c, C_WN] + (xy - ay) * col[c, C_WN + 1] + (xz - az) * col[c, C_WN + 2])
    bx, by, bz = col[c, C_WB], col[c, C_WB + 1], col[c, C_WB + 2]
    rc = col[c, C_WR]
    if shape == SHAPE_INSIDE_SPHERE or shape == SHAPE_INSIDE_CAPSULE:

        dt, _, _, _ = _point_segment(xx, xy, xz, ax, ay, az, bx, by, bz)
        return dt - (rc - rh)
    rr = rc + rh
    if segment_wise:
        dr, _, _, _ = _point_segment(ox, oy, oz, ax, ay, az, bx, by, bz)
        if dr >= rr:
            d, _, _, _, _, _, _, _ = _segment_segment(ox, oy, oz, xx, xy, xz, ax, ay, az, bx, by, bz)
            return rr - d
    dt, _, _, _ = _point_segment(xx, xy, xz, ax, ay, az, bx, by, bz)
    return rr - dt


@njit(cache=True)
def overlap_kernel(world, F, I, out):
    """Overlap depth (metres, > 0 overlapping) of every (segment, collider) reference at the
    current tails, measured exactly as the contact test sees it (no allowance); ``out`` (P,).
    Used at build time on the rest pose to set the allowances."""
    seg, col, ch, g, segi, coli, chi, pairs, aff = _sections(F, I)
    _update_colliders(world, col, coli, I[H_C], F[I[H_OF_CB]:I[H_OF_CB] + 4 * I[H_C]])
    segment_wise = I[H_MODE] != MODE_VRM
    for k in range(I[H_K]):
        s = (abs(_det3(_world34(world, chi[k, KI_ANCHOR]))) / ch[k, K_DET0]) ** (1.0 / 3.0)
        for i in range(chi[k, KI_SEG0], chi[k, KI_SEG1]):
            w = _row34(seg, i, S_W)
            ox, oy, oz = w[3], w[7], w[11]
            rh = seg[i, S_HIT] * s
            for p in range(segi[i, SI_P0], segi[i, SI_P1]):
                c = pairs[p]
                out[p] = _pair_depth(coli[c, CI_SHAPE], col, c, ox, oy, oz, seg[i, S_X], seg[i, S_X + 1],
                                     seg[i, S_X + 2], rh, segment_wise)
    return 0


# ============================================================== sections
@njit(inline="always", cache=True)
def _sections(F, I):
    S = I[H_S]
    C = I[H_C]
    K = I[H_K]
    P = I[H_P]
    M = I[H_M]
    seg = F[I[H_OF_SEG]:I[H_OF_SEG] + S * SF].reshape((S, SF))
    col = F[I[H_OF_COL]:I[H_OF_COL] + C * CF].reshape((C, CF))
    ch = F[I[H_OF_CH]:I[H_OF_CH] + K * KF].reshape((K, KF))
    g = F[I[H_OF_G]:I[H_OF_G] + GF]
    segi = I[I[H_OI_SEG]:I[H_OI_SEG] + S * SI].reshape((S, SI))
    coli = I[I[H_OI_COL]:I[H_OI_COL] + C * CI].reshape((C, CI))
    chi = I[I[H_OI_CH]:I[H_OI_CH] + K * KI].reshape((K, KI))
    pairs = I[I[H_OI_PAIR]:I[H_OI_PAIR] + P]
    aff = I[I[H_OI_AFF]:I[H_OI_AFF] + M * AI].reshape((M, AI))
    return seg, col, ch, g, segi, coli, chi, pairs, aff


@njit(inline="always", cache=True)
def _update_colliders(world, col, coli, C, cb):
    """World head/tail/radius/normal of every collider, and the compact bounding spheres
    ``cb`` (C, 4): centre and radius (infinite for planes)."""
    prev = -2
    m = _IDENT
    sc = 1.0
    for c in range(C):
        node = coli[c, CI_NODE]
        if node != prev:
            m = _world34(world, node)
            sc = abs(_det3(m)) ** (1.0 / 3.0)
            prev = node
        a = _pt(m, col[c, C_OFF], col[c, C_OFF + 1], col[c, C_OFF + 2])
        b = _pt(m, col[c, C_TAIL], col[c, C_TAIL + 1], col[c, C_TAIL + 2])
        r = col[c, C_RAD] * sc
        for j in range(3):
            col[c, C_WA + j] = a[j]
            col[c, C_WB + j] = b[j]
        col[c, C_WR] = r
        if coli[c, CI_SHAPE] == SHAPE_PLANE:
            n = _vec(m, col[c, C_NRM], col[c, C_NRM + 1], col[c, C_NRM + 2])
            nn = math.sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2])
            if nn < _EPS:
                nn = 1.0
            for j in range(3):
                col[c, C_WN + j] = n[j] / nn
            col[c, C_BR] = -1.0
            cb[4 * c] = a[0]
            cb[4 * c + 1] = a[1]
            cb[4 * c + 2] = a[2]
            cb[4 * c + 3] = np.inf
        else:
            hx, hy, hz = 0.5 * (b[0] - a[0]), 0.5 * (b[1] - a[1]), 0.5 * (b[2] - a[2])
            br = math.sqrt(hx * hx + hy * hy + hz * hz) + r
            col[c, C_BC] = a[0] + hx
            col[c, C_BC + 1] = a[1] + hy
            col[c, C_BC + 2] = a[2] + hz
            col[c, C_BR] = br
            cb[4 * c] = a[0] + hx
            cb[4 * c + 1] = a[1] + hy
            cb[4 * c + 2] = a[2] + hz
            cb[4 * c + 3] = br


@njit(inline="always", cache=True)
def _frame(world, seg, segi, i):
    """World frame H of joint i with its rest local rotation: from the body when it hangs from
    the body, else carried by its solved simulated ancestor (authored joints: exact)."""
    sp = segi[i, SI_SPAR]
    node = segi[i, SI_NODE]
    if sp < 0:
        return _world34(world, node)
    if segi[i, SI_AUTH] != 0:
        # authored: keep the animated local transforms below the solved ancestor
        d = _mul34(_row34(seg, sp, S_W), _inv34(_world34(world, segi[sp, SI_NODE])))
        return _mul34(d, _world34(world, node))
    return _mul34(_row34(seg, sp, S_W), _row34(seg, i, S_REL))


@njit(inline="always", cache=True)
def _solved_frame(h, seg, i, ox, oy, oz, xx, xy, xz):
    """Joint frame after the shortest-arc rotation from the rest axis to the tail direction
    (three-vrm's local formulation, exact for scaled frames); returns (frame, local quat)."""
    tx, ty, tz = seg[i, S_TLOC], seg[i, S_TLOC + 1], seg[i, S_TLOC + 2]
    tn = math.sqrt(tx * tx + ty * ty + tz * tz)
    bx, by, bz = _inv_vec(h, xx - ox, xy - oy, xz - oz)
    bn = math.sqrt(bx * bx + by * by + bz * bz)
    if tn < _EPS or bn < _EPS:
        return h, (0.0, 0.0, 0.0, 1.0)
    q = _arc_quat(tx / tn, ty / tn, tz / tn, bx / bn, by / bn, bz / bn)
    return _rotate_frame(h, q), q


# ============================================================== reset
@njit(cache=True)
def reset_kernel(world, F, I):
    """Every tail at rest under ``world``, velocity zero, history cleared. Allocation-free."""
    seg, col, ch, g, segi, coli, chi, pairs, aff = _sections(F, I)
    K = I[H_K]
    for k in range(K):
        anchor = chi[k, KI_ANCHOR]
        m = _world34(world, anchor)
        ch[k, K_APREV] = m[3]
        ch[k, K_APREV + 1] = m[7]
        ch[k, K_APREV + 2] = m[11]
        ch[k, K_S] = (abs(_det3(m)) / ch[k, K_DET0]) ** (1.0 / 3.0)
        _put34(ch, k, K_CPREV, _world34(world, chi[k, KI_CENTER]))
        for i in range(chi[k, KI_SEG0], chi[k, KI_SEG1]):
            hm = _frame(world, seg, segi, i)
            x = _pt(hm, seg[i, S_TLOC], seg[i, S_TLOC + 1], seg[i, S_TLOC + 2])
            for j in range(3):
                seg[i, S_X + j] = x[j]
                seg[i, S_XP + j] = x[j]
                seg[i, S_V + j] = 0.0
            _put34(seg, i, S_W, hm)
    return 0


# ============================================================== step
@njit(inline="always", cache=True)
def _candidates(cb, C, refm, ox, oy, oz, bnd, segi, i, pairs, cand):
    """Collider references of segment i whose bounding sphere can touch the link's ball
    (centre o, radius ``bnd`` = L + r_h: every tail the step can produce lies in it).
    Writes pair indices into ``cand``; returns their count. With at most 63 colliders a
    branchless pass over the compact bounds ``cb`` (C, 4) builds a bit mask first."""
    n = 0
    p0 = segi[i, SI_P0]
    p1 = segi[i, SI_P1]
    if refm != 0:
        m = np.int64(0)
        for c in range(C):
            ex = cb[4 * c] - ox
            ey = cb[4 * c + 1] - oy
            ez = cb[4 * c + 2] - oz
            rr = bnd + cb[4 * c + 3]
            if ex * ex + ey * ey + ez * ez <= rr * rr:
                m |= np.int64(1) << np.int64(c)
        m &= refm
        if m == 0:
            return 0
        for p in range(p0, p1):
            if (m >> np.int64(pairs[p])) & np.int64(1):
                cand[n] = p
                n += 1
        return n
    for p in range(p0, p1):
        c = pairs[p]
        ex = cb[4 * c] - ox
        ey = cb[4 * c + 1] - oy
        ez = cb[4 * c + 2] - oz
        rr = bnd + cb[4 * c + 3]
        if ex * ex + ey * ey + ez * ez <= rr * rr:
            cand[n] = p
            n += 1
    return n


@njit(cache=True)
def step_kernel(world, F, I):
    """Advance every chain by one substep (DESIGN §4.1 rest-shape, §4.2 legacy, or the VRM
    Verlet of three-vrm/UniVRM), with colliders sampled from ``world``.

    Returns 1 when an automatic reset (teleport) happened instead of a step, else 0.
    """
    seg, col, ch, g, segi, coli, chi, pairs, aff = _sections(F, I)
    C = I[H_C]
    K = I[H_K]
    mode = I[H_MODE]
    maxit = I[H_MAXIT]
    h = g[G_H]
    inv_h = 1.0 / h
    tele = g[G_TELEPORT]
    tol = g[G_CONTACT_TOL]
    u_min = g[G_U_MIN]
    allow = F[I[H_OF_PAIRF]:I[H_OF_PAIRF] + I[H_P]]
    cb = F[I[H_OF_CB]:I[H_OF_CB] + 4 * C]
    cand = I[I[H_OI_CAND]:I[H_OI_CAND] + C + 1]
    I[H_N_STEPS] += 1
    n_contact = 0
    n_unresolved = 0
    n_root_inside = 0

    # ---- chain scale and teleport detection (anchor jump within one substep)
    jumped = False
    prev_anchor = -2
    m = _IDENT
    s = 1.0
    for k in range(K):
        anchor = chi[k, KI_ANCHOR]
        if anchor != prev_anchor:
            m = _world34(world, anchor)
            s = (abs(_det3(m)) / ch[k, K_DET0]) ** (1.0 / 3.0)
            prev_anchor = anchor
        ch[k, K_S] = s
        dx = m[3] - ch[k, K_APREV]
        dy = m[7] - ch[k, K_APREV + 1]
        dz = m[11] - ch[k, K_APREV + 2]
        if dx * dx + dy * dy + dz * dz > (tele * s) * (tele * s):
            jumped = True
        ch[k, K_APREV] = m[3]
        ch[k, K_APREV + 1] = m[7]
        ch[k, K_APREV + 2] = m[11]
    if jumped:
        reset_kernel(world, F, I)
        I[H_N_AUTO_RESET] += 1
        I[H_N_CONTACT] = 0
        I[H_N_UNRESOLVED] = 0
        I[H_N_ROOT_INSIDE] = 0
        return 1

    _update_colliders(world, col, coli, C, cb)
    segment_wise = mode != MODE_VRM

    for k in range(K):
        s = ch[k, K_S]
        s0 = chi[k, KI_SEG0]
        s1 = chi[k, KI_SEG1]
        # ---- centre space: carry the tail history with the centre node (three-vrm "center")
        cn = chi[k, KI_CENTER]
        if cn >= 0:
            cm = _world34(world, cn)
            d = _mul34(cm, _inv34(_row34(ch, k, K_CPREV)))
            _put34(ch, k, K_CPREV, cm)
            for i in range(s0, s1):
                x = _pt(d, seg[i, S_X], seg[i, S_X + 1], seg[i, S_X + 2])
                xp = _pt(d, seg[i, S_XP], seg[i, S_XP + 1], seg[i, S_XP + 2])
                v = _vec(d, seg[i, S_V], seg[i, S_V + 1], seg[i, S_V + 2])
                for j in range(3):
                    seg[i, S_X + j] = x[j]
                    seg[i, S_XP + j] = xp[j]
                    seg[i, S_V + j] = v[j]
        ma = _world34(world, chi[k, KI_ANCHOR])
        for i in range(s0, s1):
            fast = segi[i, SI_FAST] != 0
            if fast:
                # rest-shape, root at the simulated parent's tail: no frame composition
                node_h = _IDENT
                sp = segi[i, SI_SPAR]
                ox, oy, oz = seg[sp, S_X], seg[sp, S_X + 1], seg[sp, S_X + 2]
                length = s * seg[i, S_L0]
                px, py, pz = 0.0, 0.0, 0.0
            else:
                node_h = _frame(world, seg, segi, i)
                ox, oy, oz = node_h[3], node_h[7], node_h[11]
                # rest offset carried by the joint's current (parent-relative) frame
                px, py, pz = _vec(node_h, seg[i, S_TLOC], seg[i, S_TLOC + 1], seg[i, S_TLOC + 2])
                length = math.sqrt(px * px + py * py + pz * pz)
            xx, xy, xz = seg[i, S_X], seg[i, S_X + 1], seg[i, S_X + 2]
            if segi[i, SI_AUTH] != 0:
                # authored motion wins: follow the animated tail, keep a consistent velocity
                nx_, ny_, nz_ = ox + px, oy + py, oz + pz
                for j in range(3):
                    seg[i, S_XP + j] = seg[i, S_X + j]
                seg[i, S_X] = nx_
                seg[i, S_X + 1] = ny_
                seg[i, S_X + 2] = nz_
                seg[i, S_V] = (nx_ - xx) * inv_h
                seg[i, S_V + 1] = (ny_ - xy) * inv_h
                seg[i, S_V + 2] = (nz_ - xz) * inv_h
                _put34(seg, i, S_W, node_h)
                continue
            rh = seg[i, S_HIT] * s
            n_cand = 0
            if segi[i, SI_P1] > segi[i, SI_P0]:
                n_cand = _candidates(cb, C, segi[i, SI_REFMASK], ox, oy, oz, length + rh, segi, i, pairs, cand)
            if mode == MODE_VRM:
                # ---- three-vrm / UniVRM Verlet, one step of h (stiffness and gravity per step)
                inv_l = 1.0 / length if length > _EPS else 0.0
                st = seg[i, S_VST] * h * s * inv_l
                keep = 1.0 - seg[i, S_VDRAG]
                ge = h * s
                yx = xx + (xx - seg[i, S_XP]) * keep + px * st + seg[i, S_VEXT] * ge
                yy = xy + (xy - seg[i, S_XP + 1]) * keep + py * st + seg[i, S_VEXT + 1] * ge
                yz = xz + (xz - seg[i, S_XP + 2]) * keep + pz * st + seg[i, S_VEXT + 2] * ge
                dx, dy, dz = yx - ox, yy - oy, yz - oz
                dn = math.sqrt(dx * dx + dy * dy + dz * dz)
                if dn > _EPS:
                    hx, hy, hz = ox + dx * (length / dn), oy + dy * (length / dn), oz + dz * (length / dn)
                else:
                    hx, hy, hz = ox + px, oy + py, oz + pz
                for q in range(n_cand):
                    c = pairs[cand[q]]
                    cnx, cny, cnz, dep, _, hit, _ = _contact(coli[c, CI_SHAPE], col, c, ox, oy, oz, hx, hy, hz,
                                                             rh, 0.0, False)
                    if hit:
                        # three-vrm: push the tail out along n, then restore the length
                        n_contact += 1
                        hx, hy, hz = hx + cnx * dep, hy + cny * dep, hz + cnz * dep
                        dx, dy, dz = hx - ox, hy - oy, hz - oz
                        dn = math.sqrt(dx * dx + dy * dy + dz * dz)
                        if dn > _EPS:
                            hx, hy, hz = ox + dx * (length / dn), oy + dy * (length / dn), oz + dz * (length / dn)
                vx, vy, vz = (hx - xx) * inv_h, (hy - xy) * inv_h, (hz - xz) * inv_h
            else:
                # ---- DESIGN §4.1 / §4.2 spring step
                if mode == MODE_REST_SHAPE:
                    # restoring offset from the saved rest arc carried by the anchor frame
                    ax_, ay_, az_ = _vec(ma, seg[i, S_B], seg[i, S_B + 1], seg[i, S_B + 2])
                    gpx, gpy, gpz = _vec(ma, seg[i, S_GPRE], seg[i, S_GPRE + 1], seg[i, S_GPRE + 2])
                else:
                    # legacy: from the parent's current (already deflected) frame
                    ax_, ay_, az_ = px, py, pz
                    gpx, gpy, gpz = 0.0, 0.0, 0.0
                kk = seg[i, S_K]
                damp = seg[i, S_DAMP]
                fx = kk * (ox + ax_ - xx) + s * seg[i, S_G] - gpx
                fy = kk * (oy + ay_ - xy) + s * seg[i, S_G + 1] - gpy
                fz = kk * (oz + az_ - xz) + s * seg[i, S_G + 2] - gpz
                ux = damp * (seg[i, S_V] + h * fx)
                uy = damp * (seg[i, S_V + 1] + h * fy)
                uz = damp * (seg[i, S_V + 2] + h * fz)
                dx, dy, dz = xx + h * ux - ox, xy + h * uy - oy, xz + h * uz - oz
                dn = math.sqrt(dx * dx + dy * dy + dz * dz)
                if dn > 1e-9 * length and dn > 1e-300:
                    sc = length / dn
                    hx, hy, hz = ox + dx * sc, oy + dy * sc, oz + dz * sc
                else:
                    # degenerate: the rest direction
                    an = math.sqrt(ax_ * ax_ + ay_ * ay_ + az_ * az_)
                    sc = length / an if an > _EPS else 0.0
                    hx, hy, hz = ox + ax_ * sc, oy + ay_ * sc, oz + az_ * sc
                # velocity rebuilt from the length-projected position (DESIGN §4.4)
                vx, vy, vz = (hx - xx) * inv_h, (hy - xy) * inv_h, (hz - xz) * inv_h
                if n_cand > 0:
                    hits = 0
                    converged = False
                    v0x, v0y, v0z = vx, vy, vz
                    mx, my, mz = 0.0, 0.0, 0.0
                    for _it in range(maxit):
                        moved = False
                        for q in range(n_cand):
                            p = cand[q]
                            c = pairs[p]
                            cnx, cny, cnz, dep, uu, hit, rin = _contact(coli[c, CI_SHAPE], col, c, ox, oy, oz,
                                                                        hx, hy, hz, rh, allow[p] * s, segment_wise)
                            if _it == 0 and rin:
                                n_root_inside += 1
                            if not hit or dep <= 1e-9 * length:
                                # resolved to round-off: no correction, so that the discrete
                                # contact decision does not hinge on the last bits
                                continue
                            nhx, nhy, nhz = _rotate_out(ox, oy, oz, hx, hy, hz, length, cnx, cny, cnz, dep, uu, u_min)
                            ddx, ddy, ddz = nhx - hx, nhy - hy, nhz - hz
                            dd = math.sqrt(ddx * ddx + ddy * ddy + ddz * ddz)
                            if dd <= 0.0:
                                continue
                            moved = True
                            hits += 1
                            hx, hy, hz = nhx, nhy, nhz
                            # bounce-free: remove only the inward part of the rebuilt velocity
                            mx, my, mz = ddx / dd, ddy / dd, ddz / dd
                            vn = vx * mx + vy * my + vz * mz
                            if vn < 0.0:
                                vx, vy, vz = vx - vn * mx, vy - vn * my, vz - vn * mz
                        if not moved:
                            converged = True
                            break
                    if hits > 0:
                        n_contact += hits
                        # remove the velocity along the link's radial direction
                        dx, dy, dz = hx - ox, hy - oy, hz - oz
                        dn = math.sqrt(dx * dx + dy * dy + dz * dz)
                        if dn > _EPS:
                            dx, dy, dz = dx / dn, dy / dn, dz / dn
                            vr = vx * dx + vy * dy + vz * dz
                            vx, vy, vz = vx - vr * dx, vy - vr * dy, vz - vr * dz
                        # never leave faster than before the contact along the last correction
                        allowed = max(v0x * mx + v0y * my + v0z * mz, 0.0)
                        vm = vx * mx + vy * my + vz * mz
                        if vm > allowed:
                            vx, vy, vz = vx - (vm - allowed) * mx, vy - (vm - allowed) * my, vz - (vm - allowed) * mz
                    if hits > 0 and not converged:
                        # residual overlap after the last pass (diagnostics)
                        for q in range(n_cand):
                            p = cand[q]
                            c = pairs[p]
                            _, _, _, dep, _, hit, _ = _contact(coli[c, CI_SHAPE], col, c, ox, oy, oz,
                                                               hx, hy, hz, rh, allow[p] * s, segment_wise)
                            if hit and dep > tol:
                                n_unresolved += 1
            for j in range(3):
                seg[i, S_XP + j] = seg[i, S_X + j]
            seg[i, S_X] = hx
            seg[i, S_X + 1] = hy
            seg[i, S_X + 2] = hz
            seg[i, S_V] = vx
            seg[i, S_V + 1] = vy
            seg[i, S_V + 2] = vz
            if segi[i, SI_NEEDW] != 0:
                if fast:
                    node_h = _frame(world, seg, segi, i)
                w, _ = _solved_frame(node_h, seg, i, ox, oy, oz, hx, hy, hz)
                _put34(seg, i, S_W, w)
    I[H_N_CONTACT] = n_contact
    I[H_N_CONTACT_TOTAL] += n_contact
    I[H_N_UNRESOLVED] = n_unresolved
    I[H_N_ROOT_INSIDE] = n_root_inside
    return 0


# ============================================================== pose for rendering
@njit(cache=True)
def pose_kernel(world, F, I, alpha, out_q):
    """Joint frames from tails interpolated as x_prev + alpha (x - x_prev), alpha in [0, 1].

    ``world`` (N, 4, 4) is the frame's animated pose (hair at rest local rotations); it is
    only read. The frames go to the pose scratch section (see :func:`apply_kernel`).
    ``out_q`` (N, 4) receives the local rotations (xyzw) of the simulated, non-authored
    joints when it has N rows (pass a (0, 4) array to skip). The simulation state is never
    modified.
    """
    seg, col, ch, g, segi, coli, chi, pairs, aff = _sections(F, I)
    S = I[H_S]
    M = I[H_M]
    pose = F[I[H_OF_POSE]:I[H_OF_POSE] + S * PF].reshape((S, PF))
    for i in range(S):
        sp = segi[i, SI_SPAR]
        node = segi[i, SI_NODE]
        win = _world34(world, node)
        if sp < 0:
            hm = win
        elif segi[i, SI_AUTH] != 0:
            hm = _mul34(_row34(pose, sp, P_D), win)
        else:
            hm = _mul34(_row34(pose, sp, P_W), _row34(seg, i, S_REL))
        if segi[i, SI_AUTH] != 0:
            w = hm
            q = (0.0, 0.0, 0.0, 1.0)
        else:
            xx = seg[i, S_XP] + alpha * (seg[i, S_X] - seg[i, S_XP])
            xy = seg[i, S_XP + 1] + alpha * (seg[i, S_X + 1] - seg[i, S_XP + 1])
            xz = seg[i, S_XP + 2] + alpha * (seg[i, S_X + 2] - seg[i, S_XP + 2])
            w, q = _solved_frame(hm, seg, i, hm[3], hm[7], hm[11], xx, xy, xz)
            lq = _qmul(pose[i, P_RQ], pose[i, P_RQ + 1], pose[i, P_RQ + 2], pose[i, P_RQ + 3],
                       q[0], q[1], q[2], q[3])
            for j in range(4):
                pose[i, P_Q + j] = lq[j]
            if out_q.shape[0] > node:
                for j in range(4):
                    out_q[node, j] = lq[j]
        _put34(pose, i, P_W, w)
        _put34(pose, i, P_D, _mul34(w, _inv34(win)))
    return 0


@njit(cache=True)
def apply_kernel(world, F, I):
    """Patch ``world`` (N, 4, 4) in place with the frames of the last :func:`pose_kernel`:
    the simulated joints get their frames, every descendant follows."""
    seg, col, ch, g, segi, coli, chi, pairs, aff = _sections(F, I)
    S = I[H_S]
    M = I[H_M]
    pose = F[I[H_OF_POSE]:I[H_OF_POSE] + S * PF].reshape((S, PF))
    for a in range(M):
        n = aff[a, A_NODE]
        sg = aff[a, A_SEG]
        if segi[sg, SI_NODE] == n:
            m = _row34(pose, sg, P_W)      # the joint itself: its frame, root exact
        else:
            m = _mul34(_row34(pose, sg, P_D), _world34(world, n))
        for r in range(3):
            for cc in range(4):
                world[n, r, cc] = m[4 * r + cc]
    return 0


@njit(cache=True)
def interpolate_kernel(F, I, alpha, out):
    """out (S, 3) = x_prev + alpha (x - x_prev)."""
    S = I[H_S]
    seg = F[I[H_OF_SEG]:I[H_OF_SEG] + S * SF].reshape((S, SF))
    for i in range(S):
        for j in range(3):
            out[i, j] = seg[i, S_XP + j] + alpha * (seg[i, S_X + j] - seg[i, S_XP + j])
    return 0


@njit(cache=True)
def step_many_kernel(worlds, F, I):
    """Several substeps in one call: ``worlds`` (n, N, 4, 4), one animated pose per substep."""
    r = 0
    for n in range(worlds.shape[0]):
        r += step_kernel(worlds[n], F, I)
    return r
