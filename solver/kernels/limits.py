"""Angle limits of spring joints (numba): cone, hinge and spherical, as the
VRMC_springBone_limit-1.0 draft defines them.

Revision followed: vrm-c/vrm-specification commit 75fbd48a7cb1d7250fa955838af6140e9c84844c
(specification/VRMC_springBone_limit-1.0/README.ja.md, "Rotation" and the reference
implementations of its appendix; the revision UniVRM's ``Anglelimit.cs`` links, whose
``AnglelimitCone/Hinge/Spherical.cs`` implement the same formulas). A limit is expressed in
*limit space*: the joint's frame with its rest local rotation carried by its parent's solved
world rotation (``parent.worldRotation · localSpaceInitialRotation``), turned by
``axisRotation`` (the shortest arc from +Y to the rest tail direction ``boneAxis``, a half
turn about X when ``boneAxis`` is −Y) and by the limit's own ``rotation``. The build packs
``axisRotation · rotation`` as a 3x3 (``X_LQ``, :mod:`solver.limits`). In limit space the
tail direction d (unit) is limited by

- cone (angle a): if d_y < cos a, (d_x, d_z) are scaled by sin a / sqrt(1 − d_y²) and d_y = cos a;
- hinge (angle a): d_x = 0, renormalised, then the cone rule on (d_y, d_z) in that plane;
- spherical (pitch p, yaw w): pitch = atan2(d_z, d_y), yaw = asin(d_x), each clamped to ±p /
  ±w, d = (sin yaw, cos yaw cos pitch, cos yaw sin pitch) — recomputed only when one of them
  was clamped, so an unlimited tail keeps its bits.

Degenerate directions the draft leaves open: a cone tail at exactly −Y (d_y = −1) goes to
the cone's rim in limit +Z; a hinge tail along ±X (nothing left in the hinge plane) goes to +Y.

Where swaycam applies it (:func:`apply_limits`, called by :func:`solver.kernels.step.step_kernel`
once per chain after its contact and relaxation, so no joint ends a substep beyond its limit):
root to tail, each limited link is turned about its root onto the limit, and its subtree turns
with it (lengths and the children's relative directions kept); a joint's frame is recomputed
from its parent's limited tail first. The correction is a position projection without bounce:
only the part of a tail's velocity against its correction is removed (the contact rule of
docs/design.md §4.4, :func:`solver.kernels.resolve._inward`), the correction never becomes
velocity. In the "vrm" mode, whose velocity is the tail history, the history is rebuilt so the same rule applies to that velocity (x − x⁻)/h. Allocation-free; not inlined (a call
per chain when some segment has a limit).
"""

from __future__ import annotations

import math

from numba import njit

from avatars.math_kernels import EPS, arc_quat, inv_vec, put34, rotate_frame, vec

from .relax import _below
from .resolve import _inward
from .spring import joint_frame
from ..layout import (
    LIMIT_CONE, LIMIT_HINGE, LIMIT_NONE, LIMIT_SPHERICAL, MODE_VRM, SI_AUTH, SI_FAST, SI_NEEDW, SI_SPAR, S_LEN, S_TLOC, S_V, S_W,
    S_X, S_XP, X_LA, X_LB, X_LCOS, X_LKIND, X_LQ,
)


@njit(inline="always", cache=True)
def limit_direction(kind, angle, yaw, cos_a, dx, dy, dz):
    """The limited unit direction in limit space (module doc) of the unit direction d.
    Returns (x, y, z, limited)."""
    if kind == LIMIT_CONE:
        if dy >= cos_a:
            return dx, dy, dz, False
        sin_a = math.sqrt(max(0.0, 1.0 - cos_a * cos_a))
        r2 = 1.0 - dy * dy
        if r2 <= 1e-30:
            return 0.0, cos_a, sin_a, True
        ratio = sin_a / math.sqrt(r2)
        return dx * ratio, cos_a, dz * ratio, True
    if kind == LIMIT_HINGE:
        n = math.sqrt(dy * dy + dz * dz)
        if n <= 1e-15:
            return 0.0, 1.0, 0.0, True
        y, z = dy / n, dz / n
        lim = dx != 0.0
        if y < cos_a:
            sin_a = math.sqrt(max(0.0, 1.0 - cos_a * cos_a))
            z = sin_a if z >= 0.0 else -sin_a
            y = cos_a
            lim = True
        return 0.0, y, z, lim
    if kind == LIMIT_SPHERICAL:
        pitch = math.atan2(dz, dy)
        yaw_ = math.asin(min(1.0, max(-1.0, dx)))
        lim = False
        if abs(pitch) > angle:
            pitch = angle if pitch > 0.0 else -angle
            lim = True
        if abs(yaw_) > yaw:
            yaw_ = yaw if yaw_ > 0.0 else -yaw
            lim = True
        if not lim:
            return dx, dy, dz, False
        cy = math.cos(yaw_)
        return math.sin(yaw_), cy * math.cos(pitch), cy * math.sin(pitch), True
    return dx, dy, dz, False


@njit(inline="always", cache=True)
def _qrot(qx, qy, qz, qw, x, y, z):
    tx, ty, tz = 2.0 * (qy * z - qz * y), 2.0 * (qz * x - qx * z), 2.0 * (qx * y - qy * x)
    return (x + qw * tx + qy * tz - qz * ty, y + qw * ty + qz * tx - qx * tz, z + qw * tz + qx * ty - qy * tx)


@njit(cache=True, _nrt=False)
def apply_limits(world, st, rst, scr, segi, ext, s0, s1, mode, h_):
    """Limit every link of the chain [s0, s1) with a limit (module doc), root to tail; the
    solved frame of every joint of the chain is rewritten in the S_W scratch on the way (each
    joint's limit space hangs from its parent's limited frame). Returns the number of links
    corrected (0 when the chain has no limit: nothing is written then)."""
    any_limit = False
    for i in range(s0, s1):
        if ext[i, X_LKIND] != LIMIT_NONE and segi[i, SI_AUTH] == 0:
            any_limit = True
            break
    if not any_limit:
        return 0
    n = 0
    vrm = mode == MODE_VRM
    inv_h = 1.0 / h_
    for i in range(s0, s1):
        h = joint_frame(world, rst, scr, segi, i)
        if segi[i, SI_FAST] != 0:
            sp = segi[i, SI_SPAR]
            ox, oy, oz = st[sp, S_X], st[sp, S_X + 1], st[sp, S_X + 2]
            h = (h[0], h[1], h[2], ox, h[4], h[5], h[6], oy, h[8], h[9], h[10], oz)
        else:
            ox, oy, oz = h[3], h[7], h[11]
        xx, xy, xz = st[i, S_X], st[i, S_X + 1], st[i, S_X + 2]
        kind = int(ext[i, X_LKIND])
        # the tail direction in the joint's rest local frame, once known (0: not yet)
        ex_, ey_, ez_, en_ = 0.0, 0.0, 0.0, 0.0
        if kind != LIMIT_NONE and segi[i, SI_AUTH] == 0:
            wx, wy, wz = xx - ox, xy - oy, xz - oz
            wn = math.sqrt(wx * wx + wy * wy + wz * wz)
            jx, jy, jz = inv_vec(h, wx, wy, wz)          # the joint's rest local frame
            jn = math.sqrt(jx * jx + jy * jy + jz * jz)
            if wn > EPS and jn > EPS:
                jx, jy, jz = jx / jn, jy / jn, jz / jn
                ex_, ey_, ez_, en_ = jx, jy, jz, 1.0
                # limit space: X_LQ^T (its columns are the limit axes in the joint frame)
                q = X_LQ
                lx = ext[i, q] * jx + ext[i, q + 3] * jy + ext[i, q + 6] * jz
                ly = ext[i, q + 1] * jx + ext[i, q + 4] * jy + ext[i, q + 7] * jz
                lz = ext[i, q + 2] * jx + ext[i, q + 5] * jy + ext[i, q + 8] * jz
                ax, ay, az, lim = limit_direction(kind, ext[i, X_LA], ext[i, X_LB], ext[i, X_LCOS], lx, ly, lz)
                if lim:
                    bx = ext[i, q] * ax + ext[i, q + 1] * ay + ext[i, q + 2] * az
                    by = ext[i, q + 3] * ax + ext[i, q + 4] * ay + ext[i, q + 5] * az
                    bz = ext[i, q + 6] * ax + ext[i, q + 7] * ay + ext[i, q + 8] * az
                    nx, ny, nz = vec(h, bx, by, bz)
                    nn = math.sqrt(nx * nx + ny * ny + nz * nz)
                    if nn > EPS:
                        nx, ny, nz = nx / nn, ny / nn, nz / nn
                        ex_, ey_, ez_ = bx, by, bz       # the limited direction, joint frame
                        q4 = arc_quat(wx / wn, wy / wn, wz / wn, nx, ny, nz)
                        n += 1
                        # the link and its subtree turn about its root
                        for j in range(i, s1):
                            if j != i and not _below(segi, j, i, s0):
                                continue
                            rx, ry, rz = st[j, S_X] - ox, st[j, S_X + 1] - oy, st[j, S_X + 2] - oz
                            if j == i:
                                tx, ty, tz = ox + nx * wn, oy + ny * wn, oz + nz * wn
                            else:
                                ux, uy, uz = _qrot(q4[0], q4[1], q4[2], q4[3], rx, ry, rz)
                                tx, ty, tz = ox + ux, oy + uy, oz + uz
                            mx, my, mz = tx - st[j, S_X], ty - st[j, S_X + 1], tz - st[j, S_X + 2]
                            if vrm:
                                # the Verlet's velocity is its history (x − x⁻)/h: the same rule on it
                                vx, vy, vz = _inward((st[j, S_X] - st[j, S_XP]) * inv_h,
                                                     (st[j, S_X + 1] - st[j, S_XP + 1]) * inv_h,
                                                     (st[j, S_X + 2] - st[j, S_XP + 2]) * inv_h, mx, my, mz,
                                                     scr[j, S_LEN])
                                st[j, S_XP], st[j, S_XP + 1], st[j, S_XP + 2] = tx - h_ * vx, ty - h_ * vy, tz - h_ * vz
                            else:
                                vx, vy, vz = _inward(st[j, S_V], st[j, S_V + 1], st[j, S_V + 2], mx, my, mz,
                                                     scr[j, S_LEN])
                            st[j, S_V], st[j, S_V + 1], st[j, S_V + 2] = vx, vy, vz
                            st[j, S_X], st[j, S_X + 1], st[j, S_X + 2] = tx, ty, tz
                        xx, xy, xz = st[i, S_X], st[i, S_X + 1], st[i, S_X + 2]
        # the joint's solved frame (shortest arc from its rest axis to the tail), for its
        # children only: a later segment of the chain, or (SI_NEEDW) a branch chain stepped after it
        child = segi[i, SI_NEEDW] != 0
        for j in range(i + 1, s1):
            if child:
                break
            if segi[j, SI_SPAR] == i:
                child = True
                break
        if not child:
            continue
        if segi[i, SI_AUTH] != 0:
            put34(scr, i, S_W, h)
            continue
        tx, ty, tz = rst[i, S_TLOC], rst[i, S_TLOC + 1], rst[i, S_TLOC + 2]
        tn = math.sqrt(tx * tx + ty * ty + tz * tz)
        if en_ == 0.0:
            ex_, ey_, ez_ = inv_vec(h, xx - ox, xy - oy, xz - oz)
        bn = math.sqrt(ex_ * ex_ + ey_ * ey_ + ez_ * ez_)
        if tn < EPS or bn < EPS:
            put34(scr, i, S_W, h)
        else:
            put34(scr, i, S_W, rotate_frame(h, arc_quat(tx / tn, ty / tn, tz / tn, ex_ / bn, ey_ / bn, ez_ / bn)))
    return n
