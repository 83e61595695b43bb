"""Speed limits of a chain's anchor (numba): the part of a fast anchor motion beyond the limits
carries the chain rigidly (called by :func:`solver.kernels.step.step_kernel`, rest-shape and
legacy modes, once per chain before its spring step).

Source: Magica Cloth 2's inertia settings ("movement speed limit", "rotation speed limit":
the anchor motion above the limit is not felt by the simulation as inertia). Here, per substep
of h seconds, with the anchor's world matrix A⁻ at the previous substep and A now:

- translation: Δ = o − o⁻ (anchor origins); beyond v h (v the speed limit, model m/s times the
  chain scale) the excess t = Δ (1 − v h / |Δ|) is carried;
- rotation: the turn R = R(A) R(A⁻)ᵀ (axis u, angle θ from the 3x3 parts, scale removed);
  beyond ω h the excess turn Q = rot(u, θ − ω h) is carried about o⁻.

Every tail x of the chain (and its history x⁻) becomes o⁻ + t + Q (x − o⁻), its velocity Q v:
the chain moves with the anchor by the excess as a rigid body, so its motion relative to the
anchor is that of an anchor moving at the limit. Nothing is written when the anchor stays
within both limits (a slow motion keeps its bits). A pure function of the substep's poses, so
every render rate gives the same bits. Allocation-free.
"""

from __future__ import annotations

import math

from numba import njit

from avatars.math_kernels import det3, quat_rotate, row34

from ..layout import K_AMPREV, S_V, S_X, S_XP


@njit(cache=True, _nrt=False)
def carry_excess(st, ch, k, ma, s0, s1, h, vlim, wlim):
    """Carry chain k's segments [s0, s1) by the excess of its anchor's motion over the speed
    limits (module doc). ``ma``: the anchor's world matrix now (12-tuple); ``vlim``: model m/s
    times the chain scale; ``wlim``: rad/s. Returns 1 when something was carried, else 0."""
    a = row34(ch, k, K_AMPREV)
    ox, oy, oz = a[3], a[7], a[11]
    dx, dy, dz = ma[3] - ox, ma[7] - oy, ma[11] - oz
    dl = math.sqrt(dx * dx + dy * dy + dz * dz)
    tmax = vlim * h
    f = 0.0
    if dl > tmax:
        f = 1.0 - tmax / dl
    # R = M Aᵀ on the 3x3 parts (M now, A before), each with its scale removed
    sa = abs(det3(a)) ** (1.0 / 3.0)
    sm = abs(det3(ma)) ** (1.0 / 3.0)
    if sa <= 0.0 or sm <= 0.0:
        return 0
    c = 1.0 / (sa * sm)
    r00 = (ma[0] * a[0] + ma[1] * a[1] + ma[2] * a[2]) * c
    r11 = (ma[4] * a[4] + ma[5] * a[5] + ma[6] * a[6]) * c
    r22 = (ma[8] * a[8] + ma[9] * a[9] + ma[10] * a[10]) * c
    r21 = (ma[8] * a[4] + ma[9] * a[5] + ma[10] * a[6]) * c
    r12 = (ma[4] * a[8] + ma[5] * a[9] + ma[6] * a[10]) * c
    r02 = (ma[0] * a[8] + ma[1] * a[9] + ma[2] * a[10]) * c
    r20 = (ma[8] * a[0] + ma[9] * a[1] + ma[10] * a[2]) * c
    r10 = (ma[4] * a[0] + ma[5] * a[1] + ma[6] * a[2]) * c
    r01 = (ma[0] * a[4] + ma[1] * a[5] + ma[2] * a[6]) * c
    wx, wy, wz = 0.5 * (r21 - r12), 0.5 * (r02 - r20), 0.5 * (r10 - r01)
    sn = math.sqrt(wx * wx + wy * wy + wz * wz)
    theta = math.atan2(sn, 0.5 * (r00 + r11 + r22 - 1.0))
    ex = theta - wlim * h
    if f <= 0.0 and (ex <= 0.0 or sn <= 0.0):
        return 0
    qx, qy, qz, qw = 0.0, 0.0, 0.0, 1.0
    if ex > 0.0 and sn > 0.0:
        s_ = math.sin(0.5 * ex) / sn
        qx, qy, qz, qw = wx * s_, wy * s_, wz * s_, math.cos(0.5 * ex)
    tx, ty, tz = f * dx, f * dy, f * dz
    for i in range(s0, s1):
        x, y, z = quat_rotate(qx, qy, qz, qw, st[i, S_X] - ox, st[i, S_X + 1] - oy, st[i, S_X + 2] - oz)
        st[i, S_X], st[i, S_X + 1], st[i, S_X + 2] = ox + tx + x, oy + ty + y, oz + tz + z
        x, y, z = quat_rotate(qx, qy, qz, qw, st[i, S_XP] - ox, st[i, S_XP + 1] - oy, st[i, S_XP + 2] - oz)
        st[i, S_XP], st[i, S_XP + 1], st[i, S_XP + 2] = ox + tx + x, oy + ty + y, oz + tz + z
        x, y, z = quat_rotate(qx, qy, qz, qw, st[i, S_V], st[i, S_V + 1], st[i, S_V + 2])
        st[i, S_V], st[i, S_V + 1], st[i, S_V + 2] = x, y, z
    return 1
