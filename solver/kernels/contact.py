"""Contact geometry for the numba kernels: closest points, the contact test of one link
against one collider, the turn that pushes a link out, and the overlap depth used at build
time (docs/design.md §4.4). ``cache=True``; nothing allocates.
"""

from __future__ import annotations

import math

from numba import njit

from avatars.math_kernels import EPS

from ..layout import (
    C_WA, C_WB, C_WN, C_WR, SHAPE_INSIDE_CAPSULE, SHAPE_INSIDE_SPHERE, SHAPE_PLANE, SHAPE_SPHERE,
)


@njit(inline="always", cache=True)
def point_segment(px, py, pz, ax, ay, az, bx, by, bz):
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


@njit(cache=True, _nrt=False)
def segment_segment(p0x, p0y, p0z, p1x, p1y, p1z, q0x, q0y, q0z, q1x, q1y, q1z):
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


@njit(cache=True, _nrt=False)
def contact(shape, col, c, ox, oy, oz, xx, xy, xz, rh, al, ac, segment_wise):
    """Contact of link o-x with collider row ``c`` (world data in ``col``).

    Returns (nx, ny, nz, depth, u, hit, root_inside): the unit direction n in which the
    contact point must move, the separation still needed along it (metres), and the link
    parameter u of that point (1 = the tail). Outside shapes use the closest points of the
    link p(u) and the capsule axis q(v), u, v in [0, 1] (docs/design.md §4.4); when the root o itself
    overlaps (it cannot move) or ``segment_wise`` is off, the tail alone is tested (u = 1).
    Inside shapes and planes are convex, so keeping the tail inside / above keeps the whole
    link there. ``al`` (metres) is the overlap this pair had in the authored rest pose,
    which is allowed (the rest pose stays an equilibrium); ``ac`` <= ``al`` (metres) the part of it
    that undoes a hit radius raised to cover the drawn hair (solver/drawn.py), also taken off the
    radius of the root test (0: the plain test, bit for bit).
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
            r0 = rr - ac
            root_inside = ex * ex + ey * ey + ez * ez < r0 * r0
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
        if d < EPS:
            nx, ny, nz = xx - ox, xy - oy, xz - oz
            d = math.sqrt(nx * nx + ny * ny + nz * nz)
            if d < EPS:
                return 0.0, 0.0, 0.0, 0.0, 1.0, False, root_inside
            return nx / d, ny / d, nz / d, rr, u, True, root_inside
        return nx / d, ny / d, nz / d, rr - d, u, True, root_inside
    bx, by, bz = col[c, C_WB], col[c, C_WB + 1], col[c, C_WB + 2]
    if shape == SHAPE_INSIDE_SPHERE or shape == SHAPE_INSIDE_CAPSULE:

        rin = rc - rh + al
        dt, qx, qy, qz = point_segment(xx, xy, xz, ax, ay, az, bx, by, bz)
        if dt <= rin or dt < EPS:
            return 0.0, 0.0, 0.0, 0.0, 1.0, False, False
        return (qx - xx) / dt, (qy - xy) / dt, (qz - xz) / dt, dt - rin, 1.0, True, False
    # outside sphere / capsule
    rr = rc + rh
    root_inside = False
    if segment_wise:
        dr, _, _, _ = point_segment(ox, oy, oz, ax, ay, az, bx, by, bz)
        root_inside = dr < rr - ac
    rr -= al
    if root_inside or not segment_wise:
        u = 1.0
        d, qx, qy, qz = point_segment(xx, xy, xz, ax, ay, az, bx, by, bz)
        px, py, pz = xx, xy, xz
    else:
        d, u, px, py, pz, qx, qy, qz = segment_segment(ox, oy, oz, xx, xy, xz, ax, ay, az, bx, by, bz)
    if d >= rr:
        return 0.0, 0.0, 0.0, 0.0, 1.0, False, root_inside
    nx, ny, nz = px - qx, py - qy, pz - qz
    if d < EPS:
        # on the axis: leave along the link direction
        nx, ny, nz = xx - ox, xy - oy, xz - oz
    nn = math.sqrt(nx * nx + ny * ny + nz * nz)
    if nn < EPS:
        return 0.0, 0.0, 0.0, 0.0, 1.0, False, root_inside
    return nx / nn, ny / nn, nz / nn, rr - d, u, True, root_inside


@njit(inline="always", cache=True)
def rotate_out(ox, oy, oz, xx, xy, xz, length, nx, ny, nz, depth, u, u_min):
    """:func:`rotate_out_q` without the turn."""
    hx, hy, hz, _, _, _, _ = rotate_out_q(ox, oy, oz, xx, xy, xz, length, nx, ny, nz, depth, u, u_min)
    return hx, hy, hz


@njit(inline="always", cache=True)
def rotate_out_q(ox, oy, oz, xx, xy, xz, length, nx, ny, nz, depth, u, u_min):
    """Turn the link about its fixed root so that its point at parameter u moves ``depth``
    along n: the tail turns in the plane of the link and n by φ = depth / (u L sin β)
    (β the angle between n and the link; a Newton step on the separation), at most 1 rad
    per correction. When n runs along the link (β ≈ 0) a fixed tangent breaks the tie.
    Returns the new tail (exactly at distance L from the root) and the turn as a unit
    quaternion (x, y, z, w) about the axis d x t (identity when nothing turned)."""
    dx, dy, dz = xx - ox, xy - oy, xz - oz
    dn = math.sqrt(dx * dx + dy * dy + dz * dz)
    if dn < EPS or length < EPS:
        return xx, xy, xz, 0.0, 0.0, 0.0, 1.0
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
    sh = math.sin(0.5 * phi)
    return (ox + length * (cp * dx + sp * tx), oy + length * (cp * dy + sp * ty),
            oz + length * (cp * dz + sp * tz),
            (dy * tz - dz * ty) * sh, (dz * tx - dx * tz) * sh, (dx * ty - dy * tx) * sh, math.cos(0.5 * phi))


@njit(cache=True, _nrt=False)
def pair_depth(shape, col, c, ox, oy, oz, xx, xy, xz, rh, segment_wise):
    """Overlap depth (metres, > 0 overlapping) of link o-x with collider ``c`` as
    :func:`contact` tests it (no allowance)."""
    ax, ay, az = col[c, C_WA], col[c, C_WA + 1], col[c, C_WA + 2]
    if shape == SHAPE_PLANE:
        return rh - ((xx - ax) * col[c, C_WN] + (xy - ay) * col[c, C_WN + 1] + (xz - az) * col[c, C_WN + 2])
    bx, by, bz = col[c, C_WB], col[c, C_WB + 1], col[c, C_WB + 2]
    rc = col[c, C_WR]
    if shape == SHAPE_INSIDE_SPHERE or shape == SHAPE_INSIDE_CAPSULE:

        dt, _, _, _ = point_segment(xx, xy, xz, ax, ay, az, bx, by, bz)
        return dt - (rc - rh)
    rr = rc + rh
    if segment_wise:
        dr, _, _, _ = point_segment(ox, oy, oz, ax, ay, az, bx, by, bz)
        if dr >= rr:
            d, _, _, _, _, _, _, _ = segment_segment(ox, oy, oz, xx, xy, xz, ax, ay, az, bx, by, bz)
            return rr - d
    dt, _, _, _ = point_segment(xx, xy, xz, ax, ay, az, bx, by, bz)
    return rr - dt
